"""Publishing under randomized faults (seeded): see tests/publish_faults.py for the
harness and the invariants; benchmarks/publish_faults.py runs it 1,000 times."""

from agent.errors import PublishFailed
from agent.publish.github import API_VERSION, ISSUE, GitHubIssues, _split
from agent.publish.publisher import Publisher
from agent.publish.sentry import SentryNote
from tests.publish_faults import SIDE_STEPS, run_faults


async def test_publishing_keeps_its_invariants_under_random_faults():
    tally = await run_faults(runs=100, seed=20261130)
    assert tally.violations == [], "\n".join(tally.violations[:10])
    assert tally.runs == 100
    assert tally.closed_by_side_step == 0 and tally.duplicates == 0, tally.line()
    assert tally.differing_texts == 0, tally.line()
    # The seed exercises every path, so a silent change of behaviour shows here too.
    for outcome in ("published", "adopted", "refused", "left for a human", "created anyway"):
        assert tally.outcomes[outcome] > 0, tally.line()
    # Every side step failed for good in some run, and the re-run finished them all.
    for step in SIDE_STEPS:
        assert tally.not_done[step] > 0, tally.line()
    assert tally.finished_on_rerun == tally.side_steps_not_done > 0, tally.line()
    assert tally.sentry_faults > 0 and tally.slack_faults > 0, tally.line()


async def test_the_invariants_catch_a_publisher_that_creates_blindly(monkeypatch):
    async def never_found(self, inv, approval, mark, cause="") -> None:
        approval.lookup = "nothing"
        return None

    monkeypatch.setattr(Publisher, "_lookup", never_found)
    tally = await run_faults(runs=20, seed=4)  # a seed with lost answers to creates early on
    assert any("issues for one approval" in v for v in tally.violations), tally.line()


async def test_the_invariants_catch_a_sentry_note_claimed_but_never_posted(monkeypatch):
    async def claims(self, inv) -> str:
        return "noted on Sentry issue"

    monkeypatch.setattr(SentryNote, "link", claims)
    tally = await run_faults(runs=4, seed=20261130)
    assert any("sentry_note done with 0 Sentry notes" in v for v in tally.violations), tally.line()


async def test_the_invariants_catch_a_side_step_that_withdraws_the_issue(monkeypatch):
    """What publishing did before: a failing side step closed the issue as not planned."""

    async def closes_then_fails(self, repository, number, labels) -> None:
        where = {**_split(repository), "number": number}
        await self._call(
            "close the issue",
            lambda gh: gh.patch(
                ISSUE,
                where,
                data={"state": "closed", "state_reason": "not_planned"},
                extra_headers=API_VERSION,
            ),
        )
        raise PublishFailed("add labels: GitHub refused (422)", status=422)

    monkeypatch.setattr(GitHubIssues, "add_labels", closes_then_fails)
    tally = await run_faults(runs=4, seed=20261130)
    assert tally.closed_by_side_step > 0, tally.line()
    assert any("was withdrawn (closed)" in v for v in tally.violations), tally.line()
