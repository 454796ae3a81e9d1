"""The release Sentry lists before the running one ran without the errors: a commit it
already held counts for less, and one after it shipped with the running release even when
the issue is older (an old error whose newer events this release brings)."""

from datetime import UTC, datetime

from agent.models.changes import RAN_BEFORE, rank
from tests.agent.test_changes import commit, crash, hunk

SOURCE = ["def line_total(item):", "    return item['price'] * item['qty']"]


def history() -> list[dict]:
    # Newest first: a key read renamed by the settings loader, the previous release, and an
    # older commit that wrote the crash line itself.
    loader = hunk(3, [(3, "    return {'cost': row['cost'], 'qty': row['qty']}")])
    loader["removed"] = [[3, "    return {'price': row['cost'], 'qty': row['qty']}"]]
    crash_line = hunk(2, [(2, SOURCE[1])], [(2, "    return item['cost'] * item['qty']")])
    return [
        commit("new", "2026-11-26T10:00:00Z", ("app/rows.py", [loader])),
        commit("prev", "2026-11-20T10:00:00Z", ("README.md", [hunk(1, [(1, "# shop")])])),
        commit("old", "2026-11-19T10:00:00Z", ("app/totals.py", [crash_line])),
    ]


def test_a_commit_the_release_before_held_counts_for_less():
    c = crash(path="app/totals.py", line=2, code=SOURCE[1], nearby=SOURCE, source=SOURCE)
    plain = {x.sha: x for x in rank(c, history())}
    weighed = {x.sha: x for x in rank(c, history(), released="prev")}
    assert "it ran in the release before without these errors" in weighed["old"].reasons
    assert weighed["old"].score == plain["old"].score * RAN_BEFORE
    # What came after the release before is untouched.
    assert weighed["new"].score == plain["new"].score
    assert weighed["new"].reasons == plain["new"].reasons
    # A release that is not in the history read weighs nothing down.
    assert {x.sha: x.score for x in rank(c, history(), released="elsewhere")} == {
        k: v.score for k, v in plain.items()
    }


def test_an_issue_older_than_the_release_before_does_not_hide_what_shipped_after_it():
    # First seen long ago: without a known release before, the newer commits "landed after
    # the errors began" and are no candidates; after it, they shipped with the running one.
    c = crash(
        path="app/totals.py",
        line=2,
        code=SOURCE[1],
        nearby=SOURCE,
        source=SOURCE,
        first_seen=datetime(2026, 10, 1, tzinfo=UTC),
    )
    assert all(x.sha != "new" for x in rank(c, history()))
    assert any(x.sha == "new" for x in rank(c, history(), released="prev"))
