"""A compact map of the repository at a revision, for the model's context before any tool.

Files grouped by folder, each source file with its main declarations (classes, functions,
methods), read from git at the revision with two read-only commands: `ls-tree` for the
paths and one `git grep` of declaration-shaped lines. Both are bounded in bytes and time,
so a repository of any size costs the same; the text is fitted to a token budget by
showing less of the folders that matter least (members, then names, then a count), the
folders of the files the investigation already read first. Declarations come from a
regular expression per language, not a parser: the map says so.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.domain import Investigation, Message

DEFAULT_TOKENS = 1500
CHARS_PER_TOKEN = 4
MAX_BYTES = 2_000_000
TIMEOUT = 5.0
DATA_KEY = "repo_map"
HEADER = "Repository map"

SOURCE = {
    *("py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "java", "kt", "kts"),
    *("scala", "groovy", "rb", "php", "rs", "cs", "swift", "c", "h", "cc", "cpp", "hpp"),
    *("ex", "exs", "erl", "clj", "dart", "lua", "m", "mm", "vue", "svelte"),
}
LOW_PRIORITY = re.compile(
    r"(^|/)(tests?|spec|__tests__|testdata|fixtures|vendor|node_modules|dist|build|target|"
    r"third_party|examples?|docs?|migrations|generated|gen|mocks?|stubs?)(/|$)"
)

# What `git grep -E` looks for: lines that open with a declaration keyword (indented at
# most one level), an exported arrow function, or a modified JVM/C# method. Coarse on
# purpose; `parse` keeps only what it can name.
_MODIFIERS = (
    "export|public|private|protected|internal|static|final|abstract|sealed|open|data|"
    "default|async|pub|override|suspend|inline|partial|virtual|readonly|declare"
)
_KEYWORDS = "class|interface|trait|enum|record|object|struct|module|def|func|function|fun|fn|type"
_JVM_MODIFIERS = (
    "public|private|protected|static|final|abstract|synchronized|override|async|virtual|internal"
)
GREP = [
    rf"^[[:space:]]{{0,4}}(({_MODIFIERS})[[:space:]]+)*({_KEYWORDS})[[:space:]]",
    r"^(export[[:space:]]+)?const[[:space:]]+[A-Za-z_$][A-Za-z0-9_$]*[[:space:]]*=[[:space:]]*"
    r"(async[[:space:]]*)?(\(|function)",
    rf"^[[:space:]]{{1,4}}(({_JVM_MODIFIERS})[[:space:]]+)+[A-Za-z_][][A-Za-z0-9_<>,.?[:space:]]*"
    r"[[:space:]][A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(",
]
_DECL = re.compile(
    rf"^(?P<indent>\s*)(?:(?:{_MODIFIERS})\s+)*(?P<kind>{_KEYWORDS})\s+"
    r"(?:\((?P<receiver>[^)]*)\)\s*)?(?:<[^>]*>\s*)?\*?(?:[A-Za-z_][\w]*\.)?"
    r"(?P<name>[A-Za-z_$][\w$]*)"
)
_ARROW = re.compile(r"^(?:export\s+)?const\s+(?P<name>[A-Za-z_$][\w$]*)\s*=")
_METHOD = re.compile(
    r"^(?P<indent>\s+)(?:(?:public|private|protected|static|final|abstract|synchronized|"
    r"override|async|virtual|internal)\s+)+[\w<>\[\],.? ]*?\s(?P<name>[A-Za-z_]\w*)\s*\("
)
_NOT_NAMES = {"if", "for", "while", "switch", "return", "new", "catch"}
_SHORT = {
    "class": "class",
    "interface": "interface",
    "trait": "trait",
    "enum": "enum",
    "record": "record",
    "object": "object",
    "struct": "struct",
    "module": "module",
    "type": "type",
}


class Outline(Protocol):
    """What a map is built from: the paths and the declaration-shaped lines at a revision."""

    async def outline(
        self, revision: str, patterns: Sequence[str], *, max_bytes: int, seconds: float
    ) -> tuple[str, list[str], list[tuple[str, int, str]], bool]:
        """(full sha, paths, (path, line, text) of lines matching, whether output was cut)."""
        ...


@dataclass
class Definition:
    path: str
    line: int
    kind: str  # "class", "function", "method", ...
    name: str
    member: bool  # indented: a method or a nested type


def parse(path: str, line: int, text: str) -> Definition | None:
    if path.rsplit(".", 1)[-1].lower() not in SOURCE:
        return None
    # Kotlin's `enum class X` is an enum; `data class X`, `sealed interface X` are the type.
    text = re.sub(r"\benum\s+class\b", "enum", text)
    text = re.sub(
        r"\b(?:data|sealed|annotation|inner|value|fun)\s+(class|interface)\b", r"\1", text
    )
    m = _DECL.match(text)
    if m:
        kind = m.group("kind")
        kind = _SHORT.get(kind, "function")
        member = bool(m.group("indent"))
        if kind == "function" and member:
            kind = "method"
        name = m.group("name")
        receiver = re.findall(r"[A-Za-z_]\w*", m.group("receiver") or "")
        if receiver:  # Go's `func (s *Server) Handle`: a method of Server
            name, kind = f"{receiver[-1]}.{name}", "method"
        return _definition(path, line, kind, name, member)
    m = _ARROW.match(text)
    if m:
        return _definition(path, line, "function", m.group("name"), False)
    m = _METHOD.match(text)
    if m:
        return _definition(path, line, "method", m.group("name"), True)
    return None


def _definition(path: str, line: int, kind: str, name: str, member: bool) -> Definition | None:
    if name in _NOT_NAMES or len(name) < 2:
        return None
    return Definition(path, line, kind, name, member)


@dataclass
class Folder:
    path: str  # "" for the root
    files: list[str] = field(default_factory=list)
    defs: dict[str, list[Definition]] = field(default_factory=dict)
    priority: tuple[int, ...] = (0,)
    level: int = 0  # 0 members, 1 top-level names, 2 file names only, 3 a count

    def lines(self) -> list[str]:
        label = f"{self.path}/" if self.path else "./"
        if self.level == 3:
            return [f"{label} ({len(self.files)} files)"]
        out = [label]
        plain: list[str] = []
        for f in self.files:
            name = posixpath.basename(f)
            defs = self.defs.get(f) or []
            if self.level <= 1 and defs:
                tops = [d for d in defs if not d.member]
                shown = ", ".join(_label(d) for d in tops[:12])
                if len(tops) > 12:
                    shown += f", +{len(tops) - 12}"
                members = [d.name for d in defs if d.member]
                if self.level == 0 and members:
                    more = f", +{len(members) - 15}" if len(members) > 15 else ""
                    shown += f" [{', '.join(members[:15])}{more}]"
                out.append(f"  {name}: {shown}" if shown else f"  {name}")
            else:
                plain.append(name)
        if plain:
            out.append("  " + ", ".join(plain))
        return out

    def size(self) -> int:
        return sum(len(x) + 1 for x in self.lines())


def _label(d: Definition) -> str:
    return d.name if d.kind in ("function", "method") else f"{d.kind} {d.name}"


def render(
    revision: str,
    paths: Sequence[str],
    definitions: Sequence[Definition],
    *,
    budget_chars: int,
    focus: Sequence[str] = (),
    truncated: bool = False,
    at_release: bool = True,
) -> str:
    """The map as text of at most about `budget_chars` characters."""
    folders: dict[str, Folder] = {}
    for p in paths:
        folders.setdefault(posixpath.dirname(p), Folder(posixpath.dirname(p))).files.append(p)
    for d in definitions:
        folder = folders.get(posixpath.dirname(d.path))
        if folder is not None:
            folder.defs.setdefault(d.path, []).append(d)
    wanted = {posixpath.dirname(f) for f in focus}
    for f in folders.values():
        near = 0 if f.path in wanted else 1 if any(w.startswith(f.path) for w in wanted) else 2
        low = 1 if LOW_PRIORITY.search(f.path + "/") else 0
        # Big folders say least per character: they are shown in less detail first.
        crowded = 1 if len(f.files) > 30 else 0
        f.priority = (near, low, crowded, f.path.count("/"), f.path)
    order = sorted(folders.values(), key=lambda f: f.path)
    where = "the running revision" if at_release else "HEAD (the running release is not known yet)"
    head = [
        f"{HEADER} at {revision[:12]}, {where}: {len(paths)} files in {len(folders)} folders; "
        "declarations found by a regular expression per language, not verified.",
    ]
    if truncated:
        head.append("(git's output was cut at its size or time limit: some files are missing)")
    sizes = {f.path: f.size() for f in order}
    total = sum(len(x) + 1 for x in head) + sum(sizes.values())
    # Show less of the folders that matter least until the map fits: the folders far from
    # the files read go down to a count before those near them lose anything.
    for tier in (2, 1, 0):
        group = sorted((f for f in order if f.priority[0] == tier), key=lambda f: f.priority)
        for level in (1, 2, 3):
            for f in reversed(group):
                if total <= budget_chars:
                    break
                if f.level < level:
                    f.level = level
                    new = f.size()
                    total += new - sizes[f.path]
                    sizes[f.path] = new
    shown = order
    if total > budget_chars:  # still too long: whole folders go, the least wanted first
        keep = sorted(order, key=lambda f: f.priority)
        while keep and total > budget_chars:
            total -= sizes[keep.pop().path]
        shown = sorted(keep, key=lambda f: f.path)
    lines = head + [x for f in shown for x in f.lines()]
    if len(shown) < len(order):
        lines.append(f"… {len(order) - len(shown)} more folders not shown")
    return "\n".join(lines)


@dataclass
class RepoMap:
    revision: str
    text: str
    files: int
    definitions: int
    truncated: bool
    seconds: float


async def build(
    source: Outline,
    revision: str,
    *,
    tokens: int = DEFAULT_TOKENS,
    focus: Sequence[str] = (),
    at_release: bool = True,
    max_bytes: int = MAX_BYTES,
    seconds: float = TIMEOUT,
) -> RepoMap:
    started = time.monotonic()
    sha, paths, matches, truncated = await source.outline(
        revision, GREP, max_bytes=max_bytes, seconds=seconds
    )
    defs = [d for p, n, text in matches if (d := parse(p, n, text)) is not None]
    text = render(
        sha,
        paths,
        defs,
        budget_chars=tokens * CHARS_PER_TOKEN,
        focus=focus,
        truncated=truncated,
        at_release=at_release,
    )
    return RepoMap(sha, text, len(paths), len(defs), truncated, time.monotonic() - started)


async def message(source: Outline, inv: Investigation, *, tokens: int = DEFAULT_TOKENS) -> Message:
    """The map as a user message: at the revision the evidence so far was read at (the
    pre-fetch found the release), else at HEAD; the files already read lead."""
    revisions = [ev.revision for ev in inv.evidence if ev.source == "code" and ev.revision]
    release = next((r for r in reversed(revisions) if re.fullmatch(r"[0-9a-f]{40}", r)), None)
    focus = [ev.path for ev in inv.evidence if ev.source == "code" and ev.path]
    found = await build(
        source, release or "HEAD", tokens=tokens, focus=focus, at_release=release is not None
    )
    data: dict[str, Any] = {
        DATA_KEY: {
            "revision": found.revision,
            "files": found.files,
            "definitions": found.definitions,
            "chars": len(found.text),
            "truncated": found.truncated,
            "seconds": round(found.seconds, 3),
        }
    }
    return Message(role="user", content=found.text, data=data)
