"""Offline investigation of generated incidents, graded against their ground truth.

Incidents come from tests/generator (one per seed; the ground truth is known by
construction). Each runs through the same path as `incident-bot investigate --offline --json`
(store, queue, worker, loop) in one warm worker process, and is graded as
../shared/scenarios/README.md says: the suspect's path and lines against the fault (±2 lines,
the crash line earns half), the commit (for a truncated history, the right answer is no
commit), facts citing only evidence that exists, the contract document retrieved and cited.

    .venv/bin/python benchmarks/generated.py [--count 200] [--seed 0] [--keep DIR]

It also prints the naive baseline of issue 12 (newest error, its top in-app frame, blame of
that line) graded the same way, to tell a hard generator from a weak investigator.

Rebuild one incident: .venv/bin/python -m tests.generator SEED DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.budget import Limits  # noqa: E402
from agent.domain import Investigation  # noqa: E402
from bot.cli import run  # noqa: E402
from bot.runtime import git_server  # noqa: E402
from recorded.scenario import clone, load_scenario  # noqa: E402
from tests.generator import generate  # noqa: E402

LEVELS = ("high", "medium", "low")


def grade(doc: dict, expected: dict) -> dict:
    diagnosis = doc.get("diagnosis") or {}
    suspect = diagnosis.get("suspect") or {}
    path, start = suspect.get("path"), suspect.get("line_start") or 0

    def near(where: dict) -> bool:
        first, last = where["lines"]
        return path == where["file"] and first - 2 <= start <= last + 2

    on_fault = near(expected["fault"])
    on_crash = near(expected["crash"])
    localization = 1.0 if on_fault else 0.5 if on_crash else 0.0
    claimed = suspect.get("commit") or None
    commit_ok = claimed == expected["commit"]
    ids = {ev["id"] for ev in doc.get("evidence") or []}
    facts = diagnosis.get("facts") or []
    cited_ok = bool(facts) and all(f.get("evidence") and set(f["evidence"]) <= ids for f in facts)
    cited = {e for f in facts for e in f.get("evidence") or []}
    docs_cited = {
        ev.get("path")
        for ev in doc.get("evidence") or []
        if ev.get("source") == "docs" and ev["id"] in cited
    }
    doc_ok = expected["contract_doc"] in docs_cited if expected.get("contract_doc") else None
    return {
        "status": doc.get("status"),
        "localization": localization,
        "on_fault": on_fault,
        "commit": commit_ok,
        "correct": on_fault and commit_ok,
        "confidence": diagnosis.get("confidence") or "none",
        "citations": cited_ok,
        "contract_doc": doc_ok,
        # a doc cited that is not the contract (for an incident with none, any doc cited)
        "wrong_doc": bool(docs_cited - {expected.get("contract_doc")}),
        "tool_calls": (doc.get("stats") or {}).get("tool_calls", 0),
        "loop_seconds": (doc.get("stats") or {}).get("wall_seconds", 0.0),
        "suspect": f"{path}:{start} @{(claimed or '-')[:7]}",
    }


def pct(values: list) -> str:
    return f"{100 * sum(values) / len(values):5.1f}%" if values else "    -"


async def investigate(folders: list[Path]) -> list[tuple[dict, float]]:
    git = git_server()
    await git.start()
    out = []
    try:
        for folder in folders:
            scenario = load_scenario(folder)
            inv = Investigation.open(scenario.question, scenario.scope)
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                repo = await clone(scenario, Path(tmp))
                url = f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
                try:
                    doc = await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
                except Exception as exc:  # a crash is graded as a miss, not the end of the run
                    doc = {"status": f"CRASHED {type(exc).__name__}: {exc}"[:120]}
                out.append((doc, time.perf_counter() - t0))
    finally:
        await git.aclose()
    return out


def report(rows: list[dict], gen_seconds: float, count: int) -> None:
    print(f"generated {count} incidents in {gen_seconds:.1f} s\n")
    loc = [r["localization"] for r in rows]
    print(
        f"fault localization   {pct(loc)}   "
        f"(on the fault line ±2: {pct([r['on_fault'] for r in rows])})"
    )
    print(f"commit               {pct([r['commit'] for r in rows])}")
    print(f"citations            {pct([r['citations'] for r in rows])}")
    docs = [r["contract_doc"] for r in rows if r["contract_doc"] is not None]
    print(f"contract doc cited   {pct(docs)}   ({len(docs)} incidents have one)")
    none = [r["wrong_doc"] for r in rows if r["contract_doc"] is None]
    other = [r["wrong_doc"] for r in rows if r["contract_doc"] is not None]
    print(
        f"other doc cited      {pct(none)} of {len(none)} with no contract, "
        f"{pct(other)} of {len(other)} with one"
    )
    print(f"completed            {pct([r['status'] == 'COMPLETED' for r in rows])}")
    tools = [r["tool_calls"] for r in rows]
    print(f"tool calls           median {statistics.median(tools):g}, max {max(tools)}")
    loops = [r["loop_seconds"] for r in rows]
    walls = [r["wall"] for r in rows]
    print(f"time inside the run  median {statistics.median(loops):.3f} s, max {max(loops):.3f} s")
    print(f"wall per incident    median {statistics.median(walls):.3f} s (clone + run)")
    print("\ncalibration (correct = suspect on the fault ±2 and the right commit, or none claimed")
    print("when the history is truncated)")
    for level in (*LEVELS, "none"):
        sel = [r for r in rows if r["confidence"] == level]
        if sel or level != "none":
            print(
                f"  {level:7} {len(sel):4d} answers, precision {pct([r['correct'] for r in sel])}"
            )
    for key in (
        "lang",
        "kind",
        "position",
        "entry",
        "chained",
        "suppressed",
        "truncated",
        "early_release",
        "question_lang",
        "contract",
        "recovered",
        "rewrite",
        "new_shape",
    ):
        groups: dict = defaultdict(list)
        for r in rows:
            groups[r["meta"].get(key)].append(r)
        print(f"\nby {key}:")
        print(
            f"  {'':18} {'n':>4} {'local.':>7} {'fault':>7} {'commit':>7} {'correct':>8} "
            f"{'high':>5} {'high ok':>8} {'doc':>7}"
        )
        for name in sorted(groups, key=str):
            g = groups[name]
            high = [r for r in g if r["confidence"] == "high"]
            print(
                f"  {name!s:18} {len(g):4d} {pct([r['localization'] for r in g]):>7} "
                f"{pct([r['on_fault'] for r in g]):>7} {pct([r['commit'] for r in g]):>7} "
                f"{pct([r['correct'] for r in g]):>8} {len(high):5d} "
                f"{pct([r['correct'] for r in high]):>8} "
                f"{pct([r['contract_doc'] for r in g if r['contract_doc'] is not None]):>7}"
            )
    misses = [r for r in rows if not r["correct"]]
    print(f"\nmisses ({len(misses)}): seed lang kind position — expected fault / got")
    for r in misses:
        m, e = r["meta"], r["expected"]
        fault = f"{e['fault']['file']}:{e['fault']['lines'][0]} @{(e['commit'] or 'none')[:7]}"
        print(
            f"  {m['seed']:5d} {m['lang']:4} {m['kind']:15} {m['position']:8} {r['confidence']:6} "
            f"want {fault}  got {r['suspect']}"
            + ("" if r["status"] == "COMPLETED" else f"  [{r['status']}]")
        )


def baseline(folder: Path) -> dict:
    """The naive answer: the newest error, its top in-app frame, blame of that line."""
    scenario = json.loads((folder / "scenario.json").read_text())
    issues = json.loads((folder / "sentry" / "issues.json").read_text())
    errors = [i for i in issues if i["level"] in ("error", "fatal")]
    newest = max(errors, key=lambda i: i["lastSeen"])
    event = json.loads((folder / "sentry" / "events" / f"{newest['id']}.json").read_text())[0]
    values = [v for e in event["entries"] if e["type"] == "exception" for v in e["data"]["values"]]
    in_app = [f for f in values[-1]["stacktrace"]["frames"] if f["inApp"]] if values else []
    if not in_app:
        return {"status": "COMPLETED", "diagnosis": {"suspect": None}}
    frame = in_app[-1]
    release = event["release"]["version"][len(scenario["release_prefix"]) :]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo.git"
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(folder / "repo.bundle"), str(repo)], check=True
        )
        files = _git(repo, "ls-tree", "-r", "--name-only", release).splitlines()
        names = {
            (frame.get(k) or "").replace("app:///", "").lstrip("./")
            for k in ("filename", "absPath")
        }
        hits = [
            f
            for f in files
            if any(n and (n == f or n.endswith("/" + f) or f.endswith("/" + n)) for n in names)
        ]
        if len(hits) != 1:
            return {"status": "COMPLETED", "diagnosis": {"suspect": None}}
        line = frame["lineNo"]
        blame = _git(repo, "blame", "-l", "-s", f"-L{line},{line}", release, "--", hits[0])
    commit = blame.split()[0].lstrip("^") if blame else None
    suspect = {"path": hits[0], "line_start": line, "line_end": line, "commit": commit}
    return {"status": "COMPLETED", "diagnosis": {"suspect": suspect, "facts": []}}


def _new_shape(meta: dict) -> str:
    """The shapes the blind incidents showed (binding, schema, a recovered Go panic, a rewrite
    of the crash line), against the earlier ones."""
    shapes = [meta["position"]] if meta["position"] in ("binding", "schema") else []
    shapes += [k for k in ("recovered", "rewrite") if meta.get(k)]
    return "+".join(shapes) or "(earlier)"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--keep", type=Path, help="write the incidents here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="generated-") as tmp:
        base = args.keep or Path(tmp)
        t0 = time.perf_counter()
        seeds = range(args.seed, args.seed + args.count)
        folders = [generate(s, base / f"incident-{s:05d}") for s in seeds]
        gen_seconds = time.perf_counter() - t0
        results = asyncio.run(investigate(folders))
        rows = []
        for folder, (doc, wall) in zip(folders, results, strict=True):
            expected = json.loads((folder / "expected.json").read_text())
            meta = json.loads((folder / "generated.json").read_text())
            meta["new_shape"] = _new_shape(meta)
            rows.append(grade(doc, expected) | {"meta": meta, "expected": expected, "wall": wall})
        report(rows, gen_seconds, len(folders))
        naive = [grade(baseline(f), r["expected"]) for f, r in zip(folders, rows, strict=True)]
        print(
            "\nnaive baseline (newest error -> its top in-app frame -> blame of that line): "
            f"localization {pct([r['localization'] for r in naive])}, "
            f"on the fault line {pct([r['on_fault'] for r in naive])}, "
            f"commit {pct([r['commit'] for r in naive])}"
        )
        print("\nrebuild one: .venv/bin/python -m tests.generator SEED DIR")


if __name__ == "__main__":
    main()
