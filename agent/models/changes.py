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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from agent import stacktrace
from agent.models import failing, relevance, through, wire
from agent.models.equivalent import Prepared, bound_name, prepare, reads, same, same_program

# Exceptions about something absent: a null, a missing key, an empty collection.
NULLISH = re.compile(
    r"null|none|nil\b|undefined|keyerror|nullpointer|indexerror|index out of range|"
    r"nosuchelement|missing|not found|empty",
    re.IGNORECASE,
)
GUARD = re.compile(
    r"\bnull\b|\bNone\b|\bnil\b|\bundefined\b|\?\?|\?\.|&\.|\?:|\|\||\.get\(|getOrDefault|"
    r"\bdefault\b|Optional|\bif\b|\bok\b|len\(|\btry\b|\bexcept\b|\bcatch\b|\brescue\b|"
    r"fallback|orElse|isset|empty\(|(?i:\bcoalesce\b|\bifnull\b|\bnvl\b)",
)
DECLARATION = re.compile(
    r"^\s*(def|func|function|fun|class|public|private|protected|static|async def|@|#|//|/\*|\*|"
    r'"""|\'\'\')'
)
DOCS = (".md", ".markdown", ".txt", ".rst", ".adoc")
# Tests never ran in the process that failed: `tests/…`, `test_x.py`, `x_test.go`,
# `x.spec.ts`, `XTest.java`, `spec/…`.
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|spec|__tests__|src/test)/|(?:^|/)test_[^/]*\.py$|_test\.(?:go|py|rb)$|"
    r"_spec\.rb$|\.(?:spec|test)\.[jt]sx?$|Tests?\.(?:java|kt|cs|php)$"
)


