"""A fake Slack Web API: an aiohttp server on 127.0.0.1, port 0, that speaks the real wire format.

Point the real client at it::

    async with FakeSlack() as slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.api_url)
        await client.chat_postMessage(channel="C1", text="hi")
        assert slack.calls_to("chat.postMessage")[0]["text"] == "hi"

Requests are parsed the way Slack parses them: every method is served at ``/api/<method>`` for GET
and POST; parameters come from the query string, a form body (``application/x-www-form-urlencoded``
or ``multipart/form-data``) or a JSON body (``application/json``). The token comes from
``Authorization: Bearer <token>`` or from a ``token`` query/form field (never from a JSON body, as
on Slack). Structured fields sent form-encoded as JSON strings (``blocks``, ``attachments``,
``metadata``, ``view``) are decoded. Unknown methods answer ``{"ok": false, "error":
"unknown_method"}`` with HTTP 200, as Slack does.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import hmac
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from aiohttp import web

JSONDict = dict[str, Any]

_JSON_FIELDS = ("blocks", "attachments", "metadata", "view", "user_auth_blocks")


class Call(NamedTuple):
    """One request as it arrived: the Web API method and its parameters (token removed)."""

    method: str
    params: JSONDict


@dataclass
class _Fault:
    kind: str  # "fail", "drop_response", "hold" or "pass" (answered normally)
    status: int = 200
    retry_after: int | None = None
    error: str | None = None


class SlackApiFault(Exception):
    """Raised inside a method handler to answer ``{"ok": false, "error": ...}``."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def _truthy(value: Any) -> bool:
    return value is True or value == 1 or str(value).lower() in ("true", "1")


def _encode_cursor(ts: str) -> str:
    return base64.b64encode(f"next_ts:{ts}".encode()).decode()


def _decode_cursor(cursor: str) -> str:
    try:
        raw = base64.b64decode(cursor.encode(), validate=True).decode()
    except ValueError as e:
        raise SlackApiFault("invalid_cursor") from e
    if not raw.startswith("next_ts:"):
        raise SlackApiFault("invalid_cursor")
    return raw.removeprefix("next_ts:")


