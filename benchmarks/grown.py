"""One recorded incident on a repository grown to tens of thousands of commits and files.

The incident's own commits are replayed (git fast-import) on top of a synthetic history:
N commits that create and edit F files of the application's language beside the real
ones, dated before the real history begins. The events, the scenario and expected.json
are rewritten to the new SHAs, so the incident is the same and only the repository grew.
For each size the investigation runs offline as `incident-bot investigate` runs it; the
time inside the run (the loop, as `stats.wall_seconds` reports it) and the answer are
printed (the fastest of the runs and their median; the sizes take turns run by run). The
goal: the same answer at every size, and at the largest a time at most 1.5× the ungrown one's.

    .venv/bin/python benchmarks/grown.py [SCENARIO_DIR] [--runs 5] [--sizes 0:0,20000:3000,...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
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
SIZES = [(0, 0), (20_000, 3_000), (100_000, 10_000)]
_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": os.devnull,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "LC_ALL": "C",
    "TZ": "UTC",
}


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, check=True, env=_ENV
    ).stdout


def synthetic_file(index: int, revision: int, ext: str) -> bytes:
    """A small source file; each revision changes one line, as a real edit would."""
    return (
        f"// unit {index}, revision {revision}\n"
        f"function unit{index}(value) {{\n"
        f"  const limit = {revision % 97};\n"
        f"  return value + limit;  // {ext}\n"
        "}\n"
    ).encode()


def grow(source: Path, target: Path, commits: int, files: int) -> dict[str, str]:
    """`target`: a repository whose history is `commits` synthetic commits touching `files`
    synthetic files, then every commit of `source` (first-parent, oldest first). Returns
    old SHA → new SHA."""
    real = git(source, "rev-list", "--first-parent", "--reverse", "main").decode().split()
    tree = git(source, "ls-tree", "-r", "--name-only", real[-1]).decode().split("\n")
    code = [p for p in tree if "." in p.rsplit("/", 1)[-1] and not p.endswith(".md")]
    ext = max({p.rsplit(".", 1)[-1] for p in code}, key=lambda e: sum(p.endswith(e) for p in code))
    top = code[0].split("/", 1)[0] if "/" in code[0] else "src"
    first = int(git(source, "log", "-1", "--format=%at", real[0]).decode())
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(target)], check=True, env=_ENV)
    proc = subprocess.Popen(
        ["git", "-C", str(target), "fast-import", "--quiet", f"--export-marks={target}/marks"],
        stdin=subprocess.PIPE,
        env=_ENV,
    )
    assert proc.stdin is not None
    out = proc.stdin

    def data(blob: bytes) -> None:
        out.write(b"data %d\n" % len(blob))
        out.write(blob)
        out.write(b"\n")

    revisions = [0] * max(files, 1)
    for i in range(commits):
        when = first - (commits - i) * 60
        out.write(b"commit refs/heads/main\n")
        out.write(b"mark :%d\n" % (i + 1))
        stamp = b"Synthetic <synthetic@example.com> %d +0000\n" % when
        out.write(b"author " + stamp + b"committer " + stamp)
        data(b"synthetic change %d\n" % i)
        index = i if i < files else (i * 7919) % files
        revisions[index] += 1
        path = f"{top}/generated/m{index % 100:02d}/unit{index:05d}.{ext}"
        out.write(f"M 100644 inline {path}\n".encode())
        data(synthetic_file(index, revisions[index], ext))
    for k, sha in enumerate(real):
        fields = git(source, "log", "-1", "--format=%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct", sha)
        an, ae, at, cn, ce, cdate = fields.decode().strip("\n").split("\0")
        message = git(source, "log", "-1", "--format=%B", sha)
        out.write(b"commit refs/heads/main\n")
        out.write(b"mark :%d\n" % (commits + k + 1))
        out.write(f"author {an} <{ae}> {at} +0000\n".encode())
        out.write(f"committer {cn} <{ce}> {cdate} +0000\n".encode())
        data(message)
        diff = git(source, "diff-tree", "-r", "--root", "--no-renames", "-z", sha)
        items = diff.split(b"\0")
        if items and re.fullmatch(rb"[0-9a-f]{40}", items[0]):
            items = items[1:]
        for meta, name in zip(items[0::2], items[1::2], strict=False):
            if not meta:
                continue
            _, mode, _, blob, status = meta.decode().lstrip(":").split()
            path = name.decode()
            if status.startswith("D"):
                out.write(f"D {path}\n".encode())
                continue
            out.write(f"M {mode} inline {path}\n".encode())
            data(git(source, "cat-file", "blob", blob))
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    marks = dict(
        line.split() for line in (target / "marks").read_text().splitlines() if line.strip()
    )
    return {sha: marks[f":{commits + k + 1}"] for k, sha in enumerate(real)}


def rewrite(folder: Path, out: Path, repo: Path, shas: dict[str, str]) -> Path:
    """The scenario of `folder` on the grown repository `repo`: every SHA replaced."""
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns("repo.bundle"))
    short = {old[:7]: new[:7] for old, new in shas.items()}
    for path in out.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        for old, new in shas.items():
            text = text.replace(old, new)
        text = re.sub(r"\b[0-9a-f]{7}\b", lambda m: short.get(m.group(0), m.group(0)), text)
        path.write_text(text, encoding="utf-8")
    git(repo, "bundle", "create", str((out / "repo.bundle").resolve()), "main")
    return out


async def investigate_once(folder: Path, git_session) -> tuple[float, dict]:
    scenario = load_scenario(folder)
    inv = Investigation.open(scenario.question, scenario.scope)
    with tempfile.TemporaryDirectory() as tmp:
        repo = await clone(scenario, Path(tmp))
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'run.db'}"
        doc = await run(scenario, repo, inv, url, Limits(), as_json=True, git=git_session)
    return doc["stats"]["wall_seconds"], doc


def answer(doc: dict, back: dict[str, str]) -> str:
    diagnosis = doc.get("diagnosis") or {}
    suspect = diagnosis.get("suspect") or {}
    commit = back.get(suspect.get("commit") or "", suspect.get("commit") or "-")
    where = f"{suspect.get('path')}:{suspect.get('line_start')}" if suspect else "no suspect"
    return f"{where} {commit[:7]} {diagnosis.get('confidence')}"


def prepare(
    folder: Path, sizes: list[tuple[int, int]], tmp: Path
) -> list[tuple[int, int, float, Path, dict[str, str]]]:
    """Each size's scenario folder, the time it took to grow, and new SHA → old SHA."""
    source = tmp / "source.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(folder / "repo.bundle"), str(source)],
        check=True,
        env=_ENV,
    )
    cases = []
    for commits, files in sizes:
        t0 = time.perf_counter()
        if commits:
            grown = tmp / f"grown-{commits}.git"
            shas = grow(source, grown, commits, files)
            case = rewrite(folder, tmp / f"case-{commits}", grown, shas)
        else:
            shas, case = {}, folder
        back = {new: old for old, new in shas.items()}
        cases.append((commits, files, time.perf_counter() - t0, case, back))
    return cases


