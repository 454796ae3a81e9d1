"""A frame whose line the SDK marks unknown (-1, -2) is investigated like one with no line."""

import asyncio
import json
from pathlib import Path

from recorded.build import build_scenario
from tests.bot.offline import investigate

RECIPE = Path(__file__).resolve().parents[1] / "fixtures/scenarios/java-spring-caller-passes-null"


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

    doc = asyncio.run(investigate(folder))

    assert doc["status"] == "COMPLETED"
    suspect = doc["diagnosis"]["suspect"]
    assert suspect["path"] == expected["fault"]["file"]
    assert suspect["commit"] == expected["commit"]
    assert all(loc["line_start"] >= 1 for loc in doc["diagnosis"]["affected"])
