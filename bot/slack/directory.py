"""Slack's user groups as the use cases' Directory (approver_group)."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient


class SlackDirectory:
    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def members(self, group: str) -> list[str] | None:
        try:
            found = await self.client.usergroups_users_list(usergroup=group)
        except Exception:
            return None
        return [str(u) for u in found.get("users") or []]
