from datetime import UTC, datetime

import pytest

from agent.domain import Diagnosis, Draft, Investigation, Scope, State
from agent.errors import IllegalTransition, InputError, StaleDraft


def scope(**kw) -> Scope:
    base = dict(
        project_key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        release_prefix="orders@",
        language="en",
        since=datetime(2026, 11, 28, tzinfo=UTC),
        until=datetime(2026, 11, 29, tzinfo=UTC),
    )
    return Scope(**(base | kw))


def test_open_refuses_empty_and_huge_questions():
    with pytest.raises(InputError, match="empty"):
        Investigation.open("   \n ", scope())
    with pytest.raises(InputError, match="10000 characters"):
        Investigation.open("x" * 10_000, scope())
    with pytest.raises(InputError, match="window"):
        Investigation.open("why?", scope(since=datetime(2026, 11, 30, tzinfo=UTC)))


def test_states_follow_the_design():
    inv = Investigation.open("why do orders fail?", scope())
    assert inv.state is State.QUEUED
    with pytest.raises(IllegalTransition):
        inv.complete(Diagnosis(root_cause="x"), Draft(repository="a/b", title="t", body="b"))
    inv.start()
    inv.ask("which release?")
    assert inv.state is State.WAITING_FOR_OPERATOR
    with pytest.raises(IllegalTransition):
        inv.start()
    inv.stop("cancelled", None)
    assert inv.state is State.STOPPED and inv.stop_reason == "cancelled"
    inv.continue_with(4)
    assert inv.state is State.RUNNING and inv.extra_budget == 4
    inv.complete(Diagnosis(root_cause="x"), Draft(repository="a/b", title="t", body="b"))
    inv.move_to(State.PUBLISH_QUEUED)
    inv.move_to(State.PUBLISHED)
    with pytest.raises(IllegalTransition):
        inv.move_to(State.PUBLISH_QUEUED)


def test_draft_versions_and_hashes_bind_edits_and_approvals():
    draft = Draft(repository="acme/orders", title="NPE in CustomerReference", body="body")
    assert draft.version == 1 and len(draft.hash) == 64
    assert draft.hash == Draft.compute_hash("acme/orders", "NPE in CustomerReference", "body")
    assert draft.hash != Draft(repository="acme/other", title=draft.title, body="body").hash
    v2 = draft.edited(version=1, title="NPE when customerReference is absent", body="body 2")
    assert v2.version == 2 and v2.hash != draft.hash
    with pytest.raises(StaleDraft):
        v2.edited(version=1, title="again", body="again")
    with pytest.raises(StaleDraft):
        v2.check_approval(1, draft.hash)
    with pytest.raises(StaleDraft):
        v2.check_approval(2, draft.hash)
    v2.check_approval(2, v2.hash)


def test_answer_becomes_the_clarification_result():
    from agent.domain import Message, ToolCall

    inv = Investigation.open("why?", scope())
    inv.start()
    inv.messages.append(
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(id="c1", name="ask_clarification", arguments={"question": "which?"})
            ],
        )
    )
    inv.ask("which?")
    with pytest.raises(InputError):
        inv.answer("  ")
    inv.answer("the NPE one")
    assert inv.state is State.RUNNING
    assert inv.messages[-1].tool_call_id == "c1" and inv.messages[-1].content == "the NPE one"
    with pytest.raises(IllegalTransition):
        inv.answer("again")


def test_evidence_ids_run_in_order_and_hash_their_content():
    inv = Investigation.open("why?", scope())
    e1 = inv.add_evidence(source="sentry", tool="sentry__search_issues", title="t", content="a")
    e2 = inv.add_evidence(
        source="code", tool="git__git_show", title="t", content="b", path="src/x.py", revision="abc"
    )
    assert (e1.id, e2.id) == ("E1", "E2")
    assert e1.content_hash != e2.content_hash
    assert inv.evidence_by_id("E2") is e2 and inv.evidence_by_id("E3") is None
