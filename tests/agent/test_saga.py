"""The saga engine: the plan's validator (step kinds around one pivot), rollback order
before the pivot, side steps after it that are retried and then left not done (never
compensated), Retry-After, the log kept in the approval, resuming from the record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent.domain import Approval, StepRecord
from agent.errors import CompensationFailed, PublishFailed, PublishUnknown
from agent.publish.saga import Plan, Saga, Step


class World:
    """What the steps did, in order: the steps are real callables over this list."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.checkpoints: list[list[tuple[str, str]]] = []
        self.waits: list[float] = []

    def step(
        self,
        name: str,
        kind: str = "compensatable",
        *,
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

        if kind == "pivot":
            options.setdefault("retries", 0)
        return Step(
            name=name,
            kind=kind,  # type: ignore[arg-type]
            run=run,
            compensation=undo if kind == "compensatable" else None,
            **options,  # type: ignore[arg-type]
        )

    def saga(self, *steps: Step, approval: Approval | None = None) -> tuple[Saga, Approval]:
        record = approval or Approval(approver="U0BOB", version=1, hash="h", idempotency_key="k")

        async def checkpoint() -> None:
            self.checkpoints.append([(n, s.status) for n, s in record.steps.items()])

        async def sleep(seconds: float) -> None:
            self.waits.append(seconds)

        plan = Plan(steps=list(steps))
        return Saga(plan, record, checkpoint, backoff=0, max_wait=60, sleep=sleep), record


async def noop() -> str:
    return ""


async def undone() -> bool:
    return True


def pivot(name: str = "create") -> Step:
    return Step(name=name, kind="pivot", run=noop, retries=0)


def side(name: str) -> Step:
    return Step(name=name, kind="retriable", run=noop)


def prepare(name: str) -> Step:
    return Step(name=name, kind="compensatable", run=noop, compensation=undone)


def test_a_step_declares_its_kind_and_a_compensation_only_when_compensatable():
    with pytest.raises(ValidationError, match="compensatable but has no compensation"):
        Step(name="reserve", kind="compensatable", run=noop)
    with pytest.raises(ValidationError, match="retriable step and names a compensation"):
        Step(name="add_labels", kind="retriable", run=noop, compensation=undone)
    with pytest.raises(ValidationError, match="pivot step and names a compensation"):
        Step(name="create", kind="pivot", run=noop, compensation=undone, retries=0)
    with pytest.raises(ValidationError, match="no retries"):
        Step(name="create", kind="pivot", run=noop)
    with pytest.raises(ValidationError, match="kind"):
        Step(name="create", kind="reversible", run=noop)  # type: ignore[arg-type]


def test_a_plan_is_validated_when_it_is_built():
    with pytest.raises(ValidationError, match="exactly one pivot step; this one has none"):
        Plan(steps=[prepare("reserve"), side("add_labels")])
    with pytest.raises(ValidationError, match=r"exactly one pivot.*'a', 'b'"):
        Plan(steps=[pivot("a"), pivot("b")])
    with pytest.raises(ValidationError, match="'undo_me' is compensatable but comes after"):
        Plan(steps=[pivot(), prepare("undo_me")])
    with pytest.raises(ValidationError, match="'add_labels' is retriable but comes before"):
        Plan(steps=[side("add_labels"), pivot()])
    with pytest.raises(ValidationError, match="repeat"):
        Plan(steps=[pivot(), side("a"), side("a")])
    with pytest.raises(ValidationError):
        Plan(steps=[])
    plan = Plan(steps=[prepare("reserve"), pivot(), side("add_labels"), side("sentry_note")])
    assert plan.pivot.name == "create"
    assert plan.names() == ["reserve", "create", "add_labels", "sentry_note"]


async def test_a_side_step_that_keeps_failing_is_left_not_done_and_nothing_is_compensated():
    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("create", "pivot"),
        w.step("labels", "retriable", fail=PublishUnknown("GitHub answered 502"), retries=3),
        w.step("notify", "retriable"),
        w.step("sentry", "retriable", fail=PublishFailed("Sentry refused (404)", status=404)),
    )
    outcome = await saga.run()
    assert outcome.kind == "completed" and outcome.not_done == ["labels", "sentry"]
    # Retried with backoff (the lost answers), then on to the next side step; a refusal
    # is not sent again. No compensation runs, for any step.
    assert w.events == ["reserve", "create", *["labels!"] * 4, "notify", "sentry!"]
    assert record.compensations() == [] and not record.rolling_back
    assert record.steps["labels"].status == "not_done"
    assert (
        "502" in record.steps["labels"].detail
        and "after 4 attempts" in record.steps["labels"].detail
    )
    assert record.steps["sentry"].status == "not_done"
    assert "after 1 attempt)" in record.steps["sentry"].detail
    assert [s.name for s in record.not_done()] == ["labels", "sentry"]
    assert [(e.step, e.outcome) for e in record.log][-3:] == [
        ("labels", "not done"),
        ("notify", "done"),
        ("sentry", "not done"),
    ]
    assert ("labels", "not_done") in w.checkpoints[-1]  # saved as it went


