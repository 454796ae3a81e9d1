"""Limits of one investigation and the funnel that narrows the catalog as they are spent."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from agent.domain import Stats


class Phase(StrEnum):
    EXPLORE = "explore"  # every tool
    READ = "read"  # only tools that read what was already found, and finishing
    FINISH = "finish"  # only finish_investigation


class Limits(BaseModel):
    model_calls: int = Field(default=8, ge=1)
    tool_calls: int = Field(default=16, ge=1)
    wall_seconds: float = Field(default=360.0, gt=0)
    result_chars: int = Field(default=12_000, ge=500)
    context_chars: int = Field(default=120_000, ge=5_000)
    # Share of the model calls after which exploring stops.
    read_after: float = Field(default=0.6, gt=0, le=1)
    # Tokens (input + output, as the API's usage reports them) one investigation may spend,
    # and all investigations together in one UTC day (None: no daily limit).
    tokens: int = Field(default=300_000, ge=1_000)
    tokens_per_day: int | None = Field(default=None, ge=1_000)

    def with_extra(self, extra_calls: int) -> Limits:
        """A continued run gets extra model and tool calls on top of what was spent."""
        if extra_calls <= 0:
            return self
        return self.model_copy(
            update={
                "model_calls": self.model_calls + extra_calls,
                "tool_calls": self.tool_calls + 2 * extra_calls,
                "tokens": self.tokens + extra_calls * (self.tokens // self.model_calls),
            }
        )


class Budget:
    def __init__(self, limits: Limits, stats: Stats, elapsed_before: float = 0.0) -> None:
        self.limits = limits
        self.stats = stats
        self.elapsed_before = elapsed_before

    def exhausted(self, elapsed: float) -> str | None:
        """The reason the run must stop now, or None."""
        if self.stats.model_calls >= self.limits.model_calls:
            return f"budget exhausted: {self.limits.model_calls} model calls"
        if self.stats.tokens >= self.limits.tokens:
            return (
                f"budget exhausted: {self.limits.tokens:,} tokens "
                f"({self.stats.tokens:,} spent by this investigation)"
            )
        if elapsed >= self.limits.wall_seconds:
            return f"budget exhausted: {self.limits.wall_seconds:.0f} s of wall time"
        return None

    def tool_calls_left(self) -> int:
        return max(0, self.limits.tool_calls - self.stats.tool_calls)

    def phase(self, context_chars: int) -> Phase:
        model_left = self.limits.model_calls - self.stats.model_calls
        if (
            model_left <= 1
            or self.tool_calls_left() == 0
            or context_chars >= self.limits.context_chars
        ):
            return Phase.FINISH
        spent = self.stats.model_calls / self.limits.model_calls
        tools_spent = self.stats.tool_calls / self.limits.tool_calls
        if max(spent, tools_spent) >= self.limits.read_after:
            return Phase.READ
        return Phase.EXPLORE

    def describe(self) -> str:
        return (
            f"Budget: {self.limits.model_calls} model calls "
            f"({self.stats.model_calls} used), {self.limits.tool_calls} tool calls "
            f"({self.stats.tool_calls} used), {self.limits.tokens:,} tokens "
            f"({self.stats.tokens:,} used), {self.limits.wall_seconds:.0f} s of wall time."
        )
