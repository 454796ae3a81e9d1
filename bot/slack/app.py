"""The Slack app: thin Bolt listeners that ack at once and hand the work to the use cases.

Listeners (commands, actions, views, events) parse a payload, call the application
layer (bot/usecases) and show a refusal to the one person who asked; they never
investigate, post cards or publish themselves. Work after the ack that fails is told
to that person too (`tell_failure`), not only logged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.slack import actions, blocks, commands, events, views
from bot.slack.identity import BotIdentity
from bot.slack.reply import tell_failure
from bot.usecases.investigations import Investigations
from storage.store import SqlStore
from storage.surface import SqlSurfaceMessages

log = logging.getLogger(__name__)

MODAL_NOT_SAVED = "Not saved: the database refused the write. Please try again."
MODAL_FAILED = "Saving failed; it may not have been saved. Please try again."


@dataclass
class Deps:
    cases: Investigations
    store: SqlStore  # App Home lists a person's recent investigations
    shown: SqlSurfaceMessages  # which investigation a thread reply is about


Listener = Callable[..., Awaitable[None]]
Failed = Callable[[BaseException, dict[str, Any]], Awaitable[None]]


class AfterAck:
    """Ack in the request and run the listener's work after the response.

    Bolt's ack-then-continue mode polls for the ack every 10 ms, and its lazy
    listeners deep-copy the request with its client (~2 ms each); this answers
    Slack in a fraction of a millisecond. The work names the arguments it wants
    (body, action, view, event), as a Bolt listener would.

    Acks come first: work queues until no ack has been given for `quiet` seconds (or
    its oldest item has waited `longest_wait`), then runs `at_once` at a time. A burst
    of commands is answered before any of them touches the database or wakes a worker,
    and one drainer task, not one timer per request, watches for the pause.
    """

    def __init__(
        self,
        at_once: int = 8,
        quiet: float = 0.005,
        longest_wait: float = 0.25,
        failed: Failed | None = None,
    ):
        self.quiet, self.longest_wait = quiet, longest_wait
        # Told of work that raised, with the request's body (build_app: an ephemeral).
        self.failed = failed
        self._slots = asyncio.Semaphore(at_once)
        self._last_ack = 0.0
        self._queued: deque[tuple[float, Listener, list[str], dict[str, Any]]] = deque()
        self._drainer: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()  # held so the loop keeps them

    def __call__(self, register: Callable[..., Any]) -> Callable[[Listener], Listener]:
        def decorate(work: Listener) -> Listener:
            wanted = list(inspect.signature(work).parameters)
            # The body too, whatever the work names: a failure is told to whoever it names.
            injected = ["ack", *wanted, *([] if "body" in wanted else ["body"])]

            async def ack_then(ack: AsyncAck, **kwargs: Any) -> None:
                await ack()
                self._last_ack = now = time.monotonic()
                self._queued.append((now, work, wanted, kwargs))
                if self._drainer is None or self._drainer.done():
                    self._drainer = asyncio.create_task(self._drain())

            # Bolt injects the arguments a listener's signature names.
            ack_then.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in injected]
            )
            register(ack_then)
            return work

        return decorate

    async def _drain(self) -> None:
        while self._queued:
            oldest = self._queued[0][0]
            wait = min(self._last_ack + self.quiet, oldest + self.longest_wait) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            await self._slots.acquire()
            _, work, wanted, kwargs = self._queued.popleft()
            task = asyncio.create_task(self._run(work, wanted, kwargs))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def finish(self) -> None:
        """Run what is queued now without waiting for a pause, and wait for all of it: a
        process that stops after its last ack loses none of the work it acked."""
        self.quiet = self.longest_wait = 0.0
        if self._drainer is not None:
            await self._drainer
        await asyncio.gather(*self._running, return_exceptions=True)

    async def _run(self, work: Listener, wanted: list[str], kwargs: dict[str, Any]) -> None:
        try:
            await work(**{name: kwargs[name] for name in wanted})
        except Exception as exc:
            log.exception("listener %s failed", work.__name__)
            if self.failed is not None:
                try:
                    await self.failed(exc, kwargs.get("body") or {})
                except Exception:
                    log.exception("telling the user that %s failed failed", work.__name__)
        finally:
            self._slots.release()


def build_app(
    client: AsyncWebClient,
    signing_secret: str,
    deps: Deps,
    after_ack: AfterAck | None = None,
    identity: BotIdentity | None = None,
) -> AsyncApp:
    # Listeners that need the response (a modal's errors) answer inline; the rest ack
    # at once and work after it (after_ack). Requests are authorized from the identity
    # resolved at start, never with an auth.test before the ack (bot.slack.identity).
    identity = identity or BotIdentity(client)
    app = AsyncApp(
        client=identity.bolt_client(),
        authorize=identity,
        signing_secret=signing_secret,
        process_before_response=True,
    )
    after_ack = after_ack or AfterAck()

    async def failed(error: BaseException, body: dict[str, Any]) -> None:
        await tell_failure(client, error, body)

    after_ack.failed = failed

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> BoltResponse | None:
        """A listener that answers inline failed: a modal says so and stays open (nothing
        typed is lost); anything else is told like a failure after the ack."""
        log.error("a listener failed", exc_info=error)
        if body.get("type") == "view_submission":
            text = MODAL_NOT_SAVED if isinstance(error, SQLAlchemyError) else MODAL_FAILED
            callback = (body.get("view") or {}).get("callback_id")
            errors = {"question" if callback == blocks.CALLBACK_INVESTIGATE else "title": text}
            return BoltResponse(
                status=200,
                body=json.dumps({"response_action": "errors", "errors": errors}),
                headers={"content-type": ["application/json"]},
            )
        await failed(error, body)
        return None

    cases = deps.cases
    commands.register(app, after_ack, client, cases)
    actions.register(app, after_ack, client, cases)
    views.register(app, after_ack, client, cases)
    events.register(app, after_ack, client, cases, deps.store, deps.shown)
    return app
