"""SKIPPED, cancel and supersede in the state machine."""

import pytest

from agent.domain import TRANSITIONS, Diagnosis, Draft, Investigation, State
from agent.errors import IllegalTransition
from tests.agent.test_domain import scope


def finished() -> Investigation:
    inv = Investigation.open("why do orders fail?", scope())
    inv.start()
    inv.complete(Diagnosis(root_cause="x"), Draft(repository="acme/orders", title="t", body="b"))
    return inv


def test_skipped_is_final_and_only_for_a_new_investigation():
    inv = Investigation.open("why?", scope())
    inv.skip("the project's concurrency cap (2) is reached")
    assert inv.state is State.SKIPPED and "cap" in (inv.stop_reason or "")
    assert TRANSITIONS[State.SKIPPED] == frozenset()
    with pytest.raises(IllegalTransition):
        inv.start()
    stored = Investigation.open("why?", scope())
    stored.version = 1  # already stored and queued: a worker may have it
    with pytest.raises(IllegalTransition):
        stored.skip("late")
    running = Investigation.open("why?", scope())
    running.start()
    with pytest.raises(IllegalTransition):
        running.skip("late")


@pytest.mark.parametrize("step", ["queued", "running", "waiting"])
def test_cancel_stops_a_run_at_work_and_keeps_what_it_gathered(step):
    inv = Investigation.open("why?", scope())
    if step != "queued":
        inv.start()
        inv.add_evidence(source="sentry", tool="t", title="x", content="y")
    if step == "waiting":
        inv.ask("which release?")
    inv.cancel("cancelled by U1")
    assert inv.state is State.STOPPED and inv.stop_reason == "cancelled by U1"
    assert inv.pending_question is None
    assert len(inv.evidence) == (0 if step == "queued" else 1)
    with pytest.raises(IllegalTransition):
        inv.cancel("again")


def test_a_superseded_report_can_no_longer_be_edited_approved_discarded_or_continued():
    inv = finished()
    inv.supersede("new")
    assert inv.state is State.COMPLETED and inv.superseded_by == "new"
    assert inv.draft is not None
    with pytest.raises(IllegalTransition):
        inv.approve(approver="U", version=1, hash=inv.draft.hash, idempotency_key="k")
    with pytest.raises(IllegalTransition):
        inv.edit_draft(version=1, title="t2", body="b2")
    with pytest.raises(IllegalTransition):
        inv.discard_draft(1)
    with pytest.raises(IllegalTransition, match="already re-run"):
        inv.supersede("newer")


def test_supersede_stops_a_running_one_but_never_a_publication_under_way():
    running = Investigation.open("why?", scope())
    running.start()
    running.supersede("new")
    assert running.state is State.STOPPED and "re-run as new" in (running.stop_reason or "")
    inv = finished()
    assert inv.draft is not None
    inv.approve(approver="U", version=1, hash=inv.draft.hash, idempotency_key="k")
    with pytest.raises(IllegalTransition, match="being published"):
        inv.supersede("new")
    assert inv.superseded_by is None


def test_an_approval_already_made_still_answers_its_receipt_after_supersede():
    inv = finished()
    assert inv.draft is not None
    inv.approve(approver="U", version=1, hash=inv.draft.hash, idempotency_key="k")
    inv.published(7, "https://github.com/acme/orders/issues/7")
    inv.supersede("new")
    receipt = inv.approve(approver="U", version=1, hash=inv.draft.hash, idempotency_key="k")
    assert receipt.status == "published"
