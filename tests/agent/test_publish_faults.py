"""Publishing under randomized faults (seeded): see tests/publish_faults.py for the
harness and the invariants; benchmarks/publish_faults.py runs it 1,000 times."""

from agent.errors import PublishFailed
from agent.publish.publisher import Publisher
from agent.publish.sentry import SentryNote
from tests.publish_faults import run_faults


async def test_publishing_keeps_its_invariants_under_random_faults():
    tally = await run_faults(runs=100, seed=20261130)
    assert tally.violations == [], "\n".join(tally.violations[:10])
    assert tally.runs == 100
    # The seed exercises every path, so a silent change of behaviour shows here too.
    for outcome in ("published", "adopted", "rolled back", "left for a human", "created anyway"):
        assert tally.outcomes[outcome] > 0, tally.line()
    assert tally.sentry_faults > 0, tally.line()


async def test_the_invariants_catch_a_publisher_that_creates_blindly(monkeypatch):
    async def never_found(self, inv, approval, mark, cause="") -> None:
        approval.lookup = "nothing"
        return None

    monkeypatch.setattr(Publisher, "_lookup", never_found)
    tally = await run_faults(runs=20, seed=20261130)
    assert any("issues for one approval" in v for v in tally.violations), tally.line()


async def test_the_invariants_catch_a_sentry_note_claimed_but_never_posted(monkeypatch):
    async def claims(self, inv) -> str:
        return "noted on Sentry issue"

    monkeypatch.setattr(SentryNote, "link", claims)
    tally = await run_faults(runs=4, seed=20261130)
    assert any("published with 0 Sentry notes" in v for v in tally.violations), tally.line()


async def test_the_invariants_catch_a_sentry_note_left_behind_by_a_rollback(monkeypatch):
    link = SentryNote.link

    async def posts_then_refuses(self, inv) -> str:
        await link(self, inv)
        raise PublishFailed("refused after posting", status=403)  # so never compensated

    monkeypatch.setattr(SentryNote, "link", posts_then_refuses)
    tally = await run_faults(runs=4, seed=20261130)
    assert any("the Sentry note is still there" in v for v in tally.violations), tally.line()
