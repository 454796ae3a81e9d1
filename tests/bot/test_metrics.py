"""/healthz, /readyz and /metrics on a real aiohttp server over a real database."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import generate_latest

from agent.ports import ToolResult, ToolSpec
from bot import metrics
from storage.db import create_engine, create_schema


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def test_readyz_says_what_is_not_ready_and_healthz_only_that_it_answers(
    tmp_path: Path,
) -> None:
    good = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'ok.db'}")
    await create_schema(good)
    # A database file in a folder that does not exist cannot be opened.
    gone = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'x.db'}")
    state: dict[str, str | None] = {"orders": "starting"}
    app_ok, app_gone = web.Application(), web.Application()
    metrics.add_routes(app_ok, good, lambda: dict(state))
    metrics.add_routes(app_gone, gone, dict)
    runner_ok, ok = await serve(app_ok)
    runner_gone, bad = await serve(app_gone)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{ok}/readyz") as r:
                assert r.status == 503
                assert (await r.json())["sources"] == {"orders": "starting"}
            state["orders"] = None
            async with http.get(f"{ok}/readyz") as r:
                assert r.status == 200 and (await r.json())["database"] == "ok"
            async with http.get(f"{bad}/readyz") as r:
                assert r.status == 503
                assert (await r.json())["database"].startswith("unreachable")
            async with http.get(f"{bad}/healthz") as r:
                assert r.status == 200  # alive, even if not ready
            async with http.get(f"{ok}/metrics") as r:
                assert r.status == 200 and r.content_type == "text/plain"
                assert 'incident_bot_queue_depth{kind="investigate"} 0.0' in await r.text()
    finally:
        await runner_ok.cleanup()
        await runner_gone.cleanup()
        await good.dispose()
        await gone.dispose()


async def test_tool_calls_are_counted_and_timed_by_outcome() -> None:
    class Tools:
        name = "code"
        pinned = {"repo_path": "/srv/x"}  # noqa: RUF012

        async def get_tools(self) -> list[ToolSpec]:
            return [ToolSpec(name="git_grep")]

        async def call_tool(self, name: str, arguments: dict) -> ToolResult:
            if arguments.get("boom"):
                raise RuntimeError("lost")
            error = bool(arguments.get("bad"))
            return ToolResult(text="x", title="x", source="code", is_error=error)

    timed = metrics.Timed(Tools())
    assert timed.pinned == {"repo_path": "/srv/x"} and timed.name == "code"
    before = generate_latest(metrics.REGISTRY).decode()
    await timed.call_tool("git_grep", {})
    await timed.call_tool("git_grep", {"bad": True})
    with pytest.raises(RuntimeError):
        await timed.call_tool("git_grep", {"boom": True})
    after = generate_latest(metrics.REGISTRY).decode()
    for outcome in ("ok", "error", "exception"):
        line = f'incident_bot_tool_calls_total{{outcome="{outcome}",tool="code__git_grep"}}'
        assert _value(after, line) == _value(before, line) + 1


def _value(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0
