"""Model calls and tokens with and without the deterministic pre-fetch and the repository
map, per scenario.

Each scenario runs four times through the path of `incident-bot investigate` without
--offline (store, queue, worker, loop, the real groq SDK): pre-fetch off and on, each
without and with the repository map (agent/repomap.py), against tests/fakes/chat.py: a
local chat-completions server answered by a deterministic policy model
(tests/fakes/policy.py) that explores the way an LLM would — it reads only the wire,
calls tools until it has the facts it needs, finishes earlier when a dossier already
holds them, and takes the files from a map instead of listing the repository. Tokens are
the server's usage field, which the fake counts from each request (every word and
punctuation mark of the messages, tool calls and tool schemas is one token), not a real
model's tokenizer.

    .venv/bin/python benchmarks/prefetch.py [SCENARIO_DIR ...]
    .venv/bin/python benchmarks/prefetch.py --grow 5000 [RECIPE_NAME ...]   # large trees
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.budget import Limits  # noqa: E402
from agent.domain import Investigation  # noqa: E402
from agent.models.groq import GroqModel  # noqa: E402
from agent.ports import Model  # noqa: E402
from benchmarks.scenarios import default_scenarios, grade  # noqa: E402
from bot.cli import run  # noqa: E402
from bot.runtime import git_server  # noqa: E402
from recorded.scenario import clone, load_scenario  # noqa: E402
from tests.fakes.chat import FakeChat  # noqa: E402
from tests.fakes.policy import Explorer  # noqa: E402

KEY = "gsk-bench"


async def one(folder: Path, git: Any, prefetch: bool, repo_map: bool) -> dict[str, Any]:
    scenario = load_scenario(folder)
    async with FakeChat(api_key=KEY, policy=Explorer()) as chat:
        models: list[GroqModel] = []

        def make(_inv: Investigation) -> Model:
            models.append(GroqModel("policy", api_key=KEY, base_url=chat.base_url))
            return models[-1]

        inv = Investigation.open(scenario.question, scenario.scope)
        with tempfile.TemporaryDirectory() as tmp:
            repo = await clone(scenario, Path(tmp))
            url = f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
            t0 = time.perf_counter()
            doc = await run(
                scenario,
                repo,
                inv,
                url,
                Limits(),
                as_json=True,
                git=git,
                model=make,
                prefetch=prefetch,
                repo_map=repo_map,
            )
            wall = time.perf_counter() - t0
        for m in models:
            await m.aclose()
        first = chat.requests[0] if chat.requests else {}
    stats = doc["stats"]
    return {
        "status": doc["status"],
        "model": stats["model_calls"],
        "tools": stats["tool_calls"],
        "prefetch_calls": stats["prefetch_calls"],
        "map_chars": stats["repo_map_chars"],
        "input": stats["input_tokens"],
        "output": stats["output_tokens"],
        "first_prompt_msgs": len(first.get("messages", [])),
        "problems": len(chat.problems),
        "wall": wall,
        "grade": grade(doc, folder),
    }


CONFIGS = [(False, False), (False, True), (True, False), (True, True)]


def label(prefetch: bool, repo_map: bool) -> str:
    return f"pre-fetch {'on ' if prefetch else 'off'}, map {'on ' if repo_map else 'off'}"


async def main(folders: list[Path]) -> None:
    git = git_server()
    await git.start()
    print(
        "tokens: the fake server's usage field, counted from each request by a "
        "word-and-punctuation tokenizer (not a real model's tokenizer)\n"
    )
    head = (
        f"{'scenario':34} {'prefetch':8} {'map':>5} {'status':10} {'model':>5} {'tools':>5} "
        f"{'pre':>4} {'in tok':>7} {'out tok':>7} {'total':>7} {'wall s':>6}  grade"
    )
    print(head)
    rows: dict[tuple[bool, bool], list[dict[str, Any]]] = {c: [] for c in CONFIGS}
    try:
        for folder in folders:
            for prefetch, repo_map in CONFIGS:
                r = await one(folder, git, prefetch, repo_map)
                rows[(prefetch, repo_map)].append(r)
                print(
                    f"{folder.name[:34]:34} {'on' if prefetch else 'off':8} "
                    f"{r['map_chars']:5d} {r['status']:10} "
                    f"{r['model']:5d} {r['tools']:5d} {r['prefetch_calls']:4d} "
                    f"{r['input']:7d} {r['output']:7d} {r['input'] + r['output']:7d} "
                    f"{r['wall']:6.2f}  {r['grade']}"
                    + (f"  ({r['problems']} wire problems)" if r["problems"] else "")
                )
    finally:
        await git.aclose()
    print()
    for config in CONFIGS:
        rs = rows[config]
        total = [r["input"] + r["output"] for r in rs]
        print(
            f"{label(*config)}: {len(rs)} runs, "
            f"model calls {sum(r['model'] for r in rs)} "
            f"(median {statistics.median(r['model'] for r in rs):g}), "
            f"tokens {sum(total):,} (median {statistics.median(total):,.0f}), "
            f"model tool calls {sum(r['tools'] for r in rs)}, "
            f"pre-fetch tool calls {sum(r['prefetch_calls'] for r in rs)}, "
            f"completed {sum(r['status'] == 'COMPLETED' for r in rs)}, "
            f"line+commit right {sum(r['grade'] == 'line commit' for r in rs)}"
        )

    def ratio(a: tuple[bool, bool], b: tuple[bool, bool], what: str) -> None:
        tokens = [sum(r["input"] + r["output"] for r in rows[c]) for c in (a, b)]
        calls = [sum(r["model"] for r in rows[c]) for c in (a, b)]
        if tokens[0] and calls[0]:
            print(
                f"{what}: {calls[1] / calls[0]:.0%} of the model calls "
                f"({calls[1] - calls[0]:+d}), {tokens[1] / tokens[0]:.0%} of the tokens "
                f"({tokens[1] - tokens[0]:+,})"
            )

    ratio((False, False), (True, False), "with the pre-fetch (no map)")
    ratio((False, False), (False, True), "with the map (no pre-fetch)")
    ratio((True, False), (True, True), "with the map (pre-fetch on)")


SYNTHETIC = {
    "py": "class Gen{n}:\n    def run(self):\n        return {n}\n",
    "java": "public class Gen{n} {{\n    public int run() {{ return {n}; }}\n}}\n",
    "kt": "class Gen{n} {{\n    fun run() = {n}\n}}\n",
    "go": "package gen\n\nfunc Gen{n}() int {{ return {n} }}\n",
    "js": "export function gen{n}() {{ return {n}; }}\n",
    "ts": "export function gen{n}(): number {{ return {n}; }}\n",
    "rb": "class Gen{n}\n  def run\n    {n}\n  end\nend\n",
    "php": "<?php\nclass Gen{n} {{\n    public function run() {{ return {n}; }}\n}}\n",
}


def grown(recipe: Path, tmp: Path, files: int) -> Path:
    """The recipe with `files` synthetic source files (in its own language) in its first
    commit, so every commit's tree — the release's too — holds them; built as a scenario."""
    from recorded.build import build_scenario

    copy = tmp / f"recipe-{recipe.name}"
    shutil.copytree(recipe, copy)
    fault = json.loads((copy / "expected.json").read_text())["fault"]["file"]
    ext = fault.rsplit(".", 1)[-1]
    template = SYNTHETIC.get(ext, SYNTHETIC["py"])
    raw = json.loads((copy / "recipe.json").read_text())
    for n in range(files):
        rel = f"synthetic/mod{n // 50:04d}/gen{n:05d}.{ext}"
        (copy / "files" / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / "files" / rel).write_text(template.format(n=n))
        raw["commits"][0]["files"][f"lib/generated/mod{n // 50:04d}/gen{n:05d}.{ext}"] = rel
    (copy / "recipe.json").write_text(json.dumps(raw))
    return build_scenario(copy, tmp / f"grown-{recipe.name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", type=Path)
    parser.add_argument(
        "--grow",
        type=int,
        default=0,
        metavar="FILES",
        help="add FILES synthetic source files to each recipe's repository (recipes only)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        if args.grow:
            fixtures = ROOT / "tests" / "fixtures" / "scenarios"
            found = sorted(p for p in fixtures.iterdir() if (p / "recipe.json").is_file())
            recipes = [ROOT / "bot" / "demo" / "orders", *found]
            chosen = [r for r in recipes if not args.scenarios or r.name in {
                s.name for s in args.scenarios
            }]  # fmt: skip
            folders = [grown(r, Path(tmp), args.grow) for r in chosen]
        else:
            folders = args.scenarios or default_scenarios(Path(tmp))
        asyncio.run(main(folders))
