"""The saga engine: the plan's validator, rollback order, idempotent and failing
compensations, the log kept in the approval, resuming from the record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent.domain import Approval
from agent.errors import CompensationFailed, PublishFailed, PublishUnknown
from agent.publish.saga import Plan, Saga, Step


class World:
    """What the steps did, in order: the steps are real callables over this list."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.checkpoints: list[list[tuple[str, str]]] = []

    def step(
        self,
        name: str,
        *,
        reversible: bool = True,
        fail: BaseException | None = None,
        fail_times: int = 0,
        undo_fails: BaseException | None = None,
        already_undone: bool = False,
        **options: object,
    ) -> Step:
        tries = {"run": 0}

        async def run() -> str:
            tries["run"] += 1
            if fail is not None and (fail_times == 0 or tries["run"] <= fail_times):
                self.events.append(f"{name}!")
                raise fail
            self.events.append(name)
            return f"{name} ok"

        async def undo() -> bool:
            if undo_fails is not None:
                self.events.append(f"undo {name}!")
                raise undo_fails
            self.events.append(f"undo {name}")
            return not already_undone

        return Step(
            name=name,
            reversible=reversible,
            run=run,
            compensation=undo if reversible else None,
            **options,  # type: ignore[arg-type]
        )

    def saga(self, *steps: Step, approval: Approval | None = None) -> tuple[Saga, Approval]:
        record = approval or Approval(approver="U0BOB", version=1, hash="h", idempotency_key="k")

        async def checkpoint() -> None:
            self.checkpoints.append([(n, s.status) for n, s in record.steps.items()])

        return Saga(Plan(steps=list(steps)), record, checkpoint, backoff=0), record


async def noop() -> str:
    return ""


async def undone() -> bool:
    return True


def test_a_reversible_step_without_compensation_is_refused_when_the_plan_is_built():
    with pytest.raises(ValidationError, match="declared reversible but has no compensation"):
        Step(name="add_labels", reversible=True, run=noop)
    with pytest.raises(ValidationError, match="irreversible but names a compensation"):
        Step(name="notify", reversible=False, run=noop, compensation=undone)
    with pytest.raises(ValidationError, match="no retries"):
        Step(name="create", reversible=True, run=noop, compensation=undone, suspend_on_unknown=True)
    step = Step(name="a", reversible=False, run=noop)
    with pytest.raises(ValidationError, match="repeat"):
        Plan(steps=[step, step])
    with pytest.raises(ValidationError):
        Plan(steps=[])


async def test_a_fatal_failure_compensates_the_completed_reversible_steps_in_reverse_order():
    w = World()
    saga, record = w.saga(
        w.step("create"),
        w.step("labels"),
        w.step("notify", reversible=False),
        w.step("slack"),
        w.step("sentry", fail=PublishFailed("Sentry refused (403)", status=403)),
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back" and outcome.step == "sentry"
    assert "Sentry refused" in (outcome.reason or "")
    assert w.events == [
        "create",
        "labels",
        "notify",
        "slack",
        "sentry!",
        "undo slack",
        "undo labels",
        "undo create",
    ]
    assert [(e.step, e.outcome) for e in record.compensations()] == [
        ("slack", "done"),
        ("labels", "done"),
        ("create", "done"),
    ]
    assert record.steps["sentry"].status == "failed"  # refused: nothing to undo there
    assert record.steps["notify"].status == "done"  # irreversible: left as it is
    assert {record.steps[n].status for n in ("create", "labels", "slack")} == {"compensated"}
    assert not record.rolling_back
    # Saved as it went: each step done, the failure with the rollback, each compensation.
    assert len(w.checkpoints) >= 4 + 1 + 3
    assert ("sentry", "failed") in w.checkpoints[4] and ("slack", "done") in w.checkpoints[4]


async def test_already_undone_counts_as_done_and_a_failing_compensation_does_not_stop_the_chain():
    w = World()
    saga, record = w.saga(
        w.step("create"),
        w.step("labels", already_undone=True),
        w.step("slack", undo_fails=PublishFailed("channel_not_found")),
        w.step("sentry", fail=PublishFailed("boom")),
    )
    with pytest.raises(CompensationFailed, match="slack: channel_not_found"):
        await saga.run()
    assert w.events[-3:] == ["undo slack!", "undo labels", "undo create"]
    assert [(e.step, e.outcome) for e in record.compensations()] == [
        ("slack", "failed"),
        ("labels", "already done"),
        ("create", "done"),
    ]
    assert record.steps["slack"].status == "compensation_failed"
    assert not record.rolling_back


async def test_a_lost_answer_is_retried_on_idempotent_steps_and_else_compensated_too():
    w = World()
    saga, record = w.saga(
        w.step("create"),
        w.step("labels", fail=PublishUnknown("timeout"), fail_times=2),
    )
    assert (await saga.run()).kind == "completed"
    assert w.events == ["create", "labels!", "labels!", "labels"]
    assert [e.outcome for e in record.log] == ["done", "done"]

    w = World()
    saga, record = w.saga(
        w.step("create"),
        w.step("labels", fail=PublishUnknown("timeout")),
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back"
    # It may have been applied: its (idempotent) compensation runs as well, first.
    assert w.events[-2:] == ["undo labels", "undo create"]
    assert record.steps["labels"].status == "compensated"


async def test_a_step_that_settles_a_lost_answer_by_looking_suspends_the_saga():
    w = World()
    saga, record = w.saga(
        w.step("create", fail=PublishUnknown("no answer"), retries=0, suspend_on_unknown=True),
        w.step("labels"),
    )
    outcome = await saga.run()
    assert outcome.kind == "suspended" and outcome.step == "create"
    assert w.events == ["create!"]  # sent once, nothing compensated, nothing after it
    assert record.steps["create"].status == "unknown"


async def test_a_resumed_saga_skips_what_is_done_and_finishes_an_interrupted_rollback():
    w = World()
    saga, record = w.saga(w.step("create"), w.step("labels"), w.step("slack"))
    record.steps["create"] = record.steps.get("create") or _done("create")
    assert (await saga.run()).kind == "completed"
    assert w.events == ["labels", "slack"]

    w = World()
    interrupted = Approval(approver="U0BOB", version=1, hash="h", idempotency_key="k")
    interrupted.steps = {n: _done(n) for n in ("create", "labels")}
    interrupted.steps["slack"] = _done("slack").model_copy(update={"status": "failed"})
    interrupted.rolling_back = True
    interrupted.reason = "slack failed: channel_not_found"
    saga, record = w.saga(w.step("create"), w.step("labels"), w.step("slack"), approval=interrupted)
    outcome = await saga.run()
    assert outcome.kind == "rolled back" and outcome.step == "slack"
    assert w.events == ["undo labels", "undo create"]


def _done(name: str):
    from agent.domain import StepRecord

    return StepRecord(name=name, status="done")
