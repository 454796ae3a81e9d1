"""Faults of the recorded Sentry behind a runtime's one project, swapped in for a test (the
runtime lives as long as the test's app): an outage on one call, or calls held at a gate."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.errors import SourceUnavailable
from bot.runtime import Runtime


def recording(runtime: Runtime) -> Any:
    """The recorded Sentry export behind the one project's pins."""
    (sources,) = runtime.projects.values()
    return sources.sentry.inner  # type: ignore[attr-defined]


def outage_on_call(runtime: Runtime, n: int = 2, reason: str = "Sentry answered 503") -> None:
    """The `n`-th call fails as an outage does (SourceUnavailable); the others answer."""
    sentry = recording(runtime)
    healthy = sentry.call_tool
    calls = 0

    async def flaky(name: str, arguments: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        if calls == n:
            raise SourceUnavailable(reason)
        return await healthy(name, arguments)

    sentry.call_tool = flaky


def held_calls(runtime: Runtime) -> asyncio.Event:
    """Every call waits until the returned event is set: the runs stay at work."""
    sentry = recording(runtime)
    healthy = sentry.call_tool
    gate = asyncio.Event()

    async def held(name: str, arguments: dict[str, Any]) -> Any:
        await gate.wait()
        return await healthy(name, arguments)

    sentry.call_tool = held
    return gate
