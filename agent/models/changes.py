"""Which recent change explains the crash?

Every hunk of the recent history is scored against what the failing request
tells: the crash line and the lines just above it, the other frames of the
stack (across a chained exception), the identifiers of the exception, and when
the errors began. The fault is not always on the crash line: a change in a
caller on the stack, or in a function the crash line calls, scores as well.

Line numbers of an older commit's hunk are that commit's; they are mapped to
the running revision by the text of the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent import stacktrace
from agent.models import relevance

# Exceptions about something absent: a null, a missing key, an empty collection.
NULLISH = re.compile(
    r"null|none|nil\b|undefined|keyerror|nullpointer|indexerror|index out of range|"
    r"nosuchelement|missing|not found|empty",
    re.IGNORECASE,
)
GUARD = re.compile(
    r"\bnull\b|\bNone\b|\bnil\b|\bundefined\b|\?\?|\?\.|\|\||\.get\(|getOrDefault|"
    r"\bdefault\b|Optional|\bif\b|\bok\b|len\(|\btry\b|\bexcept\b|\bcatch\b|\brescue\b|"
    r"fallback|orElse|isset|empty\(",
)
DECLARATION = re.compile(
    r"^\s*(def|func|function|fun|class|public|private|protected|static|async def|@|#|//|/\*|\*|"
    r'"""|\'\'\')'
)
DOCS = (".md", ".markdown", ".txt", ".rst", ".adoc")
# A null handed on as a value (assigned, returned, a field), not compared against and not
# the nil beside an error in Go's `return nil, err`.
NULL_LITERAL = re.compile(
    r"(?:(?<![=!<>])=(?!=)|\breturn\b|:|\?|=>)\s*\(?\s*(null|None|nil|undefined)\b(?!\s*,)"
)
# Words that say nothing about *which* code is involved.
NOISE = {
    "return",
    "if",
    "else",
    "null",
    "none",
    "nil",
    "true",
    "false",
    "int",
    "str",
    "new",
    "this",
    "self",
    "var",
    "let",
    "const",
    "def",
    "func",
    "function",
    "public",
    "private",
    "static",
    "final",
    "string",
    "void",
    "class",
    "value",
    "values",
    "undefined",
    "err",
    "error",
    "exception",
    "cannot",
    "because",
    "invoke",
    "reading",
    "properties",
    "of",
    "object",
    "type",
    "len",
    "range",
    "index",
    "key",
    "java",
    "lang",
    "array",
    "method",
}


def useful(term: str) -> bool:
    return len(term) > 2 and term.lower() not in NOISE


def parts(term: str) -> set[str]:
    """`customerReference` → {customerreference, customer, reference}; `a.b` likewise."""
    out = {term.lower()}
    for piece in re.split(r"[._\-/:$\\]", term):
        if piece:
            out.add(piece.lower())
            out.update(p.lower() for p in relevance.CAMEL.findall(piece) if len(p) > 2)
    return {p for p in out if useful(p)}


def words_of(text: str) -> set[str]:
    return set().union(*(parts(t) for t in stacktrace.identifiers(text))) if text.strip() else set()


def names_of(text: str) -> set[str]:
    """Whole identifiers, split only at member access: `s.routes.For(x)` → s, routes, for, x."""
    out = set()
    for ident in re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", text):
        out.add(ident.lower())
    return out


