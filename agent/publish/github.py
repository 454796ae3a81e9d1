"""GitHub issues over the REST API. The write token is used here and nowhere else."""

from __future__ import annotations

import aiohttp

from agent.domain import Investigation
from agent.errors import IncidentBotError


class PublishFailed(IncidentBotError):
    """GitHub said no: nothing was created."""


class PublishUnknown(IncidentBotError):
    """The answer was lost: the issue may or may not exist."""


def marker(inv: Investigation) -> str:
    """Hidden in the body, so a lost answer can be settled by finding the issue later."""
    assert inv.draft is not None
    return f"<!-- incident-bot investigation={inv.id} draft={inv.draft.hash} -->"


class GitHubIssues:
    def __init__(self, api_url: str, token: str, *, timeout: float = 10.0) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self.timeout = timeout

    async def create_issue(self, inv: Investigation, labels: list[str]) -> tuple[int, str]:
        draft = inv.draft
        assert draft is not None and inv.approval is not None
        body = f"{draft.body}\n\n{marker(inv)}"
        url = f"{self.api_url}/repos/{draft.repository}/issues"
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "Idempotency-Key": inv.approval.idempotency_key,
        }
        payload = {"title": draft.title, "body": body, "labels": labels}
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as http,
                http.post(url, json=payload, headers=headers) as response,
            ):
                if response.status == 201:
                    created = await response.json()
                    return int(created["number"]), str(created["html_url"])
                text = (await response.text())[:200]
        except (
            TimeoutError,
            aiohttp.ClientConnectionError,
            aiohttp.ServerDisconnectedError,
        ) as exc:
            raise PublishUnknown(f"GitHub did not answer ({type(exc).__name__})") from None
        if response.status >= 500:
            raise PublishUnknown(f"GitHub answered {response.status}")
        raise PublishFailed(f"GitHub refused the issue ({response.status}): {text}")