def is_test(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


# A null handed on as a value (assigned, returned, a field), not compared against and not
# the nil beside an error in Go's `return nil, err` (an element ending a line, `null,`, is).
NULL_LITERAL = re.compile(
    r"(?:(?<![=!<>])=(?!=)|\breturn\b|:|\?|=>)\s*\(?\s*(null|None|nil|undefined)\b(?!\s*,\s*\S)"
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


def ident(name: str) -> str:
    """One name across naming conventions: `volumetricDivisor`, `volumetric_divisor`,
    `volumetric-divisor` and `VOLUMETRIC_DIVISOR` are the same setting to a config binder."""
    plain = name.lower().replace("_", "").replace("-", "")
    return plain or name.lower()


def useful(term: str) -> bool:
    return len(term) > 2 and term.lower() not in NOISE


@lru_cache(maxsize=1 << 16)
def parts(term: str) -> frozenset[str]:
    """`customerReference` → {customerreference, customer, reference}; `a.b` likewise."""
    out = {term.lower()}
    for piece in re.split(r"[._\-/:$\\]", term):
        if piece:
            out.add(piece.lower())
            out.update(p.lower() for p in relevance.CAMEL.findall(piece) if len(p) > 2)
    return frozenset(p for p in out if useful(p))


def words_of(text: str) -> set[str]:
    return set(_words(text))


# The scorer reads the same lines for many features; a big hunk made that cost grow.
@lru_cache(maxsize=1 << 16)
def _words(text: str) -> frozenset[str]:
    return frozenset().union(*(parts(t) for t in stacktrace.identifiers(text)))


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


_HOLDER = re.compile(
    r"""\$?([A-Za-z_][\w]*)\s*(?:\[\s*|(?:\.|->)(?:get|fetch|getString|getInt|getProperty)\(\s*)"""
    r"""[:"']([A-Za-z_][\w.\-]*)["']?"""
)


_MEMBER = re.compile(r"\b([A-Za-z_]\w*)\??\.([A-Za-z_]\w*)\b(?!\s*\()")


def key_holders(lines: list[str]) -> dict[str, set[str]]:
    """What each key is read from: `$settings['region']`, `settings.region` →
    {region: {settings}}."""
    out: dict[str, set[str]] = {}
    for line in lines:
        code = code_of(line)
        for holder, key in [*_HOLDER.findall(code), *_MEMBER.findall(code)]:
            out.setdefault(key.lower(), set()).update(parts(holder))
    return out


# A setting taken from the environment by its name (`getenv("BILLING_REGION")`,
# `env["PAGE_SIZE"]`, `process.env.API_URL`), and what gives it a value when it is unset.
_ENV_NAME = re.compile(
    r"""(?:\b(?:getenv|environ|env|ENV)\b\s*(?:\.get\(|\.fetch\(|\(|\[|\.)\s*["']?([A-Z][A-Z0-9_]+)"""
    r"""|[\[(]\s*["']([A-Z][A-Z0-9]*_[A-Z0-9_]+)["']\s*[\])])"""
)
# (`ENV.fetch` raises when it is unset: never a silent nil.)
_FALLBACK = re.compile(
    r"\?\?|\|\||\bor\b|\?:|getOrDefault|getOrElse|\bdefault|,\s*[^,)]+\)|\.fetch\("
)


_KEY_WRITTEN = re.compile(
    r"""["']?([A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)["']?\s*(?::(?!:)|=>|=(?!=))\s*(\S{0,24})"""
)


_MEMBER_WRITE = re.compile(r"(?:[\w$)\]]\s*(?:\.|->|::)|@)([A-Za-z_]\w*)\s*=(?![=>~])")


def members_set(lines: list[str]) -> set[str]:
    """Names the lines define or set: definitions, keys written, members assigned
    (`req.tenant = t`, `$this->customer =`, `@venue =`)."""
    out: set[str] = set()
    for t in lines:
        out |= definitions(t) | keys_written(t) | {m.lower() for m in _MEMBER_WRITE.findall(t)}
    return out


def stale_names(removed: list[str], added: list[str], sig: Signals) -> set[str]:
    """What the lines stopped defining or setting that the failing code still reads: the
    crash statement's names, the keys it reads and what it was handed."""
    gone = members_set(removed) - members_set(added)
    read = {n for n, d in sig.path_names.items() if d <= 2} | sig.nearby_keys
    return {n for n in gone & read if useful(n) and n not in NOISE}


def keys_written(text: str) -> set[str]:
    """Keys a line defines: `"lineas": {...}`, `numbering: {`, `due_in_days=`."""
    return set(values_written(text))


def values_written(text: str) -> dict[str, str]:
    """Each key a line defines, with the start of the value it gets."""
    return dict(_values_written(text))


@lru_cache(maxsize=1 << 16)
def _values_written(text: str) -> tuple[tuple[str, str], ...]:
    return tuple({k.lower(): v for k, v in _KEY_WRITTEN.findall(text) if useful(k)}.items())


@lru_cache(maxsize=1 << 16)
def code_of(line: str) -> str:
    """The line without its comment: '' for a comment line, the code before `//` or `#`."""
    if DECLARATION.match(line) and re.match(r"^\s*(#|//|/\*|\*|\"\"\"|\'\'\')", line):
        return ""
    for marker in (" //", "\t//", " #", "\t#"):
        head, sep, rest = line.partition(marker)
        if (
            marker.endswith("//")
            and _FLOOR_DIVISION.match(rest)
            and re.search(r"[\w)\]]$", head.rstrip())
            and not re.match(r"\s*(?:TODO|FIXME|XXX|HACK|NOTE)\b", rest)
        ):
            continue  # Python's `a // b`: an operand follows, not words
        if sep and head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            line = head
    return line.rstrip()


# After `//`: one operand then the end, a bracket or an operator (`// per_page)`), which a
# comment of words (`// keep the rules`) is not.
_FLOOR_DIVISION = re.compile(r"\s*[\w.]+(?:\([^)]*\))?\s*(?:$|[-+*/%)\],;]|\bif\b|\bor\b|\band\b)")


def replaced_by(
    removed: tuple[float, int], places: dict[int, float], added: list[tuple[int, str]]
) -> tuple[int, str]:
    """The added line that took the place of a removed one (its place, its old number): in a
    block of lines rewritten one for one, the one at the same offset (the third of three
    enum entries for the third); else the added line nearest its place."""
    place, old = removed
    block = sorted(o for o, p in places.items() if p == place)
    offset = block.index(old) if old in block else 0
    after = [a for a in sorted(added) if a[0] > place]
    run = [a for i, a in enumerate(after) if a[0] == int(place + 0.5) + i]
    if len(run) == len(block):
        return run[offset]
    return min(added, key=lambda item: (item[0] < place, abs(item[0] - place)))


_DESTRUCTURE = re.compile(r"\b(?:const|let|var)\s*\{([^}=]*)\}\s*=\s*([\w$.]+)\s*;?\s*$")


def destructured(lines: list[str]) -> dict[str, str]:
    """`const { a, b: c } = obj` → {"obj.a": "a", "obj.b": "c"} (no defaults: those differ)."""
    out: dict[str, str] = {}
    for line in lines:
        m = _DESTRUCTURE.search(code_of(line))
        if not m:
            continue
        for part in m.group(1).split(","):
            field_name, _, alias = (x.strip() for x in part.partition(":"))
            if re.fullmatch(r"[\w$]+", field_name) and (
                not alias or re.fullmatch(r"[\w$]+", alias)
            ):
                out[f"{m.group(2)}.{field_name}"] = alias or field_name
    return out


def spread(line: str, unpacked: dict[str, str]) -> str:
    """The line with each destructured field read by the name it was bound to."""
    for path, name in unpacked.items():
        line = re.sub(rf"(?<![\w$.]){re.escape(path)}(?![\w$])", name, line)
    return line


def pair_off(
    added: list[tuple[int, str]], removed: list[str], same: Callable[[str, str], bool]
) -> list[str]:
    """Drop each added line that has a removed twin (`same(removed, added)`), and the twin;
    the added lines dropped."""
    dropped = []
    for n, t in list(added):
        twin = next((r for r in removed if same(r, t)), None)
        if twin is not None:
            added.remove((n, t))
            removed.remove(twin)
            dropped.append(t)
    return dropped


def squash(text: str) -> str:
    return " ".join(text.split())


_GLOBAL_NAME = re.compile(r"(?<![\w$\\])\\(?=[A-Za-z_])")


_QUOTED = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)""")


def tidy(text: str) -> str:
    """Code as a formatter leaves its meaning: no spaces or line breaks outside strings, no
    trailing comma before a closing bracket, no leading `\\` of a name in PHP's global
    namespace; a plain string in either quotes (rubocop, prettier and black pick one)."""
    pieces = _QUOTED.split(code_of(text))
    return "".join(_literal(p) if i % 2 else _bare(p) for i, p in enumerate(pieces))


def _literal(quoted: str) -> str:
    """`'abc'` as `"abc"` when nothing in it is escaped or interpolated."""
    body = quoted[1:-1]
    if quoted[:1] in "'\"" and not re.search(r"[\\$'\"]|#\{", body):
        return f'"{body}"'
    return quoted


def _bare(code: str) -> str:
    return re.sub(r",(?=[)\]}])", "", _GLOBAL_NAME.sub("", re.sub(r"\s+", "", code)))


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
    source: list[str] = field(default_factory=list)  # the crash file at the release, if read
    callee: str = ""  # the library function the exception left from, if the stack shows it

    @property
    def nullish(self) -> bool:
        return bool(NULLISH.search(f"{self.exc_type} {self.exc_value}"))

    @property
    def kinds(self) -> set[str]:
        return exception_kinds(self.exc_type, self.exc_value)

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
    fits: bool = False  # the change is of a kind that raises this exception
    producer: bool = False  # it builds the value the failing code uses (off the stack or not)
    blamed: bool = False  # blame of the crash line names this commit
    renamed: bool = False  # it only renamed a variable on the crash line
    passes: bool = False  # it rewrote the crash line but hands the failing call the same values
    rewrote: bool = False  # it rewrote a crash line that was there before, calling the same
    also: list[str] = field(default_factory=list)  # other files of the commit that fit too
    returns: str = ""  # the function returning the failing value whose body it changes
    stale: bool = False  # it renamed or removed where a name the failing code reads is set
    quotes: bool = False  # it now writes the value the exception quotes
    tidied: bool = False  # it rewrote the crash line to compute the same
    ran_before: bool = False  # the release before the running one held it, without these errors
    defines: bool = False  # it removes the missing name from the type the exception names


# Exception kinds, by type and message, in every language's words. A change "fits" the
# exception when it is of the kind that raises it.
_KIND_PATTERNS = {
    "null": r"null|none|nil\b|undefined|nullpointer|cannot read propert|not an object|"
    r"has no attribute|undefined method|call a member function|on null",
    "index": r"index|out of range|out of bounds|bounds|slice",
    # ... and a bound that had to be positive: `rand.Int63n(0)`, `nextInt(0)`, `randrange(0)`.
    "zero": r"zero|divis|arithmetic|/ by zero|modulo|must be positive|non-?positive|"
    r"invalid argument to int\w*n\b|empty range for randrange",
    "key": r"keyerror|key not found|no such key|undefined (array )?key|undefined index|"
    r"nosuchelement|missing|not found|no entry|unknown key|required|no enum constant|"
    r"uninitialized constant|unknown variant|is not a valid (?:enum|member|choice)",
    "type": r"typeerror|type ?error|classcast|cannot be cast|not a function|unsupported operand|"
    r"must be|expected .* got|not iterable|is not a|can't convert|cannot convert|conversion|"
    r"interface conversion|mismatch",
    "format": r"valueerror|numberformat|parse|invalid literal|invalid syntax|malformed|format|"
    r"rangeerror|invalid [a-z]+ (?:code|value|id|name|key)|"
    r"could not convert|invalid (value|number|date|input)|unexpected token|decode|"
    r"invalid (?:integer|float|decimal|amount|string|format|json|uuid|email|time)\b",
    "timeout": r"timeout|timed out|deadline exceeded|etimedout",
}
# Where a timeout is set, and the units it is read in.
_TIMEOUT = re.compile(r"(?i)time_?out|deadline")
_DURATION = re.compile(
    r"(?i)\btime\.(?:Duration|Second|Millisecond|Minute)\b|\bDuration\.\w+|\btimedelta\b|"
    r"\b\w*millis\w*|\bms\b|_ms\b|\bseconds?\b|\.minutes?\b|\*\s*1000\b|/\s*1000\b|"
    r"\bParseDuration\b|\bAtoi\b|\bParseInt\b|\bto_[if]\b|\bInteger\(|\bFloat\(|\bint\(|\bfloat\("
)


# Go's `time.Duration(ms)`: a count with no unit multiplied in is nanoseconds.
_BARE_DURATION = re.compile(r"(?<![*]\s)\btime\.Duration\(\s*[\w.]+\s*\)(?!\s*\*)")


# A statement that raises on purpose, and the exception it raises.
_RAISE = re.compile(r"^\s*(?:throw\s+new|throw|raise|panic)\b\s*\(?\s*([\w.:\\]+)")


def retimed(removed: list[str], added: list[str]) -> bool:
    """A timeout set otherwise: its number, its unit, the setting it is read from."""
    before, after = " ".join(removed), " ".join(added)
    if not (_TIMEOUT.search(before) and _TIMEOUT.search(after)):
        return False
    return (
        _DURATION.findall(before) != _DURATION.findall(after)
        or re.findall(r"\b\d+\b", before) != re.findall(r"\b\d+\b", after)
        or _strings(before) != _strings(after)
    )


# A missing value dereferenced, in the words of runtimes that call it a TypeError: it is of
# the null kind only, not a value of the wrong type.
_NULL_DEREFERENCE = re.compile(
    r"(?i)cannot read propert(?:y|ies) of (?:undefined|null)|(?:undefined|null) is not an object|"
    r"'NoneType' object (?:has no attribute|is not subscriptable)|undefined method .* for nil"
)


def exception_kinds(exc_type: str, exc_value: str) -> set[str]:
    text = f"{exc_type} {exc_value}".lower()
    kinds = {k for k, p in _KIND_PATTERNS.items() if re.search(p, text)}
    if _NULL_DEREFERENCE.search(exc_value):
        kinds.discard("type")
    return kinds


_COMPARISON = re.compile(r"<=|>=|<|>|==|!=")
# Angle brackets that compare nothing: type arguments (`Map<String, List<Item>>`), arrows
# (`->`, `=>`), shifts, the spaceship operator and Go's channel operator (`sem <- x`, `<-done`).
_GENERIC = re.compile(r"(?<=[\w?])<\s*[A-Z?][\w\s,.?\[\]]*(?:<[\w\s,.?\[\]]*>[\w\s,.?\[\]]*)*>")
_NOT_COMPARISON = re.compile(r"->|=>|<=>|<<|>>|::|<-")


def comparisons(text: str) -> list[str]:
    """The comparison operators of a line, in order: not the brackets of a type argument nor
    the `>` of an arrow, so that a changed signature or a PHP `->` is not a changed bound."""
    return _COMPARISON.findall(_NOT_COMPARISON.sub(" ", _GENERIC.sub(" ", text)))


_BOUND = re.compile(r"\blen\(|\.length\b|\.size\(|\bcount\(|\brange\(|[-+]\s*1\b|\[[^\]]*:[^\]]*\]")
_CONVERSION = re.compile(
    r"\b(int|float|str|bool|Number|String|parseInt|parseFloat|Integer\.parseInt|Long\.parse\w*|"
    r"Double\.parse\w*|strconv\.\w+|to_i|to_f|to_s|intval|floatval|json\w*|JSON\.\w+|split|"
    r"strftime|strptime|format|toString|valueOf|Decimal|BigDecimal|parse\w*|fromisoformat|"
    # a number made a string: JavaScript, PHP, C-style formatting
    r"toFixed|toPrecision|toLocaleString|number_format|sprintf|Sprintf)\b"
)
_PARSING = re.compile(
    r"(?i)format|pars|layout|pattern|strftime|strptime|delim|separator|\bsep\b|split|reader|regex|"
    r"regexp|\bre\.compile|"
    r"decode|encod|locale"
)
_FILTER = re.compile(r"\b(filter|where|select|reject|if|grep|find_all|takeWhile|dropWhile)\b")


DROPS_GUARD = "drops a guard for a missing value"
REFILTERS = "changes a filter, so a lookup can now find nothing"
REBOUNDS = "changes an index or a bound"
EMPTIED = "changes a filter or a condition, so what it returns can now be empty"
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def unguarded_line(added: list[tuple[int, str]], removed: list[str]) -> tuple[int, str] | None:
    """The added line that uses, with no guard, a name a dropped guard tested: the name next
    to each guard the removed lines had and the added ones lack (`leftOn is null or`,
    `COALESCE(SUM(importe)`, `user?.name`)."""
    lost = Counter(GUARD.findall(" ".join(removed))) - Counter(
        GUARD.findall(" ".join(t for _, t in added))
    )
    tested: list[str] = []
    for line in removed:
        for m in GUARD.finditer(line):
            if m.group(0) not in lost:
                continue
            before = _WORD.findall(line[: m.start()])[-2:]
            after = _WORD.findall(line[m.end() :])[:2]
            tested += [w for w in (before[::-1] + after) if useful(w) and not GUARD.fullmatch(w)]
    # Read through (`customer.address`) before merely named (`const { customer } = order`).
    for follow in (r"\s*(?:\.|->|\[)", ""):
        for name in tested:
            used = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$]){follow}")
            for n, t in added:
                if used.search(t) and not GUARD.search(t):
                    return n, t.strip()
    return None


def fits_kind(
    kinds: set[str],
    removed: list[str],
    added: list[str],
    flows: bool = False,
    read: frozenset[str] = frozenset(),
    denominators: frozenset[str] = frozenset(),
    assigned: frozenset[str] = frozenset(),
    uses: frozenset[str] = frozenset(),
    indexes: frozenset[str] = frozenset(),
) -> str | None:
    """Why a change is of the kind that raises the exception, or None.

    null: a guard for a missing value dropped, or a null now handed on;
    index: a bound, a length or a comparison changed; zero: a division or the filter
    that feeds a count changed; key: a key or field of the data renamed or dropped;
    type/format: a conversion, a literal's type or a format changed where a value is made.
    """
    before, after = " ".join(removed), " ".join(added)
    if "timeout" in kinds and retimed(removed, added):
        return "changes a timeout, its unit or the setting it is read from"
    if "null" in kinds:
        # A guard dropped: one the old lines had that the new ones lack (counted, so that a
        # new function with a `.get(` of its own does not hide it, nor a moved one count).
        if Counter(GUARD.findall(before)) - Counter(GUARD.findall(after)):
            return DROPS_GUARD
        if any(NULL_LITERAL.search(t) for t in added) and not NULL_LITERAL.search(before):
            return "now hands on a null"
        crossed = crossed_setter(added)
        if crossed:
            return crossed
        # A setting read by name with nothing to fall back on is missing wherever it is unset.
        bare = [t for t in added if _ENV_NAME.search(t) and not _FALLBACK.search(t)]
        if bare and not any(_ENV_NAME.search(t) and not _FALLBACK.search(t) for t in removed):
            return "reads a setting with no default, so it is missing where it is not set"
    if kinds & {"null", "key"} and read & (keys_written(before) - keys_written(after)):
        return "renames or drops a key the failing code reads, so it is now missing"
    # A missing value read where a number is needed: PHP casts null to 0, Python's None
    # meets an operator. The key renamed or dropped explains the division or the type.
    if kinds & {"zero", "type"} and read & (keys_written(before) - keys_written(after)):
        return "renames or drops a key the failing code reads, so it reads an empty value"
    fields = set(_FIELD.findall(before)) - set(_FIELD.findall(after))
    if kinds & {"null", "key", "type"} and uses & {f.lower() for f in fields}:
        return "renames or drops a field the failing code reads, so it is now missing"
    # The failing value now taken from another member (`market.currency.code` → `.symbol`):
    # of another type or format, or absent.
    for t_old in removed:
        m_old = _ASSIGNED.match(t_old)
        for t_new in added:
            m_new = _ASSIGNED.match(t_new)
            if not (m_old and m_new and m_old.group(1) == m_new.group(1)):
                continue
            name = m_new.group(1).lower()
            was = re.findall(r"\.([A-Za-z_]\w*)", m_old.group(2))
            now = re.findall(r"\.([A-Za-z_]\w*)", m_new.group(2))
            same_shape = squash(re.sub(r"\.[A-Za-z_]\w*", ".m", m_old.group(2))) == squash(
                re.sub(r"\.[A-Za-z_]\w*", ".m", m_new.group(2))
            )
            if kinds and name in uses and same_shape and set(was) ^ set(now):
                gone, new = sorted(set(was) - set(now)), sorted(set(now) - set(was))
                return f"now takes {name} from {', '.join(new) or 'another member'}" + (
                    f" instead of {', '.join(gone)}" if gone else ""
                )
    if (
        flows
        and kinds & {"null", "key"}
        and keys_read(before)
        and keys_read(before) != keys_read(after)
    ):
        return "changes the key a value is looked up by, so it can now be missing"
    # The position the failing line reads at (`lines[last]`, `rows.get(i)`) computed
    # otherwise: past the end, JavaScript gives undefined, Ruby and PHP nil/null, Python,
    # Java or Go an index error.
    if (
        kinds & {"null", "index"}
        and indexes & assigned
        and (
            _BOUND.findall(before) != _BOUND.findall(after)
            or comparisons(before) != comparisons(after)
            or re.findall(r"\b\d+\b", before) != re.findall(r"\b\d+\b", after)
        )
    ):
        names = ", ".join(sorted(indexes & assigned))
        return f"changes {names}, the position the failing line reads at"
    # A filter added, dropped, or kept with another condition (`!== "void"` → `=== "open"`).
    refiltered = _FILTER.findall(before) != _FILTER.findall(after) or (
        bool(_FILTER.search(before) and _FILTER.search(after))
        and (comparisons(before) != comparisons(after) or _strings(before) != _strings(after))
    )
    if "null" in kinds and refiltered:
        return REFILTERS
    if "index" in kinds and (
        _BOUND.findall(before) != _BOUND.findall(after)
        or comparisons(before) != comparisons(after)
        or positions(before) != positions(after)
    ):
        return REBOUNDS
    if (
        "zero" in kinds
        and re.search(r"\bmax\(|\bor\s+1\b|\|\|\s*1\b|\?:\s*1\b", before)
        and not (re.search(r"\bmax\(|\bor\s+1\b|\|\|\s*1\b|\?:\s*1\b", after))
    ):
        return "drops a guard against a zero denominator"
    if "zero" in kinds and denominators & assigned:
        return f"changes {', '.join(sorted(denominators & assigned))}, the denominator"
    if "zero" in kinds and (
        re.search(r"[^/]/[^/*]|%", f" {before} {after} ")
        or _FILTER.findall(before) != _FILTER.findall(after)
        or comparisons(before) != comparisons(after)
    ):
        return "changes a division or what its denominator counts"
    if "key" in kinds:
        gone = keys_written(before) | keys_read(before)
        now = keys_written(after) | keys_read(after)
        if gone - now:
            return f"renames or drops {', '.join(sorted(gone - now)[:3])}"
    # Statements, not signatures: a parameter's `: bool` annotation converts nothing.
    body_before = " ".join(r for r in removed if not definitions(r))
    body_after = " ".join(t for t in added if not definitions(t))
    if kinds & {"type", "format"} and (
        _CONVERSION.findall(body_before) != _CONVERSION.findall(body_after)
        or retyped(body_before, body_after)
        or (
            # the pattern, layout or separator a value is parsed or split with
            re.search(_PARSING, body_before + body_after)
            and _strings(body_before) != _strings(body_after)
        )
    ):
        return RETYPES
    return None


RETYPES = "changes the type or the format of a value"
_IMPORT = re.compile(r"^\s*(?:import\b|from\s+\S+\s+import\b|use\s|require\b|#include)|\brequire\(")


def converting_line(added: list[tuple[int, str]], removed: list[str]) -> tuple[int, str] | None:
    """The first added line that converts or formats a value in a way no removed line did: a
    conversion call they did not make, or a pattern or layout they did not have."""
    before = " ".join(removed)
    calls = set(_CONVERSION.findall(before))
    texts = set(_strings(before))
    for n, t in added:
        if _IMPORT.search(t):
            continue
        if set(_CONVERSION.findall(t)) - calls:
            return n, t.strip()
        if re.search(_PARSING, t) and set(_strings(t)) - texts:
            return n, t.strip()
    return None


def positions(text: str) -> list[str]:
    """What the code indexes with (`lines[n - 1]`, `row[0]`): a quoted key (`rec["id"]`) is
    a lookup by name, which raises no index error, so it is left out."""
    found = re.findall(r"\[([^\]]*)\]", text)
    return [squash(f) for f in found if not re.fullmatch(r"""\s*(["'`]).*\1\s*""", f)]


_ONE_PARAM = re.compile(
    r"\b(\w+)\s*\(\s*(?:[\w<>\[\]?,.]+\s+)?\$?(\w+)\s*(?::\s*[\w<>\[\]?.|]+)?\s*\)"
)
_SELF_WRITE = re.compile(r"(?:\bthis\.|\bself\.|\$this->|@)(\w+)\s*=(?!=)\s*\$?(\w+)\s*;?\s*$")


def crossed_setter(added: list[str]) -> str | None:
    """A setter named for one field that writes its argument into another
    (`fin(ZonedDateTime fin) { this.inicio = fin; }`): the field it is named for is never
    set, so it stays null. A copy of the setter above, not edited all the way."""
    setter: tuple[str, str] | None = None
    for text in added:
        code = code_of(text)
        m = _ONE_PARAM.search(code) if definitions(code) else None
        if m:
            name, param = m.group(1), m.group(2)
            bare = re.sub(r"^(?:set|with)(?=[A-Z_])", "", name).lstrip("_").lower()
            setter = (name, param) if bare == param.lower() else None
            continue
        w = _SELF_WRITE.search(code)
        if setter and w and w.group(2) == setter[1] and w.group(1).lower() != setter[1].lower():
            return f"{setter[0]}() writes {setter[1]} into {w.group(1)}, so {setter[1]} stays unset"
    return None


# A field of a literal: `"key": v`, `key: v`, `:key => v` (not an assignment `x = v`).
_FIELD = re.compile(r"""(?:^|[{,(\s])["':]?([A-Za-z_][A-Za-z0-9_]*)["']?\s*(?::(?!:)|=>)""")


def _strings(text: str) -> list[str]:
    return re.findall(r"\"[^\"]*\"|'[^']*'|`[^`]*`", text)


def _shape(value: str) -> str | None:
    """The kind of a literal: 'str', 'num', '[' or '{'; None for an expression."""
    head = value[:1]
    if head in "\"'`":
        return "str"
    if head.isdigit() or head == "-":
        return "num"
    return head if head in "[{(" else None


def retyped(before: str, after: str) -> bool:
    """A key written on both sides now gets a literal of another kind (`"5"` → `5`); a key
    that is only new, such as a new option's help text, retypes nothing."""
    old, new = values_written(before), values_written(after)
    return any(_shape(old[k]) != _shape(new[k]) for k in old.keys() & new.keys())


_RETHROW = re.compile(r"^\s*(raise|throw|rethrow|panic)\b")
# Handing an error to Sentry by hand (`hub.CaptureException(fmt.Errorf("…: %v", err))`,
# `Sentry.captureException(err)`): like a re-raise, the frame is where it was reported,
# and the statement that failed is the one the error came from.
_CAPTURE = re.compile(
    r"^\s*(?:[\w$]+\s*\.\s*)*(?:CaptureException|captureException|capture_exception)\s*\("
)
# Go's error check: the statement above it is the one that failed.
_ERR_CHECK = re.compile(r"^\s*if\s+\w*err\w*\s*!=\s*nil\b")
# The statement that set the error the check tests (`m, err := manifest.Decode(raw)`).
_ERR_SET = re.compile(r"\berr\w*\s*:?=(?!=)")
_HANDLER = re.compile(r"^\s*(\}\s*)?(except|catch|rescue)\b|\bcatch\s*\(|^\s*rescue\b")
_TRY = re.compile(r"^\s*(try|begin)\b")


_METHOD_RESCUE = re.compile(r"^\s*rescue\b")
_CLOSING = ("", "{", "}", "end", "});", "})", ");", ")")
_CAUGHT = re.compile(r"^\s*(?:\}\s*)?(?:except|catch|rescue)\b\s*\(?([^{=]*)")


def caught_kinds(crash: Crash) -> set[str]:
    """The kinds of exception the handler around a re-raise catches (`rescue KeyError,
    Faraday::TimeoutError => e`, `except (KeyError, IndexError)`): when the cause is
    dropped, the one that failed was one of them."""
    lines = crash.source
    if not lines or not 0 < crash.line <= len(lines):
        return set()
    i = crash.line - 1
    for j in range(i, max(-1, i - 12), -1):
        m = _CAUGHT.match(lines[j])
        if m:
            return exception_kinds(m.group(1), "")
    return set()


def failing_lines(crash: Crash) -> tuple[str, list[str], bool]:
    """The code that failed and the lines around it: for a re-raise (`raise … from None`,
    a throw in a catch block, a panic on a checked error) the statements of the guarded
    block, not the raise itself."""
    code = code_of(crash.code).strip()
    if not (_RETHROW.match(code) or _CAPTURE.match(code)) or not crash.source:
        return crash.code, crash.nearby, False
    lines = crash.source
    i = min(crash.line, len(lines)) - 1
    check = next((j for j in range(i, max(-1, i - 6), -1) if _ERR_CHECK.match(lines[j])), None)
    if check is not None and check > 0:
        above = range(check - 1, max(-1, check - 10), -1)
        made = next((j for j in above if _ERR_SET.search(code_of(lines[j]))), check - 1)
        return lines[made], lines[max(0, made - 2) : made + 1], True
    if _CAPTURE.match(code):
        # No check above it (`if err == nil { return }` further up): the statement that set
        # the error it reports, in its function.
        top = function_start(lines, crash.line)
        made = next((j for j in range(i - 1, top, -1) if _ERR_SET.search(code_of(lines[j]))), None)
        if made is None or not re.search(r"\berr\w*\b", code):
            return crash.code, crash.nearby, False  # nothing says where the error came from
        return lines[made], lines[max(0, made - 2) : made + 1], True
    handler = next((j for j in range(i, max(-1, i - 12), -1) if _HANDLER.search(lines[j])), None)
    if handler is None and " from " not in code:
        return crash.code, crash.nearby, False
    if handler is None:
        return crash.code, crash.nearby, True
    start = next(
        (j for j in range(handler - 1, max(-1, handler - 40), -1) if _TRY.match(lines[j])), None
    )
    if start is None and _METHOD_RESCUE.match(lines[handler]):
        # Ruby's `rescue` at a method's own level guards the whole method body.
        start = function_start(lines, handler + 1)
    if start is None:
        return crash.code, crash.nearby, True
    body = [t for t in lines[start + 1 : handler] if code_of(t).strip() not in _CLOSING]
    if not body:
        return crash.code, crash.nearby, True
    return body[-1], body, True


def rewritten_statement(code: str, removed: list[str]) -> bool:
    """The removed lines already did what the crash line does: it calls what they called,
    or every name it uses was theirs (`if (user.deletedAt) {…}` → `return user.deletedAt ? …`)."""
    if calls_again(code, removed):
        return True
    names = {n for n in names_of(code_of(code)) if useful(n)} - stacktrace.STOPWORDS
    return len(names) >= 2 and names <= names_of(" ".join(removed))


def same_values(code: str, removed: list[str]) -> bool:
    """The line uses the names and makes the calls one removed line did, and no other; or
    it compares what a removed line compared (`p.due <= limit` in a comprehension, then
    `loan.due <= limit` in a loop)."""
    names = {n for n in names_of(code_of(code)) if useful(n)} - stacktrace.STOPWORDS
    compared = operands(code)
    value = squash(computed(code))
    for line in removed:
        old = {n for n in names_of(line) if useful(n)} - stacktrace.STOPWORDS
        if names and names == old and calls_of(code) == calls_of(line):
            return True
        if len(value) > 6 and value == squash(computed(line)):
            return True  # the same expression, now bound to a name instead of returned
        if compared and compared & operands(line) == compared:
            return True
    return False


def computed(line: str) -> str:
    """What a line computes: the value it returns, yields or binds, else the line."""
    code = re.sub(r"^(?:return|yield)\b\s*", "", code_of(line).strip())
    found = bindings(code)
    return found[1] if found is not None else code


_COMPARED = re.compile(r"([\w.$\]\[]+)\s*(?:<=|>=|<|>|==|!=|===|!==)\s*([\w.$\]\[]+)")


def operands(text: str) -> set[tuple[str, str]]:
    """Each comparison of the line as its two operands' last names, in a fixed order."""
    out = set()
    for a, b in _COMPARED.findall(code_of(text)):
        x, y = (re.split(r"[.\[\]$]", v.strip("[]"))[-1].lower() for v in (a, b))
        if x and y:
            out.add((min(x, y), max(x, y)))
    return out


def calls_again(code: str, removed: list[str]) -> bool:
    """The line makes a call the removed lines made."""
    return bool((calls_of(code) - NOISE) & calls_of(" ".join(removed)))


def aside(text: str, sig: Signals) -> bool:
    """The line only binds names the failing value is not made of (every name left of its
    `=`: `region, _ :=` binds region too)."""
    code = code_of(text).strip()
    if bindings(code) is None:
        return False
    left = re.split(r":=|(?<![=!<>+\-*/%&|^])=(?![=>])", code, maxsplit=1)[0]
    targets = names_of(left) - {"_"}
    # The index the failing code reads at is made of what binds it (a loop's counter).
    return bool(targets) and not targets & (set(sig.path_names) | sig.indexes)


def statement_line(crash: Crash, code: str) -> int:
    """The line (1-based) of the crash function's statement `code`, at or above the crash."""
    wanted = squash(code_of(code))
    for j in range(min(crash.line, len(crash.source)) - 1, max(-1, crash.line - 41), -1):
        if squash(code_of(crash.source[j])) == wanted:
            return j + 1
    return 0


_ASSIGNED = re.compile(
    r"^\s*(?:(?:val|var|let|const|final|auto|my|local)\s+)?(?:[\w<>\[\],.?]+\s+)?"
    r"\$?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?(?::=|\+=|-=|=(?![=>]))\s*(.+)"
)


def data_path(crash: Crash, code: str, nearby: list[str]) -> dict[str, int]:
    """Names on the failing value's data path, each with its distance in steps.

    The names the failing code uses (0); then, walking back through the crashing function,
    what each was assigned or looped over from (1, 2); the function's parameters lead to the
    arguments of the caller's call on the stack (2), and what those were bound from in the
    caller (3). A change elsewhere that writes, defines or builds one of these names is on
    the data path, whichever file it is in."""
    # Short names too (`t.title(...)` after `const t = CATALOG[locale]`): what they were
    # bound from is followed; they are dropped at the end.
    names = {n: 0 for n in names_of(code_of(code)) if useful(n) or _SHORT.fullmatch(n)}
    # A call spread over lines: its arguments below the crash line are the failing
    # statement's too (`create(\n amount=amounts.net,\n ...)`).
    for line in continued(crash.source, crash.line, code):
        names.update({n: 0 for n in names_of(code_of(line)) if useful(n) and n not in names})
    for line in nearby:
        for n in keys_read(line):
            names.setdefault(n, 0)
    src = crash.source
    if src and 0 < crash.line <= len(src):
        start = function_start(src, crash.line)
        # The loops around the crash line: how many times they run decides what it reads
        # (`for n := 1; n <= pages; n++` around `items[len(items)-1]`).
        for n in loop_bounds(src, start, crash.line):
            names.setdefault(n, 1)
        # A raise on purpose fails because its condition held (`if not match:` above
        # `raise ValueError(...)`): what the condition tests is the failing value.
        if _RAISE.match(code_of(code)):
            for line in conditions(src, start, crash.line):
                for n in names_of(code_of(line)):
                    if useful(n) or _SHORT.fullmatch(n):
                        names.setdefault(n, 0)
        walk_back(src[start : crash.line - 1], names, (1, 2))
        into_helpers(src, names, skip=last_segment(crash.function).lower())
        header = src[start] if start < len(src) else ""
        params = names_of(header.partition("(")[2])
        failing = [i for i, p in enumerate(parameters(header)) if p in names]
        # Not a frame of the crashing function itself: a wrapper raised in its handler
        # (`throw new Rejected(..., e)` below the call that failed) is no caller.
        callers = [
            (f, p) for f, p in crash.stack if f.function != crash.function or p != crash.path
        ]
        if params & set(names) and callers and callers[0][0].context_line:
            caller, path = callers[0]
            call = code_of(caller.context_line or "")
            # Only what is handed to the crashing function, not what the caller does with
            # its result (`entries.append(parse_row(row))` hands on `row`).
            args = call_arguments(call, last_segment(crash.function))
            handed = arguments_for(args, parameters(header), failing) if args else None
            passed = {n for n in names_of(handed or args or call) if useful(n)}
            for n in passed:
                names.setdefault(n, 2)
            walk_back(caller_body(crash, caller, path), names, (3,), only=passed)
            up_the_stack(crash, callers, names)
    return {
        n: d
        for n, d in names.items()
        if n not in NOISE and n not in stacktrace.STOPWORDS and not _SHORT.fullmatch(n)
    }


_SHORT = re.compile(r"[a-z]")

# The operator a type error names (`'<' not supported between instances of 'NoneType' and
# 'date'`, `unsupported operand type(s) for +: 'int' and 'str'`).
_OPERATOR_NAMED = re.compile(
    r"""'(<=|>=|<|>|\+|-|\*|/|//|%)' not supported between|unsupported operand type\(s\) for """
    r"""(<=|>=|<|>|\+|-|\*|/|//|%|\*\*):"""
)
_OPERAND = r"""[\w.$\[\]'"]+(?:\([^()]*\))?"""


def operands_of(message: str, code: str) -> str:
    """The part of the failing line the message points at: the operands of the operator a
    type error names (`mov.booked < period_start` out of `if mov.amount >= 0 or mov.booked
    < period_start:`); the whole line when it names none, or the line has it more than once."""
    m = _OPERATOR_NAMED.search(message)
    if not m:
        return code
    op = re.escape(next(g for g in m.groups() if g))
    found = re.findall(rf"({_OPERAND})\s*(?<![<>=!+\-*/%]){op}(?![<>=*/])\s*({_OPERAND})", code)
    if len(found) != 1:
        return code
    left, right = found[0]
    return f"{left} {right}"


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def zeroed(added: list[tuple[int, str]], removed: list[str]) -> bool:
    """A line kept but for its numbers, one of which became 0 (`GRATUITO("g", 0, 1)` →
    `GRATUITO("g", 0, 0)`)."""
    before = {_NUMBER.sub("#", squash(t)): _NUMBER.findall(t) for t in removed}
    for _, t in added:
        old = before.get(_NUMBER.sub("#", squash(t)))
        new = _NUMBER.findall(t)
        if (
            old
            and len(old) == len(new)
            and any(float(o) != 0 and float(n) == 0 for o, n in zip(old, new, strict=True))
        ):
            return True
    return False


def made_there(sig: Signals, path: str, names: set[str]) -> dict[str, int]:
    """A file named after what makes the value further up the path (`mapper.toDomain(event)`:
    AdjustmentMapper) whose changed lines handle what the failing code reads
    (`event.occurredAt()` for `adjustment.occurredAt()`): it made that part of the value."""
    stem = parts(PurePosixPath(path).stem)
    makers = [d for n, d in sig.path_names.items() if d >= 1 and useful(n) and n in stem]
    if not makers:
        return {}
    read = {n for n, d in sig.path_names.items() if d == 0 and useful(n)} - stem
    return {n: min(makers) for n in names & read if n not in NOISE}


def up_the_stack(
    crash: Crash, callers: list[tuple[stacktrace.Frame, str]], names: dict[str, int]
) -> None:
    """Further up, each frame that hands the value on calls the frame below it with it
    (`stock.apply(adjustment)` above `apply`): what it hands is on the path two steps on,
    and what that was bound from in its lines above the call (`adjustment =
    mapper.toDomain(event)`) one more."""
    # A proxy's frame (`apply` again, no line) is no caller of its own.
    callers = [(f, p) for f, p in callers if f.context_line and f.lineno]
    for depth, (frame, path) in enumerate(callers[1:4], start=1):
        below = last_segment(callers[depth - 1][0].function or "")
        args = call_arguments(code_of(frame.context_line or ""), below) if below else None
        passed = {n for n in names_of(args or "") if useful(n)}
        if not passed:
            return  # a framework between them, or nothing handed on: the path ends here
        step = 2 + 2 * depth
        for n in passed:
            names.setdefault(n, step)
        walk_back(caller_body(crash, frame, path), names, (step + 1,), only=passed)


_RETURN = re.compile(r"^\s*(?:return\b|yield\b|=>)\s*(.*)")


def continued(src: list[str], line: int, code: str) -> list[str]:
    """The lines after `line` (1-based) that the statement on it runs on into, while its
    brackets stay open."""
    depth = _depth(code_of(code))
    out: list[str] = []
    for text in src[line : line + 12] if depth > 0 and 0 < line <= len(src) else ():
        out.append(text)
        depth += _depth(code_of(text))
        if depth <= 0:
            break
    return out


_BARE = re.compile(r"(?<![\w$.@:>\\])([a-z_][\w]*[?!]?)(?!\s*(?:[(:=\w.]|=>))")


def bare_reads(lines: list[str]) -> set[str]:
    """Bare names the statement reads, neither members nor keys nor calls with brackets:
    in Ruby, Kotlin or Scala a method or property of its own object (`amount: amount_cents`)."""
    return {
        n.rstrip("?!").lower()
        for line in lines
        for n in _BARE.findall(_QUOTED.sub('""', code_of(line)))
        if useful(n)
    }


def _depth(text: str) -> int:
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")


def into_helpers(src: list[str], names: dict[str, int], skip: str) -> None:
    """Follow the value into the file's own functions that make it (`amounts =
    amounts_for(payout)`): what they return, and what that was bound from in them, is on the
    path a step further each (`fee = money.apply_rate(...)` inside `amounts_for`)."""
    defined = {
        name: j
        for j, text in enumerate(src)
        for name in definitions(code_of(text))
        if not _STATEMENT.match(text)
    }
    for name, d in sorted(names.items(), key=lambda kv: kv[1]):
        j = defined.get(name)
        if d > 1 or j is None or name == skip:
            continue
        body = src[j + 1 : function_end(src, j + 1)]
        found: dict[str, int] = {}
        for text in body:
            m = _RETURN.match(code_of(text))
            for n in names_of(m.group(1)) if m else ():
                if useful(n):
                    found.setdefault(n, d + 1)
        walk_back(body, found, (d + 2,))
        for n, step in found.items():
            names.setdefault(n, step)


_CONDITION = re.compile(r"^\s*(?:\}\s*)?(?:if|elif|elsif|else\s+if|unless|when|guard)\b")


def conditions(src: list[str], start: int, line: int) -> list[str]:
    """The headers of the conditional blocks the line (1-based) sits in, inside its
    function (from `start`, 0-based): the innermost first."""
    out: list[str] = []
    indent = len(src[line - 1]) - len(src[line - 1].lstrip())
    for j in range(line - 2, start - 1, -1):
        text = src[j]
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip())
        if own < indent:
            indent = own
            if _CONDITION.match(text):
                out.append(text)
    return out


