"""Read-only code tools over a local git repository: the ones mcp-server-git lacks.

`GitCodeTools` is an in-process Toolset (name "code"): blame, grep, directory
listing, symbol search and the changes between two revisions, each pinned to a
full commit SHA so that evidence and links never move. Every git command runs
as `git -C <repo> ...` through `asyncio.create_subprocess_exec` (never a
shell), and every revision and path the model sends is validated before it
reaches git. A bad argument or a git failure becomes an `is_error` result with
one clear line, never an exception.

`git_annotator` gives results of mcp-server-git (served through `McpToolset`)
the same titles, paths, revisions and links.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.errors import ToolFailure
from agent.ports import ToolResult, ToolSpec

log = logging.getLogger(__name__)

RESULT_CAP = 12_000
MAX_BLAME_LINES = 300
MAX_GREP_RESULTS = 200
MAX_SYMBOL_RESULTS = 50
MAX_COMMITS = 20
MAX_LIST_ENTRIES = 2_000
MAX_FIND_NAMES = 64
MAX_FIND_RESULTS = 500
GIT_TIMEOUT = 30.0
# Output past this is not read (the process is killed): a grep for "e" in a
# monorepo must not pull hundreds of megabytes into the worker.
MAX_OUTPUT_BYTES = 8_000_000

_SHA = re.compile(r"^[0-9a-fA-F]{4,64}$")
_FULL_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF_CHARS = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]*$")
_REV_SUFFIX = re.compile(r"(?:[~^][0-9]*)+$")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_BLAME_HEADER = re.compile(r"^([0-9a-f]{40,64}) (\d+) (\d+)(?: (\d+))?$")

# Global options for every git run: literal pathspecs so a path such as
# ":(glob)**" is a name, not magic; unquoted UTF-8 paths; no colour or pager.
_GIT_GLOBAL = (
    "--literal-pathspecs",
    "--no-pager",
    "-c",
    "core.quotepath=off",
    "-c",
    "color.ui=never",
    "-c",
    "log.showSignature=false",
)
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "LC_ALL": "C",
}


# -- validation ----------------------------------------------------------------


def check_revision(rev: Any) -> str:
    """A hex SHA or a ref name (with optional ~N/^N), never an option or a range."""
    if not isinstance(rev, str) or not rev.strip():
        raise ToolFailure("a revision is required (a commit SHA, a branch or a tag)")
    rev = rev.strip()
    if len(rev) > 256:
        raise ToolFailure("the revision is too long")
    if _SHA.match(rev):
        return rev
    base = _REV_SUFFIX.sub("", rev)
    if (
        rev.startswith("-")
        or not _REF_CHARS.match(base)
        or ".." in base
        or "//" in base
        or base.endswith(("/", ".", ".lock"))
        or any(part.startswith(".") for part in base.split("/"))
    ):
        raise ToolFailure(
            f"invalid revision {rev!r}: use a commit SHA or a branch/tag name "
            "(no ranges, no options)"
        )
    return rev


def check_path(path: Any, *, allow_root: bool = False) -> str:
    """A path relative to the repository root, without '..' segments; '' is the root."""
    if path is None and allow_root:
        return ""
    if not isinstance(path, str):
        raise ToolFailure("the path must be a string relative to the repository root")
    if any(ch in path for ch in "\x00\n\r"):
        raise ToolFailure("invalid path: control characters are not allowed")
    raw = path.strip()
    if raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", raw):
        raise ToolFailure(f"invalid path {path!r}: it must be relative to the repository root")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if any(p == ".." or ".." in p.split("\\") for p in parts):
        raise ToolFailure(f"invalid path {path!r}: '..' segments are not allowed")
    clean = "/".join(parts)
    if not clean and not allow_root:
        raise ToolFailure("a file path is required")
    return clean


# -- small helpers ---------------------------------------------------------------


def cap_text(text: str, cap: int = RESULT_CAP) -> str:
    if len(text) <= cap:
        return text
    return f"{text[:cap]}\n[truncated: {len(text)} characters, the first {cap} shown]"


def _short(sha: str | None) -> str:
    return sha[:7] if sha else "(root)"


def _iso(epoch: str, tz: str) -> str:
    """Blame's author-time and author-tz ("+0100") as an ISO 8601 timestamp."""
    try:
        sign = -1 if tz.startswith("-") else 1
        offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * sign
        return datetime.fromtimestamp(int(epoch), timezone(offset)).isoformat()
    except (ValueError, IndexError):
        return ""


_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_QUOTED = re.compile(r'^"(?:[^"\\]|\\.)*"')


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of unusual file names: "a\\tb", "\\303\\274", "q\\"d"."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            octal = re.match(r"[0-7]{3}", body[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(0), 8))  # one byte of a UTF-8 sequence
                i += 4
                continue
            if body[i + 1] in _C_ESCAPES:
                out.append(_C_ESCAPES[body[i + 1]])
                i += 2
                continue
        out += body[i].encode("utf-8")
        i += 1
    return out.decode("utf-8", "replace")


def _header_paths(rest: str) -> tuple[str | None, str | None]:
    """The two names of a 'diff --git a/x b/y' line, either of them possibly quoted."""
    m = _QUOTED.match(rest)
    if m:
        return _diff_path(m.group(0)), _diff_path(rest[m.end() :].strip())
    if ' "b/' in rest:
        a, _, b = rest.partition(' "b/')
        return _diff_path(a), _diff_path('"b/' + b)
    if " b/" in rest:
        a, _, b = rest.partition(" b/")
        return _diff_path(a), b
    return None, None


