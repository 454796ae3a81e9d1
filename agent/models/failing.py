"""The operations of a line that can raise an exception of a given kind, and whether a
rewrite of the line kept them.

A missing value fails where it is dereferenced (`acct.ID`, `$order->total`), a missing key
where it is looked up (`summary["carrier"]`), an index where it subscripts (`days[i]`), a
zero where it divides (`/ count`). When the newest change to the crash line writes each of
those operations as the removed lines already did, on the same operands, and drops no
guard, it did not make the value fail there: the value came in bad (from a caller, a
producer, a setting), though blame of the crash line names the rewrite. A check that
raises on purpose (`if (…) throw …` made `require(…) {…}`) kept when its message did.
"""

from __future__ import annotations

import re

from agent.models import through

_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""")
# A receiver chain and the member read on it: `h.store.Report`, `$this->repo`, `user?.name`.
_CHAIN = re.compile(r"[@$]*[A-Za-z_][\w$]*(?:\s*(?:\?\.|!!\.|&\.|->|\.)\s*[A-Za-z_][\w$]*)+")
_STEP = re.compile(r"\s*(\?\.|!!\.|&\.|->|\.)\s*")
# A subscript: the receiver and what is inside the brackets (one level).
_SUBSCRIPT = re.compile(r"([@$]*[A-Za-z_][\w$.\->]*(?:\[[^\[\]]*\])*)\s*\[([^\[\]]+)\]")
_LOOKUP = re.compile(r"\.(?:get|fetch|getString|getInt|getLong|getValue|getJSONObject)\s*\(")
_DIVISION = re.compile(r"(?<![/*])\s[/%]\s*(\(?[\w$.\->\[\]()]+)")
_LITERAL = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_DIVIDE_CALL = re.compile(r"\b(?:floorDiv|floorMod|intdiv|divmod|fmod)\s*\(")
_DIVIDE_BY = re.compile(r"\.(?:fdiv|div|divide|quo|modulo|remainder)\s*\(\s*([^(),]+?)\s*[,)]")
_CHECK = re.compile(
    r"^\s*(?:require|check|requireNotNull|checkNotNull|assert|precondition|invariant|"
    r"Preconditions\.check\w+|Objects\.requireNonNull|error)\s*\("
)
# What stops an operation from failing: a test for the missing value, a bound, a default.
_GUARDS = {
    "null": re.compile(
        r"\bnull\b|\bNone\b|\bnil\b|\bundefined\b|\?\?|\?\.|&\.|\?:|\|\||\bif\b|\bunless\b|"
        r"\.present\?|\.blank\?|isset|empty\(|Optional|orElse|getOrDefault|\bor\b"
    ),
    "key": re.compile(
        r"\bin\b|\.get\(|fetch\(.*,|has_?[Kk]ey|key\?|isset|array_key_exists|containsKey|"
        r"getOrDefault|\?\?|\|\||\bor\b|\bok\b|\bif\b"
    ),
    "index": re.compile(r"<=|>=|<|>|len\(|\.length\b|\.size\b|\bcount\(|\bif\b|\bmin\(|\bmax\("),
    "zero": re.compile(r"==|!=|<=|>=|<|>|\bif\b|\bmax\(|\bor\b|\|\||\?:|\?\?"),
}


def squash(text: str) -> str:
    return "".join(text.split())


def _plain(code: str) -> str:
    """The line with string contents emptied, so that a `.` or `/` inside a text is not read."""
    return _STRING.sub(lambda m: m.group(0)[0] * 2, code)


def dereferences(code: str, modules: set[str]) -> set[tuple[str, str]]:
    """Each receiver and the member read on it (`a.b.c` gives (a, b) and (a.b, c)); reads
    on a module or a class (`strings.ToUpper`, `Math.max`) dereference no value."""
    out = set()
    for m in _CHAIN.finditer(_plain(code)):
        steps = _STEP.split(m.group(0))
        head = steps[0].lstrip("@$")
        if head.lower() in modules or head[:1].isupper():
            continue
        text = steps[0]
        for i in range(1, len(steps) - 1, 2):
            out.add((text, steps[i + 1]))
            text += steps[i] + steps[i + 1]
    return out


def lookups(code: str) -> set[tuple[str, str]]:
    """Each subscript (`days[i]`) and `.get(…)`-style read, as its receiver and its key."""
    out = {(squash(r), squash(k)) for r, k in _SUBSCRIPT.findall(code)}
    for m in _LOOKUP.finditer(code):
        depth, i = 1, m.end()
        while i < len(code) and depth and not (depth == 1 and code[i] == ","):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        start = max(code.rfind(" ", 0, m.start()), code.rfind("(", 0, m.start())) + 1
        out.add((squash(code[start : m.start()]), squash(code[m.end() : i].rstrip(")"))))
    return out


def divisions(code: str) -> set[tuple[str, str]]:
    """Each denominator: after `/` or `%`, or handed to a division function."""
    plain = _plain(code)
    found = [_grouped(plain, m) for m in _DIVISION.finditer(plain)] + _DIVIDE_BY.findall(plain)
    for m in _DIVIDE_CALL.finditer(plain):
        args = _arguments(plain, m.end())
        if len(args) == 2:
            found.append(args[1])
    return {("/", squash(_balanced(d))) for d in found}


_FACTOR = re.compile(r"^\(?(?:(?:\d+(?:\.\d+)?)\*)?(.+?)(?:\*(?:\d+(?:\.\d+)?))?\)?$")


def _unscaled(site: str) -> str:
    """`/|(2*held.size)` → `/|held.size`: the denominator without a nonzero constant factor."""
    op, _, operand = site.partition("|")
    m = _FACTOR.match(operand)
    if not m or operand.count("(") != operand.count(")"):
        return site
    factor = re.findall(r"(?:^\(?|\*)(\d+(?:\.\d+)?)(?:\*|\)?$)", operand)
    if any(float(f) == 0 for f in factor):
        return site
    return f"{op}|{m.group(1)}"


def _grouped(code: str, m: re.Match[str]) -> str:
    """The denominator a division match starts: the whole bracketed group when it opens one
    (`/ (2 * held.size)`), else the operand the pattern took."""
    start = m.start(1)
    if not code.startswith("(", start):
        return m.group(1)
    depth = 0
    for i in range(start, len(code)):
        depth += {"(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            return code[start : i + 1]
    return m.group(1)


def _balanced(operand: str) -> str:
    """The operand without the closing brackets of the call around it (`f(a / b)`: `b`)."""
    for close, open_ in ((")", "("), ("]", "[")):
        while operand.endswith(close) and operand.count(close) > operand.count(open_):
            operand = operand[:-1]
    return operand


def _arguments(code: str, start: int) -> list[str]:
    """The arguments of the call whose bracket opens just before `start`."""
    depth = 1
    for i in range(start, len(code)):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(code[i], 0)
        if depth == 0:
            return [a.strip() for a in through.split(code[start:i])]
    return []


def named(exc_value: str) -> set[str]:
    """The names and keys the message quotes (`KeyError: 'carrier'`, `reading 'id'`)."""
    return {t[1:-1] for t in re.findall(r"""'[^']+'|"[^"]+"|`[^`']+[`']""", exc_value)}


def sites(kinds: set[str], exc_value: str, code: str, modules: set[str]) -> set[str] | None:
    """The operations of the line that raise an exception of these kinds, narrowed to the
    member or key the message names when it names one of them; None when the kinds name no
    operation one can point at (a type, a format, a timeout)."""
    found: set[tuple[str, str]] = set()
    if "null" in kinds:
        # A missing value fails wherever it is dereferenced first: the receiver is the site,
        # whichever member is read on it, unless the message names the member.
        names = named(exc_value)
        found |= {(r, m if m in names else "") for r, m in dereferences(code, modules)} | {
            (r, "") for r, _ in lookups(code)
        }
    if "key" in kinds or "index" in kinds:
        found |= lookups(code)
    if "zero" in kinds:
        found |= divisions(code)
    if not kinds & {"null", "key", "index", "zero"}:
        return None
    names = named(exc_value)
    pointed = {s for s in found if s[1] and s[1].strip("\\\"':") in names}
    return {f"{r}|{k}" for r, k in (pointed or found)}


def _message(code: str) -> str | None:
    texts = [t[1:-1] for t in _STRING.findall(code) if len(t) >= 14]
    return max(texts, key=len) if texts else None


def kept(
    kinds: set[str],
    exc_value: str,
    code: str,
    removed: list[str],
    added: list[str],
    modules: set[str],
) -> bool:
    """The rewritten crash line `code` performs each operation that can raise this
    exception as a removed line did, and the hunk drops no guard against it."""
    before = " ".join(removed)
    if guard_dropped(kinds, removed, added):
        return False  # a test, a bound or a default went away: that may be the fault
    if _CHECK.match(code):
        # Its message kept, and no bound of its condition that the old test did not have.
        message = _message(code)
        literals = set(_LITERAL.findall(_STRING.sub(" ", code))) | set(_STRING.findall(code))
        old = set(_LITERAL.findall(_STRING.sub(" ", before))) | set(_STRING.findall(before))
        return message is not None and message in before and literals <= old
    new = sites(kinds, exc_value, code, modules)
    if not new:
        return False
    old = set().union(*(sites(kinds, exc_value, line, modules) or set() for line in removed))
    if "zero" in kinds:
        # A denominator times a constant other than 0 is 0 exactly when it is.
        new, old = {_unscaled(s) for s in new}, {_unscaled(s) for s in old}
    if kinds & {"key", "index", "zero"}:
        return new <= old
    # A missing value fails on whichever member is read off it: the receiver is what counts.
    return {s.split("|", 1)[0] for s in new} <= {s.split("|", 1)[0] for s in old}


_CHAIN = re.compile(r"\$?[A-Za-z_][\w$]*(?:(?:\??\.|->|::)\$?[A-Za-z_][\w$]*)+")


def chains(code: str) -> set[str]:
    """The member chains a line reads (`stop.window`, `$this->twig->render`), with `?.`
    read as `.`, outside its string literals."""
    return {c.replace("?.", ".") for c in _CHAIN.findall(_STRING.sub(" ", code))}


def same_operand(code: str, removed: list[str], exc_value: str = "", callee: str = "") -> bool:
    """The rewritten crash line `code` still reads a member chain a removed line read, reads
    every chain ending in the member the message names as they did, and makes the failing
    call (`callee`) as they did: it does what it did before, on the same values. A call the
    old lines did not make may be what fails, unless the message names a chain kept."""
    before = {c for line in removed for c in chains(line)}
    now = chains(code)
    kept = now & before
    if not kept:
        return False
    names = named(exc_value)
    if any(_last(c) in names and c not in before for c in now):
        return False
    old = " ".join(_STRING.sub(" ", line) for line in removed)
    if callee and re.search(rf"\b{re.escape(callee)}\s*\(", old) is None:
        return False
    if any(_last(c) in names or c in exc_value for c in kept):
        return True
    return not _calls(_STRING.sub(" ", code)) - _calls(old)


_KEYWORDS = {"if", "for", "while", "switch", "catch", "function", "return", "elif", "unless"}


def _calls(text: str) -> set[str]:
    return {n.lower() for n in re.findall(r"([A-Za-z_$][\w$]*)\s*\(", text)} - _KEYWORDS


def _last(chain: str) -> str:
    return re.split(r"\.|->|::", chain)[-1].lstrip("$")


def guard_dropped(kinds: set[str], removed: list[str], added: list[str]) -> bool:
    """The removed lines tested for what this kind of exception is about (a null, a bound,
    a default) more often than the added ones do."""
    before, after = " ".join(removed), " ".join(added)
    return any(
        kind in kinds and len(guard.findall(before)) > len(guard.findall(after))
        for kind, guard in _GUARDS.items()
    )


def new_receivers(
    code: str, removed: list[str], modules: set[str], exc_value: str = ""
) -> set[str]:
    """What the rewritten line dereferences that no removed line did: a value that can be
    missing where the old line never read it. When the message names the member read, only
    that member's receiver was found missing."""
    found = dereferences(code, modules)
    names = named(exc_value)
    pointed = [(r, m) for r, m in found if m in names]
    now = {squash(r) for r, _ in pointed or found}
    return now - {squash(r) for line in removed for r, _ in dereferences(line, modules)}
