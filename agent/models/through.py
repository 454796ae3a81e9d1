"""A rewrite of the crash line that hands the failing call the same arguments as before.

When the newest change to the crash line only wraps the call that raises (a cache around
`new Intl.NumberFormat(locale, {currency})`, a retry, a log beside it) and passes its
arguments through unchanged, the value that makes the call fail is not made there: it
arrives through the arguments, so a change to what binds them (a caller, a producer)
explains the exception, though blame of the crash line names the rewrite.
"""

from __future__ import annotations

import re

_CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")


def squash(text: str) -> str:
    return "".join(text.split())


def calls(line: str) -> list[tuple[str, str]]:
    """Every call on the line as (function, its arguments without spaces), nested ones too:
    `f(a, g(b))` → [('f', 'a,g(b)'), ('g', 'b')]."""
    out = []
    for m in _CALL.finditer(line):
        depth, i = 1, m.end()
        while i < len(line) and depth:
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            i += 1
        if depth == 0:
            out.append((m.group(1), squash(line[m.end() : i - 1])))
    return out


def passed_through(crash_line: str, removed: list[str], callee: str) -> str | None:
    """The call the rewritten crash line still makes with the arguments a removed line gave
    it, when that is the call that raised: `callee`, the library function the exception
    left from (`NumberFormat`; `_strptime_datetime` for `strptime`). None when the failing
    call's arguments changed, or when no call of the line is known to have raised (an
    index, an operator or a conversion of the line itself may have failed)."""
    wanted = callee.lower()
    if not wanted:
        return None
    new = [c for c in calls(crash_line) if c[1] and raised_by(c[0], wanted)]
    old = {c for line in removed for c in calls(line)}
    if new and all(c in old for c in new):
        return new[0][0]
    return None


def raised_by(name: str, callee: str) -> bool:
    """The call names the function the exception left from, or the one it hands off to."""
    name = name.lower()
    return name == callee or (len(name) >= 4 and name in callee)


def rehanded(
    crash_line: str,
    removed: list[str],
    callee: str,
    message: str = "",
    bound: dict[str, str] | None = None,
) -> str | None:
    """The call known to have raised, now handed other arguments than a removed line gave
    it (`getInstance(code)` made `getInstance(code.toUpperCase())`): the rewrite changed what
    it failed on.

    When the message quotes the value that failed (`Unable to find template
    "sms/envio.es_ES.txt.twig"`), only the arguments whose texts it contains are compared,
    each with a variable the hunk binds read as what it was bound to (`$name =
    sprintf('sms/envio.%s.txt.twig', $lang)` for `'sms/envio.'.$lang.'.txt.twig'`)."""
    wanted = callee.lower()
    if not wanted:
        return None
    old = [c for line in removed for c in calls(line) if raised_by(c[0], wanted)]
    for name, args in calls(crash_line):
        if not (raised_by(name, wanted) and old):
            continue
        before = [a for n, a in old if n == name]
        if not before or any(args == a for a in before):
            continue
        pointed = [x for a in split(args) if quoted_in(x := expand(a, bound or {}), message)]
        given = [b for a in before for b in split(a)]
        if pointed and all(any(same_words(a, b) for b in given) for a in pointed):
            continue  # the argument the message quotes is made as before
        return name
    return None


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_TEXT = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def split(args: str) -> list[str]:
    """Arguments at their own commas (without spaces, as `calls` gives them)."""
    out, depth, cur = [], 0, ""
    for ch in args:
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [a for a in [*out, cur] if a]


def quoted_in(arg: str, message: str) -> bool:
    """The argument's literal pieces (`sms/envio.`, `.txt.twig`) all appear in the message."""
    pieces = [p for m in _TEXT.finditer(arg) for g in m.groups() if g for p in re.split(r"%\w", g)]
    pieces = [p for p in pieces if len(p) >= 4]
    return bool(pieces) and all(p in message for p in pieces)


def expand(arg: str, bound: dict[str, str]) -> str:
    """A variable the hunk bound, read as its value."""
    return squash(bound.get(arg.lstrip("$"), arg))


def same_words(a: str, b: str) -> bool:
    """The same names, and the same literal text in the same order, however joined
    (`sprintf('a.%s.b', x)` or `'a.'.x.'.b'`)."""

    def words(text: str) -> set[str]:
        return set(_WORD.findall(re.sub(r"%\w", " ", text))) - {"sprintf", "format", "printf"}

    def text(arg: str) -> str:
        return "".join(g for m in _TEXT.finditer(arg) for g in m.groups() if g).replace("%s", "")

    return words(a) == words(b) and text(a) == text(b)


_KEYWORD = re.compile(r"^\$?([A-Za-z_]\w*)(?:=(?!=)|:(?!:))(.+)$")


def parameters(header: str) -> list[str]:
    """The parameter names of a function's header line, in order, in the languages read
    here (`def f(self, a: int = 1, *, b)`, `fun f(a: Int)`, `function f($a, Type $b)`,
    `func f(a int, b string)`, `int f(int a)`); `self` and `this` left out."""
    m = re.search(r"\((.*)\)", header)
    if not m:
        return []
    names = []
    for part in split(m.group(1)):
        part = part.split("=", 1)[0].strip().lstrip("*&.")
        if not part or part in {"/", "*"}:
            continue
        if ":" in part:
            name = part.split(":", 1)[0]
        else:
            words = part.split()
            go = len(words) > 1 and header.lstrip().startswith("func")
            name = words[0] if go else words[-1]
        name = name.strip().lstrip("$")
        if re.fullmatch(r"[A-Za-z_]\w*", name) and name not in {"self", "this", "cls"}:
            names.append(name)
    return names


def same_binding(old: str, new: str, function: str, params: list[str]) -> bool:
    """`new` calls `function` with each parameter bound to what `old` bound it to, only
    spelt otherwise: positional arguments now passed by name (`f(a, b)` → `f(x=a, y=b)`)
    or named ones reordered. False when any value, or the other code of the line, differs."""

    def bound(line: str) -> dict[str, str] | None:
        found = [a for f, a in calls(line) if f == function]
        if len(found) != 1 or not params:
            return None
        out: dict[str, str] = {}
        for i, arg in enumerate(split(found[0])):
            named = _KEYWORD.match(arg)
            if named:
                out[named.group(1)] = named.group(2)
            elif i < len(params) and params[i] not in out:
                out[params[i]] = arg
            else:
                return None
        return out

    def rest(line: str) -> str:
        return squash(re.sub(rf"\b{re.escape(function)}\s*\(.*\)", "", line))

    before, after = bound(old), bound(new)
    return (
        before is not None
        and before == after
        and squash(old) != squash(new)
        and rest(old) == rest(new)
    )