async def measure(name: str, cases: list[tuple[int, int, float, Path, dict[str, str]]], runs: int):
    """The sizes take turns run by run, so that a machine busy for a while slows them all
    alike; the ratio is of the fastest runs, the least disturbed by anything else."""
    session = git_server()
    await session.start()
    times: list[list[float]] = [[] for _ in cases]
    docs: list[dict] = [{} for _ in cases]
    try:
        for _ in range(runs):
            for i, (_, _, _, case, _) in enumerate(cases):
                seconds, docs[i] = await investigate_once(case, session)
                times[i].append(seconds)
    finally:
        await session.aclose()
    print(f"incident: {name}, {runs} run(s) per size, the sizes in turn")
    print(
        f"{'commits':>8} {'files':>6} {'grow s':>7} {'min s':>7} {'median':>7} {'ratio':>6}  answer"
    )
    base = min(times[0])
    answers = set()
    for (commits, files, grow_s, _, back), took, doc in zip(cases, times, docs, strict=True):
        said = answer(doc, back)
        answers.add(said)
        print(
            f"{commits:8d} {files:6d} {grow_s:7.1f} {min(took):7.3f} "
            f"{statistics.median(took):7.3f} {min(took) / base:5.2f}×  {said}"
        )
    print(f"\nsame answer at every size: {'yes' if len(answers) == 1 else 'NO'}")


def parse_sizes(text: str) -> list[tuple[int, int]]:
    return [(int(c), int(f)) for c, f in (item.split(":") for item in text.split(","))]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", type=parse_sizes, default=SIZES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grown-") as tmp:
        folder = args.scenario
        if folder is None:
            shared = ROOT.parent / "shared" / "scenarios" / "orders-npe"
            folder = (
                shared
                if shared.is_dir()
                else build_scenario(ROOT / "bot" / "demo" / "orders", Path(tmp) / "orders")
            )
        cases = prepare(folder, args.sizes, Path(tmp))
        asyncio.run(measure(folder.name, cases, args.runs))
