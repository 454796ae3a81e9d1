"""The publication saga: steps that each declare whether they are reversible, and how.

A plan is checked when it is built (pydantic validators): a step declared reversible
without a compensation, or irreversible with one, is refused there, never discovered at
rollback time.

Running, each step is recorded (started, done) in the approval and checkpointed — saved
with the investigation — before and after its call, so a worker that dies mid-way is
resumed by another from the record: a done step is not run again.

- A step marked `suspend_on_unknown` (creating the issue) that loses its answer suspends
  the saga: what happened is settled later by looking, and nothing is compensated.
- Transient failures (a lost answer, a rate limit) of the other steps, which are all
  idempotent, are retried a few times; then, like any other failure, they are fatal.
- On a fatal failure the completed reversible steps are compensated in reverse order —
  and the failed step too when its outcome is unknown, since compensations are idempotent
  (already undone counts as done). Each compensation goes into the log. One that fails is
  logged and the chain goes on; at the end `CompensationFailed` is raised, for a human.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.domain import Approval, LogEntry, StepRecord, StepStatus
from agent.errors import CompensationFailed, PublishFailed, PublishUnknown

Checkpoint = Callable[[], Awaitable[None]]
T = TypeVar("T")


class Step(BaseModel):
    """One step of a plan. `run` returns a line for the log; `compensation` returns False
    when there was nothing left to undo (it is idempotent)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str = Field(min_length=1)
    reversible: bool
    run: Callable[[], Awaitable[str]]
    compensation: Callable[[], Awaitable[bool]] | None = None
    # Only an idempotent step may be sent again after a lost answer.
    retries: int = Field(default=2, ge=0)
    suspend_on_unknown: bool = False

    @model_validator(mode="after")
    def _declared(self) -> Step:
        if self.reversible and self.compensation is None:
            raise ValueError(f"step {self.name!r} is declared reversible but has no compensation")
        if not self.reversible and self.compensation is not None:
            raise ValueError(f"step {self.name!r} is irreversible but names a compensation")
        if self.suspend_on_unknown and self.retries:
            raise ValueError(f"step {self.name!r} settles a lost answer by looking: no retries")
        return self


class Plan(BaseModel):
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Plan:
        names = [s.name for s in self.steps]
        if len(names) != len(set(names)):
            raise ValueError(f"step names repeat: {names}")
        return self

    def names(self) -> list[str]:
        return [s.name for s in self.steps]


class Outcome(BaseModel):
    kind: Literal["completed", "suspended", "rolled back"]
    step: str | None = None
    reason: str | None = None


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, PublishUnknown) or (isinstance(exc, PublishFailed) and exc.retryable)


class Saga:
    """Runs `plan`, keeping its record in `approval` and saving it through `checkpoint`."""

    def __init__(
        self,
        plan: Plan,
        approval: Approval,
        checkpoint: Checkpoint,
        *,
        backoff: float = 0.05,
    ) -> None:
        self.plan = plan
        self.record = approval
        self.checkpoint = checkpoint
        self.backoff = backoff
        self._uncertain = False

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
        for step in self.plan.steps:
            if self.status(step.name) == "done":
                continue
            # Not saved: a step not done is run again on resume (all but creating the issue
            # are idempotent, and that one saves its own record before its call).
            await self._mark(step.name, "started", save=False)
            try:
                detail = await self._attempt(step.run, step.retries)
            except PublishUnknown as exc:
                if step.suspend_on_unknown:
                    await self._mark(step.name, "unknown", str(exc), log=("run", "unknown"))
                    return Outcome(kind="suspended", step=step.name, reason=str(exc))
                return await self._fail(step, "unknown", exc)
            except Exception as exc:
                return await self._fail(step, "unknown" if self._uncertain else "failed", exc)
            await self._mark(step.name, "done", detail, log=("run", "done"))
        return Outcome(kind="completed")

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
            if s.reversible and self.status(s.name) in ("done", "unknown", "started")
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
        self._uncertain = False
        for attempt in range(retries + 1):
            try:
                return await call()
            except Exception as exc:
                # A lost answer may have been applied: the step's outcome is unknown even if
                # a later attempt is refused outright.
                self._uncertain = self._uncertain or isinstance(exc, PublishUnknown)
                if attempt == retries or not _transient(exc):
                    raise
            await asyncio.sleep(self.backoff * 2**attempt)
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
