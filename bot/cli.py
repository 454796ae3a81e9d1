"""`incident-bot`: investigate a recorded incident, or run the bundled demo.

The CLI goes through the same store, queue and worker as the Slack app: it
stores the request, a worker claims it, and the terminal follows the store.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent.budget import Limits
from agent.domain import Investigation, State
from agent.errors import InputError
from agent.locale import answer_language
from agent.ports import Model
from recorded.scenario import Scenario, clone, load_scenario

EXIT_INPUT = 2
ModelFactory = Callable[[Investigation], Model]
SETTLED = {State.COMPLETED, State.STOPPED, State.WAITING_FOR_OPERATOR}
LIVE = {State.QUEUED, State.RUNNING, State.WAITING_FOR_OPERATOR}
DEMO_RECIPE = Path(__file__).parent / "demo" / "orders"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="incident-bot", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    inv = sub.add_parser(
        "investigate", help="investigate a configured project's live sources, or a recording"
    )
    what = inv.add_mutually_exclusive_group(required=True)
    what.add_argument("--scenario", type=Path, help="a recorded incident's folder")
    what.add_argument(
        "--project", help="a project of the projects file (INCIDENT_BOT_CONFIG), read live"
    )
    inv.add_argument("asked", nargs="?", metavar="QUESTION", help="the question (with --project)")
    inv.add_argument("--offline", action="store_true", help="use the offline investigator")
    inv.add_argument("--json", action="store_true", help="print one JSON document")
    inv.add_argument("--question", help="ask this instead of the scenario's question")
    inv.add_argument("--max-model-calls", type=int, default=Limits().model_calls)
    inv.add_argument("--max-tool-calls", type=int, default=Limits().tool_calls)
    inv.add_argument(
        "--max-tokens",
        type=int,
        help="tokens this investigation may spend (default: INCIDENT_BOT_MAX_TOKENS, "
        f"else {Limits().tokens:,})",
    )
    inv.add_argument(
        "--tokens-per-day",
        type=int,
        help="tokens all investigations of the database may spend per UTC day "
        "(default: INCIDENT_BOT_TOKENS_PER_DAY, else no limit)",
    )
    inv.add_argument(
        "--no-prefetch",
        dest="prefetch",
        action="store_false",
        default=None,
        help="let the model discover everything itself (default: INCIDENT_BOT_PREFETCH, on)",
    )
    inv.add_argument(
        "--no-repo-map",
        dest="repo_map",
        action="store_false",
        default=None,
        help="give the model no map of the repository (default: INCIDENT_BOT_REPO_MAP, on)",
    )
    inv.add_argument("--language", help="answer in this language (default: the project's)")
    inv.add_argument(
        "--idempotency-key",
        help="run this request once: the same key again follows the same investigation "
        "(with a DATABASE_URL shared between runs)",
    )
    sub.add_parser("demo", help="investigate the bundled orders incident, offline")
    srv = sub.add_parser("serve", help="run the Slack app with its workers")
    srv.add_argument("--scenario", type=Path, help="serve this recorded incident as the project")
    srv.add_argument("--offline", action="store_true", help="use the offline investigator")
    srv.add_argument("--http", action="store_true", help="HTTP mode (default: Socket Mode)")
    srv.add_argument("--port", type=int, default=3000)
    srv.add_argument("--host", default="127.0.0.1")
    workers = srv.add_mutually_exclusive_group()
    workers.add_argument("--workers", type=int, default=1, help="workers in this process")
    workers.add_argument(
        "--no-workers",
        dest="workers",
        action="store_const",
        const=0,
        help="the web front only: `incident-bot worker` processes do the work",
    )
    wrk = sub.add_parser(
        "worker", help="run workers and the thread sync only, on the database of a serve"
    )
    wrk.add_argument("--scenario", type=Path, help="serve this recorded incident as the project")
    wrk.add_argument("--offline", action="store_true", help="use the offline investigator")
    wrk.add_argument("--workers", type=int, default=1, help="workers in this process")
    for command in (srv, wrk):
        command.add_argument(
            "--log-format",
            choices=("plain", "json"),
            default="plain",
            help="json: one JSON object per line, with the investigation id of its job",
        )
        command.add_argument(
            "--lease-seconds",
            type=float,
            help="how long a job stays with a worker that stopped answering "
            "(default: INCIDENT_BOT_LEASE_SECONDS, else 30)",
        )
    sub.add_parser(
        "check",
        help="check the setup: Slack, and each project's channels, Sentry, code, docs, GitHub",
    )
    sub.add_parser(
        "migrate",
        help="bring the database (DATABASE_URL, else ./incident-bot.db) to this version's schema",
    )
    add_export_corpus(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from bot import logs

    # Every line scrubbed of the environment's secret values, whoever writes it.
    logs.configure(
        os.environ.get("LOG_LEVEL", "WARNING"), getattr(args, "log_format", "plain"), os.environ
    )
    try:
        if args.command == "demo":
            return asyncio.run(demo())
        if args.command == "export-corpus":
            return export_corpus_command(args)
        if args.command == "check":
            from bot.check import check

            return asyncio.run(check())
        if args.command == "migrate":
            return asyncio.run(migrate())
        if args.command in ("serve", "worker"):
            from bot.serve import Options, serve

            listen = args.command == "serve"
            options = Options(
                scenario=args.scenario,
                offline=args.offline,
                http=args.http if listen else False,
                port=args.port if listen else 0,
                host=args.host if listen else "127.0.0.1",
                workers=args.workers,
                listen=listen,
                lease_seconds=args.lease_seconds,
            )
            asyncio.run(serve(options))
            return 0
        from bot import llm

        tokens = llm.token_limits_from_env(os.environ)
        if args.max_tokens is not None:
            tokens["tokens"] = args.max_tokens
        if args.tokens_per_day is not None:
            tokens["tokens_per_day"] = args.tokens_per_day
        try:
            limits = Limits(
                model_calls=args.max_model_calls, tool_calls=args.max_tool_calls, **tokens
            )
        except ValueError as exc:
            raise InputError(f"a limit is out of range: {exc}") from None
        model = None if args.offline else llm.groq_from_env(os.environ)
        if args.project is not None:
            if args.question is not None and args.asked is not None:
                raise InputError("give the question once (QUESTION or --question)")
            return asyncio.run(
                investigate_project(
                    args.project,
                    args.asked if args.asked is not None else args.question,
                    as_json=args.json,
                    limits=limits,
                    model=model,
                    extract_model=None if args.offline else llm.extract_from_env(os.environ),
                    prefetch=llm.prefetch_from_env(os.environ) if args.prefetch is None else False,
                    language=args.language,
                    idempotency_key=args.idempotency_key,
                )
            )
        if args.asked is not None:
            if args.question is not None:
                raise InputError("give the question once (QUESTION or --question)")
            args.question = args.asked
        return asyncio.run(
            investigate(
                args.scenario,
                as_json=args.json,
                question=args.question,
                limits=limits,
                model=model,
                extract_model=None if args.offline else llm.extract_from_env(os.environ),
                prefetch=llm.prefetch_from_env(os.environ) if args.prefetch is None else False,
                repo_map=llm.repo_map_from_env(os.environ) if args.repo_map is None else False,
                language=args.language,
                idempotency_key=args.idempotency_key,
            )
        )
    except InputError as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130


async def migrate() -> int:
    """`incident-bot migrate`: the schema of DATABASE_URL (else ./incident-bot.db) to head."""
    from storage.db import create_engine, migrate_database, url_from_env

    engine = create_engine(url_from_env(os.environ, Path.cwd()))
    try:
        print(await migrate_database(engine))
    finally:
        await engine.dispose()
    return 0


async def demo() -> int:
    from recorded.build import build_scenario

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
    idempotency_key: str | None = None,
    extract_model: ModelFactory | None = None,
    prefetch: bool = True,
    language: str | None = None,
    repo_map: bool = True,
) -> int:
    # Everything is checked before anything is stored: bad input leaves nothing behind.
    scenario = load_scenario(folder)
    asked = question if question is not None else scenario.question
    # The operator's language: theirs if named, else the project's, else the question's.
    scope = scenario.scope.model_copy(
        update={
            "language": answer_language(language, scenario.raw.get("language"), asked),
        }
    )
    inv = Investigation.open(asked, scope, requester=os.environ.get("USER"))
    with tempfile.TemporaryDirectory(prefix="incident-bot-") as tmp:
        repo = await clone(scenario, Path(tmp))
        url = os.environ.get("DATABASE_URL") or f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
        doc = await run(
            scenario,
            repo,
            inv,
            url,
            limits,
            as_json=as_json,
            model=model,
            idempotency_key=idempotency_key,
            extract_model=extract_model,
            prefetch=prefetch,
            repo_map=repo_map,
        )
    if as_json:
        print(json.dumps(doc, ensure_ascii=False, indent=2))
    return 0


async def investigate_project(
    key: str,
    question: str | None,
    *,
    as_json: bool,
    limits: Limits,
    model: ModelFactory | None = None,
    extract_model: ModelFactory | None = None,
    prefetch: bool = True,
    language: str | None = None,
    idempotency_key: str | None = None,
) -> int:
    """`investigate --project KEY "question"`: the project's live sources, as `serve` reads
    them (bot/sources.py), over the last `window_hours`; the same document as a recording."""
    from agent.domain import default_window, utcnow
    from bot.config import Projects, Settings
    from bot.mcp_servers import load_servers
    from bot.sources import live_runtime

    settings = Settings()
    if settings.incident_bot_config is None:
        raise InputError("--project needs INCIDENT_BOT_CONFIG, the projects file")
    projects = Projects.load(settings.incident_bot_config)
    project = projects.projects.get(key)
    if project is None:
        known = ", ".join(sorted(projects.projects)) or "none"
        raise InputError(f"unknown project `{key}` (projects: {known})")
    if question is None or not question.strip():
        raise InputError('ask a question: investigate --project KEY "what happened?"')
    servers = load_servers(settings.incident_bot_config)
    now = utcnow()
    scope = project.scope(*default_window(now, project.window_hours), asked_at=now)
    scope = scope.model_copy(
        update={"language": answer_language(language, project.language, question)}
    )
    inv = Investigation.open(question, scope, requester=os.environ.get("USER"))
    only = Projects(projects={key: project})  # its sources only: nothing else is started

    async def make(ledger: Any, can_ask: bool) -> Any:
        return await live_runtime(
            only,
            servers,
            settings.incident_bot_data_dir,
            limits=limits,
            model=model,
            extract_model=extract_model,
            prefetch=prefetch,
            ledger=ledger,
            can_ask=can_ask,
        )

    with tempfile.TemporaryDirectory(prefix="incident-bot-") as tmp:
        url = settings.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
        doc = await run_with(make, inv, url, as_json=as_json, idempotency_key=idempotency_key)
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
    idempotency_key: str | None = None,
    extract_model: ModelFactory | None = None,
    prefetch: bool = True,
    repo_map: bool = True,
) -> dict[str, Any]:
    """Store the request, let a worker run it, follow it; `git` may be a shared server."""
    from bot.runtime import Runtime

    def make(ledger: Any, can_ask: bool) -> Runtime:
        return Runtime.recorded(
            scenario,
            repo,
            limits=limits,
            git=git,
            model=model,
            can_ask=can_ask,
            extract_model=extract_model,
            prefetch=prefetch,
            repo_map=repo_map,
            ledger=ledger,
        )

    return await run_with(make, inv, url, as_json=as_json, idempotency_key=idempotency_key)


async def run_with(
    make_runtime: Callable[[Any, bool], Any],
    inv: Investigation,
    url: str,
    *,
    as_json: bool,
    idempotency_key: str | None = None,
) -> dict[str, Any]:
    """Store the request, let a worker run it over the runtime `make_runtime(ledger,
    can_ask)` builds, and follow it until it settles."""
    # Imported here so that bad input is refused before the slow MCP imports.
    from bot import render
    from bot.usecases.intake import open_once
    from bot.worker import Worker
    from storage.db import create_engine, open_database
    from storage.idempotency import SqlIdempotency
    from storage.jobs import SqlJobQueue
    from storage.store import SqlStore

    engine = create_engine(url)
    store, jobs = SqlStore(engine), SqlJobQueue(engine)
    # A --json run has nobody to answer a question: the investigation goes on without.
    can_ask = not as_json and sys.stdin.isatty()
    console = None if as_json else render.console()
    starting: asyncio.Task[None] | None = None
    try:
        await open_database(engine)
        # The daily token budget is a query over stored counts.
        runtime = make_runtime(store, can_ask)
        if inspect.isawaitable(runtime):
            runtime = await runtime
        # The request the key stands for: the question, the scope and who asks.
        request = {
            "surface": "cli",
            "question": inv.question,
            "scope": inv.scope.model_dump(mode="json"),
            "requester": inv.requester,
        }
        inv, fresh = await open_once(
            store, jobs, SqlIdempotency(engine), inv, idempotency_key, request
        )
        if console:
            render.header(console, inv)
        if not fresh and inv.state not in LIVE:
            # The key names a run that is over: show it, start nothing.
            for ev in inv.evidence if console else []:
                render.card(console, ev)
        else:
            starting = asyncio.create_task(runtime.start())  # not after a refusal
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
        if starting is not None:
            with contextlib.suppress(Exception):
                await starting
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


def add_export_corpus(sub: Any) -> None:
    exp = sub.add_parser(
        "export-corpus",
        help="copy docs/ of one commit of a repository, with a manifest, for the docs index",
    )
    exp.add_argument("--repo", required=True, type=Path, help="a git repository (bare or not)")
    exp.add_argument("--rev", required=True, help="the commit (SHA, branch or tag) to export")
    exp.add_argument("--out", required=True, type=Path, help="the folder to write")
    exp.add_argument("--docs-dir", default="docs", help="the folder to copy (default: docs)")


def export_corpus_command(args: argparse.Namespace) -> int:
    """`incident-bot export-corpus`: docs of a commit (from git, not the work tree) + manifest."""
    from search.corpus import CorpusError
    from search.export import export_corpus

    try:
        manifest = asyncio.run(export_corpus(args.repo, args.rev, args.out, args.docs_dir))
    except CorpusError as exc:
        print(f"incident-bot: {exc}", file=sys.stderr)
        return EXIT_INPUT
    print(
        f"exported {len(manifest.files)} file(s) of {manifest.docs_dir}/ at "
        f"{manifest.revision} to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