async def test_a_rerun_runs_only_the_side_steps_not_done():
    w = World()
    record = Approval(approver="U0BOB", version=1, hash="h", idempotency_key="k")
    record.steps = {
        "create": StepRecord(name="create", status="done"),
        "labels": StepRecord(name="labels", status="not_done", detail="422"),
        "sentry": StepRecord(name="sentry", status="done"),
    }
    saga, record = w.saga(
        w.step("create", "pivot"),
        w.step("labels", "retriable"),
        w.step("sentry", "retriable"),
        approval=record,
    )
    outcome = await saga.run()
    assert outcome.kind == "completed" and outcome.not_done == []
    assert w.events == ["labels"] and record.not_done() == []


async def test_retry_after_is_honoured_and_a_wait_past_the_bound_leaves_the_step_not_done():
    w = World()
    limited = PublishFailed("rate limit (429)", status=429, retryable=True, retry_after=7)
    saga, _ = w.saga(
        w.step("create", "pivot"),
        w.step("labels", "retriable", fail=limited, fail_times=2),
        w.step("sentry", "retriable", fail=PublishFailed("x", retryable=True, retry_after=3600)),
    )
    outcome = await saga.run()
    assert w.events == ["create", "labels!", "labels!", "labels", "sentry!"]
    assert w.waits == [7, 7]  # as asked (the backoff alone would not wait at all)
    assert outcome.not_done == ["sentry"]  # an hour is past max_wait: not done, not waited


async def test_a_failure_before_the_pivot_compensates_in_reverse_order():
    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("lock"),
        w.step("stamp", fail=PublishFailed("refused (403)", status=403)),
        w.step("create", "pivot"),
        w.step("labels", "retriable"),
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back" and outcome.step == "stamp"
    assert w.events == ["reserve", "lock", "stamp!", "undo lock", "undo reserve"]
    assert [(e.step, e.outcome) for e in record.compensations()] == [
        ("lock", "done"),
        ("reserve", "done"),
    ]
    assert record.steps["stamp"].status == "failed"  # refused: nothing to undo there
    assert not record.rolling_back


async def test_a_refusal_at_the_pivot_rolls_back_what_came_before_and_runs_nothing_after():
    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("create", "pivot", fail=PublishFailed("GitHub refused (422)", status=422)),
        w.step("labels", "retriable"),
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back" and outcome.step == "create"
    assert w.events == ["reserve", "create!", "undo reserve"]
    assert record.steps["create"].status == "failed" and "labels" not in record.steps


async def test_already_undone_counts_as_done_and_a_failing_compensation_does_not_stop_the_chain():
    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("lock", already_undone=True),
        w.step("stamp", undo_fails=PublishFailed("channel_not_found")),
        w.step("create", "pivot", fail=PublishFailed("boom")),
    )
    with pytest.raises(CompensationFailed, match="stamp: channel_not_found"):
        await saga.run()
    assert w.events[-3:] == ["undo stamp!", "undo lock", "undo reserve"]
    assert [(e.step, e.outcome) for e in record.compensations()] == [
        ("stamp", "failed"),
        ("lock", "already done"),
        ("reserve", "done"),
    ]
    assert record.steps["stamp"].status == "compensation_failed"
    assert not record.rolling_back


async def test_a_lost_answer_before_the_pivot_is_retried_and_else_compensated_too():
    w = World()
    saga, record = w.saga(
        w.step("reserve", fail=PublishUnknown("timeout"), fail_times=2),
        w.step("create", "pivot"),
    )
    assert (await saga.run()).kind == "completed"
    assert w.events == ["reserve!", "reserve!", "reserve", "create"]

    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("lock", fail=PublishUnknown("timeout")),
        w.step("create", "pivot"),
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back"
    # It may have been applied: its (idempotent) compensation runs as well, first.
    assert w.events[-2:] == ["undo lock", "undo reserve"]
    assert record.steps["lock"].status == "compensated"


async def test_a_lost_answer_at_the_pivot_suspends_the_saga():
    w = World()
    saga, record = w.saga(
        w.step("reserve"),
        w.step("create", "pivot", fail=PublishUnknown("no answer")),
        w.step("labels", "retriable"),
    )
    outcome = await saga.run()
    assert outcome.kind == "suspended" and outcome.step == "create"
    assert w.events == ["reserve", "create!"]  # sent once, nothing compensated, nothing after
    assert record.steps["create"].status == "unknown"


async def test_a_resumed_saga_skips_what_is_done_and_finishes_an_interrupted_rollback():
    w = World()
    saga, record = w.saga(
        w.step("create", "pivot"), w.step("labels", "retriable"), w.step("slack", "retriable")
    )
    record.steps["create"] = StepRecord(name="create", status="done")
    assert (await saga.run()).kind == "completed"
    assert w.events == ["labels", "slack"]

    w = World()
    interrupted = Approval(approver="U0BOB", version=1, hash="h", idempotency_key="k")
    interrupted.steps = {n: StepRecord(name=n, status="done") for n in ("reserve", "lock")}
    interrupted.steps["stamp"] = StepRecord(name="stamp", status="failed")
    interrupted.rolling_back = True
    interrupted.reason = "stamp failed: channel_not_found"
    saga, record = w.saga(
        w.step("reserve"),
        w.step("lock"),
        w.step("stamp"),
        w.step("create", "pivot"),
        approval=interrupted,
    )
    outcome = await saga.run()
    assert outcome.kind == "rolled back" and outcome.step == "stamp"
    assert w.events == ["undo lock", "undo reserve"]
