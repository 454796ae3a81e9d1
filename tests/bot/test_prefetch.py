"""The deterministic pre-fetch, through the real runtime (git over MCP, the recorded Sentry,
the docs index, SQLite) and the real groq SDK against FakeChat; and the CLI's model flags."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from agent.budget import Limits
from agent.domain import Investigation
from agent.models.groq import GroqModel
from agent.ports import Model
from bot.cli import run
from recorded.scenario import clone, load_scenario
from tests.fakes.chat import FakeChat, prompt_tokens_of
from tests.fakes.policy import Explorer

KEY = "gsk-test-prefetch"
BIN = Path(sys.executable).with_name("incident-bot")
CODE = "src/main/java/dev/example/orders/CustomerReference.java"


async def investigate(folder: Path, tmp: Path, chat: FakeChat, prefetch: bool) -> dict[str, Any]:
    scenario = load_scenario(folder)
    models: list[GroqModel] = []

    def make(_inv: Investigation) -> Model:
        models.append(GroqModel("llama-test", api_key=KEY, base_url=chat.base_url))
        return models[-1]

    repo = await clone(scenario, tmp)
    try:
        return await run(
            scenario,
            repo,
            Investigation.open(scenario.question, scenario.scope),
            f"sqlite+aiosqlite:///{tmp / 'run.db'}",
            Limits(),
            as_json=True,
            model=make,
            prefetch=prefetch,
        )
    finally:
        for m in models:
            await m.aclose()


def finish(expected: dict[str, Any], code_id: str) -> str:
    return json.dumps(
        {
            "root_cause": "CustomerReference strips a reference that may be absent.",
            "facts": [
                {
                    "text": "The line strips the value without a null check.",
                    "evidence": [code_id],
                    "quote": "value = value.strip();",
                }
            ],
            "hypotheses": ["legacy clients omit customerReference"],
            "uncertainties": ["one event read"],
            "recommended_check": "replay a request without customerReference",
            "suspect": {
                "path": CODE,
                "line_start": 14,
                "line_end": 14,
                "commit": expected["commit"],
                "revision": expected["commit"],
            },
            "confidence": "medium",
        }
    )


async def test_with_prefetch_the_first_request_holds_a_cited_dossier(built_scenarios, tmp_path):
    folder = built_scenarios["orders"]
    expected = json.loads((folder / "expected.json").read_text())
    cited: dict[str, str] = {}

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        if not cited:
            dossier = body["messages"][2]["content"]
            found = re.search(r"^- (E\d+) · git__git_show\((\{.*\})\)", dossier, re.MULTILINE)
            assert found, dossier
            cited["code"] = found.group(1)
            # the model asks for the file the dossier only excerpts, with the same call
            return {"tool_calls": [("git__git_show", found.group(2))]}
        return {"tool_calls": [("finish_investigation", finish(expected, cited["code"]))]}

    async with FakeChat(api_key=KEY, policy=policy) as chat:
        doc = await investigate(folder, tmp_path, chat, prefetch=True)

    assert doc["status"] == "COMPLETED", doc["stop_reason"]
    first, second = chat.requests
    # the opening, the dossier, then the repository map at the release the chain found
    assert [m["role"] for m in first["messages"]] == ["system", "user", "user", "user"]
    dossier = first["messages"][2]["content"]
    release = doc["diagnosis"]["suspect"]["commit"]
    assert first["messages"][3]["content"].startswith(f"Repository map at {release[:12]}")
    assert CODE.rsplit("/", 1)[-1] + ": record CustomerReference" in first["messages"][3]["content"]
    assert dossier.startswith("Pre-fetched evidence")
    assert "it grants nothing" in dossier
    listed = re.findall(r"^- (E\d+) · ", dossier, re.MULTILINE)
    assert listed == [ev["id"] for ev in doc["evidence"]]  # every stored item, in order
    assert {ev["tool"] for ev in doc["evidence"]} >= {
        "sentry__search_issues",
        "sentry__get_issue_details",
        "git__git_show",
        "code__git_blame",
        "code__git_changes",
        "search_knowledge",
    }
    assert "Findings of the chain (each cites its evidence):" in dossier
    assert f"- suspect {CODE}:14, commit {expected['commit']}" in dossier
    assert "value = value.strip();" in dossier  # a short excerpt, not the whole file
    assert "public record CustomerReference" not in dossier
    # exploring stays open: the dossier does not narrow what the model may do
    assert "sentry__search_issues" in {t["function"]["name"] for t in first["tools"]}

    # the identical call is answered from the stored item: its full text, no new evidence
    (reply,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert reply["content"].startswith(f"[{cited['code']}] ")
    assert "public record CustomerReference" in reply["content"]
    stats = doc["stats"]
    assert stats["prefetch"] is True
    assert stats["prefetch_calls"] == len(doc["evidence"])
    assert (stats["model_calls"], stats["tool_calls"]) == (2, 2)
    assert stats["input_tokens"] == sum(prompt_tokens_of(b) for b in chat.requests)
    assert chat.problems == []


async def test_the_cli_shows_tokens_and_honours_no_prefetch_and_language(built_scenarios):
    folder = built_scenarios["orders"]
    async with FakeChat(api_key=KEY, policy=Explorer()) as chat:
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env.update(GROQ_API_KEY=KEY, GROQ_BASE_URL=chat.base_url, INCIDENT_BOT_PREFETCH="1")
        proc = await asyncio.create_subprocess_exec(
            str(BIN),
            "investigate",
            "--scenario",
            str(folder),
            "--json",
            "--no-prefetch",
            "--language",
            "en-GB",
            "--max-tokens",
            "90000",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    doc = json.loads(out)
    stats = doc["stats"]
    assert stats["prefetch"] is False
    assert stats["input_tokens"] == sum(prompt_tokens_of(b) for b in chat.requests)
    assert stats["tokens"] == stats["input_tokens"] + stats["output_tokens"] > 0
    assert sum(stats["tokens_by_day"].values()) == stats["tokens"]
    # without the dossier the model starts from the question and the repository map...
    system, user, repo_map = chat.requests[0]["messages"]
    assert repo_map["content"].startswith("Repository map at ")
    assert "operator's language (English (en))" in system["content"]  # the project says es
    assert "90,000 tokens (0 used)" in user["content"]
    # ...and the policy has to discover the chain itself, a turn at a time
    assert doc["status"] == "COMPLETED", doc["stop_reason"]
    assert stats["model_calls"] >= 5 and stats["prefetch_calls"] == 0
    assert doc["diagnosis"]["suspect"]["path"] == CODE
    assert chat.problems == []


def test_a_scenario_without_a_language_answers_in_the_question_s(built_scenarios, tmp_path):
    import shutil

    copy = tmp_path / "orders"
    shutil.copytree(built_scenarios["orders"], copy)
    raw = json.loads((copy / "scenario.json").read_text())
    assert raw.pop("language") == "es"
    (copy / "scenario.json").write_text(json.dumps(raw))
    assert load_scenario(copy).scope.language == "es"  # the question is in Spanish
    raw["question"] = "Why do orders fail when they are saved?"
    (copy / "scenario.json").write_text(json.dumps(raw))
    assert load_scenario(copy).scope.language == "en"