def calls_of(text: str) -> set[str]:
    """Functions a line calls: `route := s.routes.For(req.Country)` → {for}."""
    return {name.lower() for name in re.findall(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*\(", text)}


def keys_read(text: str) -> set[str]:
    """Data keys a line reads: `pedido["lineas"]`, `config.get('billing.numbering')`."""
    keys = set()
    for literal in re.findall(r"""["']([A-Za-z_][A-Za-z0-9_.\-]*)["']""", text):
        keys |= {k.lower() for k in literal.split(".") if useful(k)}
    return keys


_KEY_WRITTEN = re.compile(
    r"""["']?([A-Za-z_][A-Za-z0-9_]*)["']?\s*(?::(?!:)|=>|=(?!=))\s*(\S{0,24})"""
)


def keys_written(text: str) -> set[str]:
    """Keys a line defines: `"lineas": {...}`, `numbering: {`, `due_in_days=`."""
    return set(values_written(text))


def values_written(text: str) -> dict[str, str]:
    """Each key a line defines, with the start of the value it gets."""
    return {k.lower(): v for k, v in _KEY_WRITTEN.findall(text) if useful(k)}


def code_of(line: str) -> str:
    """The line without its comment: '' for a comment line, the code before `//` or `#`."""
    if DECLARATION.match(line) and re.match(r"^\s*(#|//|/\*|\*|\"\"\"|\'\'\')", line):
        return ""
    for marker in (" //", "\t//", " #", "\t#"):
        head, sep, _ = line.partition(marker)
        if sep and head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            line = head
    return line.rstrip()


def squash(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Crash:
    """What the failing request tells about where it failed."""

    path: str
    line: int
    function: str
    exc_type: str
    exc_value: str
    code: str = ""
    nearby: list[str] = field(default_factory=list)  # the crash line and the lines above it
    stack: list[tuple[stacktrace.Frame, str]] = field(default_factory=list)
    first_seen: datetime | None = None
    blamed: str | None = None

    @property
    def nullish(self) -> bool:
        return bool(NULLISH.search(f"{self.exc_type} {self.exc_value}"))

    def exception_terms(self) -> list[str]:
        return [t for t in stacktrace.identifiers(self.exc_value) if useful(t)]

    def code_terms(self) -> list[str]:
        return [t for t in stacktrace.identifiers(self.code) if useful(t)]


@dataclass
class Change:
    sha: str
    summary: str
    author: str
    date: str
    path: str
    hunk: dict[str, Any]
    line: int  # in the commit's own numbering
    text: str  # the suspect line's text
    score: float
    newest_for_path: bool  # no later commit touched the file: its numbering is the release's
    on_crash_line: bool = False
    reasons: list[str] = field(default_factory=list)


def pick(crash: Crash, commits: list[dict[str, Any]]) -> Change | None:
    """The best-explaining hunk of `commits` (newest first), or None if none explains it."""
    exc_terms = set().union(*(parts(t) for t in crash.exception_terms()), set())
    code_terms = set().union(*(parts(t) for t in crash.code_terms()), set())
    exc_names = {t.lower() for t in crash.exception_terms()}
    nearby_names = set().union(*(calls_of(line) for line in crash.nearby), set()) - NOISE
    nearby_keys = set().union(*(keys_read(line) for line in crash.nearby), set())
    stack_by_path: dict[str, list[stacktrace.Frame]] = {}
    for frame, path in crash.stack:
        stack_by_path.setdefault(path, []).append(frame)
    seen_paths: set[str] = set()
    best: Change | None = None
    rank = 0
    for commit in commits:
        when = relevance.parse_time(commit.get("date"))
        files = commit.get("files") or []
        if crash.first_seen and when and when > crash.first_seen:
            seen_paths.update(f.get("path") or "" for f in files)
            continue  # landed after the errors began: not their cause
        recency = 1.5 / (1 + rank)
        rank += 1
        for f in files:
            path = f.get("path") or ""
            newest = path not in seen_paths
            if path.lower().endswith(DOCS):
                continue
            for hunk in f.get("hunks") or []:
                change = score_hunk(
                    crash,
                    commit,
                    path,
                    hunk,
                    newest,
                    exc_terms,
                    code_terms,
                    exc_names,
                    nearby_names,
                    nearby_keys,
                    stack_by_path,
                )
                if change is None:
                    continue
                change.score += recency
                if crash.blamed and commit.get("sha") == crash.blamed and path == crash.path:
                    change.score += 2
                    change.reasons.append("blame of the crash line")
                if int(hunk.get("old_start") or 0) == 0 and int(hunk.get("old_lines") or 0) == 0:
                    change.score *= 0.3  # a whole new file: everything in it was "changed"
                if best is None or change.score > best.score:
                    best = change
        seen_paths.update(f.get("path") or "" for f in files)
    return best if best is not None and best.score >= 3 else None


def score_hunk(
    crash: Crash,
    commit: dict[str, Any],
    path: str,
    hunk: dict[str, Any],
    newest: bool,
    exc_terms: set[str],
    code_terms: set[str],
    exc_names: set[str],
    nearby_names: set[str],
    nearby_keys: set[str],
    stack_by_path: dict[str, list[stacktrace.Frame]],
) -> Change | None:
    # Comments and blank lines change nothing a request runs: judge the code alone.
    added = [(int(n), code) for n, t in hunk.get("added") or [] if (code := code_of(str(t)))]
    removed = [code for _, t in hunk.get("removed") or [] if (code := code_of(str(t)))]
    if sorted(squash(t) for _, t in added) == sorted(squash(t) for t in removed):
        return None  # only comments, formatting or blank lines
    start, count = int(hunk.get("new_start") or 0), int(hunk.get("new_lines") or 0)
    end = start + max(count, 1) - 1
    score, reasons = 0.0, []
    crash_code = code_of(crash.code)
    introduced = [n for n, t in added if crash_code and squash(t) == squash(crash_code)]
    if path == crash.path and introduced:
        score += 6
        reasons.append("adds the crash line")
    elif path == crash.path and newest and start <= crash.line <= end:
        score += 3
        reasons.append("changes the code around the crash line")
    frame_line: tuple[int, str] | None = None
    for frame in stack_by_path.get(path, []):
        if path == crash.path and frame.lineno == crash.line:
            continue
        by_text = [
            (n, t)
            for n, t in added
            if frame.context_line and squash(t) == squash(code_of(frame.context_line))
        ]
        by_number = [(n, t) for n, t in added if newest and n == frame.lineno]
        if by_text or by_number:
            frame_line = (by_text or by_number)[0]
        if frame_line or (newest and frame.lineno and start - 3 <= frame.lineno <= end + 3):
            score += 4
            reasons.append(f"changes {frame.function} on the stack")
            break
        function = last_segment(frame.function or "")
        if function and function.lower() in names_of(str(hunk.get("function") or "")):
            score += 2
            reasons.append(f"changes {frame.function} on the stack")
            break
    defined = defined_names(hunk)
    called = defined & nearby_names
    calls_into = bool(called) and not (path == crash.path and introduced)
    if calls_into:
        score += 4
        reasons.append(f"changes {', '.join(sorted(called))}, which the failing code calls")
    # A change to the shape of data the failing code reads: a key it looks up, renamed,
    # dropped or given another type where the data is built.
    before: dict[str, str] = {}
    for t in removed:
        before.update(values_written(t))
    after: dict[str, str] = {}
    for _, t in added:
        after.update(values_written(t))
    # Dropped or renamed, or given a value of another shape (`[` became `{`).
    shaped = {
        k for k in before.keys() & nearby_keys if k not in after or after[k][:1] != before[k][:1]
    }
    key_line = (
        next(((n, t) for n, t in added if keys_written(t) & shaped), None)
        if shaped and path != crash.path
        else None
    )
    if shaped and path != crash.path:
        score += 5
        reasons.append(f"changes {', '.join(sorted(shaped))}, which the failing code reads")
    # A change that now produces the null the failing code trips on.
    mentions = words_of(" ".join(t for _, t in added))
    nulls_added = (
        crash.nullish
        and any(NULL_LITERAL.search(t) for _, t in added)
        and not any(NULL_LITERAL.search(t) for t in removed)
    )
    produces_null = (
        nulls_added and bool(mentions & (exc_terms | code_terms)) and (path != crash.path)
    )
    if produces_null:
        score += 4
        reasons.append("now produces a null the failing code does not expect")
    changed_terms = words_of(" ".join([t for _, t in added] + removed))
    overlap = 1.5 * len(exc_terms & changed_terms) + 1.0 * len(code_terms & changed_terms)
    linked = path in stack_by_path or calls_into or bool(shaped) or produces_null
    score += min(6.0, overlap if linked else overlap / 4)
    removed_names = set().union(*(names_of(t) for t in removed), set())
    added_names = set().union(*(names_of(t) for _, t in added), set())
    gone = {n for n in exc_names if n in removed_names and n not in added_names}
    if gone:
        score += 3
        reasons.append(f"removes {', '.join(sorted(gone))}, named by the exception")
    if (
        crash.nullish
        and any(GUARD.search(r) for r in removed)
        and not all(GUARD.search(t) for _, t in added)
    ):
        score += 2
        reasons.append("drops a guard")
    if score <= 0:
        return None
    binds = binding_line(added, crash) if crash.nullish else None
    if path == crash.path and introduced:
        line, text = introduced[0], crash.code
    elif binds is not None:
        line, text = binds  # where the value the crash dereferences is now bound
    elif frame_line is not None:
        line, text = frame_line[0], frame_line[1].strip()  # the changed line the request ran
    elif calls_into:
        line, text = suspect_line(hunk, exc_terms | code_terms, called, start)
    elif key_line is not None:
        line, text = key_line[0], key_line[1].strip()  # where the data is now built otherwise
    elif produces_null:
        line, text = next((n, t.strip()) for n, t in added if NULL_LITERAL.search(t))
    else:
        line, text = suspect_line(hunk, exc_terms | code_terms, called, start)
    return Change(
        sha=str(commit.get("sha", "")),
        summary=str(commit.get("summary", "")),
        author=str(commit.get("author", "")),
        date=str(commit.get("date", "")),
        path=path,
        hunk=hunk,
        line=line,
        text=text,
        score=score,
        newest_for_path=newest,
        on_crash_line=bool(path == crash.path and introduced),
        reasons=reasons,
    )


_ASSIGN = re.compile(r"(?<![=!<>])=(?![=>])")


def binding_line(added: list[tuple[int, str]], crash: Crash) -> tuple[int, str] | None:
    """The changed line that binds a variable the crash line dereferences (`items.map`)."""
    dereferenced = {
        n.lower() for n in re.findall(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*(?:\?\.|\.|\[)", crash.code)
    } - NOISE
    for n, text in added:
        m = _ASSIGN.search(text)
        head = text[: m.start()] if m else ""
        if m and "(" not in head and names_of(head) & dereferenced:
            return n, text.strip()
    return None


def last_segment(function: str) -> str:
    """`App\\Http\\InvoiceController::store` → store; `(*Server).sendMessage` → sendMessage."""
    pieces = [p for p in re.split(r"[.:#/\\\s()*]+", function) if p and p != "<lambda>"]
    return pieces[-1].strip("<>") if pieces else ""


_DEFINITION = re.compile(
    r"(?:def|func|function|fun|class|record|interface|struct|type)\s+(?:\([^)]*\)\s*)?"
    r"([A-Za-z_$][A-Za-z0-9_$]*)|([A-Za-z_$][A-Za-z0-9_$]*)\s*\([^)]*\)\s*(?:\{|:|->|throws)"
)


def definitions(text: str) -> set[str]:
    return {n.lower() for pair in _DEFINITION.findall(text) for n in pair if n} - NOISE


def new_side(hunk: dict[str, Any]) -> list[tuple[int, str, bool]]:
    """The hunk's lines at the new revision, in order: (line, text, added?)."""
    lines = [(int(n), str(t), True) for n, t in hunk.get("added") or []]
    lines += [(int(n), str(t), False) for n, t in hunk.get("context") or []]
    return sorted(lines)


def defined_names(hunk: dict[str, Any]) -> set[str]:
    """Functions this hunk changes: those its added lines define, and those whose body holds
    a change (the nearest definition above it, in the hunk or its header)."""
    names = set().union(*(definitions(t) for _, t in hunk.get("added") or []), set())
    enclosing = definitions(str(hunk.get("function") or ""))
    for _, text, added in new_side(hunk):
        found = definitions(text)
        if found:
            enclosing = found
        elif added:
            names |= enclosing
    return names


def meaningful(added: list[tuple[int, str]]) -> list[tuple[int, str]]:
    lines = [(n, t) for n, t in added if t.strip() and t.strip() not in "{}()[];"]
    return [(n, t) for n, t in lines if not DECLARATION.match(t)] or lines


def suspect_line(
    hunk: dict[str, Any], terms: set[str], called: set[str], start: int
) -> tuple[int, str]:
    """The changed line that says most: in a called function, its first changed statement."""
    added = [(int(n), str(t)) for n, t in hunk.get("added") or []]
    if called:
        inside = False
        for n, text, is_added in new_side(hunk):
            if definitions(text):
                inside = bool(definitions(text) & called)
            elif inside and is_added and meaningful([(n, text)]) == [(n, text)]:
                return n, text.strip()
    candidates = meaningful(added)
    if not candidates:
        return max(1, start), ""
    best = max(candidates, key=lambda item: len(words_of(item[1]) & terms))
    if not words_of(best[1]) & terms:
        best = candidates[0]
    return best[0], best[1].strip()


def release_line(change: Change, content: str | None) -> int | None:
    """The suspect line's number at the running revision, found by its text."""
    if change.newest_for_path:
        return change.line
    if content is None:
        return None
    matches = [
        i for i, line in enumerate(content.splitlines(), 1) if squash(line) == squash(change.text)
    ]
    if not matches:
        return None
    return min(matches, key=lambda n: abs(n - change.line))
