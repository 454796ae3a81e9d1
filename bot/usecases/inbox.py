"""Sentry webhook deliveries taken in after they were answered.

POST /hooks/sentry stores a delivery (storage.deliveries) and answers at once; an `Inbox`
in every process that serves takes the pending ones in — the alert's gates, then the run
is queued — and stores what it came to. A delivery is claimed under a lease: if the process
dies after answering, or in the middle of taking it in, the lease runs out and the next
claim (here after a restart, or another process) takes it in again. The investigation's
idempotency key is the delivery's Request-ID, so taking one in twice starts it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from typing import Any, Protocol

from bot.usecases.alerts import Alerts, Ignored, sentry_alert
from bot.usecases.results import Refused
from storage.deliveries import Delivery, Stored

log = logging.getLogger(__name__)

# A delivery that fails this often is stored as failed, not tried for ever.
MAX_ATTEMPTS = 5


class Deliveries(Protocol):
    """Where deliveries wait to be taken in (storage.deliveries.SqlDeliveries)."""

    async def record(
        self,
        request_id: str,
        body_hash: str,
        resource: str,
        payload: dict[str, Any],
        outcome: dict[str, Any] | None = None,
    ) -> bool: ...

    async def claim(self, holder: str, lease_seconds: float) -> Delivery | None: ...

    async def finish(self, request_id: str, holder: str, outcome: dict[str, Any]) -> bool: ...

    async def stored(self, request_id: str) -> Stored | None: ...


def key_of(request_id: str) -> str:
    return f"sentry-hook:{request_id}"


async def take_in(alerts: Alerts, request_id: str, resource: str, payload: Any) -> dict[str, Any]:
    """What one delivery comes to: {status: queued|joined|skipped|ignored, investigation,
    reason}."""
    alert = sentry_alert(resource, payload)
    if alert is None:
        return {"status": "ignored", "reason": f"nothing to investigate in {resource!r}"}
    outcome = await alerts.take(alert, key=key_of(request_id))
    if isinstance(outcome, Ignored | Refused):
        return {"status": "ignored", "reason": outcome.reason}
    inv = outcome.investigation
    if inv.state.value == "SKIPPED":
        return {"status": "skipped", "investigation": inv.id, "reason": inv.stop_reason}
    # Taken in again (a lease ran out), it is still the run this delivery queued.
    return {"status": "joined" if outcome.joined else "queued", "investigation": inv.id}


class Inbox:
    def __init__(
        self,
        deliveries: Deliveries,
        alerts: Alerts,
        *,
        lease_seconds: float = 30.0,
        poll_seconds: float = 1.0,
    ) -> None:
        self.deliveries, self.alerts = deliveries, alerts
        self.lease_seconds, self.poll_seconds = lease_seconds, poll_seconds
        self.holder = f"inbox:{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.wake = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        stopping = asyncio.create_task(stop.wait())
        stopping.add_done_callback(lambda _: self.wake.set())
        try:
            while not stop.is_set():
                self.wake.clear()
                try:
                    await self.drain()
                except Exception:  # the database is away: the poll tries again
                    log.exception("the Sentry deliveries could not be taken in")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.poll_seconds)
        finally:
            stopping.cancel()

    async def drain(self) -> int:
        """Take in every pending delivery this process can claim; how many."""
        taken = 0
        while (
            delivery := await self.deliveries.claim(self.holder, self.lease_seconds)
        ) is not None:
            await self.take(delivery)
            taken += 1
        return taken

    async def take(self, delivery: Delivery) -> None:
        try:
            outcome = await take_in(
                self.alerts, delivery.request_id, delivery.resource, delivery.payload
            )
        except Exception as exc:
            log.exception("taking in the Sentry delivery %s failed", delivery.request_id)
            if delivery.attempts < MAX_ATTEMPTS:
                return  # its lease runs out, and it is taken in again
            outcome = {"status": "failed", "reason": f"{type(exc).__name__} (logged)"}
        if not await self.deliveries.finish(delivery.request_id, self.holder, outcome):
            log.warning("the Sentry delivery %s was taken over", delivery.request_id)
