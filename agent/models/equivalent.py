"""Whether a hunk's new lines run as its old ones did.

A commit that only renames local variables, inlines a variable used once, pulls a value out
into a named constant, or rewrites comments and docstrings cannot bring a new fault: what the
program computes is the same. Blame of a crash line such a commit rewrote names it, but the
line's behaviour is older. The check is on tokens, the same for every language read here:

- on each side, a name bound once and read once is replaced by the value it was bound to
  (`i := f(x); a[i]` is `a[f(x)]`; `LIMIT = timedelta(hours=2)` then `now - LIMIT`);
- the two sides are then equal token for token, except for local names that are bound on
  their side and renamed one to one (`start` → `midnight`).

A removed binding at the top of a module is not inlined: other code may still read it, and
removing it is then the fault. Member names, called names and literals must stay the same.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`|\$?[A-Za-z_][\w$]*|\d[\w.]*|\S'
)
_NAME = re.compile(r"\$?[A-Za-z_][\w$]*")
_TYPE = r"[\w.]+(?:<[^=;]*>)?(?:\[\])*\??"
_BINDING = re.compile(
    r"^(?P<indent>\s*)(?P<mods>(?:(?:val|var|let|const|final|my|local|export|static|private"
    r"|protected|public|readonly|internal)\s+)*)(?:" + _TYPE + r"\s+)?(?P<name>\$?[A-Za-z_]\w*)"
    r"\s*(?::\s*" + _TYPE + r"\s*)?(?::=|=)(?![=>~])\s*(?P<value>.+?)\s*;?\s*$"
)
_SHARED = re.compile(r"\b(?:export|static|private|protected|public|internal)\b")
_KEYWORDS = {
    "if", "else", "for", "while", "return", "in", "and", "or", "not", "is", "new", "func",
    "def", "fn", "fun", "function", "range", "nil", "null", "None", "true", "false", "True",
    "False", "this", "self", "end", "do", "then", "case", "when", "yield", "await", "async",
}  # fmt: skip
_DOC = re.compile(r"""^\s*(?:[rRbBuUfF]{0,2}(?:\"\"\"|''')|/\*|\*|#|//)""")
_OPERATOR = set("+-*/%<>=&|^?:!")


def tokens(line: str) -> list[str]:
    return [t for t in _TOKEN.findall(line) if t != ";"]


def _top_operator(value: list[str]) -> bool:
    depth = 0
    for t in value:
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif depth == 0 and t in _OPERATOR:
            return True
    return False


def _member(toks: list[str], i: int) -> bool:
    """Whether the token at `i` is a member's name: `a.b`, `a->b`, `A::b` (not `k => b`)."""
    before = toks[max(0, i - 2) : i]
    return before[-1:] == ["."] or before in (["-", ">"], [":", ":"])


def _uses(toks: list[str], name: str) -> list[int]:
    """Where `name` is read as a variable: not as a member (`x.name`) or a keyword (`name=`)."""
    out = []
    for i, t in enumerate(toks):
        if t != name or _member(toks, i):
            continue
        keyword = i + 1 < len(toks) and toks[i + 1] == "=" and toks[i + 2 : i + 3] != ["="]
        if keyword and i and toks[i - 1] in "(,":
            continue  # a keyword argument: `f(name=value)`
        out.append(i)
    return out


def _uncommented(line: str, hash_comments: bool, python: bool) -> str:
    """The line before its comment (`//`, or `#` in Python, Ruby and PHP), outside strings."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote and line[i - 1] != "\\" else quote
        elif ch in "\"'`":
            quote = ch
        elif (ch == "#" and hash_comments) or (line.startswith("//", i) and not python):
            return line[:i].rstrip()
    return line.rstrip()


def _code(lines: list[str], path: str) -> list[str]:
    python = path.endswith(".py")
    hashes = path.endswith((".py", ".rb", ".php", ".rake"))
    out = []
    for t in lines:
        if not t.strip() or _DOC.match(t):
            continue
        t = _uncommented(t, hashes, python)
        if t.strip():
            out.append(t)
    return out


def inline(
    lines: list[str], removed_side: bool, path: str = ""
) -> tuple[list[list[str]], set[str]]:
    """The side's lines as tokens, each name bound once and read once replaced by its value;
    and the local names still bound on the side (those a rename may change)."""
    lines = _code(lines, path)
    rows = [tokens(t) for t in lines]
    bound: dict[str, int] = {}
    for i, t in enumerate(lines):
        m = _BINDING.match(t)
        if m:
            name = m.group("name")
            bound[name] = -1 if name in bound else i
    local: set[str] = set()
    for name, at in sorted(bound.items(), key=lambda item: item[1]):
        if at < 0:
            continue
        m = _BINDING.match(lines[at])
        assert m is not None
        shared = not m.group("indent") or _SHARED.search(m.group("mods") or "")
        reads = [(j, k) for j, row in enumerate(rows) if j != at for k in _uses(row, name)]
        if len(reads) == 1 and not (removed_side and shared) and "=" in rows[at]:
            value = rows[at][rows[at].index("=") + 1 :]  # as earlier inlining left it
            if _top_operator(value):
                value = ["(", *value, ")"]
            j, k = reads[0]
            rows[j] = rows[j][:k] + value + rows[j][k + 1 :]
            rows[at] = []
        elif not shared:
            local.add(name)
    return [r for r in rows if r], local


Prepared = tuple[list[str], set[str]]


def prepare(lines: list[str], removed_side: bool, path: str = "") -> Prepared:
    """One side as `same` compares it: its tokens after inlining, and its local names."""
    rows, local = inline(lines, removed_side, path)
    return [t for row in rows for t in row], local


def same(old: Prepared, new: Prepared) -> bool:
    """Two prepared sides are equal but for local names renamed one to one."""
    (a, old_local), (b, new_local) = old, new
    if a == b or len(a) != len(b):
        return a == b
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        if x not in old_local or y not in new_local or x in _KEYWORDS or y in _KEYWORDS:
            return False
        if _member(a, i):
            return False
        if not _NAME.fullmatch(x) or not _NAME.fullmatch(y):
            return False
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return False
    return True


def same_program(removed: list[str], added: list[str], path: str = "") -> bool:
    """The added lines of a file compute what its removed ones did (see the module's
    docstring); `path` tells how its comments are written."""
    if not (removed or added):
        return False
    return same(prepare(removed, True, path), prepare(added, False, path))


def bound_name(line: str) -> str | None:
    """The one name the line binds (`const wireLayout = "..."`, `$limit = 5;`), if any."""
    m = _BINDING.match(line)
    return m.group("name") if m else None


def reads(line: str, name: str) -> bool:
    """Whether the line reads `name` as a variable (not as a member or a keyword)."""
    m = _BINDING.match(line)
    toks = tokens(line)
    if m and m.group("name") == name:
        toks = tokens(m.group("value"))
    return bool(_uses(toks, name))
