"""Publishing under randomized faults (seeded): see tests/publish_faults.py for the
harness and the invariants; benchmarks/publish_faults.py runs it 1,000 times."""

from agent.publish.publisher import Publisher
from tests.publish_faults import run_faults


async def test_publishing_keeps_its_invariants_under_random_faults():
    tally = await run_faults(runs=100, seed=20261130)
    assert tally.violations == [], "\n".join(tally.violations[:10])
    assert tally.runs == 100
    # The seed exercises every path, so a silent change of behaviour shows here too.
    for outcome in ("published", "adopted", "rolled back", "left for a human", "created anyway"):
        assert tally.outcomes[outcome] > 0, tally.line()


async def test_the_invariants_catch_a_publisher_that_creates_blindly(monkeypatch):
    async def never_found(self, inv, approval, mark, cause="") -> None:
        approval.lookup = "nothing"
        return None

    monkeypatch.setattr(Publisher, "_lookup", never_found)
    tally = await run_faults(runs=20, seed=20261130)
    assert any("issues for one approval" in v for v in tally.violations), tally.line()