class FakeSlack:
    """Fake Slack Web API server (see module docstring).

    State, all readable by tests:

    - ``channels``: channel id → list of stored messages (roots and thread replies, ts order).
    - ``views``: view id → view (``views.open`` / ``views.update``); ``home_tabs``: user → view.
    - ``ephemerals``: every ``chat.postEphemeral`` as stored dicts.
    - ``calls``: every request, in arrival order, as ``Call(method, params)``.
    """

    def __init__(
        self,
        *,
        token: str | Iterable[str] = "xoxb-test",
        team_id: str = "T0FAKE",
        team: str = "Fake Workspace",
        bot_user_id: str = "U0BOT",
        bot_user_name: str = "incident-bot",
        bot_id: str = "B0BOT",
        app_id: str = "A0APP",
        channels: Iterable[str] | None = None,
        users: Mapping[str, JSONDict] | None = None,
        start_ts: str = "1700000000.000100",
    ) -> None:
        self.tokens: set[str] = {token} if isinstance(token, str) else set(token)
        self.team_id = team_id
        self.team = team
        self.bot_user_id = bot_user_id
        self.bot_user_name = bot_user_name
        self.bot_id = bot_id
        self.app_id = app_id
        # None: any channel id is accepted (created on first post); a set: others are not found.
        self.known_channels: set[str] | None = None if channels is None else set(channels)
        self.channels: dict[str, list[JSONDict]] = {c: [] for c in channels or ()}
        self.users: dict[str, JSONDict] = dict(users or {})
        self.views: dict[str, JSONDict] = {}
        self.home_tabs: dict[str, JSONDict] = {}
        self.ephemerals: list[JSONDict] = []
        self.usergroups: dict[str, list[str]] = {}  # user group id → member user ids
        # Socket Mode: the connected app's websockets, and every frame it sent back (acks).
        self.sockets: list[web.WebSocketResponse] = []
        self.socket_frames: list[JSONDict] = []
        self.calls: list[Call] = []
        sec, _, frac = start_ts.partition(".")
        self._next_micros = int(sec) * 1_000_000 + int(frac.ljust(6, "0"))
        self._view_seq = 0
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._release: asyncio.Event | None = None
        self.held: list[Call] = []  # calls applied whose answer is being held back
        self._cond: asyncio.Condition | None = None
        self._runner: web.AppRunner | None = None
        self.api_url = ""
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeSlack:
        self._cond = asyncio.Condition()
        self._release = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.api_url = f"http://127.0.0.1:{self.port}/api/"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ test helpers

    def calls_to(self, method: str) -> list[JSONDict]:
        """Parameters of every call to ``method``, in arrival order."""
        return [c.params for c in self.calls if c.method == method]

    def add_message(
        self,
        channel: str,
        text: str,
        *,
        user: str = "U0HUMAN",
        thread_ts: str | None = None,
        metadata: JSONDict | None = None,
    ) -> JSONDict:
        """Seed a message from a human user (no call recorded); returns a copy of it."""
        params: JSONDict = {"channel": channel, "text": text, "thread_ts": thread_ts}
        if metadata is not None:
            params["metadata"] = metadata
        return self._chat_post_message(params, human=user)["message"]

    def messages(self, channel: str) -> list[JSONDict]:
        """Every stored message of a channel (roots and replies), in ts order (copies)."""
        return copy.deepcopy(self.channels.get(channel, []))

    def thread(self, channel: str, ts: str) -> list[JSONDict]:
        """The root message and its replies, in order (copies); [] if there is no such message.

        ``ts`` may be the root's ts or any reply's ts.
        """
        root = self._find_root(channel, ts)
        if root is None:
            return []
        return copy.deepcopy(self._thread_of(channel, root))

    async def wait_for(
        self,
        predicate: Callable[[FakeSlack], bool],
        timeout: float = 5,  # noqa: ASYNC109
    ) -> None:
        """Wait until ``predicate(self)`` is true; re-checked after every call the fake handles."""
        assert self._cond is not None, "FakeSlack is not running"
        try:
            async with asyncio.timeout(timeout), self._cond:
                await self._cond.wait_for(lambda: predicate(self))
        except TimeoutError:
            methods = [c.method for c in self.calls]
            raise TimeoutError(
                f"FakeSlack.wait_for: condition not met in {timeout}s; calls so far: {methods}"
            ) from None

    def fail_next(
        self,
        method: str,
        status: int | None = None,
        retry_after: int = 1,
        error: str | None = None,
        count: int = 1,
    ) -> None:
        """Make the next ``count`` calls to ``method`` fail; they are NOT applied.

        - status 429 (the default when no ``error`` is given): HTTP 429, ``Retry-After:
          retry_after``, ``{"ok": false, "error": "ratelimited"}``.
        - any other status (5xx, 4xx): that status with ``{"ok": false, "error": error or
          "fatal_error"}``.
        - ``error`` with no status (or status 200): HTTP 200 ``{"ok": false, "error": error}``.
        """
        if status is None:
            status = 200 if error is not None else 429
        for _ in range(count):
            self._faults[method].append(
                _Fault("fail", status=status, retry_after=retry_after, error=error)
            )

    def clear_faults(self) -> int:
        """Forget the faults queued and not yet used (Slack is back); how many there were."""
        left = sum(len(queue) for queue in self._faults.values())
        self._faults.clear()
        return left

    def drop_response_next(self, method: str, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` are APPLIED, then the connection is closed
        without an answer (a lost response)."""
        for _ in range(count):
            self._faults[method].append(_Fault("drop_response"))

    def hold_next(self, method: str, after: int = 0) -> None:
        """After ``after`` more calls to ``method`` answered normally, the next one is APPLIED
        and its answer held back until ``release()`` (or the caller gives up): the moment
        to kill a client that is waiting on Slack. Held calls are listed in ``held``."""
        for _ in range(after):
            self._faults[method].append(_Fault("pass"))
        self._faults[method].append(_Fault("hold"))

    def release(self) -> None:
        """Answer every held call (and any later one) at once."""
        if self._release is not None:
            self._release.set()

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        try:
            params, token = await self._parse(request)
        except SlackApiFault as e:
            self.calls.append(Call(method, {}))
            await self._notify()
            return web.json_response({"ok": False, "error": e.error})
        self.calls.append(Call(method, params))

        fault = self._faults[method].popleft() if self._faults.get(method) else None
        if fault is not None and fault.kind == "fail":
            await self._notify()
            return self._fault_response(fault)

        body = self._dispatch(method, params, token)
        if fault is not None and fault.kind == "hold":
            self.held.append(self.calls[-1])
            await self._notify()
            assert self._release is not None
            await self._release.wait()
        await self._notify()
        if fault is not None and fault.kind == "drop_response":
            assert request.transport is not None
            request.transport.close()
        return web.json_response(body)

    async def _notify(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._cond.notify_all()

    @staticmethod
    def _fault_response(fault: _Fault) -> web.Response:
        if fault.status == 429:
            return web.json_response(
                {"ok": False, "error": fault.error or "ratelimited"},
                status=429,
                headers={"Retry-After": str(fault.retry_after or 0)},
            )
        return web.json_response(
            {"ok": False, "error": fault.error or "fatal_error"}, status=fault.status
        )

    @staticmethod
    async def _parse(request: web.Request) -> tuple[JSONDict, str | None]:
        params: JSONDict = dict(request.query)
        token: str | None = params.pop("token", None)
        if request.can_read_body:
            if request.content_type == "application/json":
                try:
                    body = await request.json()
                except ValueError as e:
                    raise SlackApiFault("invalid_json") from e
                if not isinstance(body, dict):
                    raise SlackApiFault("invalid_json")
                body.pop("token", None)  # Slack ignores a token in a JSON body
                params.update(body)
            elif request.content_type in (
                "application/x-www-form-urlencoded",
                "multipart/form-data",
            ):
                form = await request.post()
                for k, v in form.items():
                    if isinstance(v, str):
                        params[k] = v
                token = params.pop("token", token)
            elif "Content-Type" not in request.headers:
                raise SlackApiFault("missing_post_type")
            else:
                raise SlackApiFault("invalid_post_type")
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            token = auth.removeprefix("Bearer ").strip()
        for field in _JSON_FIELDS:
            if isinstance(params.get(field), str) and params[field]:
                try:
                    params[field] = json.loads(params[field])
                except ValueError as e:
                    raise SlackApiFault(f"invalid_{field}") from e
        return params, token

    def _dispatch(self, method: str, params: JSONDict, token: str | None) -> JSONDict:
        handler = self._methods().get(method)
        if handler is None:
            return {"ok": False, "error": "unknown_method", "req_method": method}
        if not token:
            return {"ok": False, "error": "not_authed"}
        if token not in self.tokens:
            return {"ok": False, "error": "invalid_auth"}
        try:
            return {"ok": True, **handler(params)}
        except SlackApiFault as e:
            return {"ok": False, "error": e.error}

    def _methods(self) -> dict[str, Callable[[JSONDict], JSONDict]]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.postEphemeral": self._chat_post_ephemeral,
            "chat.getPermalink": self._chat_get_permalink,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "views.open": self._views_open,
            "views.update": self._views_update,
            "views.publish": self._views_publish,
            "users.info": self._users_info,
            "reactions.add": self._reactions_add,
            "usergroups.users.list": self._usergroups_users_list,
            "apps.connections.open": self._apps_connections_open,
        }

    # ------------------------------------------------------------------ state helpers

    def _new_ts(self) -> str:
        m = self._next_micros
        self._next_micros += 100
        return f"{m // 1_000_000}.{m % 1_000_000:06d}"

    def _channel(self, params: JSONDict, key: str = "channel") -> str:
        channel = params.get(key)
        if not channel or not isinstance(channel, str):
            raise SlackApiFault("channel_not_found")
        if self.known_channels is not None and channel not in self.known_channels:
            raise SlackApiFault("channel_not_found")
        self.channels.setdefault(channel, [])
        return channel

    def _find(self, channel: str, ts: Any) -> JSONDict | None:
        return next((m for m in self.channels.get(channel, []) if m["ts"] == ts), None)

    def _find_root(self, channel: str, ts: Any) -> JSONDict | None:
        msg = self._find(channel, ts)
        if msg is not None and msg.get("thread_ts") not in (None, msg["ts"]):
            msg = self._find(channel, msg["thread_ts"])
        return msg

    def _thread_of(self, channel: str, root: JSONDict) -> list[JSONDict]:
        replies = [
            m
            for m in self.channels.get(channel, [])
            if m.get("thread_ts") == root["ts"] and m["ts"] != root["ts"]
        ]
        return [root, *replies]

    @staticmethod
    def _metadata(params: JSONDict) -> JSONDict | None:
        metadata = params.get("metadata")
        if metadata is None or metadata == "":
            return None
        if not isinstance(metadata, dict) or not isinstance(metadata.get("event_type"), str):
            raise SlackApiFault("invalid_metadata_format")
        payload = metadata.get("event_payload", {})
        if not isinstance(payload, dict):
            raise SlackApiFault("invalid_metadata_format")
        return {"event_type": metadata["event_type"], "event_payload": payload}

    @staticmethod
    def _content(params: JSONDict) -> JSONDict:
        text = params.get("text")
        blocks = params.get("blocks")
        attachments = params.get("attachments")
        if not text and not blocks and not attachments:
            raise SlackApiFault("no_text")
        if blocks is not None and not isinstance(blocks, list):
            raise SlackApiFault("invalid_blocks")
        content: JSONDict = {"text": text or ""}
        if blocks:
            content["blocks"] = blocks
        if attachments:
            content["attachments"] = attachments
        return content

    @staticmethod
    def _public(message: JSONDict, include_metadata: bool = True) -> JSONDict:
        out = copy.deepcopy(message)
        if not include_metadata:
            out.pop("metadata", None)
        return out

    # ------------------------------------------------------------------ methods

    def _auth_test(self, params: JSONDict) -> JSONDict:
        return {
            "url": "https://fake-workspace.slack.com/",
            "team": self.team,
            "user": self.bot_user_name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: JSONDict, human: str | None = None) -> JSONDict:
        channel = self._channel(params)
        content = self._content(params)
        metadata = self._metadata(params)
        root = None
        thread_ts = params.get("thread_ts")
        if thread_ts:
            root = self._find_root(channel, thread_ts)
            if root is None:
                # Stricter than Slack, which may post an unknown thread_ts as a top-level message.
                raise SlackApiFault("thread_not_found")
        ts = self._new_ts()
        author = human or self.bot_user_id
        message: JSONDict = {"type": "message", "user": author}
        if human is None:
            message.update(bot_id=self.bot_id, app_id=self.app_id)
        else:
            message["client_msg_id"] = f"fake-{ts}"
        message.update(team=self.team_id, ts=ts, **content)
        if metadata is not None:
            message["metadata"] = metadata
        if root is not None:
            message["thread_ts"] = root["ts"]
            message["parent_user_id"] = root.get("user")
            if _truthy(params.get("reply_broadcast", False)):
                message["subtype"] = "thread_broadcast"
            root["thread_ts"] = root["ts"]
            root["reply_count"] = root.get("reply_count", 0) + 1
            users = root.setdefault("reply_users", [])
            if author not in users:
                users.append(author)
            root["reply_users_count"] = len(users)
            root["latest_reply"] = ts
        self.channels[channel].append(message)
        return {"channel": channel, "ts": ts, "message": self._public(message)}

    def _chat_update(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        message = self._find(channel, params.get("ts"))
        if message is None:
            raise SlackApiFault("message_not_found")
        metadata = self._metadata(params)
        if "text" in params or "blocks" in params or "attachments" in params:
            content = self._content(params)
            message["text"] = content["text"]
            for key in ("blocks", "attachments"):
                if key in params:
                    if content.get(key):
                        message[key] = content[key]
                    else:
                        message.pop(key, None)
        if metadata is not None:
            message["metadata"] = metadata
        message["edited"] = {"user": self.bot_user_id, "ts": self._new_ts()}
        return {
            "channel": channel,
            "ts": message["ts"],
            "text": message["text"],
            "message": self._public(message),
        }

    def _chat_post_ephemeral(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        user = params.get("user")
        if not user:
            raise SlackApiFault("user_not_in_channel")
        content = self._content(params)
        ts = self._new_ts()
        self.ephemerals.append(
            {
                "channel": channel,
                "user": user,
                "message_ts": ts,
                "thread_ts": params.get("thread_ts"),
                **content,
            }
        )
        return {"message_ts": ts}

    def _chat_get_permalink(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        message = self._find(channel, params.get("message_ts"))
        if message is None:
            raise SlackApiFault("message_not_found")
        p_ts = message["ts"].replace(".", "")
        link = f"https://fake-workspace.slack.com/archives/{channel}/p{p_ts}"
        if message.get("thread_ts") not in (None, message["ts"]):
            link += f"?thread_ts={message['thread_ts']}&cid={channel}"
        return {"channel": channel, "permalink": link}

    def _conversations_replies(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        root = self._find_root(channel, params.get("ts"))
        if root is None:
            raise SlackApiFault("thread_not_found")
        try:
            limit = int(params.get("limit") or 1000)
        except ValueError as e:
            raise SlackApiFault("invalid_limit") from e
        limit = max(1, min(limit, 1000))
        include_metadata = _truthy(params.get("include_all_metadata", False))
        messages = self._thread_of(channel, root)
        cursor = params.get("cursor")
        if cursor:
            start_ts = _decode_cursor(cursor)
            messages = [m for m in messages if float(m["ts"]) >= float(start_ts)]
        page, rest = messages[:limit], messages[limit:]
        body: JSONDict = {
            "messages": [self._public(m, include_metadata) for m in page],
            "has_more": bool(rest),
        }
        if rest:
            body["response_metadata"] = {"next_cursor": _encode_cursor(rest[0]["ts"])}
        return body

    def _conversations_history(self, params: JSONDict) -> JSONDict:
        """Top-level messages of a channel, newest first, as Slack pages them."""
        channel = self._channel(params)
        try:
            limit = max(1, min(int(params.get("limit") or 100), 1000))
        except ValueError as e:
            raise SlackApiFault("invalid_limit") from e
        oldest = float(params.get("oldest") or 0)
        include_metadata = _truthy(params.get("include_all_metadata", False))
        roots = [
            m
            for m in self.channels.get(channel, [])
            if float(m["ts"]) > oldest and (not m.get("thread_ts") or m.get("thread_ts") == m["ts"])
        ]
        roots.reverse()
        cursor = params.get("cursor")
        if cursor:
            start_ts = _decode_cursor(cursor)
            roots = [m for m in roots if float(m["ts"]) <= float(start_ts)]
        page, rest = roots[:limit], roots[limit:]
        body: JSONDict = {
            "messages": [self._public(m, include_metadata) for m in page],
            "has_more": bool(rest),
        }
        if rest:
            body["response_metadata"] = {"next_cursor": _encode_cursor(rest[0]["ts"])}
        return body

    def _new_view(self, view: Any, *, previous: JSONDict | None = None) -> JSONDict:
        if not isinstance(view, dict) or "type" not in view:
            raise SlackApiFault("invalid_arguments")
        if previous is None:
            self._view_seq += 1
            view_id = f"V{self._view_seq:010d}"
        else:
            view_id = previous["id"]
        self._view_seq += 1
        return {
            "id": view_id,
            "team_id": self.team_id,
            "type": view["type"],
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "external_id": view.get("external_id", ""),
            "state": {"values": {}},
            "hash": f"{int(time.time())}.{self._view_seq:08x}",
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "root_view_id": view_id,
            "previous_view_id": None,
            "app_id": self.app_id,
            "bot_id": self.bot_id,
        }

    def _views_open(self, params: JSONDict) -> JSONDict:
        if not params.get("trigger_id") and not params.get("interactivity_pointer"):
            raise SlackApiFault("invalid_arguments")
        view = self._new_view(params.get("view"))
        self.views[view["id"]] = view
        return {"view": copy.deepcopy(view)}

    def _views_update(self, params: JSONDict) -> JSONDict:
        current = None
        if params.get("view_id"):
            current = self.views.get(params["view_id"])
        elif params.get("external_id"):
            current = next(
                (v for v in self.views.values() if v["external_id"] == params["external_id"]),
                None,
            )
        else:
            raise SlackApiFault("invalid_arguments")
        if current is None:
            raise SlackApiFault("not_found")
        if params.get("hash") and params["hash"] != current["hash"]:
            raise SlackApiFault("hash_conflict")
        view = self._new_view(params.get("view"), previous=current)
        self.views[view["id"]] = view
        return {"view": copy.deepcopy(view)}

    def _views_publish(self, params: JSONDict) -> JSONDict:
        user_id = params.get("user_id")
        if not user_id:
            raise SlackApiFault("invalid_arguments")
        current = self.home_tabs.get(user_id)
        if current is not None and params.get("hash") and params["hash"] != current["hash"]:
            raise SlackApiFault("hash_conflict")
        view = self._new_view(params.get("view"), previous=current)
        self.home_tabs[user_id] = view
        return {"view": copy.deepcopy(view)}

    def _users_info(self, params: JSONDict) -> JSONDict:
        user_id = params.get("user")
        if not user_id:
            raise SlackApiFault("user_not_found")
        if user_id in self.users:
            return {"user": copy.deepcopy(self.users[user_id])}
        is_bot = user_id == self.bot_user_id
        name = self.bot_user_name if is_bot else user_id.lower()
        return {
            "user": {
                "id": user_id,
                "team_id": self.team_id,
                "name": name,
                "real_name": name,
                "deleted": False,
                "is_bot": is_bot,
                "tz": "Etc/UTC",
                "tz_label": "Coordinated Universal Time",
                "tz_offset": 0,
                "profile": {"real_name": name, "display_name": name},
            }
        }

    def _apps_connections_open(self, params: JSONDict) -> JSONDict:
        return {"url": f"ws://127.0.0.1:{self.port}/link"}

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode's websocket: hello, then envelopes from send_envelope; acks recorded."""
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "debug_info": {}})
        await self._notify()
        async for frame in ws:
            if frame.type == web.WSMsgType.TEXT:
                self.socket_frames.append(json.loads(frame.data))
                await self._notify()
        self.sockets.remove(ws)
        return ws

    async def send_envelope(self, kind: str, payload: JSONDict) -> str:
        """Deliver a request to the connected app as Socket Mode does; returns its envelope id."""
        envelope_id = f"env-{len(self.socket_frames)}-{self._new_ts()}"
        for ws in list(self.sockets):
            await ws.send_json(
                {
                    "envelope_id": envelope_id,
                    "type": kind,
                    "payload": payload,
                    "accepts_response_payload": kind != "events_api",
                    "retry_attempt": 0,
                }
            )
        return envelope_id

    def _usergroups_users_list(self, params: JSONDict) -> JSONDict:
        group = params.get("usergroup")
        if group not in self.usergroups:
            raise SlackApiFault("no_such_subteam")
        return {"users": list(self.usergroups[group])}

    def _reactions_add(self, params: JSONDict) -> JSONDict:
        channel = self._channel(params)
        name = params.get("name")
        if not name:
            raise SlackApiFault("invalid_name")
        message = self._find(channel, params.get("timestamp"))
        if message is None:
            raise SlackApiFault("message_not_found")
        reactions = message.setdefault("reactions", [])
        reaction = next((r for r in reactions if r["name"] == name), None)
        if reaction is None:
            reaction = {"name": name, "users": [], "count": 0}
            reactions.append(reaction)
        if self.bot_user_id in reaction["users"]:
            raise SlackApiFault("already_reacted")
        reaction["users"].append(self.bot_user_id)
        reaction["count"] += 1
        return {}


def signed_headers(
    body: str,
    secret: str,
    *,
    timestamp: int | None = None,
    content_type: str = "application/x-www-form-urlencoded",
) -> dict[str, str]:
    """The headers Slack sends with a request: v0 HMAC-SHA256 over "v0:{ts}:{body}"."""
    ts = str(timestamp if timestamp is not None else int(time.time()))
    mac = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={mac}",
    }
