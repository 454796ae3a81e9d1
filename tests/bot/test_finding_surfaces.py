"""The finding (agent/finding/) on recorded incidents of several languages, through the
CLI's path (store, queue, worker, loop, offline investigator): in the JSON document, in the
Slack diagnosis message and in the issue draft, in the incident's language. The proposed
change is checked with real git: it applies to the running revision and brings back what
the suspect commit took out."""

import asyncio
import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent.budget import Limits
from agent.domain import Investigation
from agent.report import labels
from bot.cli import run
from bot.runtime import git_server
from bot.slack.blocks import MAX_BLOCKS, SECTION_CHARS, diagnosis_message, draft_message
from recorded.scenario import clone, load_scenario
from storage.db import create_engine
from storage.store import SqlStore

# Java, Node, Python (a Celery worker), Go, PHP; Spanish and English questions.
NAMES = [
    "orders",
    "node-express-validation",
    "python-celery-worker-no-request",
    "go-index-out-of-range",
    "php-laravel",
]
KINDS = {"python-celery-worker-no-request": "job"}


async def investigate(
    folders: dict[str, Path], tmp: Path
) -> dict[str, tuple[dict, Investigation, Path]]:
    git = git_server()  # one server for every run, as a worker keeps it
    await git.start()
    out = {}
    try:
        for name, folder in folders.items():
            scenario = load_scenario(folder)
            inv = Investigation.open(scenario.question, scenario.scope)
            repo = await clone(scenario, tmp / name)
            url = f"sqlite+aiosqlite:///{tmp / name / 'run.db'}"
            doc = await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
            engine = create_engine(url)
            try:
                out[name] = (doc, await SqlStore(engine).load(doc["investigation_id"]), folder)
            finally:
                await engine.dispose()
    finally:
        await git.aclose()
    return out


@pytest.fixture(scope="module")
def runs(built_scenarios, tmp_path_factory) -> dict[str, tuple[dict, Investigation, Path]]:
    folders = {name: built_scenarios[name] for name in NAMES}
    return asyncio.run(investigate(folders, tmp_path_factory.mktemp("finding")))


def expected(folder: Path) -> dict:
    return json.loads((folder / "expected.json").read_text())


def issue_of(folder: Path) -> dict:
    wanted = expected(folder)["issue_id"]
    issues = json.loads((folder / "sentry" / "issues.json").read_text())
    return next(i for i in issues if str(i["id"]) == str(wanted))


@pytest.mark.parametrize("name", NAMES)
def test_the_json_document_carries_the_finding(runs, name):
    doc, _, folder = runs[name]
    want = expected(folder)
    d = doc["diagnosis"]
    assert doc["status"] == "COMPLETED"
    ids = {ev["id"] for ev in doc["evidence"]}

    change = d["change"]
    assert change["commit"] == want["commit"]
    assert change["path"] == want["fault"]["file"]
    assert change["before"] or change["after"]
    assert set(change["evidence"]) <= ids

    trigger = d["trigger"]
    assert trigger["kind"] == KINDS.get(name, "request")
    assert trigger["entry"]
    assert set(trigger["evidence"]) <= ids

    proposal = d["proposed_change"]
    assert proposal["status"] == "hypothesis"
    assert proposal["path"] == want["fault"]["file"]
    assert proposal["diff"].startswith(f"--- a/{proposal['path']}\n+++ b/{proposal['path']}\n@@ ")

    roles = {(a["role"], a["path"]) for a in d["affected"]}
    assert ("fault", want["fault"]["file"]) in roles
    assert any(path == want["crash"]["file"] for role, path in roles if role in ("crash", "stack"))

    fix = d["fix"]
    assert fix["risk"] in ("low", "medium", "high")
    assert fix["complexity"] in ("low", "medium", "high")
    changed = [x for x in proposal["diff"].splitlines()[3:] if x[:1] in "+-"]
    assert fix["lines_changed"] == len(changed) and fix["files_touched"] == 1 and fix["reasons"]

    factors = d["confidence_factors"]
    assert {f["effect"] for f in factors} <= {"raises", "lowers"}
    assert any(f["factor"] == "release-known" and f["effect"] == "raises" for f in factors)
    assert all(set(f["evidence"]) <= ids for f in factors)

    window = d["window"]
    issue = issue_of(folder)
    assert window["first_seen"].replace("+00:00", "Z")[:19] == issue["firstSeen"][:19]
    assert window["events"] == int(issue["count"])
    assert window["release"] and window["per_hour"] > 0

    assert all(r["id"] != str(issue["id"]) and r["reasons"] for r in d["related_issues"])


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.parametrize("name", NAMES)
def test_the_proposed_change_applies_and_undoes_the_suspect_hunk(runs, name, tmp_path):
    doc, _, folder = runs[name]
    d = doc["diagnosis"]
    proposal, change = d["proposed_change"], d["change"]
    work = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(folder / "repo.bundle"), str(work)], check=True, timeout=60
    )
    git(work, "checkout", "-q", proposal["numbered_at"])
    git(work, "apply", "--check", "-", stdin=proposal["diff"] + "\n")
    git(work, "apply", "-", stdin=proposal["diff"] + "\n")
    text = (work / proposal["path"]).read_text()
    assert all(line in text for line in change["before"])
    if proposal["strategy"] != "restore-removed":
        assert not all(line in text.splitlines() for line in change["after"] if line.strip())


