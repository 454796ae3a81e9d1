"""Publishing under randomized faults: ≥ 1,000 seeded runs against the fake GitHub and
Sentry REST servers, and the tally of how each ended.

    .venv/bin/python benchmarks/publish_faults.py [--runs 1000] [--seed 7] [--timeout 0.05]

Each run approves one draft and publishes it, noting the investigation's Sentry issue
on the way, while the fake GitHub answers 5xx or 4xx, drops the connection before or
after applying a request, or applies it and stalls past the client timeout, and (less
often) the fake Sentry does the same to the note's calls (5xx, no 4xx); a simulated
operator retries or clicks "Create anyway" when asked. `sentry_faults` counts the runs
where an injected Sentry fault hit a call. The invariants (tests/publish_faults.py) are
checked after every run: never two issues for one approval, never a published text other
than the approved one, a complete compensation log whenever it rolled back, never two
Sentry notes for one approval, exactly one once published and none once rolled back.
`violations` must be 0.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.publish_faults import run_faults  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=0.05, help="client timeout, s")
    args = parser.parse_args()
    started = time.perf_counter()
    tally = asyncio.run(run_faults(args.runs, args.seed, client_timeout=args.timeout))
    wall = time.perf_counter() - started
    print(tally.line())
    print(f"seed={args.seed} client_timeout={args.timeout}s wall={wall:.1f}s")
    for violation in tally.violations[:20]:
        print("VIOLATION", violation)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    raise SystemExit(main())
