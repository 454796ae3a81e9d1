"""The publication saga: a plan of steps around one pivot.

In saga terms creating the issue is the pivot: the point after which the publication is
not withdrawn. Each step declares its kind, and the plan is checked when it is built
(pydantic validators), never discovered at run time:

- `compensatable` steps come before the pivot, each with its compensation;
- the `pivot` (exactly one) has no compensation and is not retried: a lost answer
  suspends the saga, to be settled later by looking;
- `retriable` steps come after the pivot and have no compensation: they are retried
  (backoff, honouring Retry-After, bounded) until they succeed, or recorded as not done.
  A side step that fails never undoes the main effect.

Running, each step is recorded (started, done) in the approval and checkpointed — saved
with the investigation — before and after its call, so a worker that dies mid-way is
resumed by another from the record: a done step is not run again, and a side step not
done is run again (they are idempotent).

A failure before or at the pivot is fatal: the completed compensatable steps are
compensated in reverse order — the failed step too when its outcome is unknown, since
compensations are idempotent (already undone counts as done). Each compensation goes
into the log. One that fails is logged and the chain goes on; at the end
`CompensationFailed` is raised, for a human.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.domain import Approval, LogEntry, StepRecord, StepStatus
from agent.errors import CompensationFailed, ConcurrencyError, PublishFailed, PublishUnknown

Checkpoint = Callable[[], Awaitable[None]]
Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")

StepKind = Literal["compensatable", "pivot", "retriable"]


class Step(BaseModel):
    """One step of a plan. `run` returns a line for the log; `compensation` returns False
    when there was nothing left to undo (it is idempotent)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str = Field(min_length=1)
    kind: StepKind
    run: Callable[[], Awaitable[str]]
    compensation: Callable[[], Awaitable[bool]] | None = None
    # Sent again after a transient failure (only idempotent steps are, so not the pivot).
    retries: int = Field(default=2, ge=0)

    @model_validator(mode="after")
    def _declared(self) -> Step:
        if self.kind == "compensatable" and self.compensation is None:
            raise ValueError(f"step {self.name!r} is compensatable but has no compensation")
        if self.kind != "compensatable" and self.compensation is not None:
            raise ValueError(
                f"step {self.name!r} is a {self.kind} step and names a compensation: "
                "only steps before the pivot are compensated"
            )
        if self.kind == "pivot" and self.retries:
            raise ValueError(
                f"the pivot {self.name!r} settles a lost answer by looking: no retries"
            )
        return self


class Plan(BaseModel):
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> Plan:
        names = self.names()
        if len(names) != len(set(names)):
            raise ValueError(f"step names repeat: {names}")
        pivots = [s.name for s in self.steps if s.kind == "pivot"]
        if len(pivots) != 1:
            raise ValueError(f"a plan has exactly one pivot step; this one has {pivots or 'none'}")
        at = names.index(pivots[0])
        for n, step in enumerate(self.steps):
            if step.kind == "compensatable" and n > at:
                raise ValueError(
                    f"step {step.name!r} is compensatable but comes after the pivot "
                    f"{pivots[0]!r}: what follows the pivot is never undone"
                )
            if step.kind == "retriable" and n < at:
                raise ValueError(
                    f"step {step.name!r} is retriable but comes before the pivot "
                    f"{pivots[0]!r}: a failure there must roll back"
                )
        return self

    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    @property
    def pivot(self) -> Step:
        return next(s for s in self.steps if s.kind == "pivot")


class Outcome(BaseModel):
    kind: Literal["completed", "suspended", "rolled back"]
    step: str | None = None
    reason: str | None = None
    # Completed: the side steps that are recorded as not done (run again on a resume).
    not_done: list[str] = Field(default_factory=list)


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, PublishUnknown) or (isinstance(exc, PublishFailed) and exc.retryable)


def _retry_after(exc: BaseException) -> float | None:
    return exc.retry_after if isinstance(exc, PublishFailed) else None