def test_the_input_that_triggers_it(runs):
    orders = runs["orders"][0]["diagnosis"]["trigger"]
    # The legacy client's body has no customerReference, which the failing code reads.
    assert "customerReference" in orders["absent"]
    assert {"name": "client_version", "value": "legacy-1", "source": "tag"}.items() <= next(
        f for f in orders["fields"] if f["name"] == "client_version"
    ).items()
    node = runs["node-express-validation"][0]["diagnosis"]["trigger"]
    assert node["entry"] == "POST /presupuestos" and "items" in node["absent"]
    job = runs["python-celery-worker-no-request"][0]["diagnosis"]
    assert job["trigger"]["entry"] == "tienda.recibos.tareas.enviar_recibo"
    assert any(f["source"] == "job" for f in job["trigger"]["fields"])
    # The job's payload carries customers' e-mail addresses: none reaches the diagnosis.
    assert "@example.com" not in json.dumps(job)
    # A worker's incident is not told to replay a request.
    assert "petici" not in job["recommended_check"]
    assert "peticiones" in runs["orders"][0]["diagnosis"]["recommended_check"]


def test_related_issues_share_frames_or_the_entry_point(runs):
    related = runs["go-index-out-of-range"][0]["diagnosis"]["related_issues"]
    by_id = {r["short_id"]: r for r in related}
    assert any("POST /carts/{id}/items" in x for x in by_id["SHOP-CART-27"]["reasons"])
    assert any("handler" in x for x in by_id["SHOP-CART-1B"]["reasons"])


def all_text(payload: dict) -> str:
    return json.dumps(payload["blocks"], ensure_ascii=False)


@pytest.mark.parametrize("name", NAMES)
def test_the_slack_diagnosis_shows_the_finding_within_slack_limits(runs, name):
    _, inv, _ = runs[name]
    d = inv.diagnosis
    t = labels(inv.scope.language)
    message = diagnosis_message(inv, {})
    text = all_text(message)
    assert len(message["blocks"]) <= MAX_BLOCKS
    for block in message["blocks"]:
        if block["type"] == "section" and "text" in block:
            assert len(block["text"]["text"]) <= SECTION_CHARS
    for label in ("change", "trigger", "proposed", "risk", "affected", "factors", "window"):
        assert t[label] in text or t[label].capitalize() in text, label
    assert d.change.commit in text  # the commit link
    assert d.trigger.entry in text
    assert d.affected[0].path in text
    assert d.proposed_change.diff.splitlines()[3].replace("<", "&lt;")[:60] in text.replace(
        "\\n", "\n"
    ).replace('\\"', '"')
    factor = d.confidence_factors[0].text
    assert factor.replace('"', '\\"')[:40] in text
    for r in d.related_issues:
        assert (r.short_id or r.id) in text


