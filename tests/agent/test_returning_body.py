"""The suspect line of a change to the function that returns the failing value is in that
function's body, not in another function the same hunk also changed; and a missing value
dereferenced is of the null kind only, though the runtime calls it a TypeError."""

from agent.models.changes import exception_kinds, rank
from tests.agent.test_changes import commit, crash, hunk


def test_the_suspect_line_is_inside_the_function_that_returns_the_failing_value():
    line = "    return sep.join(p[0].upper() for p in name_parts(name))"
    source = ["from licences.format import name_parts", "", "", "def initials(name, sep=''):", line]
    c = crash(
        path="licences/filters.py",
        line=5,
        function="initials",
        exc_type="IndexError",
        exc_value="string index out of range",
        code=line.strip(),
        nearby=source[3:],
        source=source,
    )
    both = hunk(
        4,
        [
            (4, "def name_parts(name: str) -> list[str]:"),
            (5, '    """The words of a name that count for initials."""'),
            (6, '    words = name.strip().split(" ")'),
            (7, "    return [w for w in words if w.lower() not in PARTICLES]"),
            (10, "def full_name(name: str, surname: str) -> str:"),
            (11, '    return " ".join(f"{name} {surname}".split())'),
        ],
        [
            (4, "def name_parts(name: str) -> list[str]:"),
            (5, '    """The words of a name."""'),
            (6, "    return name.split()"),
            (9, "def full_name(name: str, surname: str) -> str:"),
            (10, '    return " ".join(name_parts(f"{name} {surname}"))'),
        ],
    )
    ranked = rank(c, [commit("parts", "2026-11-28T08:00:00Z", ("licences/format.py", [both]))])
    assert ranked and ranked[0].sha == "parts"
    assert 6 <= ranked[0].line <= 7, (ranked[0].line, ranked[0].text, ranked[0].reasons)


def test_a_missing_value_dereferenced_is_not_of_the_type_kind():
    assert exception_kinds(
        "TypeError", "Cannot read properties of undefined (reading 'lines')"
    ) == {"null"}
    assert exception_kinds("TypeError", "'NoneType' object is not subscriptable") == {"null"}
    assert "type" in exception_kinds(
        "TypeError", "unsupported operand type(s) for +: 'int' and 'str'"
    )
