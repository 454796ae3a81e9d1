"""Workers over the real store and queue: a dead worker's job is taken over and resumed,
and clarifications pause and resume a run. The offline investigator drives the scenario."""

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from agent.domain import Investigation, State, utcnow
from bot.runtime import Runtime
from bot.worker import INVESTIGATE, Worker
from recorded.scenario import clone, load_scenario
from storage.db import create_engine, create_schema
from storage.jobs import SqlJobQueue
from storage.store import SqlStore


class Crash(BaseException):
    """Stands for the process dying: nothing catches it."""


@pytest.fixture
async def bench(db_url):
    engine = create_engine(db_url)
    await create_schema(engine)
    yield engine
    await engine.dispose()


async def start(folder: Path, tmp_path: Path, question: str | None = None):
    scenario = load_scenario(folder)
    repo = await clone(scenario, tmp_path)
    runtime = Runtime.recorded(scenario, repo)
    await runtime.start()
    inv = Investigation.open(question or scenario.question, scenario.scope)
    return scenario, runtime, inv


async def test_a_dead_workers_investigation_is_taken_over_and_finished(
    bench, built_scenarios, tmp_path
):
    _, runtime, inv = await start(built_scenarios["orders"], tmp_path)
    store, jobs = SqlStore(bench), SqlJobQueue(bench)
    await store.create(inv)
    await jobs.enqueue(INVESTIGATE, inv.id)
    saves = 0

    async def dying_loops(inv, save):
        async def save_then_die(i):
            nonlocal saves
            await save(i)
            saves += 1
            if saves == 5:  # after a few pieces of evidence are stored
                raise Crash

        return await runtime.loop_for(inv, save_then_die)

    try:
        with pytest.raises(Crash):
            await Worker(store, jobs, dying_loops, name="w1", lease_seconds=30).run_once()
        half = await store.load(inv.id)
        assert half.state is State.RUNNING and 0 < len(half.evidence) < 7
        # The lease has not expired yet: nobody may take the job.
        assert await SqlJobQueue(bench).claim("w2", 30) is None
        later = SqlJobQueue(bench, clock=lambda: utcnow() + timedelta(seconds=31))
        assert await Worker(store, later, runtime.loop_for, name="w2").run_once()
    finally:
        await runtime.aclose()
    done = await store.load(inv.id)
    assert done.state is State.COMPLETED
    ids = [ev.id for ev in done.evidence]
    assert ids == [f"E{i}" for i in range(1, 8)]  # nothing lost, nothing twice
    tools = [ev.tool for ev in done.evidence]
    assert len(tools) == len(set(tools))
    assert done.diagnosis.suspect.path.endswith("CustomerReference.java")


async def test_a_missing_release_is_asked_for_and_the_answer_resumes(
    bench, built_scenarios, tmp_path
):
    folder = tmp_path / "no-release"
    shutil.copytree(built_scenarios["orders"], folder)
    for events_file in (folder / "sentry" / "events").iterdir():
        events = json.loads(events_file.read_text())
        for event in events:
            event["release"] = None
            event["tags"] = [t for t in event.get("tags", []) if t["key"] != "release"]
        events_file.write_text(json.dumps(events))
    expected = json.loads((folder / "expected.json").read_text())
    _, runtime, inv = await start(folder, tmp_path)
    store, jobs = SqlStore(bench), SqlJobQueue(bench)
    await store.create(inv)
    await jobs.enqueue(INVESTIGATE, inv.id)
    worker = Worker(store, jobs, runtime.loop_for)
    try:
        await worker.run_once()
        waiting = await store.load(inv.id)
        assert waiting.state is State.WAITING_FOR_OPERATOR
        assert "commit" in waiting.pending_question.lower()
        waiting.answer(f"It was {expected['commit']}")
        await store.save(waiting)
        await jobs.enqueue(INVESTIGATE, inv.id)
        await worker.run_once()
    finally:
        await runtime.aclose()
    done = await store.load(inv.id)
    assert done.state is State.COMPLETED
    assert done.diagnosis.suspect.commit == expected["commit"]


async def test_an_ambiguous_question_asks_which_error_and_follows_the_answer(
    bench, built_scenarios, tmp_path
):
    folder = tmp_path / "two-new-errors"
    shutil.copytree(built_scenarios["orders"], folder)
    issues = json.loads((folder / "sentry" / "issues.json").read_text())
    npe = next(i for i in issues if i["id"] == "5755875771")
    other = next(i for i in issues if i["id"] != "5755875771")
    # Both errors are new in the window, and the question names neither.
    other["firstSeen"], other["level"] = npe["firstSeen"], npe["level"]
    (folder / "sentry" / "issues.json").write_text(json.dumps(issues))
    _, runtime, inv = await start(folder, tmp_path, question="¿Qué está pasando?")
    store, jobs = SqlStore(bench), SqlJobQueue(bench)
    await store.create(inv)
    await jobs.enqueue(INVESTIGATE, inv.id)
    worker = Worker(store, jobs, runtime.loop_for)
    try:
        await worker.run_once()
        waiting = await store.load(inv.id)
        assert waiting.state is State.WAITING_FOR_OPERATOR, waiting.diagnosis
        assert other["shortId"] in waiting.pending_question
        waiting.answer(f"la {other['shortId']}, por favor")
        await store.save(waiting)
        await jobs.enqueue(INVESTIGATE, inv.id)
        await worker.run_once()
    finally:
        await runtime.aclose()
    done = await store.load(inv.id)
    assert done.state is State.COMPLETED
    assert other["shortId"] in done.evidence[1].title