_LOOP_HEADER = re.compile(r"^\s*(?:for|while|until|foreach|loop|do)\b|\.(?:each|times|upto)\b")


def loop_bounds(src: list[str], start: int, line: int) -> set[str]:
    """Names in the headers of the loops that enclose `line` (1-based) in its function."""

    def indent(text: str) -> int:
        return len(text) - len(text.lstrip())

    depth = indent(src[line - 1])
    out: set[str] = set()
    for j in range(line - 2, start, -1):
        text = code_of(src[j])
        if text.strip() and indent(text) < depth:
            depth = indent(text)
            if _LOOP_HEADER.search(text):
                out |= {n for n in names_of(text) if useful(n)}
    return out


_OUTPUT = re.compile(
    r"(?i)^(?:[\w$]+\s*(?:\.|::|->)\s*)*(?:f?print\w*|puts|echo|p|pp|log\w*|debug|info|warn\w*|"
    r"error|trace|notice|fprint\w*|emit|metric\w*|increment|timing|gauge|histogram|observe|"
    r"count|record|span|breadcrumb\w*|dump|console\.\w+|logger\.\w+)\s*[(\s]"
)


def read_only(text: str, path: set[str]) -> bool:
    """A log, print or metrics statement: it binds nothing and decides nothing, so it cannot
    change what fails after it (`fmt.Fprintf(os.Stderr, ...)`, `logger.info(...)`)."""
    code = code_of(text).strip()
    if not code or bindings(code):
        return False
    return bool(_OUTPUT.match(code))


# Loops bind a name to what they iterate: (pattern, group of the names, group of the source).
_LOOPS = (
    (re.compile(r"^\s*for\s+([\w\s,()]+?)\s+in\s+(.+?):?\s*$"), 1, 2),  # Python
    (re.compile(r"\bfor\s*\(\s*(?:const|let|var)?\s*([\w\s,{}\[\]]+?)\s+of\s+(.+)\)"), 1, 2),
    (re.compile(r"\bfor\s+([\w\s,]+?)\s*:=\s*range\s+(.+?)\s*\{?\s*$"), 1, 2),  # Go
    (re.compile(r"\bforeach\s*\((.+?)\s+as\s+(?:\$\w+\s*=>\s*)?\$(\w+)\s*\)"), 2, 1),  # PHP
    (re.compile(r"(.+?)\.each(?:_with_index)?\s*(?:do|\{)\s*\|([\w\s,]+)\|"), 2, 1),  # Ruby
    (re.compile(r"\bfor\s*\((?:[\w<>\[\],.?]+\s+)?(\w+)\s*(?::|\bin\b)\s*(.+)\)"), 1, 2),
)


def bindings(text: str) -> tuple[set[str], str] | None:
    """The names a line binds and the expression it binds them from: an assignment (with
    several targets or a destructuring pattern: `a, err :=`, `const { from, to } =`,
    `val (a, b) =`, `[x, y] =`) or a loop header, in the languages read here."""
    found = _bindings(text)
    return None if found is None else (set(found[0]), found[1])


@lru_cache(maxsize=1 << 16)
def _bindings(text: str) -> tuple[frozenset[str], str] | None:
    found = assignment(text)
    if found is not None:
        return frozenset(found[0]), found[1]
    for pattern, target, source in _LOOPS:
        m = pattern.search(text)
        if m:
            return frozenset(names_of(m.group(target))), m.group(source)
    return None


_DECLARE = re.compile(
    r"^\s*(?:(?:val|var|let|const|final|auto|my|local|export|readonly|if|for|switch|while)\s+)+"
)
_TARGET = re.compile(r"^\$?[A-Za-z_][\w$]*$")


def assignment(text: str) -> tuple[set[str], str] | None:
    """The targets and the right side of an assignment at the top level of the line; None
    for a comparison, an arrow, a keyword argument inside a call or a member write."""
    at = assigned_at(text)
    if at is None:
        return None
    before = text[at - 1 : at] if at else ""
    left = text[: at - 1] if before and before in ":+-*/%|&^?" else text[:at]
    targets = _targets(_DECLARE.sub("", left).strip())
    return (targets, text[at + 1 :].strip()) if targets else None


def assigned_at(text: str) -> int | None:
    """Where the line's assignment `=` is, outside brackets and strings; None if none."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote and text[i - 1] != "\\" else quote
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            after = text[i + 1 : i + 2]
            before = text[i - 1 : i] if i else ""
            if after in ("=", ">") or before in ("=", "!", "<", ">"):
                return None  # `==`, `=>`, `<=`, `!=`: no assignment on this line
            return i
    return None


def _targets(left: str) -> set[str]:
    """`a, err` → {a, err}; `{ from, to: end, ...rest }` → {from, end, rest}; `(a, b)`,
    `[a, b]`; `String name`, `name: Type`, `$name`. A member or an index is no target."""
    if left[:1] in "{[(" and left[-1:] in "}])":
        out = set()
        for part in split_top(left[1:-1]):
            part = part.split("=")[0].strip().lstrip(".*").strip()
            name = part.rpartition(":")[2].strip() if left[0] == "{" else part.split(":")[0]
            out |= _targets(name.strip())
        return out
    out = set()
    for part in split_top(re.sub(r"<[^<>=]*>", "", left)):
        part = part.split(":")[0].strip().lstrip("*&")
        words = part.split()
        if not words:
            continue
        # Java's `Type name`, Go's `var name Type` (the declaring word is gone by now).
        name = words[-1] if len(words) == 1 or not re.match(r"^[a-z]", words[0]) else words[0]
        if len(words) == 2 and words[0] in _JAVA_TYPES | {"var"}:
            name = words[1]
        if not _TARGET.match(name):
            return set()
        out.add(name.lstrip("$").lower())
    return out


def walk_back(
    body: list[str], names: dict[str, int], steps: tuple[int, ...], only: set[str] | None = None
) -> None:
    """Add to `names` what the body's lines bound them from, one step further each pass."""
    # PHP's `$total` is bound as `total`: a variable is known by its name without the sigil.
    wanted = {n.lstrip("$") for n in (names if only is None else only)}
    for step in steps:
        for text in reversed(statements(body)):
            bound = bindings(text)
            if bound and {b.lstrip("$") for b in bound[0]} & wanted:
                # A call's function makes the value; its arguments only feed it, a step on.
                made = calls_of(bound[1])
                for n in names_of(bound[1]) | keys_read(bound[1]):
                    if useful(n):
                        names.setdefault(n, step if n in made or not made else step + 1)
                        wanted.add(n.lstrip("$"))


def statements(lines: list[str]) -> list[str]:
    """The lines' code, a statement spread over lines joined into one (`x = format(a,` then
    `    b, c)`): what it binds comes from all of them."""
    out: list[str] = []
    open_ = 0
    for line in lines:
        code = code_of(line)
        if open_ > 0 and out:
            out[-1] = f"{out[-1]} {code.strip()}"
        else:
            out.append(code)
        # Parentheses and brackets only: a brace opens a block as often as a literal.
        open_ = max(0, open_ + sum(code.count(c) for c in "([") - sum(code.count(c) for c in ")]"))
    return out


_JAVA_TYPES = {"int", "long", "double", "float", "boolean", "char", "byte", "short", "final"}


def split_top(text: str) -> list[str]:
    """`a, f(b, c), d` → ['a', 'f(b, c)', 'd']: commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += 1 if ch in "([{<" else -1 if ch in ")]}>" else 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in [*parts, cur] if p.strip()]


def parameters(header: str) -> list[str]:
    """The parameter names of a definition line, in order (not `self`, `cls`, `this`):
    `name: T`, `name = d`, `$name` and Go's `name T` name first, Java's `T name` last."""
    inside = call_arguments(header, next(iter(sorted(definitions(header))), "")) if header else None
    if inside is None:
        inside = header.partition("(")[2].rpartition(")")[0]
    out = []
    for part in split_top(inside):
        idents = re.findall(r"[A-Za-z_]\w*", part.split("=")[0].split(":")[0])
        if not idents:
            continue
        if ":" in part or "$" in part or len(idents) == 1:
            name = idents[0] if "$" not in part else re.findall(r"\$(\w+)", part)[0]
        elif idents[0][0].islower() and idents[0] not in _JAVA_TYPES:
            name = idents[0]  # Go: `rec map[string]any`
        else:
            name = idents[-1]  # Java, C#, Kotlin's annotations aside: `Map<..> rec`
        if name not in ("self", "cls", "this"):
            out.append(name.lower())
    return out


def arguments_for(args: str, params: list[str], wanted: list[int]) -> str | None:
    """The argument expressions a call hands to the wanted parameters (by position or by
    keyword); None when the call and the definition do not line up."""
    parts = split_top(args)
    if not wanted or not params or len(parts) > len(params):
        return None
    picked = []
    for i, part in enumerate(parts):
        m = re.match(r"^([A-Za-z_]\w*)\s*[:=](?![=:])\s*(.+)$", part)
        name = m.group(1).lower() if m else (params[i] if i < len(params) else "")
        if name in {params[w] for w in wanted}:
            picked.append(m.group(2) if m else part)
    return ", ".join(picked) or None


def call_arguments(line: str, function: str) -> str | None:
    """The argument list of the call to `function` on the line, parentheses balanced."""
    m = re.search(rf"\b{re.escape(function)}\s*\(", line, re.IGNORECASE) if function else None
    if m is None:
        return None
    end = closing(line, m.end())
    return line[m.end() : (end if end is not None else len(line)) - 1]


def closing(text: str, open_at: int) -> int | None:
    """Just past the `)` that closes the `(` ending at `open_at`; None when none does."""
    depth, i = 1, open_at
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i if depth == 0 else None


def caller_body(crash: Crash, caller: stacktrace.Frame, path: str) -> list[str]:
    """The caller's lines above its call: from the crash file when it is the same file, else
    from the lines around the frame that the event recorded."""
    line = caller.lineno or 0
    if path == crash.path and crash.source and 0 < line <= len(crash.source):
        return crash.source[function_start(crash.source, line) : line - 1]
    return [t for n, t in caller.context if n < line]


def where_dropped(
    hunk: dict[str, Any], hunks: list[dict[str, Any]], index: int
) -> tuple[int, str, str] | None:
    """When the hunk removes a top-level table or constant (`COLUMNS = {`) and another hunk of
    the same file stops reading it (`frame.rename(columns=COLUMNS)` rewritten), the added line
    that took that read's place, with the name: where the values it gave stopped applying."""
    names = {
        n
        for _, t in hunk.get("removed") or []
        if not str(t)[:1].isspace() and (n := bound_name(code_of(str(t)).strip())) and len(n) > 2
    }
    names -= {bound_name(code_of(str(t)).strip()) for _, t in hunk.get("added") or []}
    if not names:
        return None
    found: list[tuple[int, int, str, str]] = []
    for j, other in enumerate(hunks):
        if j == index:
            continue
        places = removed_places(other)
        added = [(int(n), code_of(str(t))) for n, t in other.get("added") or [] if code_of(str(t))]
        for n, t in other.get("removed") or []:
            old = code_of(str(t))
            name = next((m for m in names if reads(old, m)), None)
            if name is not None and added:
                line, text = replaced_by((places.get(int(n), 0.0), int(n)), places, added)
                # The rewrite of that read does what it did otherwise: it shares its names.
                shared = len((names_of(old) & names_of(text)) - {name.lower()})
                found.append((shared, -line, text.strip(), name))
    if not found:
        return None
    shared, line, text, name = max(found)
    return -line, text, name


def removed_places(hunk: dict[str, Any]) -> dict[int, float]:
    """Where each removed line stood among the new side's lines: just after the context line
    that preceded it (old numbers of the context lines follow from the removed ones)."""
    removed = {int(n) for n, _ in hunk.get("removed") or []}
    old_start, old_lines = int(hunk.get("old_start") or 0), int(hunk.get("old_lines") or 0)
    new_start = int(hunk.get("new_start") or 0)
    kept = [o for o in range(old_start, old_start + old_lines) if o not in removed]
    context = sorted(int(n) for n, _ in hunk.get("context") or [])
    if len(kept) != len(context):  # a context line lost on the way to the release
        return {o: float(o + new_start - old_start) for o in removed}
    pairs = list(zip(kept, context, strict=True))
    return {
        o: max((new for old, new in pairs if old < o), default=new_start - 1) + 0.5 for o in removed
    }


def function_end(lines: list[str], line: int) -> int:
    """The last line (1-based) of the function holding `line`: the line before the next
    definition that is not nested deeper than the function's own; `line` when unknown."""
    if not 0 < line <= len(lines):
        return line
    header = lines[function_start(lines, line)]
    indent = len(header) - len(header.lstrip())
    for j in range(line, len(lines)):
        text = lines[j]
        if text.strip() and definitions(text) and len(text) - len(text.lstrip()) <= indent:
            return j
    return len(lines)


def function_start(lines: list[str], line: int) -> int:
    """The index of the definition line of the function holding `line` (1-based)."""
    for j in range(min(line, len(lines)) - 2, -1, -1):
        if definitions(lines[j]) and re.match(
            r"^\s*(?:@|(?:public|private|protected|internal|static|async|override|suspend|export|"
            r"final|open|func|def|fun|function|sub|fn)\b|[\w<>\[\]]+\s+\w+\s*\()",
            lines[j],
        ):
            return j
    return 0


_IMPORT = re.compile(
    r"""^\s*(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?["']([^"']+)["']"""
    r"""|import\s+(?:static\s+)?([\w.]+)"""
    r"""|from\s+([\w.]+)\s+import"""
    r"""|(?:const|let|var)\s+[\w{}\s,]+=\s*require\(["']([^"']+)["']\)"""
    r"""|require(?:_relative)?\s*\(?["']([^"']+)["']"""
    r"""|use\s+([\w\\]+)"""
    r"""|["']([\w.\-]+(?:/[\w.\-]+)+)["']\s*$"""
    # a line of a Go import block, `"strings"` or `sentry "github.com/getsentry/sentry-go"`
    r"""|(?:([A-Za-z_]\w*)\s+)?"([a-z][\w.\-]*(?:/[\w.\-]+)*)"\s*$)"""
)


def imported(source: list[str]) -> set[str]:
    """The last names of the modules a file imports (`../config/configuration` →
    configuration; `com.acme.config.AppSettings` → appsettings; a Go package path → its
    folder's name), in any of the languages read here."""
    out = set()
    for line in source[:200]:
        m = _IMPORT.match(line)
        if not m:
            continue
        spec = next(g for g in m.groups() if g)
        # A file required with its extension (`./codes.json`) is named by its stem.
        spec = re.sub(r"\.(?:json|ya?ml|toml|js|cjs|mjs|ts|tsx|jsx|php|rb|py)$", "", spec)
        last = re.split(r"[/.\\]", spec.rstrip("/"))[-1]
        if last and last != "*":
            out.add(last.lower())
    return out


def module_names(path: str) -> set[str]:
    """What an import of the file at `path` would end with: its stem, and its folder."""
    parts = path.lower().split("/")
    stem = parts[-1].split(".", 1)[0]
    return {stem, parts[-1].rsplit(".", 1)[0]} | ({parts[-2]} if len(parts) > 1 else set())


_TOKEN = re.compile(r"\"[^\"]*\"|'[^']*'|[A-Za-z_$][\w$]*|\S")


def same_but_names(a: str, b: str) -> bool:
    """The two lines differ only by a consistent renaming of variables (`total = x / n`
    and `share = x / n`): strings, numbers, operators and called names are the same."""
    ca, cb = code_of(a), code_of(b)
    ia, ib = assigned_at(ca), assigned_at(cb)
    if ia is None or ib is None or assignment(ca) is None or assignment(cb) is None:
        return False  # a keyword argument's `=` assigns nothing; a member is no variable
    la, ra, lb, rb = ca[:ia], ca[ia + 1 :], cb[:ib], cb[ib + 1 :]
    if not ra.strip() or squash(ra) != squash(rb):
        return False  # only the assigned target may differ
    ta, tb = _TOKEN.findall(la), _TOKEN.findall(lb)
    if len(ta) != len(tb) or ta == tb:
        return False
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for i, (x, y) in enumerate(zip(ta, tb, strict=True)):
        if x == y:
            continue
        called = i + 1 < len(ta) and ta[i + 1] == "("
        if (
            called
            or not re.fullmatch(r"[A-Za-z_$][\w$]*", x)
            or not re.fullmatch(r"[A-Za-z_$][\w$]*", y)
        ):
            return False
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return False
    return True


def prose(line: str) -> bool:
    """A line of a docstring or a comment block: words and punctuation, no code."""
    t = line.strip()
    if not t:
        return True
    if re.match(r'^("""|\'\'\'|/\*\*?|\*/?|#|//|--|<!--|=begin|=end)', t):
        return True
    if re.search(r"[=(){}\[\];]|->|=>|::|\$\w|\w\.\w+\(", t):
        return False
    if re.search(r'`\w+:"', t):
        return False  # a Go struct field with its tag: `OrderID string `json:"order_id"``
    # `return region or "US"`: a statement, not a sentence (no capital, no full stop).
    if re.match(r"^(return|raise|throw|yield)\s+[\w\"'`]", t) and not t.endswith("."):
        return False
    words = t.split()
    return len(words) >= 2 and sum(w.isalpha() for w in words) >= len(words) * 0.6


