"""The offline investigator on the holdout incidents (tests/fixtures/holdout): how many it gets.

Each recipe is built into a temporary folder and run as an operator would run it,
`incident-bot investigate --scenario DIR --offline --json`, one process per incident. A suspect
is graded as benchmarks/scenarios.py grades it: the line is right when the file is the fault's
and the first line is within 2 of the fault's lines; the commit is right when it is the
expected one, or, when none is expected (a cut history), when the suspect names none.

    .venv/bin/python benchmarks/holdout.py [RECIPE_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from recorded.build import build_scenario

ROOT = Path(__file__).resolve().parents[1]
HOLDOUT = ROOT / "tests" / "fixtures" / "holdout"
TIMEOUT = 300


@dataclass
class Result:
    name: str
    status: str
    line_ok: bool
    commit_ok: bool
    confidence: str
    doc: str  # "yes", "no", or "-" when the incident has no contract document
    seconds: float
    named: str = ""  # the suspect, and what was expected, when line or commit is wrong


def command() -> list[str]:
    # This checkout's code (a worktree's too), not whichever one the installed script points at.
    run = "import sys; from bot.cli import main; sys.argv[0] = 'incident-bot'; main()"
    return [sys.executable, "-c", run, "investigate", "--offline", "--json", "--scenario"]


def grade(name: str, doc: dict, expected: dict, seconds: float) -> Result:
    diagnosis = doc.get("diagnosis") or {}
    suspect = diagnosis.get("suspect") or {}
    first, last = expected["fault"]["lines"]
    start = suspect.get("line_start")
    line_ok = (
        suspect.get("path") == expected["fault"]["file"]
        and isinstance(start, int)
        and first - 2 <= start <= last + 2
    )
    want = expected["commit"]
    commit_ok = suspect.get("commit") == want if want else not suspect.get("commit")
    contract = expected["contract_doc"]
    cited = any(
        {e.get("kind"), e.get("source")} & {"doc", "docs"} and e.get("path") == contract
        for e in doc.get("evidence") or []
    )
    named = ""
    if not (line_ok and commit_ok):
        named = (
            f"named {where(suspect.get('path'), start, suspect.get('commit'))}, "
            f"expected {where(expected['fault']['file'], first, want)}"
        )
    return Result(
        name=name,
        status=str(doc.get("status", "?")),
        line_ok=line_ok,
        commit_ok=commit_ok,
        confidence=str(diagnosis.get("confidence") or "-"),
        doc="-" if contract is None else ("yes" if cited else "no"),
        seconds=seconds,
        named=named,
    )


def where(path: str | None, line: object, commit: str | None) -> str:
    return f"{path or '-'}:{line if line is not None else '-'} @ {(commit or 'no commit')[:7]}"


def run_one(recipe: Path, tmp: Path) -> Result:
    folder = build_scenario(recipe, tmp / recipe.name)
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [*command(), str(folder)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=tmp,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Result(recipe.name, "TIMEOUT", False, False, "-", "-", TIMEOUT)
    seconds = time.perf_counter() - started
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"  {recipe.name}: exit {done.returncode}, no JSON: {tail[:160]}", file=sys.stderr)
        return Result(recipe.name, f"EXIT {done.returncode}", False, False, "-", "-", seconds)
    return grade(recipe.name, doc, expected, seconds)


def report(results: list[Result]) -> None:
    mark = {True: "ok", False: "WRONG"}
    print(
        f"{'incident':44} {'status':10} {'line':6} {'commit':7} {'confidence':11} "
        f"{'doc':4} {'s':>6}"
    )
    for r in results:
        print(
            f"{r.name[:44]:44} {r.status[:10]:10} {mark[r.line_ok]:6} {mark[r.commit_ok]:7} "
            f"{r.confidence[:11]:11} {r.doc:4} {r.seconds:6.1f}"
        )
    n = len(results)
    with_doc = [r for r in results if r.doc != "-"]
    both = sum(r.line_ok and r.commit_ok for r in results)
    confidences = Counter(r.confidence for r in results)
    print(
        f"\n{n} incidents: line {sum(r.line_ok for r in results)}/{n}, "
        f"commit {sum(r.commit_ok for r in results)}/{n}, both {both}/{n}, "
        f"contract doc cited {sum(r.doc == 'yes' for r in with_doc)}/{len(with_doc)}"
    )
    print("confidence: " + ", ".join(f"{k} {v}" for k, v in sorted(confidences.items())))
    wrong_but_sure = [r.name for r in results if r.confidence == "high" and not r.line_ok]
    print(f"high confidence with a wrong line: {len(wrong_but_sure)} {wrong_but_sure or ''}")
    misses = [r for r in results if r.named]
    if misses:
        print("\nmisses:")
        for r in misses:
            print(f"  {r.name}: {r.named}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipes", nargs="*", type=Path)
    args = parser.parse_args()
    recipes = args.recipes or sorted(p for p in HOLDOUT.iterdir() if (p / "recipe.json").is_file())
    with tempfile.TemporaryDirectory(prefix="holdout-") as tmp:
        results = [run_one(r, Path(tmp)) for r in recipes]
    report(results)


if __name__ == "__main__":
    main()
