"""Operating the bot: /healthz, /readyz and Prometheus metrics at /metrics.

What the database knows (investigations by state, publications by outcome, the queue's
depth and the age of its oldest job) is read at each scrape, so every process of a
deployment reports the same; what happens in this process (investigations finished,
their duration, tool calls and their latency, model tokens, Slack API errors and
retries) is counted as it happens. No label carries a secret or free text.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.domain import Investigation, State
from agent.ports import ToolResult, Toolset, ToolSpec
from storage import tables

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()
INVESTIGATIONS = Gauge(
    "incident_bot_investigations",
    "Investigations in the database, by state",
    ["state"],
    registry=REGISTRY,
)
PUBLICATIONS = Gauge(
    "incident_bot_publications",
    "Approved drafts in the database, by outcome (published, unknown, queued)",
    ["outcome"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge(
    "incident_bot_queue_depth", "Jobs waiting to be claimed, by kind", ["kind"], registry=REGISTRY
)
QUEUE_OLDEST = Gauge(
    "incident_bot_queue_oldest_seconds",
    "Age of the oldest job waiting to be claimed (0 when none waits)",
    registry=REGISTRY,
)
FINISHED = Counter(
    "incident_bot_investigations_finished",
    "Investigation runs of this process that ended, by state and confidence",
    ["state", "confidence"],
    registry=REGISTRY,
)
DURATION = Histogram(
    "incident_bot_investigation_seconds",
    "Wall time of one investigation run in this process",
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
    registry=REGISTRY,
)
TOOL_CALLS = Counter(
    "incident_bot_tool_calls",
    "Tool calls, by tool and outcome",
    ["tool", "outcome"],
    registry=REGISTRY,
)
TOOL_SECONDS = Histogram(
    "incident_bot_tool_seconds", "Latency of one tool call, by tool", ["tool"], registry=REGISTRY
)
TOKENS = Counter(
    "incident_bot_model_tokens",
    "Model tokens spent, by direction",
    ["direction"],
    registry=REGISTRY,
)
SLACK_ERRORS = Counter(
    "incident_bot_slack_api_errors",
    "Slack Web API answers that were errors, by HTTP status (0: no answer)",
    ["status"],
    registry=REGISTRY,
)
SLACK_RETRIES = Counter(
    "incident_bot_slack_api_retries",
    "Slack Web API calls sent again",
    ["reason"],
    registry=REGISTRY,
)
_ENDED = (State.COMPLETED, State.STOPPED, State.WAITING_FOR_OPERATOR)
_PUBLICATION = {
    State.PUBLISHED: "published",
    State.PUBLISH_UNKNOWN: "unknown",
    State.PUBLISH_QUEUED: "queued",
}


class Timed:
    """A toolset whose calls are counted and timed, by qualified tool name."""

    def __init__(self, inner: Toolset) -> None:
        self.name = inner.name
        self.inner = inner

    @property
    def pinned(self) -> dict[str, Any]:
        pinned = getattr(self.inner, "pinned", None)
        return pinned if isinstance(pinned, dict) else {}

    async def get_tools(self) -> list[ToolSpec]:
        return await self.inner.get_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = f"{self.name}__{name}"
        started = time.perf_counter()
        outcome = "exception"
        try:
            result = await self.inner.call_tool(name, arguments)
            outcome = "error" if result.is_error else "ok"
            return result
        finally:
            TOOL_SECONDS.labels(tool).observe(time.perf_counter() - started)
            TOOL_CALLS.labels(tool, outcome).inc()


def observed(
    save: Callable[[Investigation], Awaitable[None]],
) -> Callable[[Investigation], Awaitable[None]]:
    """The loop's `save`, counting the run's tokens and how it ended."""
    started = time.perf_counter()
    tokens = {"input": -1, "output": -1}
    done = False

    async def save_and_count(inv: Investigation) -> None:
        nonlocal done
        await save(inv)
        for direction, now in (
            ("input", inv.stats.input_tokens),
            ("output", inv.stats.output_tokens),
        ):
            if tokens[direction] < 0:
                tokens[direction] = now  # what earlier runs of it spent is counted already
            elif now > tokens[direction]:
                TOKENS.labels(direction).inc(now - tokens[direction])
                tokens[direction] = now
        if not done and inv.state in _ENDED:
            done = True
            confidence = inv.diagnosis.confidence if inv.diagnosis else "none"
            FINISHED.labels(inv.state.value, confidence).inc()
            DURATION.observe(time.perf_counter() - started)

    return save_and_count


class _Observer:
    """First of the Slack client's retry handlers: sees every answer, retries nothing."""

    max_retry_count = 0

    async def can_retry_async(
        self, *, state: Any, request: Any, response: Any = None, error: Any = None
    ) -> bool:
        if error is not None:
            SLACK_ERRORS.labels("0").inc()
        elif response is not None and (
            response.status_code >= 400 or (response.body or {}).get("ok") is False
        ):
            SLACK_ERRORS.labels(str(response.status_code)).inc()
        return False

    async def prepare_for_next_attempt_async(self, **_: Any) -> None:  # never asked
        return None