@pytest.mark.parametrize("name", NAMES)
def test_the_draft_shows_the_finding_in_the_incidents_language(runs, name):
    _, inv, _ = runs[name]
    d, body = inv.diagnosis, inv.draft.body
    t = labels(inv.scope.language)
    for label in ("change", "trigger", "proposed", "fix", "affected", "factors", "window"):
        assert f"## {t[label]}" in body, label
    assert all(line in body for line in d.change.before + d.change.after)
    assert d.proposed_change.diff in body
    assert d.proposed_change.rationale in body
    assert all(f.text in body for f in d.confidence_factors)
    assert all(f"`{loc.path}:{loc.line_start}" in body for loc in d.affected)
    assert len(body) <= 65_536
    draft = draft_message(inv)
    assert len(draft["blocks"]) <= MAX_BLOCKS
    other = "en" if inv.scope.language.startswith("es") else "es"
    assert f"## {labels(other)['proposed']}" not in body
    assert inv.scope.language in ("en", "es")


def test_languages_differ_between_fixtures(runs):
    assert {runs[n][1].scope.language for n in NAMES} == {"en", "es"}


def test_a_huge_finding_still_fits_github_and_slack(runs):
    _, inv, _ = runs["orders"]
    d = inv.diagnosis
    big = d.model_copy(
        update={
            "change": d.change.model_copy(
                update={"before": ["x" * 3000] * 200, "after": ["y" * 3000] * 200}
            ),
            "affected": [d.affected[0]] * 400,
        }
    )
    from agent.report import draft_for

    draft = draft_for(inv, big)
    assert len(draft.body) <= 65_536
    assert draft.body.count("```") % 2 == 0
    with tempfile.TemporaryDirectory():
        huge = inv.model_copy(update={"diagnosis": big})
        message = diagnosis_message(huge, {})
    assert len(message["blocks"]) <= MAX_BLOCKS
    assert all(
        len(b["text"]["text"]) <= SECTION_CHARS
        for b in message["blocks"]
        if b["type"] == "section" and "text" in b
    )


async def test_the_model_path_gets_the_finding_and_its_own_is_checked(built_scenarios, tmp_path):
    """A model that finishes without the finding gets it computed from the pre-fetched
    evidence; a quoted change that is not in the evidence it cites is refused first."""
    from agent.models.groq import GroqModel
    from tests.conftest import orders_finish
    from tests.fakes.chat import FakeChat

    folder = built_scenarios["orders"]
    bogus = orders_finish(folder, change={"commit": "835b04b", "path": "x", "before": ["nope"],
                                          "evidence": ["E6"]})  # fmt: skip
    malformed = orders_finish(folder, fix={"risk": "tiny"})
    plain = orders_finish(folder)
    calls = [("finish_investigation", json.dumps(x)) for x in (malformed, bogus, plain)]
    async with FakeChat(api_key="gsk-find") as chat:
        chat.script([{"content": None, "tool_calls": [call]} for call in calls])
        scenario = load_scenario(folder)
        models: list[GroqModel] = []

        def make(_inv: Investigation) -> GroqModel:
            models.append(GroqModel("m", api_key="gsk-find", base_url=chat.base_url))
            return models[-1]

        repo = await clone(scenario, tmp_path)
        try:
            doc = await run(
                scenario, repo, Investigation.open(scenario.question, scenario.scope),
                f"sqlite+aiosqlite:///{tmp_path / 'run.db'}", Limits(), as_json=True,
                model=make, prefetch=True,
            )  # fmt: skip
        finally:
            for m in models:
                await m.aclose()
        refusal = [
            m["content"] for r in chat.requests[1:] for m in r["messages"] if m["role"] == "tool"
        ]
    assert any("malformed finding: fix" in c and "computed from the evidence" in c for c in refusal)
    assert any("change: lines not in" in c for c in refusal)
    d = doc["diagnosis"]
    assert doc["status"] == "COMPLETED"
    assert d["change"]["before"] == ['        value = value == null ? "" : value.strip();']
    assert d["proposed_change"]["status"] == "hypothesis"
    assert "customerReference" in d["trigger"]["absent"]
    assert d["window"]["events"] == 41 and d["confidence_factors"] and d["fix"]