def _diff_path(raw: str) -> str | None:
    """A '--- a/x' / '+++ b/x' name: None for /dev/null, prefix stripped."""
    name = _unquote(raw.rstrip("\t"))
    if name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _one_line(stderr: str, fallback: str) -> str:
    """git's first fatal/error line, without the prefix."""
    for line in stderr.splitlines():
        line = line.strip()
        if not line or line.startswith(("hint:", "warning:")):
            continue
        for prefix in ("fatal: ", "error: ", "usage: "):
            if line.startswith(prefix):
                line = line[len(prefix) :]
        return line[:300]
    return fallback


def _common_suffix(a: str, b: str) -> list[str]:
    x, y, out = a.split("/"), b.split("/"), []
    while x and y and x[-1] == y[-1]:
        out.append(x.pop())
        y.pop()
    return out


def _glob_literal(name: str) -> str:
    """`name` as a glob pathspec that matches only itself: *, ?, [ and \\ escaped."""
    return re.sub(r"([*?\[\\])", r"\\\1", name)


# -- argument models (validation of what the model sends) ---------------------


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _BlameArgs(_Args):
    revision: str
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class _GrepArgs(_Args):
    revision: str
    pattern: str = Field(min_length=1, max_length=500)
    path: str | None = None
    max_results: int = Field(default=50, ge=1, le=MAX_GREP_RESULTS)
    regex: bool = False
    ignore_case: bool = False


class _ListArgs(_Args):
    revision: str
    path: str | None = ""
    recursive: bool = False


class _FindArgs(_Args):
    revision: str
    names: list[str] = Field(min_length=1, max_length=MAX_FIND_NAMES)


class _SymbolArgs(_Args):
    revision: str
    name: str = Field(min_length=1, max_length=200)


class _ChangesArgs(_Args):
    base: str | None = None
    head: str
    paths: list[str] | None = None
    context: int = Field(default=3, ge=0, le=20)
    max_commits: int | None = Field(default=None, ge=1, le=MAX_COMMITS)


_REVISION_PROP = {
    "type": "string",
    "description": (
        "Commit SHA (full or abbreviated), branch or tag, e.g. the running release's SHA."
    ),
}

TOOL_SPECS: list[ToolSpec] = [
    ToolSpec(
        name="git_blame",
        description=(
            "Who last changed each line of a file at a revision, and in which commit. "
            f"Use it on the lines of a stack frame. At most {MAX_BLAME_LINES} lines per call."
        ),
        parameters={
            "type": "object",
            "properties": {
                "revision": _REVISION_PROP,
                "path": {
                    "type": "string",
                    "description": "File path relative to the repository root.",
                },
                "start_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line (1-based).",
                },
                "end_line": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Last line, inclusive.",
                },
            },
            "required": ["revision", "path", "start_line", "end_line"],
        },
    ),
    ToolSpec(
        name="git_grep",
        description=(
            "Search the files of a revision for a text (fixed string by default, or an extended "
            "regular expression with regex=true). Returns path, line number and line."
        ),
        parameters={
            "type": "object",
            "properties": {
                "revision": _REVISION_PROP,
                "pattern": {"type": "string", "description": "The text to look for."},
                "path": {
                    "type": "string",
                    "description": "Optional folder or file to search in, relative to the root.",
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_GREP_RESULTS,
                    "description": "Most matches to return (default 50).",
                },
                "regex": {
                    "type": "boolean",
                    "description": (
                        "Treat the pattern as an extended regular expression (default false)."
                    ),
                },
                "ignore_case": {
                    "type": "boolean",
                    "description": "Case-insensitive (default false).",
                },
            },
            "required": ["revision", "pattern"],
        },
    ),
    ToolSpec(
        name="list_directory",
        description=(
            "List a folder of the repository at a revision: names, with a trailing '/' for "
            "folders; recursive=true lists every file path below it instead."
        ),
        parameters={
            "type": "object",
            "properties": {
                "revision": _REVISION_PROP,
                "path": {
                    "type": "string",
                    "description": "Folder relative to the repository root; empty for the root.",
                },
                "recursive": {
                    "type": "boolean",
                    "description": "List all files below (default false).",
                },
            },
            "required": ["revision"],
        },
    ),
    ToolSpec(
        name="find_files",
        description=(
            "The files of a revision whose name is one of the given names (a bare file name or "
            "a path as a stack frame reports it: its last component is what is matched), in "
            "any folder. Use it to map stack frames to files without listing the repository."
        ),
        parameters={
            "type": "object",
            "properties": {
                "revision": _REVISION_PROP,
                "names": {
                    "type": "array",
                    "items": {"type": "string"},
                    "maxItems": MAX_FIND_NAMES,
                    "description": "File names or frame paths, e.g. 'OrderService.java'.",
                },
            },
            "required": ["revision", "names"],
        },
    ),
    ToolSpec(
        name="find_symbol",
        description=(
            "Find where a class, interface, record, enum, struct, type, function, method or "
            "constant is declared at a revision (any language). Give the bare name, e.g. "
            "'CustomerReference' or 'create_order'."
        ),
        parameters={
            "type": "object",
            "properties": {
                "revision": _REVISION_PROP,
                "name": {"type": "string", "description": "The identifier, without qualifiers."},
            },
            "required": ["revision", "name"],
        },
    ),
    ToolSpec(
        name="git_changes",
        description=(
            "The commits between two revisions (base..head, newest first), each with its diff: "
            "what changed, by whom and when. Leave base empty for the recent history of head: "
            "its newest max_commits commits (default 1, the head commit's own change). "
            f"Optionally limited to some paths. At most {MAX_COMMITS} commits."
        ),
        parameters={
            "type": "object",
            "properties": {
                "base": {
                    "type": "string",
                    "description": (
                        "Older revision (excluded), e.g. the previous release's SHA; optional."
                    ),
                },
                "head": {**_REVISION_PROP, "description": "Newer revision (included)."},
                "paths": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only commits touching these files or folders.",
                },
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 20,
                    "description": "Lines of context around each change (default 3).",
                },
                "max_commits": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_COMMITS,
                    "description": "At most this many commits, newest first.",
                },
            },
            "required": ["head"],
        },
    ),
]

