"""Taking a request in: store the investigation and queue it, once per idempotency key.

The key names one creation. The same key with the same request returns the
investigation it created (and finishes that creation if its first attempt died
half-way); the same key with another request is refused (`KeyReused`, an
InputError). The natural keys:

- Slack `/investigate`: `slack:<team>:<channel>:<user>:<trigger_id>`. Slack gives every
  invocation its own trigger_id, so a redelivered or replayed command is one request,
  and two invocations of the same words are two.
- Slack's "Investigate this" modal: `slack:<team>:view:<view id>`; each opened modal has
  its own view id, so a redelivered submission is the same request.
- the CLI: `--idempotency-key KEY`, chosen by the caller (it only means something with
  a DATABASE_URL that outlives the run).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from agent.domain import Investigation, State
from agent.errors import ConcurrencyError, NotFound
from agent.ports import InvestigationStore, JobQueue
from bot.usecases.ports import Keys
from bot.worker import INVESTIGATE


def request_hash(request: dict[str, Any]) -> str:
    raw = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


async def open_once(
    store: InvestigationStore,
    jobs: JobQueue,
    keys: Keys | None,
    inv: Investigation,
    key: str | None = None,
    request: dict[str, Any] | None = None,
    replacing: Investigation | None = None,
) -> tuple[Investigation, bool]:
    """Store and queue `inv`, or the investigation `key` already named; True if the key
    (or the request, without one) is new. `replacing` is saved with the insert
    (`InvestigationStore.create`); its ConcurrencyError is the caller's."""
    seen, inv, fresh = await claim(store, jobs, keys, inv, key, request)
    if seen is not None:
        return seen, False
    try:
        await store.create(inv, replacing)
    except ConcurrencyError:
        if replacing is not None:
            raise
        # the other attempt stored it first
        return await store.load(inv.id), False
    await jobs.enqueue(INVESTIGATE, inv.id)
    return inv, fresh


async def claim(
    store: InvestigationStore,
    jobs: JobQueue,
    keys: Keys | None,
    inv: Investigation,
    key: str | None = None,
    request: dict[str, Any] | None = None,
) -> tuple[Investigation | None, Investigation, bool]:
    """Before `inv` is stored under `key`: (the investigation the key created before, or
    None; `inv`, with the key's id if its first attempt died before storing it; whether the
    key is new)."""
    if key is None or keys is None:
        return None, inv, True
    named = await keys.claim_key(key, request_hash(request or {}), inv.id)
    if named == inv.id:
        return None, inv, True
    try:
        existing = await store.load(named)
    except NotFound:
        # Its first attempt died before storing it (or is storing it right now).
        return None, inv.model_copy(update={"id": named}), False
    if existing.state is State.QUEUED:  # the first attempt may have died before this
        await jobs.enqueue(INVESTIGATE, existing.id)
    return existing, inv, False