class _Counting:
    """A retry handler of the client, counting the retries it decides by what they follow:
    a rate limit, a server error or a connection that failed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def can_retry_async(self, **kwargs: Any) -> bool:
        return bool(await self.inner.can_retry_async(**kwargs))

    async def prepare_for_next_attempt_async(self, **kwargs: Any) -> None:
        response = kwargs.get("response")
        if response is None:
            reason = "ConnectionError"
        else:
            reason = "RateLimitError" if response.status_code == 429 else "ServerError"
        SLACK_RETRIES.labels(reason).inc()
        await self.inner.prepare_for_next_attempt_async(**kwargs)


def instrument_slack(client: AsyncWebClient) -> AsyncWebClient:
    handlers = [_Counting(h) for h in client.retry_handlers or []]
    client.retry_handlers = [_Observer(), *handlers]  # type: ignore[list-item]
    return client


async def read_database(engine: AsyncEngine) -> None:
    """Set the gauges from what the database holds now."""
    async with engine.connect() as conn:
        states = dict(
            (
                await conn.execute(
                    select(tables.investigations.c.state, func.count()).group_by(
                        tables.investigations.c.state
                    )
                )
            ).all()
        )
        waiting = (
            await conn.execute(
                select(tables.jobs.c.kind, func.count(), func.min(tables.jobs.c.created_at))
                .where(tables.jobs.c.status == "queued")
                .group_by(tables.jobs.c.kind)
            )
        ).all()
    for state in State:
        INVESTIGATIONS.labels(state.value).set(states.get(state.value, 0))
    for state, outcome in _PUBLICATION.items():
        PUBLICATIONS.labels(outcome).set(states.get(state.value, 0))
    for kind in ("investigate", "publish"):
        QUEUE_DEPTH.labels(kind).set(0)
    oldest = None
    for kind, count, first in waiting:
        QUEUE_DEPTH.labels(kind).set(count)
        if first is not None and (oldest is None or first < oldest):
            oldest = first
    from agent.domain import utcnow

    QUEUE_OLDEST.set(max(0.0, (utcnow() - oldest).total_seconds()) if oldest else 0.0)


def add_routes(
    app: web.Application, engine: AsyncEngine, ready: Callable[[], dict[str, str | None]]
) -> None:
    """/healthz (the process answers), /readyz (the database answers and every project's
    sources started: 503 with what is not ready), /metrics (Prometheus text format)."""

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(_request: web.Request) -> web.Response:
        problems: dict[str, Any] = {}
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            database = "ok"
        except Exception as exc:
            database = f"unreachable: {type(exc).__name__}"
            problems["database"] = database
        sources = {key: why or "ok" for key, why in ready().items()}
        problems |= {f"sources:{k}": v for k, v in sources.items() if v != "ok"}
        body = {
            "status": "ok" if not problems else "not ready",
            "database": database,
            "sources": sources,
        }
        return web.json_response(body, status=200 if not problems else 503)

    async def metrics(_request: web.Request) -> web.Response:
        try:
            await read_database(engine)
        except Exception:
            log.warning("the metrics could not read the database", exc_info=True)
        return web.Response(
            body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
