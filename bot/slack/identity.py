"""Who the bot is (auth.test), resolved at start, never on a request's path.

Bolt's default authorization calls auth.test on the first request, before the ack (each
concurrent first request its own), and answers "reinstall" when that call fails. Here
`run` resolves the identity in the background at start, retrying until Slack answers,
and again when the client's token changes; the identity is Bolt's `authorize`, which
only reads what is known.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

import aiohttp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Identity:
    token: str = field(repr=False)  # the token it was resolved for: never in a log
    team_id: str | None
    enterprise_id: str | None
    bot_user_id: str | None
    bot_id: str | None
    url: str | None  # the workspace's, for permalinks
    scopes: str | None


class BotIdentity(AsyncAuthorize):
    def __init__(
        self, client: AsyncWebClient, *, retry_seconds: float = 1.0, longest_retry: float = 60.0
    ) -> None:
        self.client = client
        self.retry_seconds = retry_seconds
        self.longest_retry = longest_retry
        self.current: Identity | None = None
        self._call: asyncio.Task[Identity] | None = None
        self._stale = asyncio.Event()  # a request came with a token not resolved yet

    def bolt_client(self) -> AsyncWebClient:
        """Bolt's client: the same endpoint and retry policy, no token. Bolt takes each
        request's token from the authorize result (given one here, it warns it ignores it)."""
        c = self.client
        return AsyncWebClient(
            base_url=c.base_url,
            timeout=c.timeout,
            ssl=c.ssl,
            proxy=c.proxy,
            session=c.session,
            headers=c.headers,
            logger=c.logger,
            retry_handlers=c.retry_handlers,
        )

    def fresh(self) -> Identity | None:
        """The identity, if it was resolved for the client's current token."""
        known = self.current
        return known if known is not None and known.token == self.client.token else None

    async def resolve(self) -> Identity:
        """The identity for the current token: one auth.test, shared by concurrent callers."""
        known = self.fresh()
        if known is not None:
            return known
        if self._call is None or self._call.done():
            self._call = asyncio.create_task(self._auth_test())
        return await asyncio.shield(self._call)

    async def run(self, stop: asyncio.Event) -> None:
        """Resolve at start, retrying with a growing pause; again whenever it goes stale.
        Stopping cancels a call in flight (a slow auth.test, a retry's pause)."""
        work = asyncio.create_task(self._keep_resolved())
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait([work, stopping], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, stopping, self._call):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    async def _keep_resolved(self) -> None:
        delay = self.retry_seconds
        while True:
            if self.fresh() is not None:
                await self._stale.wait()
                self._stale.clear()
                continue
            try:
                await self.resolve()
                delay = self.retry_seconds
            except (SlackApiError, aiohttp.ClientError, TimeoutError, OSError) as exc:
                log.warning("auth.test failed (%s); trying again in %.0f s", _why(exc), delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.longest_retry)

    async def __call__(
        self,
        *,
        context: AsyncBoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult:
        """Bolt's authorize: what is known now, never a call to Slack. Before the first
        auth.test has answered, the bot's own ids are unknown (Bolt then cannot drop the
        bot's own events by id; the listeners skip messages that carry a bot_id)."""
        token = self.client.token or ""
        known = self.current
        if known is None or known.token != token:
            self._stale.set()  # run() resolves it for this token
        return AuthorizeResult(
            enterprise_id=known.enterprise_id if known else enterprise_id,
            team_id=known.team_id if known else team_id,
            bot_user_id=known.bot_user_id if known else None,
            bot_id=known.bot_id if known else None,
            bot_token=token,
            bot_scopes=known.scopes if known else None,
            user_id=user_id,
        )

    async def _auth_test(self) -> Identity:
        token = self.client.token or ""
        answer = await self.client.auth_test()
        identity = Identity(
            token=token,
            team_id=answer.get("team_id"),
            enterprise_id=answer.get("enterprise_id"),
            bot_user_id=answer.get("user_id"),
            bot_id=answer.get("bot_id"),
            url=answer.get("url"),
            scopes=answer.headers.get("x-oauth-scopes"),
        )
        if self.client.token == token:  # not rotated meanwhile
            self.current = identity
        return identity


def _why(exc: BaseException) -> str:
    if isinstance(exc, SlackApiError) and exc.response is not None:
        return f"{exc.response.status_code} {exc.response.get('error')}"
    return type(exc).__name__