@dataclass
class Signals:
    """What the failure tells, computed once and used to score every hunk."""

    crash: Crash
    code: str
    nearby: list[str]
    rethrow: bool
    exc_terms: set[str]
    code_terms: set[str]
    exc_names: set[str]
    nearby_names: set[str]
    nearby_keys: set[str]
    literals: set[str]  # the values the exception's message quotes: a key, what would not parse
    stack_by_path: dict[str, list[tuple[int, stacktrace.Frame]]]
    path_names: dict[str, int]
    kinds: set[str]
    function_lines: tuple[int, int]  # the crashing function's first line .. the crash line
    function_end: int  # the crashing function's last line (the crash line when not known)
    imports: set[str]  # what the crashing file imports
    denominators: set[str]  # what the failing code divides by
    indexes: set[str]  # the variables the failing code indexes with: `lines[last]` → last
    holders: dict[str, set[str]] = field(default_factory=dict)  # key → what it is read from
    function_keys: set[str] = field(default_factory=set)  # keys the crashing function reads
    # Frames further up in the crash file: (the line of the call they were making, the last
    # line of their function); what lies between had not run.
    callers_after: list[tuple[int, int]] = field(default_factory=list)
    # A re-raise that drops its cause: what the functions the guarded code calls call in
    # turn, as the window's hunks show their bodies (the frames below it were not sent).
    beneath: set[str] = field(default_factory=set)
    types: set[str] = field(default_factory=set)  # the types the failing function and caller name
    # The call the exception says returned the null (Java's helpful NullPointerException).
    null_from: set[str] = field(default_factory=set)
    guarded_at: int = 0  # behind a re-raise: the line of the statement that failed
    numbers: set[str] = field(default_factory=set)  # the numbers the message quotes
    stack_functions: set[str] = field(default_factory=set)  # the stack's own functions
    callees: dict[str, Callee] = field(default_factory=dict)  # they make the failing value
    # The exception names the member read on the missing value (`reading 'title'`): the
    # names that value is made of (`t` ← `CATALOG[locale]` ← the caller's locale).
    receiver_path: dict[str, int] = field(default_factory=dict)
    # The member it names was to be read or called on the missing value: it never ran.
    unreached: set[str] = field(default_factory=set)
    parameters: list[str] = field(default_factory=list)  # of the crashing function, in order
    missing_type: str = ""  # the type of the missing value, when the message names it
    # The crash line's own operations that raise this kind (`days[i]`), when known.
    sites: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, crash: Crash) -> Signals:
        code, nearby, rethrow = failing_lines(crash)
        stack: dict[str, list[tuple[int, stacktrace.Frame]]] = {}
        for depth, (frame, path) in enumerate(crash.stack):
            stack.setdefault(path, []).append((depth, frame))
        start = (
            function_start(crash.source, crash.line) + 1
            if crash.source and 0 < crash.line <= len(crash.source)
            else max(1, crash.line - 8)
        )
        literals = {
            m.lower()
            for m in re.findall(
                r"""["'`]([^"'`\s]{2,60})["'`]|\[([^\]\s\[]{2,60})\]""", crash.exc_value
            )
            for m in m
            if m and m.lower() not in NOISE
        }
        # A message that ends on the value it could not take (`Unknown currency code: eur`).
        # ... or names it in brackets at its end (`Unknown or bad format (P12H)`).
        tail = re.search(r""":\s*([^\s:'"`,;()\[\]]{2,60})\s*$""", crash.exc_value) or re.search(
            r"""\(([^\s:'"`,;()\[\]]{2,60})\)\s*$""", crash.exc_value
        )
        if tail and not re.fullmatch(r"[\d.eE+-]+", tail.group(1)):
            literals.add(tail.group(1).lower())
        code_terms = set().union(*(parts(t) for t in identifiers_of(code)), set())
        path_names = data_path(crash, operands_of(crash.exc_value, code), nearby)
        # Functions the caller calls to build the arguments the failing code received.
        passed = {n for n, d in path_names.items() if d == 2} & set().union(
            *(calls_of(code_of(f.context_line or "")) for f, _ in crash.stack[1:2]), set()
        ) - {last_segment(crash.function).lower()}
        return cls(
            crash=crash,
            code=code,
            nearby=nearby,
            rethrow=rethrow,
            guarded_at=statement_line(crash, code) if rethrow else 0,
            exc_terms=set().union(*(parts(t) for t in crash.exception_terms()), set()),
            code_terms=code_terms,
            exc_names={t.lower() for t in crash.exception_terms()},
            # What the failing lines call; a definition line there names no call.
            nearby_names=(
                set().union(*(calls_of(line) for line in nearby if not definitions(line)), set())
                | passed
                | bare_reads([code, *continued(crash.source, crash.line, code)])
            )
            - NOISE,
            nearby_keys=set().union(*(keys_read(line) for line in nearby), set()),
            holders=key_holders([code, *nearby]),
            callers_after=[
                (f.lineno, function_end(crash.source, f.lineno))
                for f, p in crash.stack[1:]
                if p == crash.path and f.lineno and f.lineno != crash.line and crash.source
            ],
            function_keys=set().union(
                *(keys_read(code_of(t)) for t in crash.source[start - 1 : crash.line]), set()
            ),
            missing_type=missing_type(crash.exc_value),
            null_from={
                m.lower()
                for m in re.findall(
                    r'because the return value of "(?:[\w$]+\.)*(\w+)\(\)" is null',
                    crash.exc_value,
                )
            },
            literals=literals,
            numbers=set(_NUMBER.findall(crash.exc_value)),
            stack_by_path=stack,
            stack_functions=stack_functions(stack),
            path_names=path_names,
            kinds=crash.kinds | (caught_kinds(crash) if rethrow else set()),
            function_lines=(start, crash.line),
            function_end=function_end(crash.source, crash.line),
            imports=imported(crash.source),
            indexes={
                n.lower()
                for n in re.findall(
                    r"(?:\[\s*|\.(?:get|at|fetch|elementAt|getOrNull)\(\s*)\$?([A-Za-z_]\w*)\s*[\])]",
                    code_of(code),
                )
            }
            - NOISE,
            denominators={
                n.lower()
                for line in [code, *nearby]
                for n in re.findall(r"(?:/|%)\s*\(?\s*([A-Za-z_$][\w$.]*)", code_of(line))
                for n in [n.rsplit(".", 1)[-1]]
            }
            # A bound that had to be positive is what the library call that refused it got.
            | (
                {
                    n.lower()
                    for f, args in through.calls(code_of(code))
                    if f == crash.callee.rsplit(".", 1)[-1]
                    for n in re.findall(r"[A-Za-z_$][\w$]*", args)
                }
                if "zero" in crash.kinds and crash.callee
                else set()
            ),
            types=wire.types_named(failing_function(crash)),
            callees=value_callees(crash, code),
            receiver_path=receiver_path(crash, code),
            unreached={
                n.lower() for m in _READ_ON_NULL.finditer(crash.exc_value) for n in m.groups() if n
            }
            if crash.nullish
            else set(),
            parameters=through.parameters(crash.source[function_start(crash.source, crash.line)])
            if crash.source and 0 < crash.line <= len(crash.source)
            else [],
            sites={
                x.lower()
                for x in failing.sites(crash.kinds, crash.exc_value, code, imported(crash.source))
                or ()
            }
            if not rethrow
            else set(),
        )


# The member a message says was read on a missing value, in each runtime's words.
_READ_ON_NULL = re.compile(
    r"""reading '([\w$]+)'|has no attribute '(\w+)'|undefined method [`'](\w+[?!]?)' for nil|"""
    r"""property "(\w+)" on null|member function (\w+)\(\) on null|"""
    r"""Cannot invoke "[\w.$<>]*?(\w+)\(\)"""
)


def receiver_path(crash: Crash, code: str) -> dict[str, int]:
    """The data path of the value the exception says was missing: the receiver of the member
    it names, on the failing statement (`t.title(...)`: `t`). Empty when not known."""
    if not crash.nullish:
        return {}
    m = _READ_ON_NULL.search(crash.exc_value)
    member = next((g for g in m.groups() if g), None) if m else None
    if not member:
        return {}
    held = re.search(
        rf"([\w$]+(?:\s*(?:\?\.|\.|->)\s*[\w$]+)*)\s*(?:\?\.|\.|->|!!\.)\s*{re.escape(member)}\b",
        code_of(code),
    )
    return data_path(crash, held.group(1), []) if held else {}


def dereference(crash: Crash, code: str) -> str | None:
    """The receiver and the member the exception says were read on a missing value, as the
    failing line writes them without spaces (`@quote.open?`, `$order->total`)."""
    m = _READ_ON_NULL.search(crash.exc_value)
    member = next((g for g in m.groups() if g), None) if m else None
    if not member:
        return None
    held = re.search(
        rf"([@$]*[\w$]+(?:\s*(?:\?\.|\.|->|&\.)\s*[\w$]+)*\s*(?:\?\.|\.|->|!!\.|&\.)\s*"
        rf"{re.escape(member)})(?![\w$])",
        code_of(code),
    )
    return re.sub(r"\s+", "", held.group(1)) if held else None


# A JVM's helpful NullPointerException: the method invoked on the missing value, by type.
_INVOKED_ON = re.compile(r'Cannot (?:invoke|read field|read the array length) "?((?:[\w$]+\.)+)')
_LIBRARY = re.compile(r"^(?:java|javax|jakarta|kotlin|scala|android|sun|com\.sun)\.")


def missing_type(message: str) -> str:
    """The type of the value that was missing, as the message names it, when the project
    defines it (`Cannot invoke "com.shop.Vat.rate()"` → Vat; none for `String.trim()`)."""
    m = _INVOKED_ON.search(message)
    if not m:
        return ""
    qualified = m.group(1).rstrip(".")
    if "." not in qualified or _LIBRARY.match(qualified):
        return ""  # unqualified (`String`, `Object`) or the platform's own
    return qualified.rsplit(".", 1)[-1]


def returning(hunk: dict[str, Any], type_name: str) -> tuple[str, int, str] | None:
    """The function of the hunk that is declared to return `type_name` and whose body the
    hunk changes (Java, Kotlin, TypeScript, C# declarations), with its first added line
    there, or None."""
    t = re.escape(type_name)
    declared = re.compile(
        rf"\b(?:Optional<|Mono<|Promise<)?{t}>?\??\s+(\w+)\s*\(|"  # Java, C#: `Vat of(`
        rf"\bfun\s+(?:<[^>]*>\s*)?(?:\w+\.)?(\w+)\s*\([^)]*\)\s*:\s*{t}\b|"  # Kotlin
        rf"(\w+)\s*\([^)]*\)\s*:\s*(?:Promise<)?{t}\b"  # TypeScript
    )
    lines = sorted(
        [(int(n), str(t)) for n, t in hunk.get("context") or []]
        + [(int(n), str(t)) for n, t in hunk.get("added") or []]
    )
    changed = {int(n) for n, _ in hunk.get("added") or []}
    header = str(hunk.get("function") or "")
    current = None
    if (m := declared.search(header)) is not None:
        current = next(g for g in m.groups() if g)
    for n, text in lines:
        code = code_of(text)
        m = declared.search(code)
        if m is not None:
            current = next(g for g in m.groups() if g)
        elif current and n in changed and code.strip() and not definitions(text):
            return current, n, text.strip()
    return None


def defined_beside(change: Change) -> str | None:
    """A name the suspect line reads that the same hunk binds on another of its lines (a
    query, a pattern, a table pulled into a constant): the fault may be in either."""
    reads = names_of(code_of(change.text))
    for n, t in change.hunk.get("added") or []:
        if int(n) == change.line:
            continue
        # `private static final String QUERY = ...`, `val QUERY = ...`, `$query = ...`: the
        # name just left of the `=`.
        m = _BOUND_NAME.match(code_of(str(t)))
        if m and m.group(1).lower() in reads:
            return m.group(1).lower()
    return None


_BOUND_NAME = re.compile(r"^[^=(]*?\$?([A-Za-z_]\w*)\s*(?::\s*[\w<>?, ]+)?\s*(?::=|=)(?![=>~])")


def failing_function(crash: Crash) -> list[str]:
    """The crashing function up to the crash line (its header too) and the caller's lines
    above its call: where the types of the failing values are named."""
    src = crash.source
    if src and 0 < crash.line <= len(src):
        own = src[function_start(src, crash.line) : crash.line]
    else:
        own = [t for n, t in (crash.stack[0][0].context if crash.stack else []) if n <= crash.line]
    callers = [(f, p) for f, p in crash.stack if f.lineno != crash.line or p != crash.path]
    above = caller_body(crash, callers[0][0], callers[0][1]) if callers else []
    return [code_of(t) for t in own + above]


def identifiers_of(text: str) -> list[str]:
    return [t for t in stacktrace.identifiers(text) if useful(t)]


def pick(crash: Crash, commits: list[dict[str, Any]]) -> Change | None:
    """The best-explaining hunk of `commits` (newest first), or None if none explains it."""
    ranked = rank(crash, commits)
    return ranked[0] if ranked else None


def rank(
    crash: Crash,
    commits: list[dict[str, Any]],
    released: str | None = None,
    errors_in: str | None = None,
) -> list[Change]:
    """Every hunk of the change window that explains something, best first, each with its
    score and the reasons for it; at most one per commit (its best hunk).

    The window is the commits before the first error (newest first). A root commit is not a
    change: in a truncated history it holds the whole tree, so it is never a candidate. When
    the best hunk of a commit is on the stack but another file of the same commit builds the
    value the failing code uses, that file is the fault: the stack only shows where it broke.

    `released` is the release that ran before the running one without these errors: a
    commit it already held ran in production and did not fail, so it counts for less; one
    after it shipped with the running release, even when the issue is older than it (an old
    error whose newer events this release brings).

    `errors_in` is the oldest release among the issue's events: it already failed, so a commit
    it held may be the cause whenever it landed, and one newer than it is not.
    """
    sig = Signals.of(crash)
    if sig.rethrow:
        sig.beneath = calls_beneath(commits, sig.nearby_names)
        # ... and the keys it reads there: a setting or field it failed on.
        sig.nearby_keys |= keys_beneath(commits, sig.nearby_names)
    deeper_callees(sig, commits)
    seen_paths: set[str] = set()
    later: dict[str, list[list[dict[str, Any]]]] = {}  # each file's hunks of newer commits
    best: dict[str, list[Change]] = {}
    blame_seen: set[str] = set()  # commits blame of the crash line names, in the crash file
    stale: set[str] = set()  # commits that wrote the crash line weeks before the errors
    unblamed: set[str] = set()  # commits that rewrote the crash line without changing it
    rank_no = 0

    def remember(files: list[dict[str, Any]]) -> None:
        for f in files:
            later.setdefault(f.get("path") or "", []).append(f.get("hunks") or [])
        seen_paths.update(f.get("path") or "" for f in files)

    # Newest first: the commits above the release before shipped with the running one; that
    # release's commit and those below it ran before (a release older than the history read
    # leaves every commit read in the running release).
    shipped = bool(released) and any(c.get("sha") == released for c in commits)
    # Above the oldest failing release: not yet running when the errors were seen.
    unreleased = bool(errors_in) and any(c.get("sha") == errors_in for c in commits)
    held = False  # in the oldest failing release: a cause whenever it landed
    ran_before = False
    for commit in commits:
        when = relevance.parse_time(commit.get("date"))
        files = commit.get("files") or []
        if unreleased and commit.get("sha") == errors_in:
            unreleased, held = False, True
        if unreleased:
            remember(files)
            continue
        if held and crash.first_seen and when and when > crash.first_seen:
            when = crash.first_seen
        if shipped and commit.get("sha") == released:
            shipped, ran_before = False, True
        if shipped and crash.first_seen and when and when > crash.first_seen:
            when = crash.first_seen  # in the running release, after an older issue began
        if crash.first_seen and when and when > crash.first_seen:
            remember(files)
            continue  # landed after the errors began: not their cause
        age_days = 0.0
        if crash.first_seen and when:
            # How long before the first error it landed: a fault shows up soon after it ships.
            age_days = max(0.0, (crash.first_seen - when).total_seconds() / 86400)
            recency = 3.0 / (1 + age_days) + (0.5 if rank_no == 0 else 0.0)
        else:
            recency = 2.0 if rank_no == 0 else 1.5 / (1 + rank_no)
        rank_no += 1
        if commit.get("parents") == []:
            continue  # the root of the history: "the whole tree was added" is no change
        refills = left_unset(sig, files)
        for f in files:
            path = f.get("path") or ""
            newest = path not in seen_paths
            if path.lower().endswith(DOCS) or (is_test(path) and not is_test(crash.path)):
                continue
            if unchanged_behaviour(f):
                if path == crash.path:
                    unblamed.add(commit.get("sha") or "")
                continue  # renamed locals, an inlined variable, an extracted constant
            for index, raw in enumerate(f.get("hunks") or []):
                # Each hunk is followed to the release on its own: one that can be says
                # nothing about the next one's numbering.
                hunk, at_head = raw, newest
                if not newest:
                    moved = at_release(raw, later.get(path, []))
                    if moved is not None:
                        hunk, at_head = moved, True
                change = score_hunk(sig, commit, path, hunk, at_head, refills.get((path, index)))
                if change is None:
                    continue
                change.score += recency
                if change.on_crash_line and age_days > STALE_DAYS:
                    # It ran for weeks without failing: the crash line alone did not break,
                    # and blame naming it says the line is old, not that it is the fault.
                    change.score -= 3
                    change.reasons.append(
                        f"the crash line ran {age_days:.0f} days before the errors began"
                    )
                    stale.add(change.sha)
                if ran_before:
                    change.score *= RAN_BEFORE
                    change.ran_before = True
                    change.reasons.append("it ran in the release before without these errors")
                if change.tidied or (change.on_crash_line and (change.renamed or change.passes)):
                    # Blame names the commit for the crash line, which it left running as
                    # before: its other hunks get no credit from it either.
                    unblamed.add(change.sha)
                if (
                    crash.blamed
                    and commit.get("sha") == crash.blamed
                    and not change.renamed
                    and not change.passes
                    and change.sha not in stale
                ):
                    change.blamed = True
                    if path == crash.path:
                        blame_seen.add(change.sha)
                used = where_dropped(raw, f.get("hunks") or [], index)
                if used is not None and not change.on_crash_line:
                    # The removed table mattered where it was read: that line is the change.
                    change.line, change.text = used[0], used[1]
                    change.reasons.append(f"stops using {used[2]} there")
                empty = not int(hunk.get("old_start") or 0) and not int(hunk.get("old_lines") or 0)
                if empty and (path, index) not in refills and not change.quotes:
                    change.score *= 0.3  # a whole new file: everything in it was "changed"
                best.setdefault(change.sha, []).append(change)
        remember(files)
    out = []
    for hunks in best.values():
        hunks.sort(key=lambda c: -c.score)
        top = hunks[0]
        if top.sha in blame_seen and top.sha not in stale and top.sha not in unblamed:
            # Blame names the commit, not which of its hunks: it counts once the commit's
            # best hunk is chosen.
            top.blamed = True
            top.score += 3
            top.reasons.append("blame of the crash line names this commit")
        renamer = next((h for h in hunks[1:] if h.stale and not top.stale), None)
        if renamer is not None and renamer.score >= 0.5 * top.score:
            # A rename: the commit's other hunks follow it to the new name; where the old
            # name stopped being defined is what the failing code, still using it, lost.
            renamer.reasons.append(f"the same commit also changed {top.path}, for the rename")
            renamer.score = top.score + 1
            top = renamer
        definer = next((h for h in hunks[1:] if h.defines and not top.defines), None)
        if definer is not None and definer.score >= 0.5 * top.score:
            # The message names the type the name was missing from (`No enum constant
            # ParcelStatus.AWAITING_COLLECTION`): where the commit removed it from that type
            # is the change; its other files only follow it to the new name.
            definer.reasons.append(f"the same commit also changed {top.path}, to follow it")
            definer.score = top.score + 1
            top = definer
        quoting = next((h for h in hunks[1:] if h.quotes and not top.quotes), None)
        if quoting is not None:
            # Where the commit writes the very value the exception quotes is where the bad
            # value comes from; the hunk on the stack only hands it on.
            quoting.reasons.append(f"the same commit changed {top.path}, which hands it on")
            quoting.score = top.score + 1
            quoting.blamed = quoting.blamed or top.blamed
            top = quoting
        producer = next((h for h in hunks[1:] if h.producer and h.path != top.path), None)
        if (
            producer is not None
            and not top.on_crash_line
            and not top.producer
            and not top.stale
            and producer.score >= 0.5 * top.score
        ):
            producer.reasons.append(f"the same commit changed {top.path}, on the stack")
            producer.score = top.score + 1
            top = producer
        if top.sha in unblamed:
            top.blamed = False  # the crash line it wrote runs as before: blame says nothing
        top.also = sorted({h.path for h in hunks if h.fits and h.path != top.path})
        out.append(top)
    out = fit_over_closeness(off_value_path(sig, sorted(out, key=lambda c: -c.score)))
    # A candidate needs a reason of its own: recency and shared words alone (a commit of
    # the day that touched the crash file elsewhere) explain nothing.
    return [c for c in out if c.score >= 3 and c.reasons]


def statement_head(line: int, text: str, added: list[tuple[int, str]]) -> tuple[int, str]:
    """A line inside a call the hunk added whole (an option of a new formatter, an argument
    of a new call) is that call's statement: its first line names what changed."""
    lines = dict(added)
    if line not in lines:
        return line, text
    start = line
    while start - 1 in lines:
        start -= 1
    head, depth = None, 0
    for n in range(start, line + 1):
        if depth <= 0:
            head, depth = n, 0
        code = _STRING_LITERAL.sub('""', lines[n])
        # Parentheses only: a brace or a bracket opens a body or a table (a class, a config
        # array) as often as an argument, and their lines are entries of their own.
        depth += code.count("(") - code.count(")")
    if head is None or head == line:
        return line, text
    return head, lines[head].strip()


