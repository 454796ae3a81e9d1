"""GET /investigations/{id}/events: Server-Sent Events that follow the database.

Like the Slack sync, the stream catches up from what is stored and remembers what it has
sent: each pass reads (state, version), and only when the version moved loads the
aggregate and sends what is new — evidence cards, questions, the diagnosis, draft
versions, state changes. Another process's worker is followed just the same. A stream
that is opened again sends the history first; event ids (`evidence:E3`) let a client
drop what it already has.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
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


async def follow(
    store: SqlStore, investigation_id: str, poll_seconds: float = 0.1
) -> AsyncIterator[str]:
    evidence = 0
    questions: set[str] = set()
    diagnosis: str | None = None
    draft: tuple[int, str] | None = None
    state: State | None = None
    version = -1
    quiet_since = time.monotonic()
    while True:
        _, stored = await store.state_of(investigation_id)
        if stored != version:
            inv = await store.load(investigation_id)
            version = inv.version
            for ev in inv.evidence[evidence:]:
                yield frame("evidence", ev.card(), f"evidence:{ev.id}")
            evidence = len(inv.evidence)
            for call_id, question in asked(inv):
                if call_id not in questions:
                    questions.add(call_id)
                    yield frame("question", {"id": call_id, "question": question}, f"q:{call_id}")
            if inv.diagnosis is not None:
                shown = inv.diagnosis.model_dump_json()
                if shown != diagnosis:
                    diagnosis = shown
                    data = inv.diagnosis.model_dump(mode="json")
                    yield frame("diagnosis", data, f"diagnosis:v{version}")
            if inv.draft is not None and (inv.draft.version, inv.draft.hash) != draft:
                draft = (inv.draft.version, inv.draft.hash)
                data = {"version": draft[0], "hash": draft[1], "title": inv.draft.title}
                yield frame("draft", data, f"draft:{draft[0]}")
            if inv.state is not state:
                state = inv.state
                data = {"state": state, "stop_reason": inv.stop_reason, "version": version}
                yield frame("state", data, f"state:v{version}")
            quiet_since = time.monotonic()
            if over(inv):
                yield frame("end", {"state": inv.state, "superseded_by": inv.superseded_by}, "end")
                return
        elif time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
            quiet_since = time.monotonic()
            yield ": keep-alive\n\n"  # a comment: keeps proxies from closing an idle stream
        await asyncio.sleep(poll_seconds)
