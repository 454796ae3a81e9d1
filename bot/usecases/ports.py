"""What the use cases need besides agent.ports' store and queue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class Keys(Protocol):
    """Requests taken in once: deliveries already seen, and creation idempotency keys
    (storage.idempotency implements it)."""

    async def first_delivery(self, event_id: str) -> bool: ...

    async def forget_event(self, event_id: str) -> None: ...

    async def claim_key(self, key: str, request_hash: str, investigation_id: str) -> str: ...


class Notify(Protocol):
    """Something changed in the database: workers may have a job, a thread is out of date."""

    def wake_workers(self) -> None: ...

    def changed(self, investigation_id: str) -> None: ...


class Directory(Protocol):
    """The members of a user group (Slack's usergroups); None when they cannot be read."""

    async def members(self, group: str) -> list[str] | None: ...


@dataclass(frozen=True)
class Callbacks:
    """Notify as two plain callables (the workers' wake-up, the thread sync's kick)."""

    wake_workers: Callable[[], None]
    changed: Callable[[str], None]
