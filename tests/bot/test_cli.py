"""The command line as a user runs it: one process, real git, real SQLite."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED, orders_finish

BIN = Path(sys.executable).with_name("incident-bot")


def cli(*args: str, db: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env.pop("GROQ_API_KEY", None)
    if db is not None:
        env["DATABASE_URL"] = f"sqlite+aiosqlite:///{db}"
    return subprocess.run(
        [str(BIN), *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


@pytest.fixture
def orders(built_scenarios, tmp_path) -> Path:
    """A writable copy of the orders scenario, to break in various ways."""
    copy = tmp_path / "orders"
    shutil.copytree(built_scenarios["orders"], copy)
    return copy


def test_json_run_prints_the_documented_document(built_scenarios):
    done = cli("investigate", "--scenario", str(built_scenarios["orders"]), "--offline", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {"status", "diagnosis", "evidence", "draft", "stats"} <= doc.keys()
    assert doc["status"] == "COMPLETED"
    assert {
        "root_cause",
        "facts",
        "hypotheses",
        "uncertainties",
        "recommended_check",
        "suspect",
        "confidence",
    } <= doc["diagnosis"].keys()
    ev = doc["evidence"][0]
    assert {"id", "source", "tool", "title", "link", "retrieved_at", "path"} <= ev.keys()
    assert {"title", "body", "version", "hash"} <= doc["draft"].keys()
    assert {"model_calls", "tool_calls", "wall_seconds"} <= doc["stats"].keys()


def test_the_terminal_streams_cards_then_the_diagnosis_and_draft(built_scenarios):
    done = cli("investigate", "--scenario", str(built_scenarios["orders"]), "--offline")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    positions = [out.index(marker) for marker in ("E1 sentry", "E7 docs", "diagnosis", "draft")]
    assert positions == sorted(positions)
    assert "CustomerReference.java:14" in out


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("missing-folder", "no scenario folder"),
        ("no-bundle", "has no repo.bundle"),
        ("no-issues", "has no sentry/issues.json"),
        ("no-events", "no events file"),
        ("corrupt-bundle", "not a valid git bundle"),
        ("bad-json", "not JSON"),
        ("empty-question", "the question is empty"),
        ("huge-question", "10000 characters"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_stored(orders, tmp_path, breakage, message):
    folder, extra = orders, []
    if breakage == "missing-folder":
        folder = tmp_path / "nope"
    elif breakage == "no-bundle":
        (orders / "repo.bundle").unlink()
    elif breakage == "no-issues":
        (orders / "sentry" / "issues.json").unlink()
    elif breakage == "no-events":
        next((orders / "sentry" / "events").iterdir()).unlink()
    elif breakage == "corrupt-bundle":
        data = (orders / "repo.bundle").read_bytes()
        (orders / "repo.bundle").write_bytes(data[: len(data) // 2])
    elif breakage == "bad-json":
        (orders / "scenario.json").write_text("{not json")
    elif breakage == "empty-question":
        extra = ["--question", "   "]
    elif breakage == "huge-question":
        extra = ["--question", "x" * 10_000]
    db = tmp_path / "bot.db"
    done = cli("investigate", "--scenario", str(folder), "--offline", "--json", *extra, db=db)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
    assert not db.exists()


@pytest.mark.skipif(not (SHARED / "orders-npe").is_dir(), reason="../shared is not beside us")
def test_a_database_url_keeps_the_investigation(tmp_path):
    db = tmp_path / "keep.db"
    done = cli(
        "investigate", "--scenario", str(SHARED / "orders-npe"), "--offline", "--json", db=db
    )
    assert done.returncode == 0, done.stderr
    inv_id = json.loads(done.stdout)["investigation_id"]
    import sqlite3

    with sqlite3.connect(db) as conn:
        state = conn.execute("select state from investigations where id = ?", (inv_id,)).fetchone()
        evidence = conn.execute("select count(*) from evidence").fetchone()[0]
        jobs = conn.execute("select status from jobs").fetchall()
    assert state == ("COMPLETED",) and evidence == 7 and jobs == [("done",)]


def test_demo_runs_the_bundled_incident_offline():
    done = cli("demo")
    assert done.returncode == 0, done.stderr
    assert "CustomerReference.java:14" in done.stdout
    assert "835b04b442dc376f38b62e6ada802c1377f20c3b" in done.stdout


async def test_without_offline_the_configured_chat_model_investigates(built_scenarios, tmp_path):
    import asyncio

    from tests.fakes.chat import FakeChat

    folder = built_scenarios["orders"]
    finish = orders_finish(folder)
    sha = finish["suspect"]["commit"]
    async with FakeChat(api_key="gsk-test-key") as chat:
        chat.script(
            [
                {
                    "content": None,
                    "tool_calls": [
                        ("sentry__search_issues", json.dumps({"query": "is:unresolved"}))
                    ],
                },
                {"content": None, "tool_calls": [("finish_investigation", json.dumps(finish))]},
            ]
        )
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env.update(GROQ_API_KEY="gsk-test-key", GROQ_BASE_URL=chat.base_url)
        proc = await asyncio.create_subprocess_exec(
            str(BIN),
            "investigate",
            "--scenario",
            str(folder),
            "--json",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    doc = json.loads(out)
    assert doc["status"] == "COMPLETED", doc["stop_reason"]
    assert doc["stats"]["model_calls"] == 2
    assert doc["stats"]["input_tokens"] > 0
    assert doc["diagnosis"]["suspect"]["commit"] == sha
    assert "gsk-test-key" not in json.dumps(chat.requests)


def test_without_offline_and_without_a_key_the_run_is_refused(built_scenarios):
    done = cli("investigate", "--scenario", str(built_scenarios["orders"]), "--json")
    assert done.returncode == 2 and "GROQ_API_KEY" in done.stderr


def test_a_json_run_that_cannot_ask_goes_on_and_says_what_it_assumed(orders):
    for events_file in (orders / "sentry" / "events").iterdir():
        events = json.loads(events_file.read_text())
        for event in events:
            event["release"] = None
            event["tags"] = [t for t in event.get("tags", []) if t["key"] != "release"]
        events_file.write_text(json.dumps(events))
    expected = json.loads((orders / "expected.json").read_text())
    done = cli("investigate", "--scenario", str(orders), "--offline", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "COMPLETED"  # not WAITING_FOR_OPERATOR: nobody could answer
    assert doc["diagnosis"]["suspect"]["path"] == expected["fault"]["file"]
    assert any(
        "newest commit" in u or "último commit" in u for u in doc["diagnosis"]["uncertainties"]
    )
