"""Which Slack Web API calls are sent again automatically, and when.

A 429 means Slack did nothing: any call waits its Retry-After and goes again. A 5xx,
a timeout or a dropped connection leaves the outcome unknown: Slack may have done the
work. Only calls that read, or that set a state to the same value again, are re-sent
then. A post (chat.postMessage) is not: the thread sync looks for it by its metadata
before it sends it again (bot/slack/sync.py), and views.open spends its trigger.

chat.postEphemeral is re-sent: Slack keeps no trace of it to look for, so the choice is
between a notice shown twice to one person (it goes on reload and changes nothing) and a
refusal or a warning that never reaches them; the second is the silent loss we refuse.
"""

from __future__ import annotations

import asyncio
import random
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

# Reads, and writes whose repetition leaves the same state (the same text, the same view).
RESENDABLE = frozenset(
    {
        "auth.test",
        "chat.getPermalink",
        "chat.postEphemeral",  # see the module's docstring
        "chat.update",
        "conversations.history",
        "conversations.info",
        "conversations.replies",
        "usergroups.users.list",
        "users.info",
        "views.publish",
        "views.update",
        "apps.connections.open",  # a new socket URL each time; nothing is created
    }
)
# Errors Slack answers (with 200 or 5xx) when it cannot say whether the work was done.
UNKNOWN_ERRORS = frozenset(
    {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


def method_of(url: str) -> str:
    """The Web API method of a request URL (…/api/chat.postMessage → chat.postMessage)."""
    return urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]


def retry_after(response: HttpResponse) -> float | None:
    """Seconds from a Retry-After header, or None when it is missing or not a number."""
    for name, values in response.headers.items():
        if name.lower() == "retry-after" and values:
            try:
                seconds = float(values[0])
            except ValueError:
                return None
            return seconds if seconds >= 0 else None
    return None


def unknown_outcome(exc: BaseException) -> bool:
    """Whether a failed call may have been done by Slack all the same."""
    if isinstance(exc, SlackApiError):
        response = exc.response
        status = getattr(response, "status_code", 200)
        error = response.get("error") if response is not None else None
        return status >= 500 or error in UNKNOWN_ERRORS
    if isinstance(exc, aiohttp.ClientConnectorError):
        return False  # no connection, so nothing reached Slack
    return isinstance(exc, (TimeoutError, aiohttp.ClientError, OSError))


class SlackRetry(AsyncRetryHandler):
    """429 for every call (up to `max_retry_count` attempts again, waiting at most
    `longest_wait` each); an unknown outcome only for RESENDABLE ones (`unknown_retries`)."""

    def __init__(
        self,
        max_retry_count: int = 5,
        *,
        unknown_retries: int = 3,
        longest_wait: float = 120.0,
        interval_calculator: RetryIntervalCalculator | None = None,
    ) -> None:
        super().__init__(max_retry_count, interval_calculator or BackoffRetryIntervalCalculator())
        self.unknown_retries = unknown_retries
        self.longest_wait = longest_wait

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        resendable = method_of(request.url) in RESENDABLE
        again = state.current_attempt < self.unknown_retries
        if response is not None:
            if response.status_code == 429:
                wait = retry_after(response)
                return wait is None or wait <= self.longest_wait
            body = response.body or {}
            unknown = response.status_code >= 500 or body.get("error") in UNKNOWN_ERRORS
            return unknown and resendable and again
        if isinstance(error, aiohttp.ClientConnectorError):
            return again  # the request never left: Slack did nothing
        return error is not None and resendable and again and unknown_outcome(error)

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is not None and response.status_code == 429:
            wait = retry_after(response)
            duration = 1.0 + random.random() if wait is None else wait
        else:
            duration = self.interval_calculator.calculate_sleep_duration(state.current_attempt)
        state.next_attempt_requested = True
        await asyncio.sleep(duration)
        state.increment_current_attempt()
