"""Which documentation states the behaviour that broke: the names to search it by, and
whether a passage found is about them.

The names come from the failing path, in order of how much they say: what the exception's
text names (a key, a field, a value), what the crash line and the lines above it read and
call, the crashing function and its class or module, the keys and names the suspect change
touches, the other functions of the stack. Left out: file paths (a page that names a file
is a map of the code, not a statement of behaviour, and would win every search naming
one), the lines that log or report the error, and the endpoint's words, which are most
often the application's own name and pull in its README's title and every API page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent import stacktrace
from agent.models import changes

MAX_TERMS = 12
# Library and logging names found in every code base: they say nothing about which
# behaviour is involved and would pull the search towards pages about logging or parsing.
COMMON = {
    "log",
    "logger",
    "logging",
    "info",
    "debug",
    "warn",
    "warning",
    "trace",
    "console",
    "print",
    "println",
    "printf",
    "sprintf",
    "fprintf",
    "fmt",
    "stderr",
    "stdout",
    "rails",
    "os",
    "sys",
    "math",
    "json",
    "parse",
    "tostring",
    "format",
    "length",
    "size",
    "get",
    "put",
    "set",
    "map",
    "list",
    "dict",
    "add",
    "append",
    "strip",
    "trim",
    "upper",
    "lower",
    "touppercase",
    "tolowercase",
    "upcase",
    "downcase",
    "strtoupper",
    "strtolower",
    "integer",
    "parseint",
    "number",
    "float",
    "float64",
    "int64",
    "double",
    "boolean",
    "bool",
    "object",
    "util",
    "strings",
    "strconv",
    "errors",
    "raise",
    "throw",
    "throws",
    "await",
    "async",
    "nonetype",
    "nilclass",
    "typeerror",
    "main",
    "call",
    "run",
    "handle",
    "execute",
    "perform",
    "invoke",
    "apply",
    "lambda",
    "anonymous",
    "init",
    "new",
    "src",
    "app",
    "lib",
    "internal",
    "com",
    "org",
    "net",
    "dev",
    "tests",
    # the usual names of a receiver or a local: `req.body.clienteId` is about `clienteId`
    "req",
    "res",
    "request",
    "response",
    "body",
    "ctx",
    "exc",
    "err",
    "self",
    "this",
    "cls",
    "args",
    "kwargs",
    "opts",
    "params",
    "result",
}


@dataclass
class Names:
    """The failing path's names, nearest to the failure first. `specific` ones are
    identifiers (a key, a field, a function, a class): a passage that states one is about
    the incident; `words` are plain words of the code (`region`, `items`), which count only
    where a passage writes them as code."""

    ordered: list[tuple[str, bool, str]] = field(default_factory=list)  # name, specific, source
    source: str = ""  # where the names being added come from: the exception, the change…

    @property
    def specific(self) -> list[str]:
        return [n for n, s, _ in self.ordered if s]

    @property
    def words(self) -> list[str]:
        return [n for n, s, _ in self.ordered if not s]

    def add(self, term: str, *, specific: bool) -> None:
        term = term.strip().strip("\"'`").removesuffix("()")
        if not term or "/" in term or "\\" in term or not ok(term):
            return
        key = norm(term)
        if any(norm(t) == key for t, _, _ in self.ordered):
            return
        self.ordered.append((term, specific, self.source))

    lead: tuple[str, ...] = ()  # sources whose names go first

    def query(self, skip: Iterable[str] = ()) -> str:
        """A search by the nearest names, leaving out those in `skip` (searched already);
        the cap keeps a long stack from drowning the names of the crash."""
        skipped = set(skip)
        ordered = sorted(self.ordered, key=lambda n: n[2] not in self.lead)
        terms: list[str] = []
        for name, _, _ in ordered:
            term = searchable(name)
            if name not in skipped and term and term not in terms:
                terms.append(term)
        return " ".join(terms[:MAX_TERMS])


def searchable(name: str) -> str:
    """A name as searched: a dotted one without its receivers and library parts, whose
    pieces (`req`, `body`, `id`) would match every page."""
    if "." not in name:
        return name
    return ".".join(p for p in name.split(".") if p and norm(p) not in COMMON and changes.useful(p))


def norm(term: str) -> str:
    """`customer_id`, `customerId`, `customer-id`, `CUSTOMER_ID` are one name."""
    return re.sub(r"[_\-\s]", "", term).lower()


def ok(term: str) -> bool:
    pieces = [p for p in re.split(r"[.:#$]+", term) if p]
    return (
        changes.useful(term)
        and norm(term) not in COMMON
        and not all(norm(p) in COMMON or not changes.useful(p) for p in pieces)
        and not re.fullmatch(r"[\d.]+", term)
    )


def specific(term: str) -> bool:
    """An identifier rather than a word of prose: dotted, snake_case, kebab-case, camelCase,
    PascalCase of several words or CONSTANT_CASE. A quoted plain word (`"message"`) is not:
    prose uses it too."""
    core = term.strip("\"'`")
    return bool(re.search(r"[_.$]|[a-z][A-Z]|^[A-Z][a-z]+[A-Z]|\w-\w|^[A-Z0-9]{3,}$", core))


def _add_text(names: Names, text: str) -> None:
    """The identifiers of a message or a line of code; a dotted name also by its parts."""
    for term in stacktrace.identifiers(text):
        names.add(term, specific=specific(term))
        if "." in term:
            for piece in term.split("."):
                names.add(piece, specific=specific(piece))
    # Keys with dashes (`export.batch-size`), which the identifier pattern cuts.
    for key in re.findall(r"""["'`]([A-Za-z_][\w.\-]*-[\w.\-]*\w)["'`]""", text):
        names.add(key, specific=True)


def class_of(function: str, module: str, path: str) -> str:
    """The class or module a function belongs to: `Foo.bar` → Foo, a JVM module's last
    segment, else the file's stem when it reads as a class (Java, PHP, Kotlin)."""
    for source in (function, module):
        segments = [s for s in re.split(r"[.:\\/#]+", source or "") if s]
        for segment in reversed(segments[:-1] if source is function else segments):
            if segment[:1].isupper():
                return segment.split("$")[0]
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem if stem[:1].isupper() else ""


def failing_names(
    *,
    exc_value: str,
    crash: changes.Crash | None,
    crash_code: str,
    frame: stacktrace.Frame,
    path: str,
    change: changes.Change | None,
) -> Names:
    names = Names(source="exception")
    # The exception's own text is prose around a name: only the names count (a quoted key,
    # an identifier), not its words.
    for term in stacktrace.identifiers(exc_value):
        quoted = re.search(rf"[\"'`]{re.escape(term)}[\"'`]", exc_value)
        if quoted or specific(term):
            names.add(term, specific=True)
    names.source = "crash"
    if crash is not None:
        for line in reversed(crash.nearby):  # the crash line first, then the lines above it
            if changes.code_of(line).strip() and not logging_line(line):
                _add_text(names, changes.code_of(line))
    else:
        _add_text(names, crash_code)
    names.source = "function"
    function(names, frame.function or "")
    names.add(class_of(frame.function or "", frame.module or "", path), specific=True)
    names.source = "change"
    if change is not None:
        for text in changed_lines(change):
            if not logging_line(text):
                _add_text(names, text)
        for name in sorted(changes.defined_names(change.hunk)):
            function(names, name)
        if change.path != path:
            names.add(class_of("", "", change.path), specific=True)
    names.source = "stack"
    if crash is not None:
        for fr, p in reversed(crash.stack):  # the other frames, nearest first
            function(names, fr.function or "")
            names.add(class_of(fr.function or "", fr.module or "", p), specific=True)
    if change is not None and change.path != path and change.producer:
        # The fault lies in another file, in a change that explains the exception: the
        # crash line only shows the symptom, and its names would pull the search towards
        # the page about it. The change's lead.
        names.lead = ("exception", "change")
    return names


def function(names: Names, qualified: str) -> None:
    """A function's name: an identifier when shaped like one (`splitTotal`, `due_on`), a
    plain word otherwise (`store`, `create` name too many things to prove a page is about
    this one)."""
    name = changes.last_segment(qualified)
    names.add(name, specific=specific(name))


def changed_lines(change: changes.Change) -> list[str]:
    """The suspect line, then the other lines the hunk removed and added."""
    hunk = change.hunk or {}
    lines = [change.text] if change.text else []
    for key in ("removed", "added"):
        lines += [t for _, t in hunk.get(key) or [] if t.strip() and t not in lines]
    return [changes.code_of(t) for t in lines if changes.code_of(t).strip()]


# Lines that log, or report to the error tracker: they say how a failure is told, not
# which behaviour failed.
_LOGGING = re.compile(
    r"\b(log|logger|logging|console|Rails\.logger|fmt\.(Print|Fprint)\w*|print|println|"
    r"System\.(out|err)|puts|echo|error_log|sentry|sentry_sdk|Sentry|hub|raven|bugsnag|"
    r"rollbar|capture_?exception)\b\s*[.(]",
    re.IGNORECASE,
)


def logging_line(line: str) -> bool:
    return bool(_LOGGING.search(line))


# -- whether a passage is about the incident ------------------------------------------------

_WORD = r"[A-Za-z_$][\w$\-]*"
_PATH = re.compile(r"`?[\w.\-]*(?:/[\w.\-{}<>]+)+\.\w+`?")
_SPAN = re.compile(r"(`+)([^`]+?)\1")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def code_text(text: str) -> str:
    """What a passage writes as code: its inline spans and fenced blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif fenced:
            out.append(line)
    out += [m.group(2) for m in _SPAN.finditer(text)]
    return "\n".join(out)


def _words(text: str) -> set[str]:
    words = {norm(w) for w in re.findall(_WORD, text)}
    return words | {norm(w) for w in re.findall(rf"{_WORD}(?:[.:#]+{_WORD})+", text)}


def mentioned(text: str, names: Names) -> list[str]:
    """The failing names a passage states: an identifier anywhere in it, a plain word
    only where the passage writes it as code (`region`, `items`); any spelling (snake,
    camel, kebab). Of a dotted name, the whole or its last member (`req.Country` is
    stated by `country`), by the same rule.

    File paths are taken out of the passage first: a page that lists files names their
    classes without saying anything of how they behave."""
    prose = _PATH.sub(" ", text)
    written = _PATH.sub(" ", code_text(text))
    anywhere, code = _words(prose), _words(written)
    # A plain word also counts as a part of an identifier written as code: `ways` in
    # `split_ways`, `region` in `BILLING_REGION` (the code names the part, the page the key).
    code |= {
        p.lower()
        for w in re.findall(_WORD, written)
        for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", w)
        if len(p) >= 4
    }

    def stated(name: str, identifier: bool) -> bool:
        return norm(name) in (anywhere if identifier else code)

    found = []
    for name, identifier in [(n, True) for n in names.specific] + [(n, False) for n in names.words]:
        last = re.split(r"[.:#]+", name)[-1]
        if stated(name, identifier) or (last != name and ok(last) and stated(last, specific(last))):
            found.append(name)
    return found


def best(passages: list[Mapping[str, Any]], names: Names) -> int:
    """The index of the passage that states most of the failing names (the first of
    equals); -1 when none states any."""
    found = [len(mentioned(passage_text(p), names)) for p in passages]
    index = max(range(len(found)), key=lambda i: (found[i], -i), default=-1)
    return index if index >= 0 and found[index] else -1


def passage_text(passage: Mapping[str, Any]) -> str:
    return f"{passage.get('heading') or ''}\n{passage.get('text') or ''}"
