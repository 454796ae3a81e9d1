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


def rehanded(crash_line: str, removed: list[str], callee: str) -> str | None:
    """The call known to have raised, now handed other arguments than a removed line gave
    it (`getInstance(code)` made `getInstance(code.toUpperCase())`): the rewrite changed what
    it failed on."""
    wanted = callee.lower()
    if not wanted:
        return None
    old = [c for line in removed for c in calls(line) if raised_by(c[0], wanted)]
    for name, args in calls(crash_line):
        if raised_by(name, wanted) and old and all(args != a for n, a in old if n == name):
            return name
    return None
