"""Offline investigation of every scenario: wall time, model calls and tool calls.

Runs each scenario through the same path as `incident-bot investigate --offline`
(store, queue, worker, loop) in one warm worker process, as the bot runs: the
mcp-server-git session is started once and its start time is printed apart.

    .venv/bin/python benchmarks/scenarios.py [--runs N] [SCENARIO_DIR ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from agent.budget import Limits
from agent.domain import Investigation
from bot.cli import run
from bot.runtime import git_server
from recorded.build import build_scenario
from recorded.scenario import clone, load_scenario

ROOT = Path(__file__).resolve().parents[1]


def default_scenarios(tmp: Path) -> list[Path]:
    shared = ROOT.parent / "shared" / "scenarios"
    found = (
        sorted(p for p in shared.iterdir() if (p / "scenario.json").is_file())
        if shared.is_dir()
        else []
    )
    recipes = [ROOT / "bot" / "demo" / "orders"]
    recipes += sorted(
        p
        for p in (ROOT / "tests" / "fixtures" / "scenarios").iterdir()
        if (p / "recipe.json").is_file()
    )
    return found + [build_scenario(r, tmp / f"fixture-{r.name}") for r in recipes]


def grade(doc: dict, folder: Path) -> str:
    path = folder / "expected.json"
    if not path.is_file():
        return "?"
    expected = json.loads(path.read_text())
    suspect = (doc.get("diagnosis") or {}).get("suspect") or {}
    first, last = expected["fault"]["lines"]
    line_ok = (
        suspect.get("path") == expected["fault"]["file"]
        and first - 2 <= suspect.get("line_start", 0) <= last + 2
    )
    commit_ok = suspect.get("commit") == expected["commit"]
    return ("line " if line_ok else "LINE? ") + ("commit" if commit_ok else "COMMIT?")


async def main(folders: list[Path], runs: int) -> None:
    git = git_server()
    started = time.perf_counter()
    await git.start()
    print(
        f"mcp-server-git session start (once per worker): {time.perf_counter() - started:.2f} s\n"
    )
    print(
        f"{'scenario':34} {'status':10} {'wall s':>7} {'loop s':>7} "
        f"{'model':>6} {'tools':>6}  grade"
    )
    walls, models, tools = [], [], []
    try:
        for folder in folders:
            scenario = load_scenario(folder)
            for _ in range(runs):
                inv = Investigation.open(scenario.question, scenario.scope)
                with tempfile.TemporaryDirectory() as tmp:
                    t0 = time.perf_counter()
                    repo = await clone(scenario, Path(tmp))
                    url = f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
                    doc = await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
                    wall = time.perf_counter() - t0
                walls.append(wall)
                models.append(doc["stats"]["model_calls"])
                tools.append(doc["stats"]["tool_calls"])
                print(
                    f"{folder.name[:34]:34} {doc['status']:10} {wall:7.3f} "
                    f"{doc['stats']['wall_seconds']:7.3f} {doc['stats']['model_calls']:6d} "
                    f"{doc['stats']['tool_calls']:6d}  {grade(doc, folder)}"
                )
    finally:
        await git.aclose()
    print(
        f"\nmedian over {len(walls)} runs: wall {statistics.median(walls):.3f} s "
        f"(goal ≤ 1 s), tool calls {statistics.median(tools):g} (goal ≤ 8), "
        f"model calls {statistics.median(models):g}; worst wall {max(walls):.3f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        folders = args.scenarios or default_scenarios(Path(tmp))
        asyncio.run(main(folders, args.runs))
