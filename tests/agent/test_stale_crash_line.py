"""A crash line written weeks before the first error had been running fine: writing it is
weak evidence, and blame naming that old commit says the line is old, not that it broke."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


def history(old_date: str) -> list[dict]:
    crash_line = hunk(3, [(3, "    return loc.lat, loc.lng")], [(3, "    return geo.point(q)")])
    guard = hunk(
        10,
        [(10, "    return best")],
        [(10, "    if not results:"), (11, "        raise NotFound()")],
    )
    guard["function"] = "def lookup(query):"
    return [
        commit("guard", "2026-11-26T17:55:00Z", ("app/geo.py", [guard])),
        commit("old", old_date, ("app/stores.py", [crash_line])),
    ]


def test_an_old_crash_line_and_its_blame_give_way_to_a_recent_dropped_guard():
    source = ["def near(q):", "    loc = geo.lookup(q)", "    return loc.lat, loc.lng"]
    c = crash(
        path="app/stores.py",
        line=3,
        function="near",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'lat'",
        code=source[2].strip(),
        nearby=source,
        source=source,
        blamed="old",
    )
    recent = {x.sha: x for x in rank(c, history("2026-11-25T10:00:00Z"))}
    assert recent["old"].blamed
    stale = {x.sha: x for x in rank(c, history("2026-09-30T14:05:00Z"))}
    assert not stale["old"].blamed
    assert any("days before the errors began" in r for r in stale["old"].reasons)
    assert max(stale.values(), key=lambda x: x.score).sha == "guard"
    # Weeks older: less recency, no blame bonus, and the stale cost.
    assert stale["old"].score < recent["old"].score - 6
