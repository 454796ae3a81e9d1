"""`incident-bot`: investigate a recorded incident, or run the bundled demo.

The CLI goes through the same store, queue and worker as the Slack app: it
stores the request, a worker claims it, and the terminal follows the store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent.budget import Limits
from agent.domain import Investigation, State
from agent.errors import InputError
from agent.ports import Model
from bot.recorded import Scenario, clone, load_scenario

EXIT_INPUT = 2
ModelFactory = Callable[[Investigation], Model]
SETTLED = {State.COMPLETED, State.STOPPED, State.WAITING_FOR_OPERATOR}
DEMO_RECIPE = Path(__file__).parent / "demo" / "orders"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="incident-bot", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    inv = sub.add_parser("investigate", help="investigate a recorded incident")
    inv.add_argument("--scenario", required=True, type=Path, help="a scenario folder")
    inv.add_argument("--offline", action="store_true", help="use the offline investigator")
    inv.add_argument("--json", action="store_true", help="print one JSON document")
    inv.add_argument("--question", help="ask this instead of the scenario's question")
    inv.add_argument("--max-model-calls", type=int, default=Limits().model_calls)
    inv.add_argument("--max-tool-calls", type=int, default=Limits().tool_calls)
    sub.add_parser("demo", help="investigate the bundled orders incident, offline")
    srv = sub.add_parser("serve", help="run the Slack app with its workers")
    srv.add_argument("--scenario", type=Path, help="serve this recorded incident as the project")
    srv.add_argument("--offline", action="store_true", help="use the offline investigator")
    srv.add_argument("--http", action="store_true", help="HTTP mode (default: Socket Mode)")
    srv.add_argument("--port", type=int, default=3000)
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--workers", type=int, default=1)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "WARNING"), stream=sys.stderr)
    try:
        if args.command == "demo":
            return asyncio.run(demo())
        if args.command == "serve":
            from bot.serve import Options, serve

            options = Options(
                scenario=args.scenario,
                offline=args.offline,
                http=args.http,
                port=args.port,
                host=args.host,
                workers=args.workers,
            )
            asyncio.run(serve(options))
            return 0
        limits = Limits(model_calls=args.max_model_calls, tool_calls=args.max_tool_calls)
        model = None if args.offline else groq_from_env(os.environ)
        return asyncio.run(
            investigate(
                args.scenario,
                as_json=args.json,
                question=args.question,
                limits=limits,
                model=model,
            )
        )
    except InputError as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130


DEFAULT_MODEL = "llama-3.3-70b-versatile"


def groq_from_env(environ: Mapping[str, str]) -> ModelFactory:
    """The configured chat model: Groq by default, or any chat-completions server."""
    key = environ.get("GROQ_API_KEY", "").strip()
    if not key:
        raise InputError("GROQ_API_KEY is not set (or pass --offline for the offline investigator)")
    name = environ.get("INCIDENT_BOT_MODEL", DEFAULT_MODEL)
    base_url = environ.get("GROQ_BASE_URL") or None

    def make(_inv: Investigation) -> Model:
        from agent.models.groq import GroqModel

        return GroqModel(name, api_key=key, base_url=base_url)

    return make


async def demo() -> int:
    from bot.scenarios import build_scenario

    with tempfile.TemporaryDirectory(prefix="incident-bot-demo-") as tmp:
        folder = await asyncio.to_thread(build_scenario, DEMO_RECIPE, Path(tmp) / "orders")
        return await investigate(folder, as_json=False, question=None, limits=Limits())


async def investigate(
    folder: Path,
    *,
    as_json: bool,
    question: str | None,
    limits: Limits,
    model: ModelFactory | None = None,
) -> int:
    # Everything is checked before anything is stored: bad input leaves nothing behind.
    scenario = load_scenario(folder)
    inv = Investigation.open(
        question if question is not None else scenario.question,
        scenario.scope,
        requester=os.environ.get("USER"),
    )
    with tempfile.TemporaryDirectory(prefix="incident-bot-") as tmp:
        repo = await clone(scenario, Path(tmp))
        url = os.environ.get("DATABASE_URL") or f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
        doc = await run(scenario, repo, inv, url, limits, as_json=as_json, model=model)
    if as_json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    return 0


async def run(
    scenario: Scenario,
    repo: Path,
    inv: Investigation,
    url: str,
    limits: Limits,
    *,
    as_json: bool,
    git: Any = None,
    model: ModelFactory | None = None,
) -> dict[str, Any]:
    """Store the request, let a worker run it, follow it; `git` may be a shared server."""
    # Imported here so that bad input is refused before the slow MCP imports.
    from bot import render
    from bot.runtime import ScenarioRuntime
    from bot.worker import INVESTIGATE, Worker
    from storage.db import create_engine, create_schema
    from storage.jobs import SqlJobQueue
    from storage.store import SqlStore

    engine = create_engine(url)
    # A --json run has nobody to answer a question: the investigation goes on without.
    can_ask = not as_json and sys.stdin.isatty()
    runtime = ScenarioRuntime(scenario, repo, limits=limits, git=git, model=model, can_ask=can_ask)
    console = None if as_json else render.console()
    try:
        starting = asyncio.create_task(runtime.start())
        await create_schema(engine)
        store, jobs = SqlStore(engine), SqlJobQueue(engine)
        await store.create(inv)
        await jobs.enqueue(INVESTIGATE, inv.id)
        if console:
            render.header(console, inv)
        await starting
        worker = Worker(store, jobs, runtime.loop_for)
        stop = asyncio.Event()
        working = asyncio.create_task(worker.run_forever(stop))
        try:
            inv = await follow(store, jobs, inv.id, console, working)
        finally:
            stop.set()
            await working
        if console:
            render.ending(console, inv)
        return document(inv)
    finally:
        with contextlib.suppress(Exception):
            await runtime.aclose()
        await engine.dispose()


async def follow(
    store: Any, jobs: Any, inv_id: str, console: Any, working: asyncio.Task
) -> Investigation:
    """Show evidence as it is stored, until the investigation settles."""
    from bot import render
    from bot.worker import INVESTIGATE

    shown = 0
    while True:
        state, _ = await store.state_of(inv_id)
        for ev in await store.evidence_after(inv_id, shown):
            shown += 1
            if console:
                render.card(console, ev)
        if state in SETTLED:
            inv = await store.load(inv_id)
            if state is State.WAITING_FOR_OPERATOR and console and sys.stdin.isatty():
                answer = render.ask(console, inv)
                if answer:
                    inv.answer(answer)
                    await store.save(inv)
                    await jobs.enqueue(INVESTIGATE, inv_id)
                    continue
            return inv
        if working.done():
            working.result()  # the worker died: surface why
            raise RuntimeError("the worker stopped before the investigation settled")
        await asyncio.sleep(0.01)


def document(inv: Investigation) -> dict[str, Any]:
    """The JSON document of ../shared/scenarios/README.md."""
    return {
        "investigation_id": inv.id,
        "status": inv.state.value,
        "question": inv.question,
        "stop_reason": inv.stop_reason,
        "pending_question": inv.pending_question,
        "diagnosis": inv.diagnosis.model_dump(mode="json") if inv.diagnosis else None,
        "evidence": [ev.card() for ev in inv.evidence],
        "draft": inv.draft.model_dump(mode="json") if inv.draft else None,
        "stats": inv.stats.model_dump(mode="json"),
    }


if __name__ == "__main__":
    sys.exit(main())
