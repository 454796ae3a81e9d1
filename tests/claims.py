"""Who held which job when, from the workers' JSON log lines (bot/worker.py): "worker W runs
the K job J (attempt A)" when W claimed it, "worker W completed the job J (attempt A)" once
it was done. A claim with no completion is held until its process ended (`ended`: pid →
time, for a process killed), else to the end of the log."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime

_RUNS = re.compile(r"^worker (\S+) runs the \S+ job (\d+) \(attempt (\d+)\)$")
_DONE = re.compile(r"^worker (\S+) completed the job (\d+) \(attempt (\d+)\)$")


def spans(
    lines: Iterable[str], ended: Mapping[int, float] | None = None
) -> dict[str, list[tuple[float, float, str]]]:
    """Per job, each claim's (from, until, worker), in claim order."""
    begun: dict[tuple[str, str], tuple[float, str]] = {}
    out: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or "message" not in entry:
            continue
        when = datetime.fromisoformat(entry["time"]).timestamp()
        if m := _RUNS.match(entry["message"]):
            begun[(m[2], m[3])] = (when, m[1])
        elif m := _DONE.match(entry["message"]):
            start, worker = begun.pop((m[2], m[3]), (when, m[1]))
            out[m[2]].append((start, when, worker))
    for (job, _attempt), (start, worker) in begun.items():
        pid = int(worker.split(":")[-2]) if worker.count(":") >= 2 else -1
        out[job].append((start, (ended or {}).get(pid, float("inf")), worker))
    for held in out.values():
        held.sort()
    return dict(out)


def double_claims(lines: Iterable[str], ended: Mapping[int, float] | None = None) -> int:
    """Claims of a job made while an earlier claim of it was still held."""
    doubles = 0
    for held in spans(lines, ended).values():
        until = float("-inf")  # the latest end among the earlier claims
        for start, end, _worker in held:
            doubles += start < until
            until = max(until, end)
    return doubles
