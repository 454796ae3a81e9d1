"""Every scenario investigated offline through the CLI's path (store, queue, worker, loop),
graded as ../shared/scenarios/README.md grades a run."""

import asyncio
import json
import tempfile
from pathlib import Path

import pytest

from agent.budget import Limits
from agent.domain import Draft, Investigation
from bot.cli import run
from bot.runtime import git_server
from recorded.scenario import clone, load_scenario
from tests.conftest import (
    CONTRACT_NOT_YET_FOUND,
    NOT_YET_FOUND,
    not_yet,
    recipes,
    shared_scenarios,
)

NAMES = [p.name for p in shared_scenarios()] + [f"fixture:{r.name}" for r in recipes()]


async def investigate_all(folders: dict[str, Path]) -> dict[str, dict]:
    git = git_server()  # one long-lived server for the whole run, as a worker keeps it
    await git.start()
    docs = {}
    try:
        for name, folder in folders.items():
            scenario = load_scenario(folder)
            inv = Investigation.open(scenario.question, scenario.scope)
            with tempfile.TemporaryDirectory() as tmp:
                repo = await clone(scenario, Path(tmp))
                url = f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
                docs[name] = await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
    finally:
        await git.aclose()
    return docs


@pytest.fixture(scope="module")
def results(built_scenarios) -> dict[str, tuple[dict, dict]]:
    folders = {p.name: p for p in shared_scenarios()}
    folders |= {f"fixture:{r.name}": built_scenarios[r.name] for r in recipes()}
    docs = asyncio.run(investigate_all(folders))
    return {
        name: (docs[name], json.loads((folders[name] / "expected.json").read_text()))
        for name in folders
    }


@pytest.mark.parametrize("name", [not_yet(n, NOT_YET_FOUND, "fault not found yet") for n in NAMES])
def test_the_fault_line_and_commit_are_found(results, name):
    doc, expected = results[name]
    assert doc["status"] == "COMPLETED"
    suspect = doc["diagnosis"]["suspect"]
    first, last = expected["fault"]["lines"]
    assert suspect["path"] == expected["fault"]["file"]
    assert first - 2 <= suspect["line_start"] <= last + 2
    assert suspect["commit"] == expected["commit"]


@pytest.mark.parametrize(
    "name", [not_yet(n, CONTRACT_NOT_YET_FOUND, "contract doc not found yet") for n in NAMES]
)
def test_facts_cite_evidence_and_the_contract_doc(results, name):
    doc, expected = results[name]
    ids = [ev["id"] for ev in doc["evidence"]]
    assert ids == [f"E{i}" for i in range(1, len(ids) + 1)]
    facts = doc["diagnosis"]["facts"]
    assert facts and all(f["evidence"] and set(f["evidence"]) <= set(ids) for f in facts)
    if expected["contract_doc"]:
        cited = {e for f in facts for e in f["evidence"]}
        docs = [ev for ev in doc["evidence"] if ev["source"] == "docs"]
        assert any(ev["path"] == expected["contract_doc"] and ev["id"] in cited for ev in docs)
    assert doc["diagnosis"]["hypotheses"] and doc["diagnosis"]["uncertainties"]
    assert doc["diagnosis"]["recommended_check"]


@pytest.mark.parametrize("name", NAMES)
def test_the_draft_is_bound_to_its_text_and_the_run_is_cheap(results, name):
    doc, _ = results[name]
    draft = doc["draft"]
    scope_repo = load_repo(doc)
    assert draft["version"] == 1
    assert draft["hash"] == Draft.compute_hash(scope_repo, draft["title"], draft["body"])
    assert doc["diagnosis"]["suspect"]["path"] in draft["body"]
    assert doc["stats"]["tool_calls"] <= 8 and doc["stats"]["model_calls"] <= 8
    code = [ev for ev in doc["evidence"] if ev["source"] == "code" and ev["link"]]
    assert code and all(ev["revision"] in ev["link"] for ev in code)  # pinned to the SHA


def load_repo(doc: dict) -> str:
    link = next(ev["link"] for ev in doc["evidence"] if ev["source"] == "code" and ev["link"])
    return "/".join(link.split("/")[3:5])


def test_the_answer_is_in_the_scenarios_language(results):
    for name, (doc, _) in results.items():
        if name in ("orders-npe", "fixture:orders"):
            assert "La incidencia de Sentry" in doc["diagnosis"]["facts"][0]["text"]
            assert "## Resumen" in doc["draft"]["body"]