class Saga:
    """Runs `plan`, keeping its record in `approval` and saving it through `checkpoint`.

    A retried call waits `backoff * 2**attempt`, or the Retry-After the service asked for
    when that is longer; a call that would have to wait more than `max_wait` at once
    counts as failed (a side step is left not done) rather than holding the worker."""

    def __init__(
        self,
        plan: Plan,
        approval: Approval,
        checkpoint: Checkpoint,
        *,
        backoff: float = 0.05,
        max_wait: float = 30.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.plan = plan
        self.record = approval
        self.checkpoint = checkpoint
        self.backoff = backoff
        self.max_wait = max_wait
        self.sleep = sleep
        self._uncertain = False
        self._attempts = 0

    def status(self, name: str) -> StepStatus | None:
        step = self.record.steps.get(name)
        return step.status if step else None

    async def run(self) -> Outcome:
        if self.record.rolling_back:  # a worker died half-way through a rollback
            failed = next(
                (s.name for s in self.plan.steps if self.status(s.name) in ("failed", "unknown")),
                None,
            )
            reason = self.record.reason or "an earlier failure"
            await self._rollback(reason)
            return Outcome(kind="rolled back", step=failed, reason=reason)
        not_done: list[str] = []
        for step in self.plan.steps:
            if self.status(step.name) == "done":
                continue
            # Not saved: a step not done is run again on resume (all but the pivot are
            # idempotent, and that one saves its own record before its call).
            await self._mark(step.name, "started", save=False)
            if step.kind == "retriable":
                if not await self._side_step(step):
                    not_done.append(step.name)
                continue
            try:
                detail = await self._attempt(step.run, step.retries)
            except ConcurrencyError:
                raise  # another worker has the investigation: it carries on from the record
            except PublishUnknown as exc:
                if step.kind == "pivot":
                    await self._mark(step.name, "unknown", str(exc), log=("run", "unknown"))
                    return Outcome(kind="suspended", step=step.name, reason=str(exc))
                return await self._fail(step, "unknown", exc)
            except Exception as exc:
                return await self._fail(step, "unknown" if self._uncertain else "failed", exc)
            await self._mark(step.name, "done", detail, log=("run", "done"))
        return Outcome(kind="completed", not_done=not_done)

    async def _side_step(self, step: Step) -> bool:
        """A step after the pivot: done, or recorded as not done. Never a rollback."""
        try:
            detail = await self._attempt(step.run, step.retries)
        except ConcurrencyError:
            raise
        except Exception as exc:
            tries = self._attempts
            why = f"{exc} (after {tries} attempt{'s' if tries != 1 else ''})"
            await self._mark(step.name, "not_done", why, log=("run", "not done"))
            return False
        await self._mark(step.name, "done", detail, log=("run", "done"))
        return True

    async def _fail(self, step: Step, status: StepStatus, exc: Exception) -> Outcome:
        reason = f"{step.name} failed: {exc}"
        self.record.reason = reason
        # The failure and the rollback are saved together: a resumed saga finishes the
        # rollback rather than running the failed step again.
        self.record.rolling_back = True
        await self._mark(step.name, status, str(exc), log=("run", status))
        await self._rollback(reason)
        return Outcome(kind="rolled back", step=step.name, reason=reason)

    async def _rollback(self, reason: str) -> None:
        undo = [
            s
            for s in self.plan.steps
            if s.kind == "compensatable" and self.status(s.name) in ("done", "unknown", "started")
        ]
        failures: list[str] = []
        for step in reversed(undo):
            assert step.compensation is not None  # the plan's validator saw to it
            try:
                undone = await self._attempt(step.compensation, step.retries or 2)
            except Exception as exc:
                failures.append(f"{step.name}: {exc}")
                await self._mark(
                    step.name, "compensation_failed", str(exc), log=("compensate", "failed")
                )
                continue  # the chain goes on past a failed compensation
            outcome = "done" if undone else "already done"
            await self._mark(step.name, "compensated", reason, log=("compensate", outcome))
        self.record.rolling_back = False
        await self.checkpoint()
        if failures:
            raise CompensationFailed(
                "the rollback is incomplete, a human has to finish it: " + "; ".join(failures)
            )

    async def _attempt(self, call: Callable[[], Awaitable[T]], retries: int) -> T:
        """`call`, sent again after a transient failure up to `retries` times, waiting as
        long as a Retry-After asks, up to `max_wait`."""
        self._uncertain = False
        for attempt in range(retries + 1):
            self._attempts = attempt + 1
            try:
                return await call()
            except Exception as exc:
                # A lost answer may have been applied: the step's outcome is unknown even if
                # a later attempt is refused outright.
                self._uncertain = self._uncertain or isinstance(exc, PublishUnknown)
                if attempt == retries or not _transient(exc):
                    raise
                wait = self.backoff * 2**attempt
                asked = _retry_after(exc)
                if asked is not None:
                    if asked > self.max_wait:
                        raise
                    wait = max(wait, asked)
            await self.sleep(wait)
        raise AssertionError("unreachable")

    async def _mark(
        self,
        name: str,
        status: StepStatus,
        detail: str = "",
        *,
        log: tuple[str, str] | None = None,
        save: bool = True,
    ) -> None:
        self.record.steps[name] = StepRecord(name=name, status=status, detail=detail[:500])
        if log is not None:
            action, outcome = log
            self.record.log.append(
                LogEntry(step=name, action=action, outcome=outcome, detail=detail[:500])  # type: ignore[arg-type]
            )
        if save:
            await self.checkpoint()
