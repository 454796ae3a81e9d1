"""The HTTP API over real HTTP: FastAPI mounted in the aiohttp app that serves Bolt, on
port 0, with the real worker, store and offline investigator, and a fake GitHub."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from agent.domain import State
from agent.publish.github import GitHubIssues
from bot.config import Project, Projects, Settings
from bot.http.mount import attach
from bot.runtime import Runtime
from bot.serve import assemble, slack_client
from bot.usecases.inbox import Inbox
from recorded.scenario import clone, load_scenario
from storage.db import create_engine, create_schema
from storage.deliveries import SqlDeliveries
from storage.store import SqlStore
from tests.bot.sentry_faults import held_calls
from tests.fakes.github import FakeGitHub
from tests.fakes.slack import FakeSlack

TOKENS = {"alice": "tok-alice-operator", "bob": "tok-bob-approver", "vic": "tok-vic-viewer"}
OPERATORS = """
[operators.alice]
role = "operator"
projects = ["orders"]

[operators.bob]
role = "approver"
projects = ["*"]

[operators.vic]
role = "viewer"
"""


@dataclass
class Api:
    base: str
    http: aiohttp.ClientSession
    store: SqlStore
    github: FakeGitHub
    runtime: Runtime
    project: str
    slack: FakeSlack
    deliveries: SqlDeliveries
    inbox: Inbox

    async def outcome(self, request_id: str, timeout: float = 30) -> dict[str, Any]:  # noqa: ASYNC109
        """What a Sentry delivery answered `accepted` came to, once it is taken in."""
        pause = 0.02
        async with asyncio.timeout(timeout):
            while True:
                found = await self.deliveries.outcome(request_id)
                if found is not None:
                    return found
                # Backing off: a hundred waiters polling fast starve the inbox they wait on.
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.5)

    async def call(
        self,
        method: str,
        path: str,
        who: str | None = "alice",
        body: Any = None,
        headers: dict[str, str] | None = None,
        data: bytes | None = None,
    ) -> tuple[int, dict[str, Any], Any]:
        sent = dict(headers or {})
        if who is not None:
            sent["Authorization"] = f"Bearer {TOKENS.get(who, who)}"
        kwargs: dict[str, Any] = {"headers": sent}
        if data is not None:
            kwargs["data"] = io.BytesIO(data)
        elif body is not None:
            kwargs["json"] = body
        async with self.http.request(method, self.base + path, **kwargs) as response:
            text = await response.text()
            parsed = json.loads(text) if text else None
            return response.status, dict(response.headers), parsed

    async def start(self, question: str = "errores al guardar pedidos", **headers: str) -> str:
        status, sent, body = await self.call(
            "POST",
            "/investigations",
            body={"project": self.project, "question": question},
            headers=headers,
        )
        assert status == 202, body
        assert sent["Location"] == f"/investigations/{body['id']}"
        return str(body["id"])

    async def settled(self, inv_id: str, *states: State, timeout: float = 20) -> Any:  # noqa: ASYNC109
        async with asyncio.timeout(timeout):
            while True:
                inv = await self.store.load(inv_id)
                if inv.state in states:
                    return inv
                await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running_api(
    folder: Path,
    tmp: Path,
    environ: dict[str, str] | None = None,
    max_concurrent: int | None = None,
    database: Path | None = None,
    **project_settings: Any,
) -> AsyncIterator[Api]:
    """`database`: the SQLite file (default in `tmp`), which another run may share."""
    scenario = load_scenario(folder)
    s = scenario.scope
    project = Project.for_scope(
        s, **({"channels": ["C0ORDERS"], "require_other_approver": True} | project_settings)
    )
    projects = Projects(projects={project.key: project})
    engine = create_engine(f"sqlite+aiosqlite:///{database or tmp / 'api.db'}")
    await create_schema(engine)
    config = tmp / "projects.toml"
    config.write_text(OPERATORS.replace('"orders"', f'"{project.key}"'))
    env = {"INCIDENT_BOT_API_TOKENS": ",".join(f"{k}={v}" for k, v in TOKENS.items())}
    env |= environ or {}
    repo = await clone(scenario, tmp)
    runtime = Runtime.recorded(scenario, repo)
    stop = asyncio.Event()
    async with (
        FakeSlack(start_ts=f"{time.time():.6f}") as slack,
        FakeGitHub(token="ghs-test", repos=[s.repository]) as gh,
        aiohttp.ClientSession() as http,
    ):
        await runtime.start()
        client = slack_client(Settings(slack_bot_token="xoxb-test", slack_api_url=slack.api_url))
        bot = assemble(
            client,
            engine,
            runtime,
            projects,
            "secret",
            publisher=GitHubIssues(gh.api_url, "ghs-test"),
            max_concurrent=max_concurrent,
        )
        web_app = bot.web_app(path="/slack/events")
        attach(web_app, bot.cases, bot.store, env, config, bot.inbox)
        runner = web.AppRunner(web_app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        tasks = bot.run(stop)
        try:
            yield Api(
                f"http://127.0.0.1:{port}",
                http,
                bot.store,
                gh,
                runtime,
                project.key,
                slack,
                SqlDeliveries(engine),
                bot.inbox,
            )
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
            await runner.cleanup()
            await runtime.aclose()
            await engine.dispose()


@pytest.fixture
async def api(built_scenarios, tmp_path) -> AsyncIterator[Api]:
    async with running_api(built_scenarios["orders"], tmp_path) as a:
        yield a


async def events(api: Api, inv_id: str, until: str, who: str = "vic") -> list[tuple[str, Any]]:
    """The event stream read over HTTP, frame by frame, up to the first `until` event."""
    got: list[tuple[str, Any]] = []
    headers = {"Authorization": f"Bearer {TOKENS[who]}"}
    async with api.http.get(f"{api.base}/investigations/{inv_id}/events", headers=headers) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/event-stream")
        event = None
        async with asyncio.timeout(20):
            async for raw in r.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                elif line.startswith("data: ") and event:
                    got.append((event, json.loads(line.removeprefix("data: "))))
                    if event == until:
                        return got
    raise AssertionError(f"the stream ended before {until}: {got}")


async def test_every_route_wants_a_valid_token(api):
    for method, path in [
        ("POST", "/investigations"),
        ("GET", "/investigations"),
        ("GET", "/investigations/x"),
        ("PUT", "/investigations/x/draft"),
        ("POST", "/investigations/x/messages"),
        ("POST", "/investigations/x/issue"),
        ("POST", "/investigations/x/rerun"),
        ("GET", "/investigations/x/events"),
    ]:
        for who in (None, "wrong-token", ""):
            status, headers, body = await api.call(method, path, who, body={})
            assert status == 401, (method, path, who, body)
            assert body["error"]["code"] == "unauthorized"
            assert headers["WWW-Authenticate"] == "Bearer"
    assert await api.store.recent(None, 10) == []


async def test_start_is_idempotent_per_key_and_checks_roles_and_input(api):
    project = api.project
    key = {"Idempotency-Key": "k-1"}
    body = {"project": project, "question": "errores al guardar pedidos"}
    status, headers, first = await api.call("POST", "/investigations", body=body, headers=key)
    assert status == 202 and headers["Location"] == f"/investigations/{first['id']}"
    status, headers, again = await api.call("POST", "/investigations", body=body, headers=key)
    assert status == 202 and again["id"] == first["id"]
    assert headers["Idempotent-Replayed"] == "true"
    other = {**body, "question": "something else entirely"}
    status, _, refused = await api.call("POST", "/investigations", body=other, headers=key)
    assert status == 409 and refused["error"]["code"] == "conflict"
    # The same key from another operator is another request.
    status, _, bobs = await api.call("POST", "/investigations", "bob", body=body, headers=key)
    assert status == 202 and bobs["id"] != first["id"]

    status, _, e = await api.call("POST", "/investigations", "vic", body=body)
    assert status == 403 and e["error"]["code"] == "forbidden"
    status, _, e = await api.call("POST", "/investigations", body={**body, "project": "nope"})
    assert status == 422 and e["error"]["field"] == "project"
    status, _, e = await api.call("POST", "/investigations", body={**body, "question": ""})
    assert status == 422 and e["error"]["field"] == "question"
    status, _, e = await api.call("POST", "/investigations", body={**body, "extra": 1})
    assert status == 422
    window = {**body, "since": "2026-11-29T00:00:00Z", "until": "2026-11-28T00:00:00Z"}
    status, _, e = await api.call("POST", "/investigations", body=window)
    assert status == 422 and "window" in e["error"]["message"]
    status, _, e = await api.call(
        "POST", "/investigations", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert status == 422 and e["error"]["code"] == "invalid"
    status, _, e = await api.call(
        "POST", "/investigations", data=b")\xff\xfe", headers={"Content-Type": "application/json"}
    )
    assert status == 422 and e["error"]["code"] == "invalid", e
    big = json.dumps({**body, "question": "x" * (1024 * 1024)}).encode()
    status, _, e = await api.call(
        "POST", "/investigations", data=big, headers={"Content-Type": "application/json"}
    )
    assert status == 413 and e["error"]["code"] == "too_large"
    assert len(await api.store.recent(None, 10)) == 2


async def test_from_start_to_one_published_issue_with_the_stream_following(api):
    inv_id = await api.start(**{"Accept-Language": "en-GB,en;q=0.8,es;q=0.5"})
    got = await events(api, inv_id, until="draft")
    kinds = [k for k, _ in got]
    assert kinds[0] in ("state", "evidence")
    cards = [data["id"] for kind, data in got if kind == "evidence"]
    assert cards == [f"E{n}" for n in range(1, len(cards) + 1)] and len(cards) >= 3
    assert kinds.index("diagnosis") > kinds.index("evidence")
    inv = await api.settled(inv_id, State.COMPLETED)
    assert inv.scope.language == "en"  # from Accept-Language

    status, _, shown = await api.call("GET", f"/investigations/{inv_id}", "vic")
    assert status == 200 and shown["state"] == "COMPLETED"
    assert [e["id"] for e in shown["evidence"]] == cards
    assert shown["draft"]["version"] == 1 and shown["draft"]["hash"] == inv.draft.hash
    v1 = shown["draft"]

    status, _, e = await api.call(
        "POST", f"/investigations/{inv_id}/messages", body={"text": "release 1.4.2"}
    )
    assert status == 409 and "waiting" in e["error"]["message"]

    edit = {"expectedDraftVersion": 1, "title": "NPE saving orders", "body": v1["body"] + "\nok"}
    status, _, e = await api.call("PUT", f"/investigations/{inv_id}/draft", "vic", body=edit)
    assert status == 403
    status, _, v2 = await api.call("PUT", f"/investigations/{inv_id}/draft", body=edit)
    assert status == 200 and v2["version"] == 2 and v2["hash"] != v1["hash"]
    status, _, e = await api.call("PUT", f"/investigations/{inv_id}/draft", body=edit)
    assert status == 409 and "out of date" in e["error"]["message"]

    key = {"Idempotency-Key": "publish-1"}
    stale = {"draftVersion": 1, "hash": v1["hash"]}
    status, _, e = await api.call("POST", f"/investigations/{inv_id}/issue", "bob", stale, key)
    assert status == 409
    current = {"draftVersion": 2, "hash": v2["hash"]}
    status, _, e = await api.call("POST", f"/investigations/{inv_id}/issue", "alice", current, key)
    assert status == 403  # an operator does not publish
    status, _, e = await api.call("POST", f"/investigations/{inv_id}/issue", "bob", current)
    assert status == 422 and e["error"]["field"] == "Idempotency-Key"
    assert api.github.calls == []
    status, _, receipt = await api.call(
        "POST", f"/investigations/{inv_id}/issue", "bob", current, key
    )
    assert status == 202 and receipt["status"] == "queued" and receipt["draft_version"] == 2
    done = await api.settled(inv_id, State.PUBLISHED)
    (issue,) = api.github.issues[inv.scope.repository]
    assert issue["title"] == "NPE saving orders"
    status, _, again = await api.call(
        "POST", f"/investigations/{inv_id}/issue", "bob", current, key
    )
    assert status == 200 and again["status"] == "published"
    assert again["issue_url"] == done.publication.url
    status, _, e = await api.call(
        "POST", f"/investigations/{inv_id}/issue", "bob", stale, key
    )  # the same key with another body
    assert status == 409
    assert len(api.github.issues[inv.scope.repository]) == 1


async def test_rerun_stops_a_running_investigation_and_starts_afresh(api):
    gate = held_calls(api.runtime)
    old_id = await api.start()
    await api.settled(old_id, State.RUNNING)
    status, _, e = await api.call("POST", f"/investigations/{old_id}/rerun", "vic")
    assert status == 403
    status, headers, body = await api.call(
        "POST", f"/investigations/{old_id}/rerun", headers={"Accept-Language": "en"}
    )
    assert status == 202 and body["id"] != old_id
    assert headers["Location"] == f"/investigations/{body['id']}"
    old = await api.store.load(old_id)
    assert old.state is State.STOPPED and old.superseded_by == body["id"]
    gate.set()
    new = await api.settled(body["id"], State.COMPLETED)
    assert new.rerun_of == old_id and new.scope.language == "en"
    assert (await api.store.load(old_id)).state is State.STOPPED  # its worker gave up
    status, _, e = await api.call("POST", f"/investigations/{old_id}/rerun")
    assert status == 409 and "already re-run" in e["error"]["message"]
    status, _, shown = await api.call("GET", f"/investigations/{old_id}")
    assert shown["superseded_by"] == new.id
    status, _, e = await api.call("POST", "/investigations/nope/rerun")
    assert status == 404


async def test_listing_filters_and_pages(api):
    ids = [await api.start(f"errores al guardar pedidos {n}") for n in range(3)]
    for inv_id in ids:
        await api.settled(inv_id, State.COMPLETED, State.STOPPED)
    seen: list[str] = []
    cursor = None
    while True:
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        status, _, page = await api.call("GET", f"/investigations{query}", "vic")
        assert status == 200
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == list(reversed(ids))
    status, _, page = await api.call("GET", "/investigations?state=QUEUED", "vic")
    assert page["items"] == []
    status, _, page = await api.call(
        "GET", f"/investigations?project={api.project}&state=COMPLETED&state=STOPPED", "vic"
    )
    assert len(page["items"]) == 3
    status, _, page = await api.call("GET", "/investigations?project=other", "vic")
    assert page["items"] == []
    status, _, e = await api.call("GET", "/investigations?cursor=!!!", "vic")
    assert status == 422 and e["error"]["field"] == "cursor"
    status, _, e = await api.call("GET", "/investigations?state=NOPE", "vic")
    assert status == 422
    status, _, e = await api.call("GET", "/investigations?limit=0", "vic")
    assert status == 422


async def test_the_openapi_document_is_generated_from_the_models(api):
    status, _, doc = await api.call("GET", "/openapi.json", None)
    assert status == 200 and doc["openapi"].startswith("3.")
    paths = doc["paths"]
    assert set(paths) >= {
        "/investigations",
        "/investigations/{investigation_id}",
        "/investigations/{investigation_id}/draft",
        "/investigations/{investigation_id}/messages",
        "/investigations/{investigation_id}/issue",
        "/investigations/{investigation_id}/rerun",
        "/investigations/{investigation_id}/events",
    }
    edit = paths["/investigations/{investigation_id}/draft"]["put"]
    assert "409" in edit["responses"]
    schemas = doc["components"]["schemas"]
    assert "expectedDraftVersion" in schemas["DraftEdit"]["properties"]
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


async def frames(
    api: Api, inv_id: str, until: str, last_event_id: str | None = None
) -> list[tuple[str | None, str, Any]]:
    """(id, event, data) of each frame up to the first `until` event; a comment is
    (None, ":", its text), and `until=":"` stops at the first one."""
    got: list[tuple[str | None, str, Any]] = []
    headers = {"Authorization": f"Bearer {TOKENS['vic']}"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with api.http.get(f"{api.base}/investigations/{inv_id}/events", headers=headers) as r:
        assert r.status == 200
        frame_id, event = None, None
        async with asyncio.timeout(20):
            async for raw in r.content:
                line = raw.decode().rstrip("\n")
                if line.startswith(":"):
                    got.append((None, ":", line[1:].strip()))
                    if until == ":":
                        return got
                elif line.startswith("id: "):
                    frame_id = line.removeprefix("id: ")
                elif line.startswith("event: "):
                    event = line.removeprefix("event: ")
                elif line.startswith("data: ") and event:
                    got.append((frame_id, event, json.loads(line.removeprefix("data: "))))
                    if event == until:
                        return got
    raise AssertionError(f"the stream ended before {until}: {got}")


async def test_a_stream_resumed_with_last_event_id_sends_only_what_was_missed(api, monkeypatch):
    inv_id = await api.start()
    await api.settled(inv_id, State.COMPLETED)
    history = await frames(api, inv_id, until="state")
    again = await frames(api, inv_id, until="state")
    assert [i for i, _, _ in again] == [i for i, _, _ in history]  # the ids are positions
    assert len({i for i, _, _ in history}) == len(history)
    cards = [data["id"] for _, kind, data in history if kind == "evidence"]
    assert len(cards) >= 3

    # Dropped after the second card: the rest, from the third card on, and nothing before.
    second = next(i for i, kind, data in history if kind == "evidence" and data["id"] == "E2")
    rest = await frames(api, inv_id, until="state", last_event_id=second)
    assert [data["id"] for _, kind, data in rest if kind == "evidence"] == cards[2:]
    assert [kind for _, kind, _ in rest] == [kind for _, kind, _ in history][2:]
    assert [i for i, _, _ in rest] == [i for i, _, _ in history][2:]

    # Up to date: nothing is sent again; an idle stream gets keep-alive comments.
    monkeypatch.setattr("bot.http.events.KEEPALIVE_SECONDS", 0.2)
    last = history[-1][0]
    assert await frames(api, inv_id, until=":", last_event_id=last) == [(None, ":", "keep-alive")]
    # An id that is not a position: the whole history.
    assert await frames(api, inv_id, until="state", last_event_id="evidence:E9") == history


async def test_unknown_ids_and_wrong_content_types_are_refused_and_change_nothing(api):
    inv_id = await api.start()
    inv = await api.settled(inv_id, State.COMPLETED)
    assert inv.draft is not None
    ref = {"draftVersion": inv.draft.version, "hash": inv.draft.hash}
    edit = {"expectedDraftVersion": inv.draft.version, "title": "t", "body": "b"}
    for method, path, body in [
        ("GET", "/investigations/nope", None),
        ("PUT", "/investigations/nope/draft", edit),
        ("POST", "/investigations/nope/messages", {"text": "release 1.4.2"}),
        ("POST", "/investigations/nope/issue", ref),
        ("POST", "/investigations/nope/rerun", None),
        ("GET", "/investigations/nope/events", None),
    ]:
        status, headers, e = await api.call(method, path, body=body)
        assert status == 404 and e["error"]["code"] == "not_found", (method, path, e)
        assert headers["Content-Type"].startswith("application/json")
    # A JSON body sent as something else is refused: a form, plain text, no type at all.
    for kind in ("application/x-www-form-urlencoded", "text/plain", None):
        headers = {"Content-Type": kind} if kind else {}
        raw = json.dumps(edit).encode()
        status, _, e = await api.call(
            "PUT", f"/investigations/{inv_id}/draft", data=raw, headers=headers
        )
        assert 400 <= status < 500 and "error" in e, (kind, status, e)
        raw = json.dumps({"project": api.project, "question": "errores"}).encode()
        status, _, e = await api.call("POST", "/investigations", data=raw, headers=headers)
        assert 400 <= status < 500 and "error" in e, (kind, status, e)
    after = await api.store.load(inv_id)
    assert after.draft == inv.draft and after.state is State.COMPLETED
    assert [s.id for s in await api.store.recent(None, 10)] == [inv_id]