_STRING_LITERAL = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`""")


def where_used(
    line: int, text: str, added: list[tuple[int, str]], removed: list[str]
) -> tuple[int, str]:
    """A new name bound to a value (`const wireLayout = "..."`) changes nothing until a line
    reads it: the first added line that does is where the behaviour changed."""
    name = bound_name(text)
    if name is None or _depth(text) != 0:
        return line, text  # no new name, or a value that goes on (`s := &Service{`)
    if any(bound_name(t) == name or reads(t, name) for t in removed):
        return line, text  # an old name given another value: that line is the change
    # A list of what a module exports reads every name it lists, and computes nothing.
    return next(
        (
            (n, t.strip())
            for n, t in added
            if n > line and reads(t, name) and not _NAME_LIST.match(code_of(t))
        ),
        (line, text),
    )


_NAME_LIST = re.compile(
    r"^\s*(?:module\.exports\s*=\s*\{|export\s*\{|__all__\s*=|"
    r"export\s+default\s*\{[\w\s,]*\}?;?\s*$)"
)


def drop_rewrites(added: list[tuple[int, str]], removed: list[str], path: str) -> None:
    """Drop the runs of lines (up to three each side) rewritten to compute the same (a
    variable extracted, a local renamed), so that what the hunk changes besides is judged."""
    if len(added) > 40 or len(removed) > 40:
        return
    # Each run of added lines is prepared once, not once per run of removed lines it meets.
    runs: dict[tuple[int, int], Prepared] = {}

    def run(j: int, size: int) -> Prepared:
        if (j, size) not in runs:
            runs[(j, size)] = prepare([t for _, t in added[j : j + size]], False, path)
        return runs[(j, size)]

    for size_old in (3, 2, 1):  # the longest runs first: a renamed local and its reads
        i = 0
        while i + size_old <= len(removed):
            old = prepare(removed[i : i + size_old], True, path)
            match = next(
                (
                    (j, size_new)
                    for size_new in (3, 2, 1)
                    for j in range(len(added) - size_new + 1)
                    if same(old, run(j, size_new))
                ),
                None,
            )
            if match is None:
                i += 1
                continue
            j, size_new = match
            del removed[i : i + size_old]
            del added[j : j + size_new]
            runs.clear()  # the added lines moved up


def unchanged_behaviour(f: dict[str, Any]) -> bool:
    """The file's hunks of a commit, taken together, compute what they did before."""
    removed = [str(t) for h in f.get("hunks") or [] for _, t in h.get("removed") or []]
    added = [str(t) for h in f.get("hunks") or [] for _, t in h.get("added") or []]
    return same_program(removed, added, f.get("path") or "")


def left_unset(sig: Signals, files: list[dict[str, Any]]) -> dict[tuple[str, int], Refill]:
    """A field a commit stopped setting (written on a removed line, on no added line of the
    commit) that the failure is about (its name on the failing value's path, or a timeout for
    a timeout), keyed by the hunk that now sets the fields it was set with."""

    def keys(h: dict[str, Any], side: str) -> set[str]:
        # `MaxParts` in Go is `max_parts` in the YAML it moved to: the same field.
        rows = h.get(side) or []
        return {normal(k) for _, t in rows for k in keys_written(code_of(str(t)))}

    hunks = [
        (f.get("path") or "", i, h, keys(h, "removed"), keys(h, "added"))
        for f in files
        for i, h in enumerate(f.get("hunks") or [])
    ]
    written = set().union(*(new for *_, new in hunks), set())
    on_path = {normal(n) for n in sig.path_names}
    for path, _, h, old, _ in hunks:
        lost, siblings = old - written, old & written
        wanted = {
            k for k in lost if k in on_path or ("timeout" in sig.kinds and _TIMEOUT.search(k))
        }
        if not wanted or len(siblings) < 2:
            continue
        others = [o for o in hunks if o[2] is not h]
        best = max(others, key=lambda o: len(o[4] & siblings), default=None)
        if best is None or len(best[4] & siblings) < 2:
            continue
        rows = [(int(n), str(t)) for n, t in best[2].get("added") or []]
        line = max(n for n, t in rows if {normal(k) for k in keys_written(code_of(t))} & siblings)
        text = next(t for n, t in rows if n == line).strip()
        return {(best[0], best[1]): Refill(min(wanted), path, line, text)}
    return {}


@dataclass
class Refill:
    """Where a commit now sets the fields of a value but one it set before (`lost`)."""

    lost: str
    source: str  # the file that set it before
    line: int
    text: str


# A commit the release before already held ran without the errors: it counts for this much.
RAN_BEFORE = 0.5
# A crash line written this many days before the first error had been running fine.
STALE_DAYS = 14


def shift(line: int, hunks: list[dict[str, Any]]) -> int | None:
    """Line `line` of a file before `hunks` (one commit's), numbered after them; None when
    one of them changed that very line."""
    delta = 0
    for h in hunks:
        old_start, old_lines = int(h.get("old_start") or 0), int(h.get("old_lines") or 0)
        new_lines = int(h.get("new_lines") or 0)
        if line < old_start or (old_lines == 0 and line == old_start):
            break
        if line >= old_start + old_lines:
            delta += new_lines - old_lines
            continue
        removed = {int(n) for n, _ in h.get("removed") or []}
        if line in removed:
            return None
        # A context line inside the hunk: count the lines removed and added above it.
        above_removed = sum(1 for n in removed if n < line)
        offset = line - old_start - above_removed
        context_and_added = sorted(
            [int(n) for n, _ in h.get("added") or []] + [int(n) for n, _ in h.get("context") or []]
        )
        kept = [n for n in context_and_added if n not in {int(a) for a, _ in h.get("added") or []}]
        return kept[offset] if 0 <= offset < len(kept) else None
    return line + delta


def at_release(hunk: dict[str, Any], newer: list[list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The hunk with its new-side lines numbered as at the release, through the hunks of the
    newer commits of the same file (`newer`: newest first); None if a line cannot be followed
    (a newer commit changed it)."""

    def follow(line: int) -> int | None:
        current: int | None = line
        for hunks in reversed(newer):
            if current is None:
                return None
            current = shift(current, hunks)
        return current

    added = [(follow(int(n)), t) for n, t in hunk.get("added") or []]
    if not added or any(n is None for n, _ in added):
        return None
    context = [(follow(int(n)), t) for n, t in hunk.get("context") or []]
    start = follow(int(hunk.get("new_start") or 0)) if hunk.get("new_start") else None
    moved = dict(hunk)
    moved["added"] = [[n, t] for n, t in added]
    moved["context"] = [[n, t] for n, t in context if n is not None]
    moved["new_start"] = start if start is not None else min(n for n, _ in added)  # type: ignore[type-var]
    return moved


def score_hunk(
    sig: Signals,
    commit: dict[str, Any],
    path: str,
    hunk: dict[str, Any],
    newest: bool,
    refill: Refill | None = None,
    whole: bool = False,
) -> Change | None:
    """A hunk's score by features stated for every language: where it is (the crash line,
    the crashing function above it, a frame of the stack, a function the failing code
    calls, the data path of the failing value), what it does (fits the exception's kind,
    names what the message names) and how much of the failure's vocabulary it touches."""
    crash = sig.crash
    # Comments, docstrings and blank lines change nothing a request runs: judge code alone.
    added = [(int(n), code) for n, t in hunk.get("added") or [] if (code := code_of(str(t)))]
    removed = [code for _, t in hunk.get("removed") or [] if (code := code_of(str(t)))]
    # A formatter's rewrite runs the same: lines split or joined, `\count(` for `count(`, a
    # trailing comma, comments and blank lines. Such lines are no change.
    if "".join(tidy(t) for _, t in added) == "".join(tidy(t) for t in removed):
        return None
    pair_off(added, removed, lambda r, t: tidy(r) == tidy(t))
    drop_rewrites(added, removed, path)
    # A call of the crashing function now passing the same values by name passes the same.
    if sig.parameters:
        called_as = last_segment(crash.function or "")
        pair_off(
            added,
            removed,
            lambda r, t: through.same_binding(r, t, called_as, sig.parameters),
        )
    # Fields destructured into names (`const { recipient } = msg`, then `recipient.x` for
    # `msg.recipient.x`): the same reads; the destructuring goes with the lines it replaced.
    unpacked = destructured([t for _, t in added])
    if unpacked:
        same = pair_off(added, removed, lambda r, t: tidy(spread(r, unpacked)) == tidy(t))
        if same and not removed:
            added = [(n, t) for n, t in added if not _DESTRUCTURE.search(t)]
    # A line whose assigned variable only got another name runs the same: not a change.
    renamed = any(
        squash(t) == squash(code_of(crash.code)) for t in pair_off(added, removed, same_but_names)
    )
    if not added and not removed:
        return None
    if all(prose(t) for _, t in added) and all(prose(t) for t in removed):
        return None  # only docstring or comment text
    if (
        sig.rethrow
        and path == crash.path
        and all(_RETHROW.match(t) or _HANDLER.search(t) for _, t in added)
    ):
        return None  # it only changes how the failure is reported, not why it happens
    if sig.rethrow and path == crash.path and newest and 0 < sig.guarded_at < crash.line:
        # Past the statement that failed, the error was being handled and reported: those
        # lines ran after it failed.
        after = removed_places(hunk)
        added = [(n, t) for n, t in added if not sig.guarded_at < n <= sig.function_end]
        for n, t in hunk.get("removed") or []:
            code = code_of(str(t))
            if code in removed and sig.guarded_at < after.get(int(n), 0.0) <= sig.function_end:
                removed.remove(code)
        if not added and not removed:
            return None
    if not removed and added and definitions(added[0][1]) and refill is None:
        # Only new functions: nothing the failing run executed changed, unless it calls them
        # or the hunk also sets a key the failing value reads (a settings object after them).
        new = set().union(*(definitions(t) for _, t in added), set())
        used = (
            sig.nearby_names
            | set(sig.path_names)
            | {last_segment(f.function or "").rstrip("?!").lower() for f, _ in crash.stack}
        )
        sets = set().union(*(keys_written(t) for _, t in added if not definitions(t)), set())
        if not new & used and not sets & (set(sig.path_names) | sig.nearby_keys):
            return None
    start, count = int(hunk.get("new_start") or 0), int(hunk.get("new_lines") or 0)
    end = start + max(count, 1) - 1
    score, reasons = 0.0, []
    beside = 0.0  # what being close to the crash (in its function, on the stack) gave
    crash_code = code_of(sig.code) if sig.rethrow else code_of(crash.code)
    introduced = [n for n, t in added if crash_code and squash(t) == squash(crash_code)]
    # The crash line was among the hunk's lines but rewritten to compute the same (a value
    # extracted into a variable): blame names the hunk for a line that runs as before.
    tidied = (
        path == crash.path
        and not introduced
        and bool(crash_code)
        and any(squash(code_of(str(t))) == squash(crash_code) for _, t in hunk.get("added") or [])
    )
    in_crash_file = path == crash.path
    # The crash line rewritten around a call that still gets the same arguments: the value
    # that fails it comes through them, from what binds them, not from this rewrite.
    passes = (
        through.passed_through(crash_code, removed, crash.callee)
        if in_crash_file and introduced and not sig.rethrow
        else None
    )
    # A raise the code makes on purpose, rewritten to say more: it still raises the same
    # exception in the same case (its condition is another line), so the bad value it
    # caught was made elsewhere.
    reworded = (
        in_crash_file
        and bool(introduced)
        and not sig.rethrow
        and (raised := _RAISE.match(crash_code)) is not None
        and any(_RAISE.match(t) and raised.group(1) in t for t in removed)
    )
    if reworded and not passes:
        passes = raised.group(1)  # type: ignore[union-attr]
    # Values of the wrong type for each other (`can't compare naive and aware`): a rewrite
    # that keeps every value and call of the line (`<` made `<=`) did not change their types.
    if (
        not passes
        and "type" in sig.kinds
        and in_crash_file
        and introduced
        and not sig.rethrow
        and same_values(crash_code, removed)
    ):
        passes = "the same values"
    # A missing value dereferenced as the old lines already did (`unless @quote.open?` made
    # `return if @quote.open?`): the rewrite did not make it missing; what sets it did.
    dereferenced = (
        dereference(crash, crash_code)
        if not passes and crash.nullish and in_crash_file and introduced and not sig.rethrow
        else None
    )
    if (
        dereferenced
        and any(dereferenced in re.sub(r"\s+", "", r) for r in removed)
        and not failing.guard_dropped(sig.kinds, removed, [t for _, t in added])
    ):
        passes = "the same values"
    # The operation that raises this kind (a dereference, a lookup, a division, a check)
    # written as before, on the same operands, with no guard dropped.
    if (
        not passes
        and in_crash_file
        and introduced
        and not sig.rethrow
        and failing.kept(
            sig.kinds, crash.exc_value, crash_code, removed, [t for _, t in added], sig.imports
        )
    ):
        passes = "the same values"
    # A call that timed out waited on something else: the same call made before the rewrite
    # (another header, another argument) is no new wait.
    waited = (
        in_crash_file
        and bool(introduced)
        and "timeout" in sig.kinds
        and calls_again(crash_code, removed)
    )
    if passes and reworded:
        score += 1.5
        reasons.append(f"rewrites the raise, but raises {passes} in the same case as before")
    elif passes == "the same values":
        score += 1.5
        reasons.append("rewrites the crash line, but with the same values and calls as before")
    elif passes:
        score += 1.5
        reasons.append(f"rewrites the crash line, but hands {passes} the same arguments as before")
    elif waited:
        score += 1.5
        reasons.append("rewrites the crash line, but the call that timed out was made before too")
    elif in_crash_file and introduced and not sig.rethrow:
        score += 6
        reasons.append("adds the crash line")
    elif in_crash_file and introduced:
        score += 6
        reasons.append("adds the statement whose failure is re-raised")
    elif in_crash_file and newest:
        lines = [n for n, _ in added] or [start]
        first, _ = sig.function_lines

        # Lines above the crash that only read (a new log line), or bind a name the failing
        # value is not made of (`messageId` for a log line), change nothing it computes.
        def idle(t: str) -> bool:
            return read_only(t, set(sig.path_names)) or aside(t, sig)

        lines = [n for n, t in added if not idle(t)] or (
            [start] if not added or (not all(idle(t) for t in removed) and removed) else []
        )
        inside = any(first <= n <= crash.line for n in lines)
        above = [n for n in lines if first <= n <= crash.line] or lines or [start]
        distance = min(abs(crash.line - n) for n in above)
        # Statements below the crash line had not run when it failed: a hunk that spans the
        # crash line but changes only what follows it is not "around" it.
        if start <= crash.line <= end and inside:
            score += 3
            beside += 3
            reasons.append("changes the code around the crash line")
        if inside:
            score += max(3.0, 5 - distance / 5)
            beside += max(3.0, 5 - distance / 5)
            reasons.append(f"changes the crashing function {distance} line(s) from the crash")
    frame_line: tuple[int, str] | None = None
    for depth, frame in sig.stack_by_path.get(path, []):
        if in_crash_file and (frame.lineno == crash.line or frame.function == crash.function):
            continue  # the crash itself, or the handler in its function that reported it
        by_text = [
            (n, t)
            for n, t in added
            if frame.context_line and squash(t) == squash(code_of(frame.context_line))
        ]
        by_number = [(n, t) for n, t in added if newest and n == frame.lineno]
        if by_text or by_number:
            frame_line = (by_text or by_number)[0]
        weight = max(2.0, 4.5 - 0.5 * depth)
        near = [n for n, t in added if not definitions(t)]
        # Just above the call the frame was making (what follows it had not run yet).
        close = newest and frame.lineno and any(0 <= frame.lineno - n <= 2 for n in near)
        if frame_line or close:
            score += weight
            beside += weight
            reasons.append(f"changes {frame.function} on the stack ({depth} call(s) up)")
            break
        function = last_segment(frame.function or "")
        after_call = newest and frame.lineno and near and all(n > frame.lineno for n in near)
        if (
            function
            and function.lower() in names_of(str(hunk.get("function") or ""))
            and not (after_call and in_crash_file)  # past the call it was making: not run
        ):
            score += weight / 2
            beside += weight / 2
            reasons.append(f"changes {frame.function} on the stack ({depth} call(s) up)")
            break
    defined = defined_names(hunk)
    called = defined & sig.nearby_names - sig.unreached
    if sig.null_from:
        # The exception names the call whose result was null: a function called beside it
        # whose result the failing statement never uses (`code = codes.next()` two lines up)
        # is not what the failing code calls.
        called &= set(sig.callees) | sig.null_from
    if sig.sites:
        # The crash line failed in an operation of its own (`days[i].add(x)` on `days[i]`):
        # what it calls there counts only when the operation works on its result.
        on_line = calls_of(code_of(crash.code))
        called = {c for c in called if c not in on_line or any(c in x for x in sig.sites)}
    calls_into = bool(called) and not (in_crash_file and introduced)
    if calls_into:
        score += 4
        reasons.append(f"changes {', '.join(sorted(called))}, which the failing code calls")
    returned_null = defined & sig.null_from
    if returned_null:
        # The exception names the call whose result was null: what that call returns is
        # where the null comes from, not the line that used it.
        score += 3
        calls_into = True
        reasons.append(f"changes {min(returned_null)}(), whose result the exception says was null")
    # The exception names the type of the value that was missing (`Cannot invoke
    # "shop.Vat.rate()"`): a changed function that returns that type may now return none.
    typed = returning(hunk, sig.missing_type) if sig.missing_type and not in_crash_file else None
    if typed and not calls_into:
        score += 4
        calls_into = True
        reasons.append(
            f"changes {typed[0]}, which returns a {sig.missing_type}, the type of the missing value"
        )
    beneath = (defined & sig.beneath) - called
    if beneath and not calls_into:
        # The hidden cause failed somewhere below the guarded call: a function that call
        # reaches is on the way to it, as a callee on the stack would be.
        score += 3
        calls_into = True
        reasons.append(f"changes {', '.join(sorted(beneath))}, which the guarded call reaches")
    # A change to the shape of data the failing code reads: a key it looks up, renamed,
    # dropped or given another type where the data is built.
    # A definition's `name: Type` parameters are not keys it writes.
    before: dict[str, str] = {}
    for t in removed:
        before.update(values_written(t) if not definitions(t) else defaults_of(t))
    after: dict[str, str] = {}
    for _, t in added:
        after.update(values_written(t) if not definitions(t) else defaults_of(t))
    shaped = {
        k
        for k in before.keys() & sig.nearby_keys
        if k not in after or after[k][:1] != before[k][:1]
    }
    # The same key still written, from another source or with another default: a setting
    # read from a renamed variable, a default that became 0 (config loaders, builders).
    old_values = key_values(removed)
    new_values = key_values([t for _, t in added])
    reads = sig.nearby_keys | {n for n, d in sig.path_names.items() if d <= 1}
    rewritten = {
        k
        for k in old_values.keys() & new_values.keys() & reads
        if squash(old_values[k]) != squash(new_values[k])
    } - shaped
    value_fit = next(
        (
            why
            for k in sorted(rewritten)
            if (why := rewritten_fits(sig.kinds, k, old_values[k], new_values[k]))
        ),
        None,
    )
    if in_crash_file:
        rewritten = set()
    key_line = (
        next(
            (
                (n, t)
                for n, t in added
                if keys_written(t) & shaped or set(key_values([t])) & rewritten
            ),
            None,
        )
        or keys_listed(added, shaped)
        if (shaped or rewritten) and not in_crash_file
        else None
    )
    if shaped and not in_crash_file:
        score += 5
        reasons.append(f"changes {', '.join(sorted(shaped))}, which the failing code reads")
    elif rewritten:
        score += 5
        reasons.append(
            f"changes the value of {', '.join(sorted(rewritten))}, which the failing code reads"
        )
        shaped = rewritten
    # What the hunk writes or defines that the failing value is made of, in any file.
    written = set(after) | set(before) | defined
    for _, t in added:
        m = _ASSIGNED.match(t)
        if m:
            written.add(m.group(1).lower())
    removed_names = set().union(*(names_of(t) for t in removed), set())
    added_names = set().union(*(names_of(t) for _, t in added), set())
    for _, t in added:
        # `row.Scan(&p.ID, &p.Unit)`, `json.Unmarshal(b, &cfg)`: a pointer handed to a call
        # is written by it.
        written |= {n.lower() for n in _OUT_PARAM.findall(t)}
    spelled = {ident(w) for w in written}
    on_path = {n: d for n, d in sig.path_names.items() if ident(n) in spelled}
    if not on_path and not in_crash_file:
        on_path = made_there(sig, path, removed_names | added_names)
    # Above the crash in its function, a line that binds the value a division divides by
    # made its denominator (an index has its own rule: the position it reads at).
    operand = (
        set().union(*(names_of(x.partition("|")[2]) for x in sig.sites), set()) - NOISE
        if "zero" in sig.kinds
        else set()
    )
    bound_here = {
        n
        for ln, t in added
        if in_crash_file
        and newest
        and sig.function_lines[0] <= ln < crash.line
        and (b := bindings(code_of(t).strip())) is not None
        for n in b[0]
        if n.lower() in operand
    }
    if bound_here and not introduced:
        score += 3
        reasons.append(f"binds {', '.join(sorted(bound_here)[:2])}, the operand of what failed")
    path_line: tuple[int, str] | None = None
    # The exception says which value was missing; what makes another one is less on its way.
    off_receiver = bool(sig.receiver_path and on_path) and not set(on_path) & set(sig.receiver_path)
    if on_path and not in_crash_file and not shaped and not calls_into:
        near = min(on_path.values())
        # Far up the path is still the path: the value that failed was made there.
        score += max(1.5, 3.5 - near / 2) / (2 if off_receiver else 1)
        reasons.append(f"builds {', '.join(sorted(on_path)[:3])}, on the failing value's data path")
        # Of the places that write such a key, the one named like what the failing code
        # reads it from (`$settings['region']`: AppSettings, not a record builder).
        held = set().union(*(sig.holders.get(k, set()) for k in on_path), set())
        named_like = held & parts(PurePosixPath(path).stem)
        if named_like:
            score += 1.5
            reasons.append(
                f"writes it into {sorted(named_like)[0]}, where the failing code reads it"
            )
        # The line writing what is closest to the failing value on the path.
        writes = [
            (min(on_path[k] for k in hit), n, t)
            for n, t in added
            if (hit := (set(values_written(t)) | names_of(t.partition("=")[0])) & set(on_path))
        ]
        path_line = min(writes)[1:] if writes else None
    # A change that now produces the null the failing code trips on.
    mentions = words_of(" ".join(t for _, t in added))
    nulls_added = (
        crash.nullish
        and any(NULL_LITERAL.search(t) for _, t in added)
        and not any(NULL_LITERAL.search(t) for t in removed)
    )
    produces_null = (
        nulls_added
        and bool(mentions & (sig.exc_terms | sig.code_terms) or on_path)
        and not in_crash_file
    )
    if produces_null:
        score += 4
        reasons.append("now produces a null the failing code does not expect")
    changed_text = [t for _, t in added] + removed
    changed_terms = words_of(" ".join(changed_text))
    overlap = 1.5 * len(sig.exc_terms & changed_terms) + 1.0 * len(sig.code_terms & changed_terms)
    linked = path in sig.stack_by_path or calls_into or bool(shaped) or produces_null or on_path
    # The words of a message this raise itself wrote are no clue, nor those of a crash line
    # rewritten to do the same: they are the crash line's own.
    vocabulary = 0.0 if reworded or passes else min(6.0, overlap if linked else overlap / 4)
    score += vocabulary
    imports = module_names(path) & sig.imports
    # Named like what the failing code reads from (`$invoice->customer`: Invoice.php).
    held_here = bool(set().union(*sig.holders.values(), set()) & parts(PurePosixPath(path).stem))
    if not in_crash_file and path not in sig.stack_by_path and imports:
        score += 1.5
        reasons.append("in a module the crashing file imports")
    gone = {n for n in sig.exc_names if n in removed_names and n not in added_names}
    if gone:
        score += 3
        reasons.append(f"removes {', '.join(sorted(gone))}, named by the exception")
    named = {
        lit
        for lit in sig.literals
        if useful(lit)
        and any(mentions_literal(lit, t) for t in changed_text)
        and lit.lower() not in sig.unreached & defined
    }
    if named and not gone:
        score += 2.5 if linked else 1.0
        reasons.append(f"touches {', '.join(sorted(named)[:2])}, which the exception names")
    # A timeout that fired was set somewhere: where one is set otherwise is on its way,
    # wherever the setting is read.
    timed = "timeout" in sig.kinds and retimed(removed, [t for _, t in added])
    if timed and not linked:
        score += 5
        reasons.append("changes where a timeout is set, and the request timed out")
    if timed and _BARE_DURATION.search(" ".join(t for _, t in added)):
        score += 2
        reasons.append("makes a duration of a bare number, which Go counts in nanoseconds")
    relevant = linked or timed or bool(gone) or bool(named) or (in_crash_file and score > 0)

    # What follows the crash line in its own function had not run when it failed (a removed
    # line's place at the release: its old number shifted as the hunk's start was).
    def ran(n: float) -> bool:
        if in_crash_file and newest and crash.line < n <= sig.function_end:
            return False
        # Likewise in a frame further up in the same file: past the call it was making.
        return not (in_crash_file and newest and any(c < n <= e for c, e in sig.callers_after))

    quiet = {n for n, t in added if read_only(t, set(sig.path_names))}

    places = removed_places(hunk)
    removed_ran = [
        code
        for n, t in hunk.get("removed") or []
        if (code := code_of(str(t))) in removed
        and ran(places.get(int(n), 0))
        and not read_only(code, set(sig.path_names))
    ]
    fit = (
        fits_kind(
            sig.kinds,
            removed_ran,
            [t for n, t in added if ran(n) and n not in quiet],
            flows=bool(on_path),
            read=frozenset(sig.nearby_keys),
            denominators=frozenset(sig.denominators),
            assigned=frozenset(written),
            uses=frozenset(n for n, d in sig.path_names.items() if d <= 1),
            indexes=frozenset(sig.indexes),
        )
        if relevant
        else None
    )
    if fit == REBOUNDS and not hunk.get("old_start") and not removed:
        fit = None  # a new file: it bounds nothing that ran before, whatever it compares
    fit = fit or (value_fit if rewritten else None)
    if gone and "key" in sig.kinds:
        # A lookup by name missed (a key, an enum constant): the hunk that stopped defining
        # exactly the name the message says is missing is where it went.
        fit = fit or f"removes {min(gone)}, the name the exception says is missing"
    made = returned_value(sig, path, hunk)
    if made is not None:
        score += 5
        reasons.append(f"changes {made[0].name}, which returns the failing value")
        fit = fit or made[1]
    # A member renamed or removed where it is defined or set (a relation, a method, a
    # property the middleware sets, a field of a shared type), while the failing code still
    # reads it by the old name: read by name at run time, it is now missing.
    stale = (
        stale_names(removed, [t for _, t in added], sig)
        if sig.kinds & {"null", "key"} and (path in sig.stack_by_path or imports or held_here)
        else set()
    )
    if stale:
        score += 6
        fit = fit or (
            f"renames or removes {', '.join(sorted(stale))} where it is defined, and the "
            "failing code still reads it by that name, so it is now missing"
        )
    if refill is not None:
        # A refactor moved where a value is built and lost one of its fields: where the
        # rest are set now is where that one is missing. Worth a key the failing code reads.
        score += 5
        fit = fit or (
            f"sets the other fields where {refill.source} set them, but no longer {refill.lost}"
        )
    if passes:
        fit = None  # what the failing call receives is as before
    # A field's wire name changed in the declaration of a type the failing code names, and
    # the failing code reads that field: decoding now leaves it empty (issue 12's class of a
    # value that comes from a type's declaration, off the stack).
    renamed_wire = (
        None
        if in_crash_file
        else wire.explains(
            hunk, sig.types, sig.path_names, frozenset(sig.nearby_keys | sig.function_keys)
        )
    )
    if renamed_wire is not None:
        # Worth a renamed key the failing code reads, and its place on the data path when
        # nothing else of the hunk earned it.
        credited = bool(on_path) and not shaped and not calls_into
        score += 5 + (0.0 if credited else 3.5 - renamed_wire[2] / 2)
        if fit:
            reasons.append(fit)
        fit = renamed_wire[1]
    # A call elsewhere to a function of the stack (a task enqueued, a handler dispatched)
    # now hands it other arguments: the caller, across a queue or a framework, is the fault.
    handed = (
        None
        if path in sig.stack_by_path
        else rehanded(
            [code_of(str(t)) for _, t in hunk.get("added") or []],
            [code_of(str(t)) for _, t in hunk.get("removed") or []],
            sig.stack_functions,
        )
    )
    mixed = None if handed is not None else reordered(removed, [t for _, t in added])
    if mixed is not None and {n.lower() for n in mixed[1]} & set(on_path):
        fit = fit or (
            f"changes the order of what {mixed[0]} is handed, so "
            f"{', '.join(sorted(mixed[1])[:3])} now get another's value"
        )
    if handed is not None:
        score += 7 if handed[1] else 5
        shifted = "the number or the order of " if handed[1] else ""
        fit = fit or f"changes {shifted}the arguments handed to {handed[0]}, which failed on them"
    # A column the failing code reads, now taken from an outer join: NULL whenever the join
    # finds nothing (`LEFT JOIN contacts c ON ... AND c.kind = 'EMAIL'`, `c.value AS email`).
    outer = (
        outer_column(hunk, sig.null_from | {normal(k) for k in sig.nearby_keys})
        if "null" in sig.kinds and not in_crash_file
        else None
    )
    if outer is not None:
        score += 5
        fit = (
            fit or f"reads {outer[2]} from an outer join, which leaves it null when nothing matches"
        )
    # The message quotes the value the failing call got (`maximum 20 is less than minimum
    # 500`): a change that now sets a name the call reads to that number made it.
    quoted = set_to_quoted(added, removed, sig) if sig.numbers or sig.literals else None
    if quoted is not None:
        # A string the message quotes, now written here and not before, is where that value
        # comes from: more than any closeness to the crash says (in a whole tree, every line
        # is "now written").
        score += 4 if whole or re.fullmatch(r"[\d.]+", quoted[1]) else 7
        fit = fit or f"now sets {quoted[0]} to {quoted[1]}, the value the exception quotes"
    # A division by zero: a value this file gives (an enum constant, a default, a table
    # row) that was not 0 is now 0.
    if "zero" in sig.kinds and not in_crash_file and (linked or imports) and zeroed(added, removed):
        score += 4
        fit = fit or "now gives 0 where it gave another number, and the failing code divides"
    # The crash line rewritten: it now dereferences a value the old line did not, or hands
    # the call that raised other arguments.
    if "adds the crash line" in reasons and not fit and "null" in sig.kinds:
        fresh = failing.new_receivers(crash_code, removed, sig.imports, crash.exc_value)
        if fresh:
            fit = f"now dereferences {', '.join(sorted(fresh)[:2])}, which can be missing"
    if "adds the crash line" in reasons and not fit:
        local = {
            n.lstrip("$"): b[1].rstrip(";")
            for _, t in added
            if (b := bindings(code_of(t).strip())) is not None
            for n in b[0]
        }
        handed = through.rehanded(crash_code, removed, crash.callee, crash.exc_value, local)
        if handed:
            fit = f"changes what {handed} is handed, the call that raised"
    # A table the crashing file imports now maps its keys to other names: code that looks
    # those names up elsewhere finds nothing under the new ones.
    if not fit and sig.kinds & {"null", "key"} and imports and not in_crash_file:
        renamed_values = revalued([t for _, t in added], removed)
        if renamed_values:
            fit = f"now maps {renamed_values[0]} to another name, which a lookup of it can miss"
    if fit and off_receiver and not in_crash_file and not stale:
        # It makes another value of the failing statement than the one found missing.
        fit = None
        reasons.append("makes a value of the failing code, but not the one found missing")
    if fit:
        score += 3
        reasons.append(fit)
    elif sig.rethrow and called:
        # Behind a re-raise that dropped its cause only the call is known, not the line that
        # failed under it: touching the called function in a way that cannot raise this
        # exception is a weak link.
        score -= 2
    if score <= 0:
        return None
    binds = binding_line(added, crash) if crash.nullish else None
    # The exception quotes what it could not find or parse (`'charge.refunded'`): the
    # changed line is the one that took the place of the line naming it.
    places = removed_places(hunk)
    named_at = [
        (places.get(int(n), 0.0), int(n))
        for n, t in hunk.get("removed") or []
        if any(mentions_literal(lit, str(t)) for lit in sig.literals if useful(lit))
    ]
    # An added line that still names it (the key now listed, not written `key: value`) says
    # more than the line that happens to stand where it was.
    naming = [
        (n, t)
        for n, t in added
        if any(mentions_literal(lit, code_of(t)) for lit in sig.literals if useful(lit))
    ]
    replacing = (
        keys_listed(naming, shaped) or replaced_by(named_at[0], places, added)
        if named_at and added
        else None
    )
    moved = bound_line(added, removed, crash_code, crash.line) if in_crash_file else None
    # The test that bounds the index, above the crash line: the one this hunk wrote, else the
    # crash line of the release when this hunk left it to another commit.
    bounding = (
        bounding_line(
            added,
            introduced[0] if introduced else crash.line,
            sig.sites if "index" in sig.kinds else set(),
            sig.indexes,
        )
        if in_crash_file and sig.kinds & {"index", "null"} and (introduced or linked)
        else None
    )
    loose = False
    if in_crash_file and introduced and moved is not None:
        line, text = moved  # the crash line only reflowed: what it indexes with changed
    elif bounding is not None:
        line, text = bounding  # the new test that should have stopped the index
    elif in_crash_file and introduced:
        line, text = introduced[0], next(t for n, t in added if n == introduced[0]).strip()
    elif refill is not None:
        line, text = refill.line, refill.text
    elif renamed_wire is not None:
        line, text = renamed_wire[0].line, renamed_wire[0].text
    elif outer is not None:
        line, text = outer[0], outer[1]  # the join that finds nothing
    elif timed and not linked:
        # Where the timeout is now set: a bare duration first, else the first timeout line.
        line, text = next(
            (
                (n, t.strip())
                for pattern in (_BARE_DURATION, _TIMEOUT)
                for n, t in added
                if pattern.search(t)
            ),
            (added[0][0], added[0][1].strip()) if added else (start, ""),
        )
    elif made is not None and made[1] == FALLS_OFF:
        line, text = falls_off(hunk, made[0].name, path)  # type: ignore[misc]
    elif made is not None and made[1] == NARROWS and narrowing_line(hunk) is not None:
        line, text = narrowing_line(hunk)  # type: ignore[misc]
    elif (
        fit == RETYPES
        and key_line is None
        and path_line is not None
        and (converts := converting_line(added, removed)) is not None
    ):
        line, text = converts  # where the value is now converted or formatted otherwise
    elif made is not None and (inside := body_lines(hunk, made[0].name)):
        # In the function that returns the failing value: the line that does what makes it
        # fail, else the line with the failure's words, else its first changed line.
        picked = suspect_line(hunk, sig.exc_terms | sig.code_terms, called, start)
        reads = set(made[0].reads) | set(sig.path_names)
        line, text = telling_line(inside, removed, made[1], reads) or (
            picked if picked[0] in dict(inside) else inside[0]
        )
    elif binds is not None:
        line, text = binds  # where the value the crash dereferences is now bound
    elif replacing is not None and gone | named:
        line, text = replacing[0], replacing[1].strip()
    elif frame_line is not None:
        line, text = frame_line[0], frame_line[1].strip()  # the changed line the request ran
    elif typed:
        line, text = typed[1], typed[2]  # in the function that returns the missing type
    elif calls_into:
        line, text = suspect_line(hunk, sig.exc_terms | sig.code_terms, called, start)
        loose = True
    elif key_line is not None:
        line, text = key_line[0], key_line[1].strip()  # where the data is now built otherwise
    elif produces_null:
        line, text = next((n, t.strip()) for n, t in added if NULL_LITERAL.search(t))
    elif fit == DROPS_GUARD and (guarded := unguarded_line(added, removed)) is not None:
        line, text = guarded  # where the value the dropped guard tested is now used bare
    elif path_line is not None:
        line, text = path_line[0], path_line[1].strip()
        loose = True
    else:
        line, text = suspect_line(hunk, sig.exc_terms | sig.code_terms, called, start)
        loose = True
    if not (in_crash_file and introduced) and bounding is None:
        line, text = where_used(line, text, added, removed)
        if loose:  # a line picked by its words, not for what it does
            line, text = statement_head(line, text, added)
    # A line of a whole tree (a cut history) was not changed at all: closeness to the crash
    # is all there is to judge it by, fitting or not.
    if beside and not fit and sig.kinds and not whole:
        # Beside the crash, in its function or a frame of the stack, but of no kind known to
        # raise this exception (a log line, a tag, a timer): close to where it failed, not why.
        score -= beside / 2
        reasons.append("though not in a way known to raise this exception")
    # The crash line rewritten, still reading what it read before on the same values (a
    # message added to `checkNotNull(stop.window)`, a call split over lines), with no guard
    # dropped and in no way known to raise this exception: the value it fails on is made
    # elsewhere, and blame naming the rewrite says nothing.
    kept_operand = (
        "adds the crash line" in reasons
        and not fit
        and not whole
        and failing.same_operand(
            crash_code, removed, crash.exc_value, crash.callee.rsplit(".", 1)[-1]
        )
        and not failing.guard_dropped(sig.kinds, removed, [t for _, t in added])
    )
    if kept_operand:
        score -= 4.5 + vocabulary  # its words are the crash line's own, as for `passes`
        passes = passes or "the same values"
        reasons[reasons.index("adds the crash line")] = (
            "rewrites the crash line, but reads the same values as before"
        )
    elif "adds the crash line" in reasons and not fit and sig.kinds and not whole:
        # The crash line rewritten in a way that does not raise this kind of exception (a
        # log message reworded around the same call): where it stands, not why it fails.
        score -= 4.5
        reasons[reasons.index("adds the crash line")] = (
            "adds the crash line, though not in a way known to raise this exception"
        )
    if renamed:
        reasons.append("only renames a variable on the crash line")
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
        on_crash_line=bool(in_crash_file and introduced) and moved is None,
        reasons=reasons,
        fits=bool(fit),
        producer=(
            (
                not in_crash_file
                and bool(
                    shaped or produces_null or on_path or key_line or renamed_wire or outer or stale
                )
            )
            or refill is not None
        )
        or made is not None
        or bool(typed),
        renamed=renamed,
        passes=bool(passes) or waited,
        rewrote=bool(in_crash_file and introduced) and rewritten_statement(crash_code, removed),
        returns=made[0].name if made is not None else "",
        stale=bool(stale),
        defines=bool(gone)
        and "key" in sig.kinds
        and re.search(rf"(?<![\w$]){re.escape(PurePosixPath(path).stem)}(?![\w$])", crash.exc_value)
        is not None,
        quotes=quoted is not None,
        tidied=tidied,
    )


_LENGTH = re.compile(r"\blen\(|\.length\b|\.size\b|\.count\b|\bcount\(|\.Count\b")


def bounding_line(
    added: list[tuple[int, str]], crash_line: int, sites: set[str], indexes: set[str]
) -> tuple[int, str] | None:
    """The added line above the crash that bounds an index the crash line subscripts with: the
    loop header that binds it against a length (`for i := 0; i < len(stops); i++`), else a
    test of it against a length (`if i > len(sheet)` above `sheet[i]`): where an off-by-one
    is written."""
    keys = {k for x in sites if (k := x.partition("|")[2]) and re.fullmatch(r"[\w$.]+", k)}
    bound = {k.lstrip("$").lower() for k in keys | indexes}
    for n, t in sorted(added, reverse=True):
        # The loop that binds the index and bounds it (`for i := 0; i < len(xs); i++`).
        code = code_of(t)
        index = _LOOP_INDEX.match(code)
        if n < crash_line and index and index.group(1).lower() in bound and _LENGTH.search(code):
            return n, t.strip()
    for n, t in sorted(added, reverse=True):
        if n >= crash_line or not keys:
            continue
        code = code_of(t)
        if _LENGTH.search(code) and comparisons(code) and names_of(code) & keys:
            return n, t.strip()
    return None


_ASSIGN = re.compile(r"(?<![=!<>])=(?![=>])")
# The index a loop header binds: `for i := 0;`, `for (int i = 0;`, `for ($i = 0;`, `for i in`.
_LOOP_INDEX = re.compile(
    r"\s*for\s*\(?\s*(?:(?:int|long|let|var|const|val|size_t|auto)\s+)?\$?(\w+)\s*(?::=|=|\bin\b)"
)


_KEY_VALUE = (
    # `"key": v`, `key: v`, `'key' => v`, `"key" to v`
    re.compile(r"""^\s*["':]?([A-Za-z_][\w.\-]*)["']?\s*(?::(?!:)|=>|\bto\b)\s*(.+?)[,;]?\s*$"""),
    # `out.put("key", v)`, `cfg.set('key', v)`
    re.compile(
        r"""\b(?:put|set|setdefault|store|putIfAbsent|Set|Store)\(\s*["']([\w.\-]+)["']\s*,\s*(.+?)\)?\s*;?\s*$"""
    ),
    # `out["key"] = v`, `self.key = v`, `KEY = v`
    re.compile(
        r"""^\s*(?:[\w$]+\[\s*["']([\w.\-]+)["']\s*\]|(?:self\.|this\.|@|\$)?([A-Za-z_]\w*))\s*=(?![=>])\s*(.+?);?\s*$"""
    ),
)


def defaults_of(header: str) -> dict[str, str]:
    """The default values a definition line gives its parameters (`per_page: int = 20`)."""
    if not definitions(header):
        return {}
    inside = header.partition("(")[2].rpartition(")")[0]
    out = {}
    for part in split_top(inside):
        name, eq, value = part.partition("=")
        idents = re.findall(r"[A-Za-z_]\w*", name.split(":")[0])
        if eq and idents and not value.startswith(("=", ">")):
            out[idents[-1 if ":" not in name and len(idents) > 1 else 0].lower()] = value.strip()
    return out


_NAME_VALUE = re.compile(
    r"""^\s*["']?([\w.\-]+)["']?\s*(?::|=>)\s*["']([A-Za-z_][\w.\-]*)["']\s*,?\s*$"""
)


def revalued(added: list[str], removed: list[str]) -> list[str]:
    """The keys of a mapping that the change now maps to another name (`"30": "failed"` →
    `"30": "delivery_failed"`): each key written on both sides with a different value."""

    def pairs(lines: list[str]) -> dict[str, str]:
        return {m.group(1): m.group(2) for t in lines if (m := _NAME_VALUE.match(code_of(t)))}

    before, after = pairs(removed), pairs(added)
    return sorted(k for k in before.keys() & after.keys() if before[k] != after[k])


def key_values(lines: list[str]) -> dict[str, str]:
    """The keys and settings the lines write, each with the whole expression it gets; for a
    definition line, the defaults of its parameters."""
    out: dict[str, str] = {}
    for line in lines:
        if definitions(line):
            out.update(defaults_of(line))
            continue
        for pattern in _KEY_VALUE:
            m = pattern.search(line)
            if m:
                *keys, value = m.groups()
                key = next(k for k in keys if k)
                out[key.lower().rsplit(".", 1)[-1]] = value
                break
    return out


def rewritten_fits(kinds: set[str], key: str, old: str, new: str) -> str | None:
    """Why a key still written, but from another source or with another default, raises the
    exception: its source renamed (now unset, so missing), its default now 0, its type."""
    if kinds & {"null", "key"} and (
        keys_read(old) != keys_read(new) or names_of(old) != names_of(new)
    ):
        return f"reads {key} from another name than before, so it is now missing"
    if kinds & {"null", "key"} and GUARD.search(old) and not GUARD.search(new):
        return f"drops the default of {key}, so it can now be missing"
    numbers = (
        re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", old),
        re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?", new),
    )
    if kinds & {"zero", "index"} and numbers[0] != numbers[1]:
        return f"changes the default of {key}, which the failing code counts or divides with"
    if kinds & {"type", "format"} and (
        _CONVERSION.findall(old) != _CONVERSION.findall(new)
        or _strings(old) != _strings(new)
        or numbers[0] != numbers[1]
    ):
        return f"changes the type or the format of {key} where it is set"
    return None


def mentions_literal(literal: str, text: str) -> bool:
    """The line names what the exception quotes as a whole word (`sku`, not `lastSku`)."""
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(literal)}(?![A-Za-z0-9_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


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
    r"(?:self\.|[A-Z]\w*\.)?([A-Za-z_$][A-Za-z0-9_$]*)|([A-Za-z_$][A-Za-z0-9_$]*)\s*\([^)]*\)\s*(?:\{|:|->|throws)"
)


def definitions(text: str) -> set[str]:
    return set(_definitions(text))


@lru_cache(maxsize=1 << 16)
def _definitions(text: str) -> frozenset[str]:
    return frozenset(n.lower() for pair in _DEFINITION.findall(text) for n in pair if n) - NOISE


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
        elif text.strip() and not text[:1].isspace():
            enclosing = set()  # a top-level line: outside any function (or its closing brace)
        elif added:
            names |= enclosing
    return names


def shown_body(commits: list[dict[str, Any]], called: set[str]) -> list[str]:
    """The code of the functions in `called`, as far as the hunks of `commits` show it."""
    return [
        code_of(text)
        for commit in commits
        for f in commit.get("files") or []
        for hunk in f.get("hunks") or []
        for name in called
        for _, text, _ in enclosed(hunk, name)
    ]


def keys_beneath(commits: list[dict[str, Any]], called: set[str]) -> set[str]:
    """The data keys the functions in `called` read, as the window's hunks show them."""
    return set().union(*(keys_read(t) for t in shown_body(commits, called)), set())


def calls_beneath(commits: list[dict[str, Any]], called: set[str]) -> set[str]:
    """What the functions in `called` call, as the window's hunks show their bodies."""
    found = set().union(*(calls_of(t) for t in shown_body(commits, called)), set())
    return found - called - NOISE


def meaningful(added: list[tuple[int, str]]) -> list[tuple[int, str]]:
    lines = [(n, t) for n, t in added if t.strip() and t.strip() not in "{}()[];"]
    return [(n, t) for n, t in lines if not DECLARATION.match(t)] or lines


def bound_line(
    added: list[tuple[int, str]], removed: list[str], crash_code: str, crash_line: int
) -> tuple[int, str] | None:
    """When a hunk rewrote the crash line but its indexing (`ids[start:end]`) was there
    before, the line that now computes what it indexes with, if its bound changed
    (`end := min(start+size, len(ids))` → `end := start + size`)."""
    spots = positions(code_of(crash_code))
    if not spots or not set(spots) <= set(positions(" ".join(removed))):
        return None
    names = {n.lower() for spot in spots for n in re.findall(r"[A-Za-z_]\w*", spot)}
    old: dict[str, str] = {}
    for t in removed:
        m = _ASSIGNED.match(code_of(t))
        if m:
            old[m.group(1).lower()] = m.group(2)
    for n, t in sorted(added, key=lambda item: -item[0]):
        m = _ASSIGNED.match(code_of(t))
        if not (m and n < crash_line and m.group(1).lower() in names):
            continue
        was = old.get(m.group(1).lower())
        if was is not None and (
            _BOUND.findall(was) != _BOUND.findall(m.group(2))
            or re.findall(r"\b(?:min|max|len|count|size)\b", was)
            != re.findall(r"\b(?:min|max|len|count|size)\b", m.group(2))
        ):
            return n, t.strip()
    return None


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


def origin(crash: Crash, commits: list[dict[str, Any]]) -> Change | None:
    """Where the failing value is produced, when the history is cut (a truncated or shallow
    history: the crash line goes back to the root commit, whose change is the whole tree).

    No diff tells what went wrong, so each code line the root added (followed to the
    release through the newer commits) is scored as if it alone had been added: the line on
    the failing value's data path, in a producer, a callee or a setting, scores as a change
    there would. The answer names a line and no commit: the one that introduced it cannot
    be seen."""
    root = next((c for c in commits if c.get("parents") == []), None)
    if root is None or not crash.blamed or crash.blamed != root.get("sha"):
        return None
    sig = Signals.of(crash)
    later: dict[str, list[list[dict[str, Any]]]] = {}
    for commit in commits:
        if commit is root:
            break
        for f in commit.get("files") or []:
            later.setdefault(f.get("path") or "", []).append(f.get("hunks") or [])
    found: list[Change] = []
    for f in root.get("files") or []:
        path = f.get("path") or ""
        if path.lower().endswith(DOCS) or (is_test(path) and not is_test(crash.path)):
            continue
        for raw in f.get("hunks") or []:
            lines = [(int(n), str(t)) for n, t in raw.get("added") or []]
            for i, (n, text) in enumerate(lines):
                if not code_of(text).strip() or prose(text) or definitions(text):
                    continue
                # A hunk's added lines ascend: those within 3 lines are within 3 places.
                near = lines[max(0, i - 3) : i + 4]
                hunk = {
                    "old_start": 1,
                    "old_lines": 0,
                    "new_start": n,
                    "new_lines": 1,
                    "added": [[n, text]],
                    "removed": [],
                    "context": [[m, t] for m, t in near if 0 < abs(m - n) <= 3],
                }
                moved = at_release(hunk, later.get(path, [])) if path in later else hunk
                if moved is None:
                    continue
                change = score_hunk(sig, root, path, moved, True, whole=True)
                if change is not None:
                    found.append(change)
    found.sort(key=lambda c: -c.score)
    # The crash line is where the value was used; with no diff to show it was changed
    # there, the line that made the value wins: the best one that is of the exception's
    # kind or sits in the crashing function above the crash (a bound, a filter, a binding).
    # A line elsewhere that only builds a container the value is read from (`rec`,
    # `settings`) is no origin.
    # But when the message quotes a piece the crash line cut out of its input itself
    # (`name.split("-")[1]` → 'eu'), that line made the value: it misreads good data.
    cut = cuts_quoted(crash, sig)
    made = [c for c in found if (cut or not c.on_crash_line) and (c.fits or c.path == crash.path)]
    return made[0] if made else found[0] if found else None


# Taking a piece out of a string: split, slice, trim, substring, in the languages read here.
_CUT = re.compile(
    r"\.(?:r?split|r?partition|substring|substr|slice|remove(?:suffix|prefix)|[lr]?strip|"
    r"trim\w*|chomp|delete_suffix|delete_prefix|split_at|splitn)\s*\(|"
    r"\bstrings\.(?:Split\w*|Fields|Cut\w*|Trim\w*)\(|\b(?:explode|substr|mb_substr)\(|"
    r"\[\s*-?\d*\s*:\s*-?\d*\s*\]"
)


def cuts_quoted(crash: Crash, sig: Signals) -> bool:
    """The crash line hands the call that raised a piece it cut from a string, and the
    exception quotes a value that is not written on the line (the piece, not a format)."""
    code = code_of(crash.code)
    if not crash.callee or not _CUT.search(code):
        return False
    return any(lit not in code.lower() for lit in sig.literals)


# -- functions that return the failing value ----------------------------------------------
#
# The failing value is often made by a function of the repository that the failing code
# calls: on the crash line (`new BigDecimal(MoneyFormat.normalize(text))`) or in the binding
# of a variable the crash line uses (`val candidates = catalog.available(category)` above
# `candidates.first()`). That function's body is off the stack; a change there that fits
# the exception explains the failure better than a change beside the crash that makes
# nothing the value is made of.


@dataclass
class Callee:
    """A function whose result is the failing value or feeds it."""

    name: str  # lower case
    owners: set[str]  # what its file is named after (receiver, its type, the import); empty: any
    feeds: set[str]  # the names the failing value is made of through this call
    depth: int  # 0: the failing statement calls it, 1: a binding it uses does, 2: inside one
    reads: set[str] = field(default_factory=set)  # the fields read off its result


# An exception about a collection with nothing in it (`first()` of an empty list).
EMPTY = re.compile(
    r"(?i)\bempty\b|no elements?\b|nosuchelement|no such element|contains no|stopiteration|"
    r"no value present|reduce of empty"
)
_CALL = re.compile(r"(?:(\)|\]|[A-Za-z_$@][\w$]*)\s*(\?\.|\.|::|->)\s*)?([A-Za-z_$][\w$]*)\s*\(")
_SELF = {"this", "self", "$this", "@", "static", "super", "it"}
_CONTINUES = (".", "?.", ")", "]", "&&", "||", "?:", "+", "|>", "->")
_CONTINUED = ("(", ",", "=", ".", "+", "&&", "||", "?", "->", "=>", "\\")


def normal(name: str) -> str:
    """`order_helpers`, `refund.helpers`, `OrderHelpers` → orderhelpers."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def statement_at(source: list[str], index: int) -> tuple[int, str]:
    """The statement holding line `index` (0-based) with the lines above it that it continues
    (`.first()` under `return candidates`): its first line's index and its text."""
    first = index
    while first > 0 and index - first < 8:
        cur, prev = code_of(source[first]).strip(), code_of(source[first - 1]).strip()
        if not prev or not (cur.startswith(_CONTINUES) or prev.endswith(_CONTINUED)):
            break
        first -= 1
    return first, " ".join(code_of(t).strip() for t in source[first : index + 1])


def receiver_types(source: list[str], receiver: str) -> set[str]:
    """The type a receiver is declared or built with in the file (`private val catalog:
    CatalogRepository`, `private final Repo repo`, `self.repo = Repo(...)`)."""
    r = re.escape(receiver.lstrip("$@"))
    patterns = (
        rf"\b{r}\s*:\s*\??([A-Z]\w*)",
        rf"\b([A-Z]\w*)(?:<[^>]*>)?\??\s+\$?{r}\b",
        rf"\b{r}\s*:?=\s*(?:new\s+|&)?([A-Z]\w*)\s*[({{]",
        rf"^\s*{r}\s+\*?([A-Z]\w*)\b",
    )
    text = "\n".join(source[:400])
    return {m.lower() for p in patterns for m in re.findall(p, text, re.MULTILINE)}


def import_of(source: list[str], name: str) -> set[str]:
    """The module an import line brings `name` from (`import { netAmount } from "./helpers"`,
    `from .pricing import unit_price`, `import static a.b.MoneyFormat.normalize`)."""
    out = set()
    for line in source[:200]:
        m = _IMPORT.match(line)
        if not m or not re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", line, re.I):
            continue
        spec = next(g for g in m.groups() if g)
        pieces = [p for p in re.split(r"[/.\\]", spec.rstrip("/")) if p and p != "*"]
        if pieces and pieces[-1].lower() == name.lower():
            pieces = pieces[:-1]  # a static import names the function after its class
        if pieces:
            out.add(normal(pieces[-1]))
    return out


_READ_OFF = re.compile(
    r"""\s*(?:(?:\?\.|\.|->)\s*([A-Za-z_]\w*)(?!\s*\()|\[\s*["']([\w.\-]+)["']\s*\])"""
)


def read_off(text: str, open_at: int) -> set[str]:
    """The field read off the result of the call whose `(` is at `open_at`:
    `customerRef(id).customer_id` → customer_id, `row(x)["sku"]` → sku."""
    depth, i = 0, open_at
    while i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    m = _READ_OFF.match(text, i)
    return {(m.group(1) or m.group(2)).lower()} if m else set()


def calls_with_owners(
    text: str, source: list[str], skip: set[str]
) -> list[tuple[str, set[str], str]]:
    """The calls of a statement: (name, owners, arguments), owners being what the defining
    file is named after as far as the call and the file tell (empty when they do not)."""
    out = []
    for m in _CALL.finditer(text):
        receiver, name = m.group(1), m.group(3)
        low = name.lower()
        if low in skip or low in NOISE or not useful(low):
            continue
        args = call_arguments(text[m.start(3) :], name) or ""
        if receiver in (")", "]"):
            owners: set[str] = set()  # a chained call: its receiver's type is not written
        elif receiver and receiver.lower() in _SELF:
            owners = {"<self>"}
        elif receiver:
            owners = {normal(receiver)} | receiver_types(source, receiver)
        else:
            owners = import_of(source, name)
        out.append((low, owners, args))
    return out


def reads_of(text: str, name: str) -> set[str]:
    """The fields read off the results of the calls to `name` in the text."""
    out: set[str] = set()
    for m in re.finditer(rf"(?<![\w$]){re.escape(name)}\s*\(", text, re.IGNORECASE):
        out |= read_off(text, m.end() - 1)
    return out - NOISE


def value_callees(crash: Crash, code: str) -> dict[str, Callee]:
    """The functions the failing statement calls, and those called in the bindings of the
    variables it uses (two steps back in the crashing function, as the data path walks)."""
    src = crash.source
    if not src or not 0 < crash.line <= len(src):
        return {}
    index = crash.line - 1
    wanted = squash(code_of(code))
    for j in range(index, max(-1, index - 40), -1):  # a re-raise: the guarded statement
        if squash(code_of(src[j])) == wanted:
            index = j
            break
    start, statement = statement_at(src, index)
    top = function_start(src, crash.line)
    skip = {last_segment(crash.function).lower()}
    found: dict[str, Callee] = {}

    def add(text: str, depth: int, feeds: set[str]) -> set[str]:
        names = set()
        for name, owners, args in calls_with_owners(text, src, skip):
            fed = feeds | {n for n in names_of(args) if useful(n)}
            if name not in found:
                found[name] = Callee(name, owners, fed, depth, reads_of(text, name))
            names.add(name)
        return names

    called = add(statement, 0, set())
    variables = {n for n in names_of(statement) if useful(n)} - called
    body = src[top + 1 : start] if top < start else src[max(0, start - 12) : start]
    bound_from: dict[str, set[str]] = {}
    for _ in range(2):
        more: set[str] = set()
        for text in reversed(body):
            bound = bindings(code_of(text))
            if not bound or not bound[0] & variables:
                continue
            made = add(bound[1], 1, set(bound[0]) | names_of(bound[1]))
            more |= {n for n in names_of(bound[1]) if useful(n)} - made
            for n in bound[0]:
                bound_from.setdefault(n, names_of(bound[1]))
        variables = more
    for c in found.values():
        # What the arguments were bound from feeds the value too (`text` ← `node.get(..)`).
        for _ in range(2):
            c.feeds |= set().union(*(bound_from.get(n, set()) for n in c.feeds), set())
        c.feeds = {n for n in c.feeds if n not in NOISE}
    return found


# A statement that `definitions` would take for a header: a call with a trailing lambda
# (`cache.getOrPut(key) {`, `val k = requireNotNull(x) {`), a chained call, a control
# statement.
_STATEMENT = re.compile(
    r"^\s*(?:return\b|if\b|else\b|for\b|while\b|when\b|switch\b|\.|\?\.|\}|"
    r"[\w$\[\]]+\s*(?:\?\.|\.|->|::|=(?!=)))"
)


def header_names(text: str) -> set[str]:
    """The functions a line defines, if it is a definition and not a statement. The line that
    closes a parameter list spread over lines (`): List<Slot> = withContext(IO) {`) ends the
    header above it and defines nothing."""
    if _STATEMENT.match(text) or _ASSIGNED.match(text) or text.lstrip().startswith(")"):
        return set()
    return definitions(text)


def changed_in(hunk: dict[str, Any], name: str) -> tuple[list[str], list[str]]:
    """The code the hunk adds and removes inside the function `name` (found by its definition
    in the hunk or in the hunk's header)."""
    inside = name in header_names(str(hunk.get("function") or ""))
    places = removed_places(hunk)
    gone = sorted((places.get(int(n), 0.0), str(t)) for n, t in hunk.get("removed") or [])
    added: list[str] = []
    removed: list[str] = []

    def take(upto: float) -> None:
        while gone and gone[0][0] < upto:
            _, text = gone.pop(0)
            if inside and code_of(text).strip():
                removed.append(code_of(text))

    for n, text, new in new_side(hunk):
        take(n)
        found = header_names(text)
        if found:
            inside = name in found
        elif text.strip() and not text[:1].isspace():
            inside = False  # a top-level line: outside any function
        elif inside and new and code_of(text).strip():
            added.append(code_of(text))
    take(float("inf"))
    return added, removed


def enclosed(hunk: dict[str, Any], name: str) -> list[tuple[int, str, bool]]:
    """The hunk's new-side lines inside the function `name`: (line, text, added?)."""
    inside = name in header_names(str(hunk.get("function") or ""))
    out = []
    for n, text, new in new_side(hunk):
        found = header_names(text)
        if found:
            inside = name in found
        elif text.strip() and not text[:1].isspace():
            inside = False
        elif inside:
            out.append((n, text, new))
    return out


def owned(callee: Callee, path: str, crash_path: str) -> bool:
    """The file can define the callee: it is named after the receiver, its type or the module
    it is imported from; any file when the call does not tell."""
    if not callee.owners:
        return len(callee.name) >= 4  # by name alone: not a short, generic one
    if callee.owners == {"<self>"}:
        return path == crash_path
    names = {normal(n) for n in module_names(path)}
    return bool(names & callee.owners) or any(
        len(o) >= 4 and any(o in n for n in names) for o in callee.owners
    )


def deeper_callees(sig: Signals, commits: list[dict[str, Any]]) -> None:
    """Add the functions called inside the value's callees, as far as the history's hunks
    show their bodies (a re-raise that dropped its cause shows no frame of them)."""
    outer = [c for c in sig.callees.values() if c.depth < 2]
    files = [f for commit in commits for f in commit.get("files") or []]
    for callee in outer:
        for f in files:
            if not owned(callee, f.get("path") or "", sig.crash.path):
                continue
            for hunk in f.get("hunks") or []:
                body = " ".join(code_of(t) for _, t, _ in enclosed(hunk, callee.name))
                for name, owners, _ in calls_with_owners(body, [], {callee.name}):
                    made = Callee(name, owners, set(callee.feeds), 2, reads_of(body, name))
                    sig.callees.setdefault(name, made)


def emptied(removed: list[str], added: list[str]) -> bool:
    """A filter or a condition of the result changed: what it keeps can now be nothing."""
    before, after = " ".join(removed), " ".join(added)
    if not (_FILTER.search(before) or _FILTER.search(after)):
        return False
    return (
        _FILTER.findall(before) != _FILTER.findall(after)
        or comparisons(before) != comparisons(after)
        or _strings(before) != _strings(after)
        or re.findall(r"\b\d+\b", before) != re.findall(r"\b\d+\b", after)
        # A condition joined to the filter's (`!it.cancelled && it.kind in kinds`).
        or len(_JOINED.findall(after)) > len(_JOINED.findall(before))
    )


_JOINED = re.compile(r"&&|\|\||\band\b|\bor\b|\b(?:not\s+)?in\b")


_KEY_STRING = re.compile(r"""(["'`])[^"'`]*\1\s*(?::(?!:)|=>|\bto\b)|\[\s*(["'`])[^"'`]*\2\s*\]""")


def literals(lines: list[str]) -> list[str]:
    """The string literals the lines hand to calls: not the keys of a map (`"value": v`,
    `"id" to x`) nor those it reads by (`rec["id"]`)."""
    return _strings(_KEY_STRING.sub(" ", " ".join(lines)))


# A default for a missing value: `region or "US"`, `x ?: d`, `x ?? d`, `x || d`.
_DEFAULT = re.compile(r"\bor\b|\?:|\?\?|\|\||\borElse\w*|getOrDefault|\bfetch\(")


def unrenamed(added: list[str], removed: list[str]) -> tuple[list[str], list[str]]:
    """The lines without those that only gave a variable another name."""
    added, removed = list(added), list(removed)
    for t in list(added):
        twin = next((r for r in removed if same_but_names(r, t)), None)
        if twin is not None:
            added.remove(t)
            removed.remove(twin)
    return added, removed


def body_lines(hunk: dict[str, Any], name: str) -> list[tuple[int, str]]:
    """The lines the hunk adds to the body of the function `name` (not its header, a comment
    or a docstring)."""
    added, _ = changed_in(hunk, name)
    wanted = {squash(code_of(t)) for t in added if code_of(t).strip()}
    return [
        (int(n), str(t).strip())
        for n, t in hunk.get("added") or []
        if squash(code_of(str(t))) in wanted and not definitions(str(t)) and not prose(str(t))
    ]


def returned_value(sig: Signals, path: str, hunk: dict[str, Any]) -> tuple[Callee, str] | None:
    """The callee of the failing value whose body this hunk changes in a way that raises the
    exception, with why: a parse or format changed for a parse error, a filter for an empty
    collection, a null now returned, a bound for an index error."""
    # Calls of the crash line whose arguments hold the operation that failed.
    before_call = {
        f.lower()
        for f, args in through.calls(code_of(sig.crash.code))
        if any((k := x.partition("|")[2]) and k in args.lower() for x in sig.sites)
    }
    for callee in sorted(sig.callees.values(), key=lambda c: c.depth):
        if not owned(callee, path, sig.crash.path):
            continue
        if callee.name in before_call:
            continue  # the line failed in its arguments, before the call was made
        added, removed = changed_in(hunk, callee.name)
        if not added and not removed:
            added, removed = constants_changed(hunk, callee.name)
        added, removed = unrenamed(
            [t for t in added if not read_only(t, set())],
            [t for t in removed if not read_only(t, set())],
        )
        if not added and not removed:
            continue
        # A key it no longer writes matters only when the failing code reads it; a value
        # "missing" or "required" is one it may now return empty, as for a null.
        kinds = sig.kinds - {"key"} | ({"null"} if "key" in sig.kinds else set())
        if "null" in kinds and falls_off(hunk, callee.name, path) is not None:
            return callee, FALLS_OFF
        why = fits_kind(
            kinds, removed, added, read=frozenset(callee.reads), uses=frozenset(callee.reads)
        )
        if (
            why is None
            and "null" in kinds
            and _DEFAULT.findall(" ".join(removed)) > _DEFAULT.findall(" ".join(added))
        ):
            why = "drops the default of what it returns, so it can now return a null"
        dropped = keys_written(" ".join(removed)) - keys_written(" ".join(added))
        if why is None and "key" in sig.kinds and dropped & sig.nearby_keys:
            why = "renames or drops a key the failing code reads, so it is now missing"
        exc = f"{sig.crash.exc_type} {sig.crash.exc_value}"
        if why is None and ("null" in kinds or EMPTY.search(exc)) and narrows(removed, added):
            why = NARROWS
        if why is None and EMPTY.search(exc) and emptied(removed, added):
            why = EMPTIED
        # What it returns is the text that fails to parse: other characters replaced or kept,
        # another pattern or layout, change what the parser gets.
        if why is None and "format" in sig.kinds and literals(removed) != literals(added):
            why = "changes the characters or the pattern of the text it returns"
        if why is not None:
            return callee, why
    return None


# A top-level constant: `const SQL = `, `QUERY = """`, `private static final String Q =`.
_CONSTANT = re.compile(
    r"^(?:export\s+)?(?:(?:const|let|var|val|final|static|private|public|protected|readonly)\s+)*"
    r"(?:[A-Za-z_][\w<>\[\]]*\s+)?\$?([A-Za-z_]\w*)\s*(?::[^=]*)?=(?![=>])"
)


def constants_changed(hunk: dict[str, Any], name: str) -> tuple[list[str], list[str]]:
    """The code the hunk adds and removes in the constants beside the function `name` that
    it reads, as far as the hunk shows that function's body: a query or a pattern kept next
    to the function that runs it (`const SQL = ...` above `pool.query(SQL, [id])`, a class's
    `static final String BY_ID` above the method)."""
    read = names_of(" ".join(code_of(t) for _, t, _ in enclosed(hunk, name)))
    if not read:
        return [], []

    def indent(text: str) -> int:
        return len(text) - len(text.lstrip())

    lines = new_side(hunk)
    level = next((indent(t) for _, t, _ in lines if name in header_names(t)), 0)
    spans: list[tuple[int, int]] = []  # new-side lines of each constant read
    current: tuple[str, int] | None = None
    open_string = False
    for n, text, _ in lines:
        if text.strip() and indent(text) <= level and not open_string:
            if current is not None and current[0] in read:
                spans.append((current[1], n))
            m = _CONSTANT.match(text.strip())
            current = (m.group(1).lower(), n) if m and not header_names(text) else None
        if text.count("`") % 2 or text.count('"""') % 2 or text.count("'''") % 2:
            open_string = not open_string
    if current is not None and current[0] in read:
        spans.append((current[1], (lines[-1][0] + 1) if lines else 0))
    places = removed_places(hunk)
    added = [
        code_of(str(t))
        for n, t in hunk.get("added") or []
        if any(a <= int(n) < b for a, b in spans)
    ]
    removed = [
        code_of(str(t))
        for n, t in hunk.get("removed") or []
        if any(a <= places.get(int(n), 0.0) < b for a, b in spans)
    ]
    return added, removed


_SQL = re.compile(r"(?i)\b(?:select|update|delete)\b.*|\b(?:from|join|where)\b")
_OUTER = re.compile(r"(?i)\b(?:left|right|full)\s+(?:outer\s+)?join\b")


NARROWS = "narrows the query it runs, so it can now find no row"
FALLS_OFF = "can now reach its end without returning, so it returns nothing"

_LEAVES = re.compile(r"^\s*(?:return|raise|throw|panic\(|abort\b|exit\b|die\b)")
_OPENS = re.compile(
    r"^\s*(?:\}\s*)?(?:if|elif|else\s*if|elsif|unless|case|switch|match|for|foreach|while)\b"
)
_FINAL_ELSE = re.compile(r"^\s*(?:\}\s*)?else\b(?!\s*if)")
_BRANCH = re.compile(r"^\s*(?:\}\s*)?(?:else|elif|elsif|when)\b")
_FALL_OFF_LANGUAGES = (".py", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".rb", ".php")
_CLOSER = re.compile(r"\s*(?:\}|end)\s*[;)]*\s*")


def falls_off(hunk: dict[str, Any], name: str, path: str) -> tuple[int, str] | None:
    """Where the function `name`, as the hunk shows it whole, now lets control reach its end
    without a return, in the languages where that returns None, undefined, nil or null: its
    last statement is a branch with no final else (the branch's test is the line), or a
    switch a `break` leaves (the break is). None when the hunk does not show the end, the
    function never returns a value, or the change is not there."""
    if not path.endswith(_FALL_OFF_LANGUAGES):
        return None  # compiled languages refuse a function that can end without a value
    implicit = path.endswith(".rb")  # Ruby returns its last expression
    body: list[tuple[int, str, bool]] = []
    inside = name in header_names(str(hunk.get("function") or ""))
    ended = False
    for n, text, new in new_side(hunk):
        found = header_names(text)
        if inside and (found or (text.strip() and not text[:1].isspace())):
            ended = True
            break
        if found:
            inside = name in found
        elif inside:
            body.append((n, text, new))
    code = [(n, code_of(t), new) for n, t, new in body if code_of(t).strip()]
    if not ended or not code:
        return None
    if not implicit and not any(re.match(r"\s*return\s+\S", c) for _, c, _ in code):
        return None
    indent = len(code[0][1]) - len(code[0][1].lstrip())
    level = [(n, c) for n, c, _ in code if len(c) - len(c.lstrip()) == indent]
    # Back from the end over closers and else-branches to the statement the body ends with.
    first = len(level) - 1
    while first > 0 and (_CLOSER.fullmatch(level[first][1]) or _BRANCH.match(level[first][1])):
        first -= 1
    chain = level[first:]
    if _LEAVES.match(level[first][1]) or not _OPENS.match(level[first][1]):
        return None  # it ends in a return, or in a plain statement: not a branch
    if any(_FINAL_ELSE.match(c) for _, c in chain):
        return None
    after = [(n, c, new) for n, c, new in code if n >= level[first][0]]
    if not any(new for _, _, new in after):
        return None  # the end was there before: not this change
    if re.match(r"\s*(?:switch|case|match)\b", level[first][1]):
        breaks = [(n, c.strip()) for n, c, _ in after if re.match(r"\s*break\s*;?\s*$", c)]
        if breaks:
            return breaks[-1]
        if any(re.match(r"\s*(?:default\b|else\b|_\s*=>|case\s+_\s*:)", c) for _, c, _ in after):
            return None
        return level[first][0], level[first][1].strip()
    n, c = chain[-1] if _BRANCH.match(chain[-1][1]) else level[first]
    return n, c.strip()


def keys_listed(added: list[tuple[int, str]], keys: set[str]) -> tuple[int, str] | None:
    """The added line that names most of the keys, when none writes them as `key: value`:
    a list of fields to keep (`as_json(only: %w[id amount_cents currency])`, `pick(...)`,
    `@JsonIncludeProperties({...})`) builds the data with exactly those keys."""
    if len(keys) < 2:
        return None
    named = [(len(names_of(code_of(t)) & keys), -i, (n, t)) for i, (n, t) in enumerate(added)]
    count, _, line = max(named, default=(0, 0, None))
    return line if count >= 2 else None


_CONDITIONS = re.compile(r"(?i)\b(?:where|and|having|join)\b")


def telling_line(
    inside: list[tuple[int, str]], removed: list[str], why: str, reads: set[str]
) -> tuple[int, str] | None:
    """Of the lines a function that returns the failing value now has, the one that does what
    `why` says: the `return null` it gained, the filter or condition it changed, the line
    that computes the position the failing code reads with; None when no line says more
    than the others."""
    was = {squash(code_of(t)) for t in removed}
    changed = [(n, t) for n, t in inside if squash(code_of(t)) not in was]
    if "null" in why:
        return next(((n, t) for n, t in changed if NULL_LITERAL.search(code_of(t))), None)
    if why in (NARROWS, EMPTIED, REFILTERS):
        return next(
            (
                (n, t)
                for n, t in changed
                if _FILTER.search(code_of(t)) or _CONDITIONS.search(code_of(t))
            ),
            None,
        )
    if why == REBOUNDS:
        # The line that sets what the failing code reads (`offset = (page - 1) * limit`).
        return next(
            (
                (n, t)
                for n, t in changed
                if (a := assignment(code_of(t).strip())) is not None and a[0] & reads
            ),
            None,
        )
    return None


def narrowing_line(hunk: dict[str, Any]) -> tuple[int, str] | None:
    """The added line of a query that joins or conditions what it returns."""
    for n, t in hunk.get("added") or []:
        code = code_of(str(t))
        inner = re.search(r"(?i)\bjoin\b", code) and not _OUTER.search(code)
        if inner or re.search(r"(?i)\b(?:where|and|having)\b", code):
            return int(n), code.strip()
    return None


_ENQUEUE = (
    r"(?:\s*(?:\.|::|->)\s*"
    r"(?:delay\w*|apply_async|perform_\w+|enqueue\w*|dispatch\w*|send|schedule\w*))?"
)


def stack_functions(stack: dict[str, list[tuple[int, stacktrace.Frame]]]) -> set[str]:
    """The names of the stack's application functions (a task, a job, a handler)."""
    out = set()
    for path, frames in stack.items():
        for _, frame in frames:
            pieces = [p for p in re.split(r"[.:#/\\\s()*]+", frame.function or "") if p]
            if len(pieces) == 1 and path.endswith((".rb", ".php", ".java", ".kt")):
                # A method frame without its class: the class is named after its file
                # (`recordatorio_cita_job.rb` holds RecordatorioCitaJob).
                stem = PurePosixPath(path).stem
                pieces.insert(0, "".join(w[:1].upper() + w[1:] for w in stem.split("_")))
            # A job or a handler is enqueued by its class (`RefundJob#perform` ←
            # `RefundJob.perform_async(...)`), a function by its own name.
            for name in (
                pieces[-2:] if len(pieces) > 1 and pieces[-2][:1].isupper() else pieces[-1:]
            ):
                if useful(name.lower()) and len(name) >= 4:
                    out.add(name.strip("<>"))
    return out


_OUT_PARAM = re.compile(r"(?<=[(,])\s*&\s*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)")
_CALLED = re.compile(r"([A-Za-z_][\w$]*)\s*\(")


def reordered(removed: list[str], added: list[str]) -> tuple[str, list[str]] | None:
    """A call whose arguments kept are now in another order (`Scan(&p.Unit, &p.OnHand)` →
    `Scan(&p.OnHand, &p.Unit)`, a column inserted in the middle): the callee and the names
    of the arguments that moved."""
    before, after = " ".join(removed), " ".join(added)
    for m in _CALLED.finditer(after):
        now = _call_args(after, m.end())
        old_call = re.search(rf"(?<![\w$]){re.escape(m.group(1))}\s*\(", before)
        was = _call_args(before, old_call.end()) if old_call else None
        if not now or not was or len(was) < 2:
            continue
        kept_now = [a for a in now if a in was]
        kept_was = [a for a in was if a in now]
        if len(kept_now) >= 2 and len(kept_now) == len(kept_was) and kept_now != kept_was:
            moved = [a for a, b in zip(kept_now, kept_was, strict=True) if a != b]
            names = sorted({n for a in moved for n in re.findall(r"[A-Za-z_]\w*", a)[-1:]})
            return m.group(1), names
    return None


def rehanded(added: list[str], removed: list[str], names: set[str]) -> tuple[str, bool] | None:
    """The stack function that a changed call now hands other arguments (`task.delay(a, b)`
    → `task.delay(a, c, b)`), as far as the hunk shows the call before and after, and
    whether their number or their order changed (a positional mix-up)."""
    after, before = " ".join(added), " ".join(removed)
    for name in sorted(names):
        call = re.compile(rf"(?<![\w$]){re.escape(name)}{_ENQUEUE}\s*\(")
        was = [a for m in call.finditer(before) if (a := _call_args(before, m.end())) is not None]
        if not was:
            continue
        # A call kept as it was (moved, or left beside a new one) hands nothing new.
        for now in (a for m in call.finditer(after) if (a := _call_args(after, m.end()))):
            if now not in was:
                return name, any(len(now) != len(w) or sorted(now) == sorted(w) for w in was)
    return None


def _call_args(text: str, open_at: int) -> list[str] | None:
    end = closing(text, open_at)
    return None if end is None else _split_args(text[open_at : end - 1])


def _split_args(args: str) -> list[str]:
    """Top-level arguments, tidied."""
    out, depth, cur = [], 0, ""
    for ch in args:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(tidy(cur))
            cur = ""
        else:
            cur += ch
    return [a for a in [*out, tidy(cur)] if a]


_OUTER_ALIAS = re.compile(
    r"(?i)\b(?:left|right|full)\s+(?:outer\s+)?join\s+[\w.\"`]+(?:\s+(?:as\s+)?(?!on\b)(\w+))?"
)
_AS_COLUMN = re.compile(r"(?i)\b(\w+)\.\w+\s+as\s+[\"`]?(\w+)")


def outer_column(hunk: dict[str, Any], wanted: set[str]) -> tuple[int, str, str] | None:
    """The outer join (line, text) whose table an added line now reads a wanted column from
    (`c.value AS recipient_email`, wanted as recipientemail), and that column."""
    if not wanted:
        return None
    joins: dict[str, tuple[int, str]] = {}
    for n, text, _ in new_side(hunk):
        for m in _OUTER_ALIAS.finditer(code_of(text)):
            alias = (m.group(1) or "").lower()
            if alias:
                joins.setdefault(alias, (n, code_of(text).strip()))
    for _, t in hunk.get("added") or []:
        for alias, column in _AS_COLUMN.findall(code_of(str(t))):
            if alias.lower() in joins and normal(column) in wanted:
                n, text = joins[alias.lower()]
                return n, text, column
    return None


_SETS = re.compile(
    r"^\s*(?:(?:val|var|let|const|final)\s+)?\$?([A-Za-z_]\w*)\s*(?::[^=]*)?[:=](?!=)\s*(.+)"
)


def set_to_quoted(
    added: list[tuple[int, str]], removed: list[str], sig: Signals
) -> tuple[str, str] | None:
    """(name, number) when an added line sets a name the failing statement reads (an
    argument, a named argument, a field) to a number the message quotes, which the removed
    lines did not."""
    direct = {n for n, d in sig.path_names.items() if d == 0}
    before = {x.replace("_", "") for t in removed for x in re.findall(r"\b\d[\d_]*\b", t)}
    for _, t in added:
        m = _SETS.match(code_of(t))
        if not m or m.group(1).lower() not in direct:
            continue
        # The number is the value itself, or what it falls back to (`?: 20`, `|| 20`).
        whole = _VALUE_NUMBER.search(m.group(2))
        plain = whole.group(1).replace("_", "") if whole else ""
        if plain in sig.numbers and plain not in before:
            return m.group(1), plain
    return set_to_named(added, removed, sig)


def set_to_named(
    added: list[tuple[int, str]], removed: list[str], sig: Signals
) -> tuple[str, str] | None:
    """(name, value) when an added line sets a setting, wherever it is read, to a value the
    message names and the removed lines did not give: a number of its own (`2000`, not a
    status like 413) or a string it quotes (`Disk [facturas]`)."""
    old = " ".join(removed)
    numbers = {n for n in sig.numbers if len(n.split(".")[0]) >= 3 and not 100 <= float(n) < 600}
    for _, t in added:
        code = code_of(t)
        keyed = _KEYED.match(code)
        m = _SETS.match(code)
        if m is not None:
            name, value = m.group(1), m.group(2)
        elif keyed is not None:
            name, value = keyed.group(1) or keyed.group(2), keyed.group(3)
        else:
            continue
        for n in sorted(numbers):
            if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", value) and n not in old:
                return name, n
        for literal in sorted(sig.literals):
            # The value is that string, or the default a lookup falls back to: not a string
            # the expression only uses (a column name, a key it reads).
            lit = re.escape(literal)
            quoted = re.fullmatch(
                rf"""\s*["']{lit}["']\s*[,;]?\s*|.*[,(]\s*["']{lit}["']\s*\)\s*[,;]?\s*""",
                value,
                re.IGNORECASE,
            )
            again = re.search(rf"""["']{re.escape(literal)}["']""", old, re.IGNORECASE)
            if useful(literal) and quoted and not again:
                return name, literal
    return None


# `'disk' => env('DISK', 'local')`, `"disk": ...`, YAML's `app.disk: ...`: a key given a value.
_KEYED = re.compile(r"""^\s*(?:["']([\w.\-]+)["']\s*(?:=>|:)|([\w.\-]+):)\s+(.+)""")


_VALUE_NUMBER = re.compile(
    r"(?:^|\?:|\?\?|\|\||\bor\b|\bget\w*\([^()]*,)\s*(\d[\d_]*(?:\.\d+)?)[LlFfDd]?\s*\)*\s*[,;]?\s*$"
)


def narrows(removed: list[str], added: list[str]) -> bool:
    """A query that can now return fewer rows, none for some keys: an outer join made an
    inner one, another inner join, another condition."""
    before, after = " ".join(removed), " ".join(added)
    if not (_SQL.search(before) and _SQL.search(after)):
        return False  # a new query narrows nothing that was there before

    def joins(t: str) -> tuple[int, int]:
        outer = len(_OUTER.findall(t))
        return outer, len(re.findall(r"(?i)\bjoin\b", t)) - outer

    conditions = re.compile(r"(?i)\b(?:where|and|having)\b")
    (outer_b, inner_b), (outer_a, inner_a) = joins(before), joins(after)
    return (
        outer_a < outer_b
        or inner_a > inner_b
        or len(conditions.findall(after)) > len(conditions.findall(before))
    )


def bound_names(line: str) -> set[str]:
    found = bindings(code_of(line))
    return found[0] if found else set()


def fit_over_closeness(ranked: list[Change]) -> list[Change]:
    """The best change of no kind known to raise this exception, ahead only for being close
    to the crash, gives way to one of the next two that is of that kind and builds the
    failing value: closeness is where to look first, the kind is evidence."""
    if len(ranked) < 2 or ranked[0].fits or ranked[0].on_crash_line:
        return ranked
    top = ranked[0]
    for c in ranked[1:3]:
        if c.fits and c.producer and not c.ran_before and c.score >= 0.5 * top.score:
            c.reasons.append(f"of the exception's kind, where {top.path} is only close to it")
            c.score = top.score + 0.5
            return sorted(ranked, key=lambda x: -x.score)
    return ranked


def off_value_path(sig: Signals, ranked: list[Change]) -> list[Change]:
    """A change beside the crash that makes nothing the failing value is made of (a log line,
    another argument of the call) gives way to a change, of the exception's kind, in the
    function that returns that value: being close to the crash is all it has."""
    winner = next((c for c in ranked if c.returns), None)
    if winner is None:
        return ranked
    feeds = sig.callees[winner.returns].feeds | {winner.returns}
    for c in ranked:
        if c.path != sig.crash.path or c.fits or c.on_crash_line or c.blamed or c.returns:
            continue
        bound = set().union(*(bound_names(str(t)) for _, t in c.hunk.get("added") or []), set())
        # A function the failing statement calls is not beside the value: it is in it.
        if not bound & feeds and not defined_names(c.hunk) & set(sig.callees):
            c.score -= 4
            c.reasons.append("makes nothing the failing value is made of")
    return sorted(ranked, key=lambda c: -c.score)
