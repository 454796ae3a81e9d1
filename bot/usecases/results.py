"""Who asks, and what they get: a `Done` or a typed `Refused`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agent.domain import Investigation, Receipt

RefusalKind = Literal["forbidden", "invalid", "conflict", "not_found"]


@dataclass(frozen=True)
class Actor:
    """The person behind a request and where it came from, as the surface vouches for it
    (Slack: a signed payload's user, team and channel)."""

    user: str
    surface: str = "slack"
    team: str | None = None
    channel: str | None = None
    # The projects whose drafts this caller may approve, as a surface that vouches for its
    # callers says (an HTTP token's role); Slack's approvers come from the projects file.
    approves: frozenset[str] = frozenset()
    # The language the caller reads (Slack's user locale, HTTP's Accept-Language).
    language: str | None = None


@dataclass(frozen=True)
class Refused:
    """Nothing changed, and why. `field` names the input the reason is about (a modal's
    block, an API field) when there is one."""

    kind: RefusalKind
    reason: str
    field: str | None = None


@dataclass(frozen=True)
class Done:
    """The request was carried out, or had been already (`fresh` False: a repeat).
    `note` is something to tell the person (e.g. where the issue was published); `joined`:
    a new request was coalesced into the run already on its Sentry issue."""

    investigation: Investigation
    fresh: bool = True
    note: str | None = None
    receipt: Receipt | None = None
    joined: bool = False