# find_symbol: a coarse ERE for `git grep -E` (portable: no \b), then a precise
# Python classification that also drops calls such as `new Foo(` or `return foo(`.
_DECL_KEYWORDS = (
    "class|interface|record|enum|struct|trait|object|type|protocol|union|typedef|"
    "def|func|function|fn|fun|sub|const|let|var|val"
)
_NOT_WORD = "[^[:alnum:]_$]"
_CALL_KEYWORDS = frozenset(
    (
        *("return", "new", "throw", "else", "await", "yield", "case", "in", "of", "typeof"),
        *("instanceof", "delete", "void", "do", "if", "while", "for", "switch", "catch"),
        *("and", "or", "not", "is", "assert", "raise", "go", "defer", "print", "echo", "puts"),
    )
)
_METHOD_MODIFIERS = frozenset(
    (
        *("public", "private", "protected", "internal", "static", "final", "abstract"),
        *("synchronized", "native", "override", "virtual", "async", "sealed", "open"),
        *("suspend", "inline", "extern", "export", "default"),
    )
)
_COMMENT_PREFIXES = ("//", "/*", "*", "#", "--", ";")


def _symbol_patterns(name: str) -> list[str]:
    n = re.escape(name)
    return [
        # class Foo / def foo / func (r *T) Foo / const foo / type Foo struct
        f"(^|{_NOT_WORD})({_DECL_KEYWORDS})[[:space:]]+(\\([^)]*\\)[[:space:]]*)?\\*?{n}({_NOT_WORD}|$)",
        # Type foo(  — a method or constructor declaration (Java, C#, C, C++)
        # (a leading "]" is literal in a POSIX bracket expression; a backslash is not an escape)
        f"[][:alnum:]_$>*&][[:space:]]+{n}[[:space:]]*(<[^>]*>)?[[:space:]]*\\(",
        # foo(...) {  — a JS/TS class method, or a Java compact constructor `Foo {`
        f"^[[:space:]]*((async|static|get|set|public|private|protected)[[:space:]]+)*{n}[[:space:]]*(\\([^)]*\\))?[[:space:]]*\\{{",
        # static final int FOO = / readonly Foo foo;  — a field or class constant
        f"(^|{_NOT_WORD})(static|final|readonly)[[:space:]]+([^=;(]*[[:space:]])?{n}[[:space:]]*(=|;)",
        # FOO = 1 at the start of a line — a module-level variable (Python, Ruby, shell)
        f"^{n}[[:space:]]*(:[^=]*)?=([^=]|$)",
    ]


def _classify_symbol(name: str, text: str) -> str | None:
    """The declaration kind of a line, or None when the line only uses the name."""
    stripped = text.strip()
    if stripped.startswith(_COMMENT_PREFIXES):
        return None
    n = re.escape(name)
    m = re.search(rf"(?<![\w$])({_DECL_KEYWORDS})\s+(\([^)]*\)\s*)?\*?{n}(?![\w$])", stripped)
    if m:
        kw = m.group(1)
        if kw in ("def", "func", "function", "fn", "fun", "sub"):
            # Go's `func (r *T) Name` declares a method on a receiver.
            return "method" if m.group(2) else "function"
        return kw
    m = re.search(rf"([\w$>\]*&]+)\s+{n}\s*(?:<[^>]*>)?\s*\(", stripped)
    if m:
        before = m.group(1)
        if before in _CALL_KEYWORDS:
            return None
        return "constructor" if before in _METHOD_MODIFIERS else "method"
    m = re.match(
        rf"^((?:async|static|get|set|public|private|protected)\s+)*{n}\s*(\([^)]*\))?\s*\{{",
        stripped,
    )
    if m:
        return "method" if m.group(2) else "constructor"
    if re.search(rf"(?<![\w$])(?:static|final|readonly)\s+(?:[^=;(]*\s)?{n}\s*[=;]", stripped):
        return "field"
    if re.match(rf"^{n}\s*(?::[^=]*)?=(?!=)", text):
        return "variable"
    return None


# -- the toolset -------------------------------------------------------------------


@dataclass(frozen=True)
class _GitRun:
    returncode: int
    stdout: str
    stderr: str
    truncated: bool  # output past MAX_OUTPUT_BYTES was not read


