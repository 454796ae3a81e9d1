"""The saga's `sentry_note` step: a note on the Sentry issue the investigation was about,
linking the published GitHub issue. Sentry's REST API (GroupNotesEndpoint) over aiohttp.

The write token (SENTRY_WRITE_TOKEN) is used here and nowhere else: it is not the read
token of the MCP server, no tool the model can call reaches this module, and no message
or exception carries it.

The note ends with a plain-text marker naming the investigation and the approval, so
`link` looks before it posts (a POST whose answer was lost is safe to send again).
Errors map as in agent.publish.github: a lost answer (timeout, dropped connection, 5xx)
→ `PublishUnknown`; a refusal (4xx) → `PublishFailed` with the status, `retryable` for
429 with its Retry-After.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp

from agent.domain import Investigation
from agent.errors import PublishFailed, PublishUnknown
from agent.publish.github import marker_fields, retry_after

NOTES = "/api/0/organizations/{org}/issues/{issue}/comments/"
PAGES = 10  # 1,000 notes on one issue: far more than ever happen
DUPLICATE = "You have already posted that comment."  # Sentry's 400 for a repeat in the hour


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    cursor: str | None  # the next page's, when Sentry says it has results
    retry_after: float | None = None


def sentry_issue(inv: Investigation) -> str | None:
    """The Sentry issue id of `inv.subject` ("sentry:<id>"), set by the loop."""
    kind, _, issue = (inv.subject or "").partition(":")
    if kind != "sentry" or not issue.strip():
        return None
    return issue.strip()


def note_marker(inv: Investigation) -> str:
    a = inv.approval
    assert a is not None
    return "incident-bot " + marker_fields(inv.id, a.hash, a.idempotency_key)


def note_text(inv: Investigation) -> str:
    a, draft = inv.approval, inv.draft
    assert a is not None and a.issue_url is not None
    title = " ".join(draft.title.split())[:120] if draft else ""
    line = f"incident-bot investigation {inv.id} is published as a GitHub issue: {a.issue_url}"
    if title:
        line += f" ({title})"
    return f"{line}\n\n{note_marker(inv)}"


class SentryNote:
    """A `Backlink` (agent.publish.publisher): a note on the investigation's Sentry issue."""

    name = "sentry_note"

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout: float = 10.0,
        pages: int = PAGES,
    ) -> None:
        self.base_url = base_url.rstrip("/").removesuffix("/api/0")
        self._token = token
        self._session = session  # the caller's, left open; else one per request
        self.timeout = timeout
        self.pages = pages

    def applies_to(self, inv: Investigation) -> bool:
        # The issue URL is not asked for here: the plan is built before the issue exists.
        return (
            sentry_issue(inv) is not None
            and bool(inv.scope.sentry_organization)
            and inv.approval is not None
        )

    async def link(self, inv: Investigation) -> str:
        issue = sentry_issue(inv)
        a = inv.approval
        if issue is None or a is None or a.issue_url is None:
            raise PublishFailed("there is no published issue to note on Sentry")
        path = self._path(inv, issue)
        if await self._mine(path, note_marker(inv)):
            return f"already noted on Sentry issue {issue}"
        what = "note on the Sentry issue"
        answer = await self._request(what, "POST", path, {"text": note_text(inv)}, tolerate={400})
        if answer.status == 400:
            if _detail(answer.body) == DUPLICATE:  # the same text, ours, is there
                return f"already noted on Sentry issue {issue}"
            raise _refused(what, answer, self._token)
        return f"noted on Sentry issue {issue}"

    def _path(self, inv: Investigation, issue: str) -> str:
        org = quote(inv.scope.sentry_organization, safe="")
        return NOTES.format(org=org, issue=quote(issue, safe=""))

    async def _mine(self, path: str, mark: str) -> list[str]:
        """The ids of the notes carrying `mark`, newest first (Sentry's order)."""
        found: list[str] = []
        cursor: str | None = None
        for _ in range(self.pages):
            query = f"?cursor={quote(cursor, safe='')}" if cursor else ""
            answer = await self._request("read the Sentry notes", "GET", path + query)
            for note in answer.body if isinstance(answer.body, list) else []:
                data = note.get("data") if isinstance(note, dict) else None
                text = data.get("text") if isinstance(data, dict) else None
                if isinstance(text, str) and mark in text and note.get("type") == "note":
                    found.append(str(note.get("id")))
            cursor = answer.cursor
            if cursor is None:
                break
        return found

    async def _request(
        self,
        what: str,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        *,
        tolerate: Collection[int] = (),
    ) -> Answer:
        """The one way out to Sentry. A 2xx, or a status in `tolerate`, is answered."""
        try:
            if self._session is not None:
                answer = await self._send(self._session, method, path, body)
            else:
                async with aiohttp.ClientSession() as session:
                    answer = await self._send(session, method, path, body)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise PublishUnknown(f"{what}: Sentry did not answer ({type(exc).__name__})") from None
        if 200 <= answer.status < 300 or answer.status in tolerate:
            return answer
        if answer.status >= 500:
            raise PublishUnknown(f"{what}: Sentry answered {answer.status}")
        raise _refused(what, answer, self._token)

    async def _send(
        self,
        session: aiohttp.ClientSession,
        method: str,
        path: str,
        body: dict[str, Any] | None,
    ) -> Answer:
        async with session.request(
            method,
            self.base_url + path,
            headers={"Authorization": f"Bearer {self._token}"},
            json=body,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            allow_redirects=False,  # never the token to another host
        ) as resp:
            raw = await resp.read()
            try:
                decoded: Any = await resp.json(content_type=None) if raw.strip() else None
            except ValueError:
                decoded = raw.decode("utf-8", "replace")[:200]
            # Only the cursor is taken from the Link header: the token goes to base_url alone.
            nxt = resp.links.get("next")
            cursor = None
            if nxt is not None and nxt.get("results") == "true":
                cursor = str(nxt.get("cursor") or "") or None
            return Answer(resp.status, decoded, cursor, retry_after(resp.headers))


def _detail(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("detail") or body)[:200]
    return str(body or "")[:200]


def _refused(what: str, answer: Answer, secret: str) -> PublishFailed:
    status = answer.status
    if status == 429:
        wait = answer.retry_after
        later = f", retry after {wait:.0f} s" if wait is not None else ""
        return PublishFailed(
            f"{what}: Sentry's rate limit (429){later}",
            status=429,
            retryable=True,
            retry_after=wait,
        )
    if status < 400:  # a redirect, not followed
        return PublishFailed(f"{what}: Sentry answered {status}", status=status)
    detail = _detail(answer.body)
    if secret:  # whatever the body says, the token goes no further
        detail = detail.replace(secret, "***")
    return PublishFailed(f"{what}: Sentry refused ({status}): {detail}", status=status)
