"""A fake Groq chat-completions API: an aiohttp server on 127.0.0.1, port 0.

::

    async with FakeChat(api_key="gsk-test") as chat:
        chat.script([
            429,                                                   # the SDK retries it
            {"tool_calls": [("sentry__search_issues", '{"query": "x"}')]},
            {"content": "done", "usage": (120, 8)},
        ])
        model = GroqModel("llama-test", api_key="gsk-test", base_url=chat.base_url)

It serves ``POST /openai/v1/chat/completions`` (where the groq SDK posts) with the real
wire format and answers the scripted responses in order. A response is either

- a dict ``{"content": str | None, "tool_calls": [(name, arguments_json_string)],
  "usage": (prompt_tokens, completion_tokens), "finish_reason": str}`` (all optional), or
- an int HTTP status (429, 500 …), answered with Groq's error body and a
  ``Retry-After`` header (``retry_after``, see below), or
- ``HOLD``: the request is never answered while the fake runs (``held`` counts them,
  ``wait_held(n)`` waits for the n-th); the moment to kill a client that waits on the model.

Without a scripted ``usage`` the usage is counted, not made up: prompt tokens from the
request's messages and tools, completion tokens from the answer, by ``count_tokens`` (a
word-and-punctuation tokenizer). ``policy``, a function of the request body, answers the
requests nothing is scripted for (a policy model driven by what it reads on the wire).

Every request is recorded (``requests``: the decoded bodies; ``raw``: the body text;
``authorizations``: the Authorization headers) in arrival order, retries included. A
request without ``Authorization: Bearer <api_key>`` gets 401. A body that breaks the
chat-completions rules a real server enforces (a tool message answering no earlier
tool call, a tool call left unanswered, arguments that are not a string, a bad tool
name …) gets 400 and is listed in ``problems``; so is a request with nothing scripted.

``delay`` (seconds) is waited before each answer, as a real model takes time to generate.

``retry_after`` defaults to "0.001": the groq SDK honours retry-after only when it is
above 0 (a ``Retry-After: 0`` falls back to its 0.5 s → 8 s backoff), so a tiny positive
value keeps retries instant.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

JSONDict = dict[str, Any]
Response = JSONDict | int
HOLD: JSONDict = {"hold": True}


def tool_call(name: str, arguments: JSONDict) -> JSONDict:
    """A scripted answer that calls one tool."""
    return {"content": None, "tool_calls": [(name, json.dumps(arguments))]}


PATH = "/openai/v1/chat/completions"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROLES = {"system", "user", "assistant", "tool"}
_ERRORS = {
    400: ("invalid_request_error", "bad_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    408: ("invalid_request_error", "request_timeout"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("tokens", "rate_limit_exceeded"),
}


class FakeChat:
    def __init__(
        self,
        api_key: str = "gsk-test-key",
        *,
        retry_after: str | None = "0.001",
        default_usage: tuple[int, int] | None = None,
        policy: Callable[[JSONDict], Response] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.api_key = api_key
        self.retry_after = retry_after
        self.default_usage = default_usage
        # Answers the requests nothing is scripted for, from the request body alone.
        self.policy = policy
        # Seconds before each answer: a model's generation time, so clients wait on I/O.
        self.delay = delay
        self.requests: list[JSONDict] = []
        self.raw: list[str] = []
        self.authorizations: list[str | None] = []
        self.statuses: list[int] = []
        self.problems: list[str] = []
        self._script: deque[Response] = deque()
        self.held = 0
        self._held_changed: asyncio.Condition | None = None
        self._release = asyncio.Event()
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeChat:
        self._held_changed = asyncio.Condition()
        app = web.Application()
        app.router.add_post(PATH, self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ test helpers

    def script(self, responses: list[Response]) -> None:
        """Queue responses; each request takes the next one."""
        for r in responses:
            if not isinstance(r, (dict, int)):
                raise TypeError(f"a scripted response is a dict or an int status, not {r!r}")
        self._script.extend(responses)

    async def wait_held(self, count: int = 1, timeout: float = 10) -> None:  # noqa: ASYNC109
        """Until ``count`` requests have reached a HOLD."""
        assert self._held_changed is not None, "FakeChat is not running"
        async with asyncio.timeout(timeout), self._held_changed:
            await self._held_changed.wait_for(lambda: self.held >= count)

    @property
    def remaining(self) -> int:
        return len(self._script)

    def messages(self, index: int = -1) -> list[JSONDict]:
        """The messages of one recorded request (the last by default)."""
        return self.requests[index]["messages"]

    # ------------------------------------------------------------------ serving

    async def _handle(self, request: web.Request) -> web.Response:
        text = await request.text()
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        auth = request.headers.get("Authorization")
        self.raw.append(text)
        self.requests.append(body if isinstance(body, dict) else {})
        self.authorizations.append(auth)

        if auth != f"Bearer {self.api_key}":
            return self._error(401, "Invalid API Key")
        problem = validate(body)
        if problem:
            self.problems.append(problem)
            return self._error(400, problem)
        if not self._script and self.policy is not None:
            self._script.append(self.policy(body))
        if not self._script:
            self.problems.append("no scripted response left")
            return self._error(400, "FakeChat: no scripted response left")
        step = self._script.popleft()
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(step, int):
            return self._error(step, f"scripted failure {step}")
        if step is HOLD:
            assert self._held_changed is not None
            async with self._held_changed:
                self.held += 1
                self._held_changed.notify_all()
            await self._release.wait()
            return self._error(503, "FakeChat: held and let go")
        return self._answer(body, step)

    def _answer(self, body: JSONDict, step: JSONDict) -> web.Response:
        n = next(self._ids)
        calls = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for i, (name, arguments) in enumerate(step.get("tool_calls") or [], 1)
        ]
        message: JSONDict = {"role": "assistant", "content": step.get("content")}
        if calls:
            message["tool_calls"] = calls
        usage = step.get("usage") or self.default_usage
        if usage is None:
            # Counted, not made up: the request's messages and tools in, the answer out.
            usage = (
                prompt_tokens_of(body),
                count_tokens(message.get("content"))
                + sum(
                    count_tokens(c["function"]["name"], c["function"]["arguments"]) for c in calls
                ),
            )
        prompt_tokens, completion_tokens = usage
        payload = {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": step.get("finish_reason")
                    or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "fp_fake",
            "x_groq": {"id": f"req_fake_{n}"},
        }
        self.statuses.append(200)
        return web.json_response(payload)

    def _error(self, status: int, message: str) -> web.Response:
        self.statuses.append(status)
        kind, code = _ERRORS.get(status, ("internal_server_error", "internal_server_error"))
        headers = {}
        if self.retry_after is not None and status not in (400, 401, 404):
            headers["Retry-After"] = self.retry_after
        return web.json_response(
            {"error": {"message": message, "type": kind, "code": code}},
            status=status,
            headers=headers,
        )


_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def count_tokens(*texts: str | None) -> int:
    """A simple tokenizer standing in for the model's: every word and every punctuation
    mark is one token. English prose comes out near a real BPE tokenizer's count; code
    and JSON a little above it."""
    return sum(len(_TOKEN.findall(t)) for t in texts if t)


MESSAGE_OVERHEAD = 4  # role and separators, as chat templates add them


def prompt_tokens_of(body: JSONDict) -> int:
    """The prompt tokens of a request: every message's text and tool calls, and the tool
    schemas as JSON."""
    total = 0
    for m in body.get("messages") or []:
        total += MESSAGE_OVERHEAD + count_tokens(m.get("content"))
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            total += count_tokens(fn.get("name"), fn.get("arguments"))
    if body.get("tools"):
        total += count_tokens(json.dumps(body["tools"], ensure_ascii=False))
    return total


def validate(body: Any) -> str | None:
    """What a real chat-completions server would refuse with 400, or None."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "'model' is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in _ROLES:
            return f"messages.{i}: unknown role {role!r}"
        if role == "tool":
            if m.get("tool_call_id") not in open_calls:
                return f"messages.{i}: tool_call_id {m.get('tool_call_id')!r} answers no tool call"
            open_calls.discard(m["tool_call_id"])
            if not isinstance(m.get("content"), str):
                return f"messages.{i}: a tool message needs string content"
            continue
        if open_calls:
            return f"messages.{i}: tool calls {sorted(open_calls)} have no tool message"
        if role == "assistant" and m.get("tool_calls"):
            for j, c in enumerate(m["tool_calls"]):
                fn = c.get("function") or {}
                if c.get("type") != "function" or not c.get("id"):
                    return f"messages.{i}.tool_calls.{j}: needs an id and type 'function'"
                if not isinstance(fn.get("arguments"), str):
                    return f"messages.{i}.tool_calls.{j}: arguments must be a string"
                open_calls.add(c["id"])
        elif not isinstance(m.get("content"), str):
            return f"messages.{i}: content must be a string"
    if open_calls:
        return f"tool calls {sorted(open_calls)} have no tool message"
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "'tools' must be an array"
        for k, t in enumerate(tools):
            fn = t.get("function") if isinstance(t, dict) else None
            if not isinstance(fn, dict) or t.get("type") != "function":
                return f"tools.{k}: needs type 'function' and a function"
            if not _TOOL_NAME.match(str(fn.get("name"))):
                return f"tools.{k}: invalid function name {fn.get('name')!r}"
            if not isinstance(fn.get("parameters", {}), dict):
                return f"tools.{k}: parameters must be an object"
        if body.get("tool_choice", "auto") not in ("none", "auto", "required") and not (
            isinstance(body["tool_choice"], dict) and body["tool_choice"].get("type") == "function"
        ):
            return "'tool_choice' must be none, auto, required or a named function"
    elif body.get("tool_choice") not in (None, "none"):
        return "'tool_choice' is only allowed when 'tools' are given"
    return None
