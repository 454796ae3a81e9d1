"""Publishing under randomized faults: ≥ 1,000 seeded runs against the fake GitHub, Slack
and Sentry servers, and the tally of how each ended.

    .venv/bin/python benchmarks/publish_faults.py [--runs 1000] [--seed 7] [--timeout 0.05]

Each run approves one draft and publishes it — create the issue (the saga's pivot), then
the side steps: labels, the link in the Slack thread, a note on the Sentry issue — while
the fakes fail every route those steps touch: 5xx, 4xx, 429, a connection dropped before
or after the request is applied, an answer stalled past the client timeout, an outage
longer than the retries. A simulated operator retries or clicks "Create anyway" when
asked; once the services are back, an approval whose side steps were not done is
approved again. The invariants (tests/publish_faults.py) are checked after every run:
never two issues, notes or thread items for one approval (`duplicates`), never a
published text other than the approved one (`differing_texts`), never a created issue
closed or withdrawn because a side step failed (`closed_by_side_step`), every side step
done or recorded as not done, and finished by the re-run (`finished_on_rerun` of
`side_steps_not_done`; `not_done` per step). `sentry_faults` and `slack_faults` count the
runs where an injected fault of that service hit a call. `violations` must be 0.
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