class GitCodeTools:
    """The read-only code tools on one local git repository (bare or not)."""

    name = "code"

    def __init__(
        self,
        repo_dir: Path,
        repository: str,
        *,
        result_cap: int = RESULT_CAP,
        git_timeout: float = GIT_TIMEOUT,
    ) -> None:
        if not _REPOSITORY.match(repository):
            raise ValueError(f"repository must be 'owner/name', not {repository!r}")
        self.repo_dir = Path(repo_dir)
        self.repository = repository
        self.result_cap = result_cap
        self.git_timeout = git_timeout
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[ToolResult]]] = {
            "git_blame": self._blame,
            "git_grep": self._grep,
            "list_directory": self._list_directory,
            "find_files": self._find_files,
            "find_symbol": self._find_symbol,
            "git_changes": self._changes,
        }

    # -- Toolset ---------------------------------------------------------------

    async def get_tools(self) -> list[ToolSpec]:
        return [spec.model_copy(deep=True) for spec in TOOL_SPECS]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        handler = self._handlers.get(name)
        if handler is None:
            return self._error(
                name, f"unknown tool {name!r}; available: {', '.join(self._handlers)}"
            )
        try:
            result = await handler(dict(arguments or {}))
        except ToolFailure as exc:
            return self._error(name, str(exc))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            return self._error(name, f"invalid arguments for {name}: {problems}")
        return result.model_copy(update={"text": cap_text(result.text, self.result_cap)})

    # -- plain methods (RevisionFiles and helpers for the offline investigator) --

    async def resolve(self, rev: str) -> str:
        """The full SHA of the commit `rev` names; ToolFailure if there is none."""
        rev = check_revision(rev)
        run = await self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        sha = run.stdout.strip()
        if run.returncode != 0 or not _FULL_SHA.match(sha):
            raise ToolFailure(f"unknown revision {rev!r}: no such commit in {self.repository}")
        return sha

    async def parent(self, rev: str) -> str | None:
        """The first parent's full SHA, or None for a root commit."""
        sha = await self.resolve(rev)
        run = await self._git("rev-list", "--parents", "-n", "1", sha)
        fields = run.stdout.split()
        return fields[1] if len(fields) > 1 else None

    async def is_ancestor(self, a: str, b: str) -> bool:
        a_sha, b_sha = await self.resolve(a), await self.resolve(b)
        run = await self._git("merge-base", "--is-ancestor", a_sha, b_sha, check=False)
        if run.returncode not in (0, 1):
            raise ToolFailure(_one_line(run.stderr, "git merge-base failed"))
        return run.returncode == 0

    async def files(self, revision: str) -> list[str]:
        sha = await self.resolve(revision)
        run = await self._git("ls-tree", "-r", "-z", "--name-only", sha)
        return [p for p in run.stdout.split("\0") if p]

    async def outline(
        self, revision: str, patterns: Sequence[str], *, max_bytes: int, seconds: float
    ) -> tuple[str, list[str], list[tuple[str, int, str]], bool]:
        """agent.repomap.Outline: the paths at `revision` and the lines matching any of
        `patterns` (extended regular expressions), each git run bounded in bytes and time."""
        sha = await self.resolve(revision)
        listing = await self._git(
            "ls-tree", "-r", "-z", "--name-only", sha, max_bytes=max_bytes, seconds=seconds
        )
        paths = [p for p in listing.stdout.split("\0") if p]
        if listing.truncated:
            paths = paths[:-1]  # the last name may be cut
        cmd = ["grep", "-n", "-z", "-I", "--no-color", "-E"]
        for pattern in patterns:
            cmd += ["-e", pattern]
        found = await self._git(*cmd, sha, check=False, max_bytes=max_bytes, seconds=seconds)
        if found.returncode not in (0, 1) and not found.truncated:
            raise ToolFailure(f"git grep failed: {_one_line(found.stderr, 'outline failed')}")
        matches = [(m["path"], m["line"], m["text"]) for m in self._parse_grep(found.stdout, sha)]
        return sha, paths, matches, listing.truncated or found.truncated

    async def file_exists(self, path: str, revision: str) -> bool:
        """agent.ports.RevisionFiles: whether `path` is a file at `revision`."""
        try:
            clean = check_path(path)
            sha = await self.resolve(revision)
            return await self._object_type(sha, clean) == "blob"
        except ToolFailure:
            return False

    # -- tools -------------------------------------------------------------------

    async def _blame(self, arguments: dict[str, Any]) -> ToolResult:
        args = _BlameArgs.model_validate(arguments)
        path = check_path(args.path)
        if args.end_line < args.start_line:
            raise ToolFailure("end_line must not be before start_line")
        sha = await self.resolve(args.revision)
        await self._require_file(sha, path)
        start = args.start_line
        end = min(args.end_line, start + MAX_BLAME_LINES - 1)
        run = await self._git("blame", "--porcelain", "-L", f"{start},{end}", sha, "--", path)
        commits: dict[str, dict[str, str]] = {}
        lines: list[dict[str, Any]] = []
        current: str | None = None
        final_line = 0
        for raw in run.stdout.split("\n"):
            if current is None:
                m = _BLAME_HEADER.match(raw)
                if m:
                    current, final_line = m.group(1), int(m.group(3))
                    commits.setdefault(current, {})
                continue
            if raw.startswith("\t"):
                info = commits[current]
                lines.append(
                    {
                        "line": final_line,
                        "commit": current,
                        "author": info.get("author", ""),
                        "date": _iso(info.get("author-time", ""), info.get("author-tz", "+0000")),
                        "summary": info.get("summary", ""),
                        # The oldest commit git has: a root, or the cut of a shallow history.
                        "boundary": "boundary" in info,
                        "text": raw[1:],
                    }
                )
                current = None
                continue
            key, _, value = raw.partition(" ")
            commits[current][key] = value
        if not lines:
            raise ToolFailure(f"git blame returned nothing for {path} lines {start}-{end}")
        end = lines[-1]["line"]
        body = [
            f"L{ln['line']} {ln['commit'][:7]} ({ln['author']} {ln['date'][:10]}) {ln['text']}"
            for ln in lines
        ]
        seen: dict[str, dict[str, Any]] = {}
        for ln in lines:
            seen.setdefault(ln["commit"], ln)
        summaries = [
            f"{c[:7]} {ln['date'][:10]} {ln['author']}: {ln['summary']}" for c, ln in seen.items()
        ]
        clamped = (
            f" (limited to {MAX_BLAME_LINES} lines)"
            if args.end_line - start + 1 > MAX_BLAME_LINES
            else ""
        )
        text = "\n".join(
            [
                f"git blame {path} lines {start}-{end} @ {_short(sha)}{clamped}",
                *body,
                "",
                "Commits:",
                *summaries,
            ]
        )
        return ToolResult(
            source="code",
            title=f"blame {path}:{start}-{end} @ {_short(sha)}",
            link=self._blob_link(sha, path, start, end),
            path=path,
            revision=sha,
            text=text,
            data={"revision": sha, "path": path, "lines": lines},
        )

    async def _grep(self, arguments: dict[str, Any]) -> ToolResult:
        args = _GrepArgs.model_validate(arguments)
        path = check_path(args.path, allow_root=True)
        sha = await self.resolve(args.revision)
        if path:
            await self._require_exists(sha, path)
        cmd = ["grep", "-n", "-z", "-I", "--no-color", "-E" if args.regex else "-F"]
        if args.ignore_case:
            cmd.append("-i")
        cmd += ["-e", args.pattern, sha]
        if path:
            cmd += ["--", path]
        run = await self._git(*cmd, check=False)
        if run.returncode not in (0, 1) and not run.truncated:
            raise ToolFailure(f"git grep failed: {_one_line(run.stderr, 'invalid pattern?')}")
        matches = self._parse_grep(run.stdout, sha)
        total = len(matches)
        truncated = total > args.max_results or run.truncated
        matches = matches[: args.max_results]
        where = f" in {path}" if path else ""
        more = "+" if run.truncated else ""
        head = f"{total}{more} matches for {args.pattern!r}{where} @ {_short(sha)}"
        if truncated:
            head += f" (first {len(matches)} shown)"
        body = [f"{m['path']}:{m['line']}: {m['text'].strip()[:240]}" for m in matches]
        return ToolResult(
            source="code",
            title=f"grep {args.pattern!r}{where} @ {_short(sha)}",
            link=self._tree_link(sha, path),
            path=path or None,
            revision=sha,
            text="\n".join([head, *body])
            if matches
            else f"no matches for {args.pattern!r}{where} @ {_short(sha)}",
            data={
                "revision": sha,
                "pattern": args.pattern,
                "path": path or None,
                "matches": matches,
                "truncated": truncated,
            },
        )

    async def _list_directory(self, arguments: dict[str, Any]) -> ToolResult:
        args = _ListArgs.model_validate(arguments)
        path = check_path(args.path, allow_root=True)
        sha = await self.resolve(args.revision)
        if path:
            kind = await self._object_type(sha, path)
            if kind is None:
                raise ToolFailure(f"{path} does not exist at {_short(sha)}")
            if kind != "tree":
                raise ToolFailure(f"{path} is a file, not a folder, at {_short(sha)}")
        treeish = f"{sha}:{path}" if path else sha
        entries: list[str]
        if args.recursive:
            run = await self._git("ls-tree", "-r", "-z", "--name-only", treeish)
            prefix = f"{path}/" if path else ""
            entries = [prefix + p for p in run.stdout.split("\0") if p]
        else:
            run = await self._git("ls-tree", "-z", treeish)
            entries = []
            for record in run.stdout.split("\0"):
                if not record:
                    continue
                meta, _, name = record.partition("\t")
                entries.append(f"{name}/" if meta.split(" ")[1:2] == ["tree"] else name)
        total = len(entries)
        entries = entries[:MAX_LIST_ENTRIES]
        shown = f" (first {MAX_LIST_ENTRIES} of {total})" if total > MAX_LIST_ENTRIES else ""
        label = path or "/"
        return ToolResult(
            source="code",
            title=f"{label} @ {_short(sha)}",
            link=self._tree_link(sha, path),
            path=path or None,
            revision=sha,
            text="\n".join([f"{label} @ {_short(sha)}: {total} entries{shown}", *entries]),
            data={"revision": sha, "path": path, "entries": entries, "truncated": bool(shown)},
        )

    async def _find_files(self, arguments: dict[str, Any]) -> ToolResult:
        """The files the names can be, looked up without walking the tree where possible.

        A name given with folders (as a frame reports it) is first tried as written, at each
        of its suffixes, also under the top-level folders and the usual source roots, in one
        `git cat-file --batch-check`: the cost follows the names, not the repository. Names
        left over are matched by file name with a glob-pathspec git grep (git reads only the
        files of those names)."""
        args = _FindArgs.model_validate(arguments)
        sha = await self.resolve(args.revision)
        bases: list[str] = []
        wanted: list[tuple[str, str]] = []  # (file name, path as given)
        for raw in args.names:
            path = str(raw).replace("\\", "/").strip().strip("/")
            if any(ch in path for ch in "\x00\n\r"):
                raise ToolFailure("invalid file name: control characters are not allowed")
            base = path.rsplit("/", 1)[-1]
            if base and base not in (".", ".."):
                wanted.append((base, path))
                if base not in bases:
                    bases.append(base)
        if not bases:
            raise ToolFailure("give at least one file name")
        found_exact = await self._probe(sha, wanted)
        rest = [b for b in bases if not any(p.rsplit("/", 1)[-1] == b for p in found_exact)]
        paths: set[str] = set(found_exact)
        if rest:
            paths |= await self._by_name(sha, rest)
        found = sorted(paths)
        truncated = len(found) > MAX_FIND_RESULTS
        found = found[:MAX_FIND_RESULTS]
        head = f"{len(found)} file(s) named {', '.join(bases[:8])}"
        head += " …" if len(bases) > 8 else ""
        return ToolResult(
            source="code",
            title=f"files named {', '.join(bases[:3])}{' …' if len(bases) > 3 else ''} @ "
            f"{_short(sha)}",
            link=self._tree_link(sha, ""),
            revision=sha,
            text="\n".join([f"{head} @ {_short(sha)}", *found]),
            data={"revision": sha, "names": bases, "entries": found, "truncated": truncated},
        )

    async def _by_name(self, sha: str, bases: list[str]) -> set[str]:
        # Each name is matched literally: glob characters in it are escaped.
        specs = [f":(glob)**/{_glob_literal(b)}" for b in bases]
        run = await self._git(
            "grep",
            "-l",
            "-z",
            "--no-color",
            "-e",
            "",
            sha,
            "--",
            *specs,
            literal=False,
            check=False,
        )
        if run.returncode not in (0, 1) and not run.truncated:
            raise ToolFailure(f"git grep failed: {_one_line(run.stderr, 'file search failed')}")
        prefix = f"{sha}:"
        return {
            p[len(prefix) :] if p.startswith(prefix) else p for p in run.stdout.split("\0") if p
        }

    async def _probe(self, sha: str, wanted: list[tuple[str, str]]) -> set[str]:
        """Which of the likely paths of the names exist at `sha` (blobs), in one batch."""
        with_folders = [path for _, path in wanted if "/" in path]
        if not with_folders:
            return set()
        top = await self._git("ls-tree", "-d", "--name-only", "-z", sha)
        folders = [d for d in top.stdout.split("\0") if d][:50]
        roots = ["", "src/main/java/", "src/main/kotlin/", "src/", "app/", "lib/"]
        roots += [f"{d}/" for d in folders]
        roots += [f"{d}/src/main/java/" for d in folders] + [
            f"{d}/src/main/kotlin/" for d in folders
        ]
        candidates: list[str] = []
        for path in with_folders:
            parts = path.split("/")
            for i in range(len(parts) - 1):
                suffix = "/".join(parts[i:])
                candidates += [root + suffix for root in dict.fromkeys(roots)]
        candidates = [c for c in dict.fromkeys(candidates) if ".." not in c.split("/")][:20_000]
        batch = "".join(f"{sha}:{c}\n" for c in candidates).encode()
        env = {**os.environ, **_GIT_ENV}
        proc = await asyncio.create_subprocess_exec(
            "git",
            "-C",
            str(self.repo_dir),
            *_GIT_GLOBAL,
            "cat-file",
            "--batch-check",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        try:
            async with asyncio.timeout(self.git_timeout):
                out, _ = await proc.communicate(batch)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise ToolFailure(f"git cat-file timed out after {self.git_timeout:g} s") from None
        found = set()
        for candidate, line in zip(
            candidates, out.decode("utf-8", "replace").split("\n"), strict=False
        ):
            if line.split(" ")[1:2] == ["blob"]:
                found.add(candidate)
        # The longest agreement with the path as given wins; shorter ones are other files.
        best: dict[str, str] = {}
        for path in with_folders:
            hits = [c for c in found if c.endswith(path.split("/", 1)[-1]) or c.endswith(path)]
            hits.sort(key=lambda c: -len(_common_suffix(c, path)))
            if hits:
                best[path] = hits[0]
        return set(best.values())

    async def _find_symbol(self, arguments: dict[str, Any]) -> ToolResult:
        args = _SymbolArgs.model_validate(arguments)
        name = args.name.strip()
        if not _IDENTIFIER.match(name):
            raise ToolFailure(
                f"invalid symbol name {args.name!r}: give one identifier, e.g. 'OrderService'"
            )
        sha = await self.resolve(args.revision)
        cmd = ["grep", "-n", "-z", "-I", "--no-color", "-E"]
        for pattern in _symbol_patterns(name):
            cmd += ["-e", pattern]
        run = await self._git(*cmd, sha, check=False)
        if run.returncode not in (0, 1) and not run.truncated:
            raise ToolFailure(f"git grep failed: {_one_line(run.stderr, 'symbol search failed')}")
        matches = []
        for match in self._parse_grep(run.stdout, sha):
            kind = _classify_symbol(name, match["text"])
            if kind is not None:
                matches.append({**match, "kind": kind})
        total = len(matches)
        matches = matches[:MAX_SYMBOL_RESULTS]
        body = [f"{m['path']}:{m['line']} [{m['kind']}] {m['text'].strip()[:240]}" for m in matches]
        if matches:
            head = f"{total} declarations of {name} @ {_short(sha)}"
            if total > len(matches):
                head += f" (first {len(matches)} shown)"
            text = "\n".join([head, *body])
        else:
            text = f"no declaration of {name} found @ {_short(sha)} (try git_grep for uses)"
        single = matches[0] if len(matches) == 1 else None
        return ToolResult(
            source="code",
            title=f"symbol {name} @ {_short(sha)}",
            link=(
                self._blob_link(sha, single["path"], single["line"], single["line"])
                if single
                else self._tree_link(sha, "")
            ),
            path=single["path"] if single else None,
            revision=sha,
            text=text,
            data={"revision": sha, "name": name, "matches": matches},
        )

    async def _changes(self, arguments: dict[str, Any]) -> ToolResult:
        args = _ChangesArgs.model_validate(arguments)
        paths = [check_path(p) for p in (args.paths or [])]
        head = await self.resolve(args.head)
        base: str | None
        limit = args.max_commits or MAX_COMMITS
        if args.base is not None and args.base.strip():
            base = await self.resolve(args.base)
            span = [f"{base}..{head}"]
        elif args.max_commits and args.max_commits > 1:
            base, span = None, [head]  # the recent history of head
        else:
            base = await self.parent(head)
            # A root commit has no parent: its own change is the whole tree.
            span = [f"{base}..{head}"] if base else ["-n", "1", head]
        run = await self._git(
            "log",
            f"-n{limit + 1}",
            "--root",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-M",
            "-p",
            f"--unified={args.context}",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--format=%x1e%H%x1f%P%x1f%an%x1f%aI%x1f%s",
            *span,
            "--",
            *paths,
        )
        commits = []
        for chunk in run.stdout.split("\x1e")[1:]:
            header, _, patch = chunk.partition("\n")
            fields = header.split("\x1f")
            if len(fields) != 5:
                continue
            sha, parents, author, date, summary = fields
            commits.append(
                {
                    "sha": sha,
                    "parents": parents.split(),
                    "author": author,
                    "date": date,
                    "summary": summary,
                    "files": _parse_patch(patch),
                }
            )
        truncated = len(commits) > limit or run.truncated
        commits = commits[:limit]
        text = self._render_changes(base, head, paths, commits, truncated)
        for commit in commits:  # context lines tell which function a change sits in
            for file in commit["files"]:
                for hunk in file["hunks"]:
                    lines = hunk.pop("lines", [])
                    hunk["context"] = [[n, text] for tag, n, text in lines if tag == " "]
        if len(commits) == 1:
            link = self._commit_link(commits[0]["sha"])
        elif base:
            link = f"https://github.com/{self.repository}/compare/{base}...{head}"
        else:
            link = self._commit_link(head)
        scope = f" in {', '.join(paths)}" if paths else ""
        return ToolResult(
            source="code",
            title=f"changes {_short(base)}..{_short(head)}{scope}",
            link=link,
            path=paths[0] if len(paths) == 1 else None,
            revision=head,
            text=text,
            data={
                "base": base,
                "head": head,
                "paths": paths,
                "commits": commits,
                "truncated": truncated,
            },
        )

    # -- rendering and parsing -------------------------------------------------

    @staticmethod
    def _render_changes(
        base: str | None,
        head: str,
        paths: list[str],
        commits: list[dict[str, Any]],
        truncated: bool,
    ) -> str:
        scope = f" touching {', '.join(paths)}" if paths else ""
        more = f" (the newest {len(commits)} shown)" if truncated else ""
        out = [
            f"{len(commits)} commit(s) in {_short(base)}..{_short(head)}{scope},"
            f" newest first{more}.",
            "Numbers: new-file line for '+' and context lines, old-file line for '-'.",
        ]
        for commit in commits:
            out += [
                "",
                f"commit {commit['sha']}",
                f"Author: {commit['author']}  Date: {commit['date']}",
            ]
            out.append(f"    {commit['summary']}")
            if not commit["files"]:
                out.append("  (no file changes shown)")
            for file in commit["files"]:
                renamed = (
                    f" (renamed from {file['old_path']})"
                    if file.get("old_path") and file["old_path"] != file["path"]
                    else ""
                )
                out.append(f"  {file['path']} [{file['status']}]{renamed}")
                for hunk in file["hunks"]:
                    out.append(f"    {hunk['header']} {hunk['function']}".rstrip())
                    for sign, number, text in hunk["lines"]:
                        out.append(f"    {number:>5} {sign}{text}")
        return "\n".join(out)

    @staticmethod
    def _parse_grep(stdout: str, sha: str) -> list[dict[str, Any]]:
        matches = []
        prefix = f"{sha}:"
        for record in stdout.split("\n"):
            parts = record.split("\0", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            name = parts[0][len(prefix) :] if parts[0].startswith(prefix) else parts[0]
            matches.append({"path": name, "line": int(parts[1]), "text": parts[2]})
        return matches

    # -- git ---------------------------------------------------------------------

    async def _object_type(self, sha: str, path: str) -> str | None:
        run = await self._git("cat-file", "-t", f"{sha}:{path}", check=False)
        return run.stdout.strip() if run.returncode == 0 else None

    async def _require_file(self, sha: str, path: str) -> None:
        kind = await self._object_type(sha, path)
        if kind is None:
            raise ToolFailure(f"{path} does not exist at {_short(sha)}")
        if kind != "blob":
            raise ToolFailure(f"{path} is a folder, not a file, at {_short(sha)}")

    async def _require_exists(self, sha: str, path: str) -> None:
        if await self._object_type(sha, path) is None:
            raise ToolFailure(f"{path} does not exist at {_short(sha)}")

    async def _git(
        self,
        *args: str,
        check: bool = True,
        max_bytes: int = MAX_OUTPUT_BYTES,
        seconds: float | None = None,
        literal: bool = True,
    ) -> _GitRun:
        """Run git without a shell; read at most `max_bytes` of its output.

        Pathspecs are literal unless `literal=False`, for a caller that escapes its own."""
        env = {**os.environ, **_GIT_ENV}
        try:
            proc = await asyncio.create_subprocess_exec(
                "git",
                "-C",
                str(self.repo_dir),
                *(_GIT_GLOBAL if literal else _GIT_GLOBAL[1:]),
                *args,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
        except OSError as exc:
            raise ToolFailure(f"git could not run: {exc}") from exc
        assert proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout, proc.stderr
        truncated = False

        async def read_stdout() -> bytes:
            nonlocal truncated
            chunks: list[bytes] = []
            size = 0
            while chunk := await stdout.read(65536):
                chunks.append(chunk)
                size += len(chunk)
                if size >= max_bytes:
                    truncated = True
                    proc.kill()
                    break
            return b"".join(chunks)

        try:
            async with asyncio.timeout(seconds or self.git_timeout):
                out, err = await asyncio.gather(read_stdout(), stderr.read())
                await proc.wait()
        except TimeoutError:
            limit = seconds or self.git_timeout
            raise ToolFailure(f"git {args[0]} timed out after {limit:g} s") from None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            # Drain and reap so the transport closes here, not with a ResourceWarning at GC.
            with contextlib.suppress(Exception):
                await stdout.read()
                await stderr.read()
            await proc.wait()
        run = _GitRun(
            proc.returncode if not truncated else 0,
            out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"),
            truncated,
        )
        if check and run.returncode != 0:
            raise ToolFailure(_one_line(run.stderr, f"git {args[0]} failed"))
        return run

    # -- results and links ---------------------------------------------------------

    def _error(self, tool: str, message: str) -> ToolResult:
        return ToolResult(source="code", title=f"{tool} failed", text=message, is_error=True)

    def _blob_link(self, sha: str, path: str, start: int, end: int) -> str:
        return f"https://github.com/{self.repository}/blob/{sha}/{quote(path)}#L{start}-L{end}"

    def _tree_link(self, sha: str, path: str) -> str:
        suffix = f"/{quote(path)}" if path else ""
        return f"https://github.com/{self.repository}/tree/{sha}{suffix}"

    def _commit_link(self, sha: str) -> str:
        return f"https://github.com/{self.repository}/commit/{sha}"


def _parse_patch(patch: str) -> list[dict[str, Any]]:
    """`git log -p` output of one commit → files with hunks and numbered added/removed lines."""
    files: list[dict[str, Any]] = []
    file: dict[str, Any] | None = None
    hunk: dict[str, Any] | None = None
    old_no = new_no = old_left = new_left = 0
    for line in patch.split("\n"):
        if hunk is not None and (old_left > 0 or new_left > 0):
            tag, text = line[:1], line[1:]
            if tag == "+":
                hunk["added"].append([new_no, text])
                hunk["lines"].append(("+", new_no, text))
                new_no, new_left = new_no + 1, new_left - 1
                continue
            if tag == "-":
                hunk["removed"].append([old_no, text])
                hunk["lines"].append(("-", old_no, text))
                old_no, old_left = old_no + 1, old_left - 1
                continue
            if tag == " " or line == "":
                hunk["lines"].append((" ", new_no, text))
                old_no, new_no = old_no + 1, new_no + 1
                old_left, new_left = old_left - 1, new_left - 1
                continue
            if tag == "\\":  # "\ No newline at end of file"
                continue
        if line.startswith("diff --git "):
            file = {"path": None, "old_path": None, "status": "modified", "hunks": []}
            files.append(file)
            hunk = None
            # Fallback names: binary or mode-only changes have no ---/+++ lines.
            file["old_path"], file["path"] = _header_paths(line[len("diff --git ") :])
            continue
        if file is None:
            continue
        if line.startswith("\\"):
            continue
        m = _HUNK.match(line)
        if m:
            old_no, new_no = int(m.group(1)), int(m.group(3))
            old_left = int(m.group(2)) if m.group(2) is not None else 1
            new_left = int(m.group(4)) if m.group(4) is not None else 1
            hunk = {
                "header": line[: line.index("@@", 2) + 2],
                "function": m.group(5).strip(),
                "old_start": old_no,
                "old_lines": old_left,
                "new_start": new_no,
                "new_lines": new_left,
                "added": [],
                "removed": [],
                "lines": [],
            }
            file["hunks"].append(hunk)
        elif hunk is None and line.startswith("--- "):
            file["old_path"] = _diff_path(line[4:])
        elif hunk is None and line.startswith("+++ "):
            new_path = _diff_path(line[4:])
            if new_path is None:
                file["status"] = "deleted"
                file["path"] = file["old_path"]
            else:
                file["path"] = new_path
        elif line.startswith("new file mode"):
            file["status"] = "added"
        elif line.startswith("deleted file mode"):
            file["status"] = "deleted"
        elif line.startswith("rename from "):
            file["status"] = "renamed"
            file["old_path"] = _unquote(line[len("rename from ") :])
        elif line.startswith("rename to "):
            file["path"] = _unquote(line[len("rename to ") :])
    for f in files:
        if f["path"] is None:
            f["path"] = f["old_path"]
        if f["status"] == "added":
            f["old_path"] = None
    return files


# -- annotations for mcp-server-git results ------------------------------------------


def git_annotator(repository: str) -> Callable[[str, dict[str, Any], ToolResult], ToolResult]:
    """For McpToolset(annotate=...) over mcp-server-git: titles, paths, revisions, links."""

    def annotate(tool: str, arguments: dict[str, Any], result: ToolResult) -> ToolResult:
        if result.is_error:
            return result
        if tool == "git_log":
            return result.model_copy(update={"title": "git log"})
        if tool != "git_show":
            return result
        revision = str(arguments.get("revision", ""))
        rev, sep, path = revision.partition(":")
        if sep and path:
            full = bool(_FULL_SHA.match(rev))
            return result.model_copy(
                update={
                    "title": f"{path} @ {rev[:7] if _SHA.match(rev) else rev}",
                    "path": path,
                    "revision": rev,
                    "link": (
                        f"https://github.com/{repository}/blob/{rev}/{quote(path)}"
                        if full
                        else None
                    ),
                }
            )
        m = re.match(r"^commit ([0-9a-f]{40,64})\n", result.text)
        if m:
            sha = m.group(1)
            subject = ""
            for line in result.text.split("\n")[1:]:
                if line.startswith("    ") and line.strip():
                    subject = line.strip()
                    break
            return result.model_copy(
                update={
                    "title": f"commit {sha[:7]}: {subject}".rstrip(": "),
                    "revision": sha,
                    "link": f"https://github.com/{repository}/commit/{sha}",
                }
            )
        return result

    return annotate
