"""GET /investigations/{id}/events: Server-Sent Events that follow the database.

Like the Slack sync, the stream catches up from what is stored and remembers what it has
sent: each pass reads (state, version), and only when the version moved loads the
aggregate and sends what is new — evidence cards, questions, the diagnosis, draft
versions, state changes. Another process's worker is followed just the same.

Each event's id is the stream's position after it (`Cursor`): how many evidence cards and
questions the client has, which diagnosis, draft version and state. A client that
reconnects with `Last-Event-ID` (browsers' EventSource do it by themselves) gets only what
it missed; without one, or with one that is not a position, it gets the history first.
An idle stream gets a comment every KEEPALIVE_SECONDS, so proxies keep it open.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

from agent.domain import Investigation, State
from bot.slack.sync import asked
from storage.store import SqlStore

KEEPALIVE_SECONDS = 15.0


def frame(event: str, data: Any, event_id: str) -> str:
    body = json.dumps(data, ensure_ascii=False, default=str)
    return f"id: {event_id}\nevent: {event}\ndata: {body}\n\n"


def over(inv: Investigation) -> bool:
    """Nothing more will happen to it: published, skipped, superseded or discarded."""
    return (
        inv.state in (State.PUBLISHED, State.SKIPPED)
        or inv.superseded_by is not None
        or (inv.state is State.COMPLETED and inv.discarded)
    )


POSITION = re.compile(r"e(\d{1,6})\.q(\d{1,6})\.d(-|[0-9a-f]{12})\.r(\d{1,6})\.s(-|[A-Z_]{1,32})")


@dataclass(frozen=True)
class Cursor:
    """What the client has: `evidence` cards and `questions`, the diagnosis (a digest),
    the draft version (0: none) and the state it was last told."""

    evidence: int = 0
    questions: int = 0
    diagnosis: str = "-"
    draft: int = 0
    state: str = "-"

    def __str__(self) -> str:
        return f"e{self.evidence}.q{self.questions}.d{self.diagnosis}.r{self.draft}.s{self.state}"

    @classmethod
    def parse(cls, text: str | None) -> Cursor:
        """The position a Last-Event-ID names; the start for anything else."""
        found = POSITION.fullmatch((text or "").strip())
        if found is None:
            return cls()
        e, q, d, r, state = found.groups()
        return cls(int(e), int(q), d, int(r), state)


def digest(inv: Investigation) -> str:
    if inv.diagnosis is None:
        return "-"
    return hashlib.sha256(inv.diagnosis.model_dump_json().encode()).hexdigest()[:12]


async def follow(
    store: SqlStore, investigation_id: str, poll_seconds: float = 0.1, since: str | None = None
) -> AsyncIterator[str]:
    """The stream from the position `since` (a Last-Event-ID) on."""
    at = Cursor.parse(since)
    version = -1
    quiet_since = time.monotonic()
    while True:
        _, stored = await store.state_of(investigation_id)
        if stored != version:
            inv = await store.load(investigation_id)
            version = inv.version
            for n, ev in enumerate(inv.evidence[at.evidence :], start=at.evidence + 1):
                at = replace(at, evidence=n)
                yield frame("evidence", ev.card(), str(at))
            questions = asked(inv)
            for n, (call_id, question) in enumerate(
                questions[at.questions :], start=at.questions + 1
            ):
                at = replace(at, questions=n)
                yield frame("question", {"id": call_id, "question": question}, str(at))
            if digest(inv) != at.diagnosis and inv.diagnosis is not None:
                at = replace(at, diagnosis=digest(inv))
                yield frame("diagnosis", inv.diagnosis.model_dump(mode="json"), str(at))
            if inv.draft is not None and inv.draft.version != at.draft:
                at = replace(at, draft=inv.draft.version)
                data = {"version": at.draft, "hash": inv.draft.hash, "title": inv.draft.title}
                yield frame("draft", data, str(at))
            if inv.state.value != at.state:
                at = replace(at, state=inv.state.value)
                data = {"state": inv.state, "stop_reason": inv.stop_reason, "version": version}
                yield frame("state", data, str(at))
            quiet_since = time.monotonic()
            if over(inv):
                yield frame(
                    "end", {"state": inv.state, "superseded_by": inv.superseded_by}, str(at)
                )
                return
        elif time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"  # a comment: keeps proxies from closing an idle stream
        await asyncio.sleep(poll_seconds)
