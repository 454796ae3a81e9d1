"""A frame whose line the SDK marks unknown (-1, -2) is investigated like one with no line."""

import asyncio
import json
from pathlib import Path

from agent.budget import Limits
from agent.domain import Investigation
from bot.cli import run
from bot.runtime import git_server
from recorded.build import build_scenario
from recorded.scenario import clone, load_scenario

RECIPE = Path(__file__).resolve().parents[1] / "fixtures/scenarios/java-spring-caller-passes-null"


async def investigate(folder: Path, tmp: Path) -> dict:
    git = git_server()
    await git.start()
    try:
        scenario = load_scenario(folder)
        inv = Investigation.open(scenario.question, scenario.scope)
        repo = await clone(scenario, tmp / "clone")
        url = f"sqlite+aiosqlite:///{tmp / 'run.db'}"
        return await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
    finally:
        await git.aclose()


def test_a_generated_frame_marked_line_minus_one_still_finds_the_fault(tmp_path):
    folder = build_scenario(RECIPE, tmp_path / "scenario")
    expected = json.loads((folder / "expected.json").read_text())
    path = folder / "sentry" / "events" / f"{expected['issue_id']}.json"
    events = json.loads(path.read_text())
    marked = 0
    for event in events:
        for entry in event.get("entries", []):
            if entry["type"] != "exception":
                continue
            for value in entry["data"]["values"]:
                for frame in (value.get("stacktrace") or {}).get("frames") or []:
                    if frame.get("inApp") and frame.get("lineNo") is None:
                        frame["lineNo"] = -1  # what the Java SDK sends for a generated proxy
                        marked += 1
    assert marked, "the recipe no longer has a generated in-app frame to mark"
    path.write_text(json.dumps(events))

    doc = asyncio.run(investigate(folder, tmp_path))

    assert doc["status"] == "COMPLETED"
    suspect = doc["diagnosis"]["suspect"]
    assert suspect["path"] == expected["fault"]["file"]
    assert suspect["commit"] == expected["commit"]
    assert all(loc["line_start"] >= 1 for loc in doc["diagnosis"]["affected"])
