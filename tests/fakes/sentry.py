"""A fake Sentry REST API serving one recorded incident: aiohttp on 127.0.0.1, port 0.

It answers the endpoints @sentry/mcp-server 0.39 calls for its read tools, in
Sentry's response shapes (they must pass the server's zod schemas), from a
scenario's ``sentry/issues.json`` and ``sentry/events/<issue id>.json``::

    async with FakeSentry(folder, "acme", "orders", since, until, token="t") as sentry:
        sentry.add(other_folder, "acme", "invoices", since2, until2)  # more projects
        ...  # @sentry/mcp-server --host {sentry.host} --insecure-http

Each project's clock stands at the moment its recording ends (``until``):
relative periods (``statsPeriod=24h``) count back from there, and nothing
outside the recorded window is served, as Sentry would have answered when the
question was asked. Every request is kept in ``calls`` (method, path, query).

It also keeps notes (comments) on issues, the one write incident-bot makes
(agent.publish.sentry), in ``notes`` (issue id → activities, oldest first).
They take the separate ``write_token``: the read token may list them but not
write them (403), any other is 401. ``fail_next``, ``drop_next``,
``drop_after_apply_next`` and ``timeout_after_apply_next`` make the next call
to ``list_notes``, ``create_note`` or ``delete_note`` fail.

Routes (all under /api/0/):

=============================================  ==========================================
auth/                                          the token's user
organizations/                                 the one organization
organizations/{org}/                           it
organizations/{org}/projects/                  the one project
projects/{org}/{project}/                      it (by slug or id)
organizations/{org}/issues/                    issue search (query, sort, limit, period)
organizations/{org}/issues/{id}/               one issue, by id or short id
organizations/{org}/issues/{id}/events/        its events (query, sort, per_page, full)
organizations/{org}/issues/{id}/events/{eid}/  one event; ``latest`` for the newest
organizations/{org}/issues/{id}/autofix/       no Seer run ({"autofix": null})
organizations/{org}/issues/{id}/comments/      GET the notes, newest first (``cursor``,
                                               a Link header); POST ``{"text"}`` → 201
organizations/{org}/issues/{id}/comments/{n}/  DELETE one of the token's own → 204
organizations/{org}/issues/{id}/external-issues/  none
organizations/{org}/replay-count/              none
organizations/{org}/events/                    no spans (the trace lookups of issue details)
projects/{org}/{project}/stacktrace-link/      no code mapping
=============================================  ==========================================

A wrong token is 401, an unknown organization, project, issue, event or note
404, with Sentry's ``{"detail": ...}`` body; a note posted again within the
hour is 400 ("You have already posted that comment."), as Sentry answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import re
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self

from aiohttp import web

Json = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_PERIOD = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_TOKEN = re.compile(r'(!?)([\w.\-]+):("[^"]*"|\S+)|"([^"]*)"|(\S+)')


NOTE_ROUTES = ("list_notes", "create_note", "delete_note")
BOT_USER: Json = {"id": "1", "name": "Incident Bot", "email": "bot@example.com"}
DUPLICATE = "You have already posted that comment."


class Call(NamedTuple):
    method: str
    path: str
    query: dict[str, str]


@dataclass
class _Fault:
    kind: str  # "fail", "drop", "drop_after_apply", "timeout_after_apply"
    status: int = 502
    delay: float = 0.0
    retry_after: int | None = None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# What Sentry's API says with these statuses.
FAULT_DETAILS = {
    404: "The requested resource does not exist",
    429: "You are attempting to use this endpoint too frequently. Limit is 40 requests in 1s",
}


def _detail(status: int, detail: str) -> web.Response:
    return web.json_response({"detail": detail}, status=status)


class Export:
    """One recorded project: its issues and events, and the window it was recorded over."""

    def __init__(
        self, folder: Path, organization: str, project: str, since: datetime, until: datetime
    ) -> None:
        self.folder = Path(folder)
        self.organization = organization
        self.slug = project
        self.since = since if since.tzinfo else since.replace(tzinfo=UTC)
        self.until = until if until.tzinfo else until.replace(tzinfo=UTC)
        self.issues: list[Json] = json.loads((self.folder / "issues.json").read_text("utf-8"))
        self.project = self._project_of(self.issues)

    def _project_of(self, issues: list[Json]) -> Json:
        for issue in issues:
            project = issue.get("project")
            if isinstance(project, dict) and project.get("slug") == self.slug:
                return {**project, "id": str(project.get("id"))}
        return {"id": str(abs(hash(self.slug)) % 10**9), "slug": self.slug, "name": self.slug}

    def named(self, ref: str) -> bool:
        return ref in (self.slug, str(self.project["id"]))

    def window(self, request: web.Request) -> tuple[datetime, datetime]:
        since, until = self.since, self.until
        match = _PERIOD.match(request.query.get("statsPeriod") or "")
        if match:
            span = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
            since = max(since, until - span)
        start, end = _time(request.query.get("start")), _time(request.query.get("end"))
        if start and end:
            since, until = max(since, start), min(until, end)
        return since, until

    def find_issue(self, ref: str) -> Json | None:
        for issue in self.issues:
            if ref == str(issue.get("id")) or ref.upper() == str(issue.get("shortId", "")).upper():
                first, last = _time(issue.get("firstSeen")), _time(issue.get("lastSeen"))
                if (first is not None and first > self.until) or (
                    last is not None and last < self.since
                ):
                    return None
                return issue
        return None

    def events(self, issue: Json, since: datetime, until: datetime) -> list[Json]:
        """The issue's events in the window, newest first."""
        path = self.folder / "events" / f"{issue['id']}.json"
        raw = json.loads(path.read_text("utf-8")) if path.is_file() else []
        dated = []
        for event in raw:
            if not isinstance(event, dict):
                continue
            moment = _time(event.get("dateCreated")) or _time(event.get("dateReceived"))
            if moment is not None and since <= moment <= until:
                dated.append((moment, event))
        dated.sort(key=lambda pair: pair[0], reverse=True)
        return [event for _, event in dated]

    def issue_hit(self, issue: Json, key: str, value: str) -> bool | None:
        if key == "is":
            if value in ("unresolved", "resolved", "ignored"):
                return str(issue.get("status", "unresolved")) == value
            return None
        if key == "level":
            return str(issue.get("level", "")).lower() == value.lower()
        if key in ("issue", "issue.id"):
            return value.upper() in (str(issue.get("id")), str(issue.get("shortId", "")).upper())
        if key == "release":
            events = self.events(issue, self.since, self.until)
            return any((_release(e) or "").endswith(value) for e in events)
        return None  # a key this fake does not know is ignored

    def search(self, request: web.Request) -> list[Json]:
        since, until = self.window(request)
        filters, words = _terms(request.query.get("query", ""))
        found = []
        for issue in self.issues:
            first, last = _time(issue.get("firstSeen")), _time(issue.get("lastSeen"))
            if first is None or last is None or last < since or first > until:
                continue
            hits = [(self.issue_hit(issue, k, v), neg) for k, v, neg in filters]
            if any(hit is not None and hit is neg for hit, neg in hits):
                continue
            text = " ".join(str(issue.get(k) or "") for k in ("title", "culprit", "shortId"))
            if words and not all(w in text.lower() for w in words):
                continue
            found.append(issue)
        return found


class FakeSentry:
    """Sentry's REST API over recorded exports (one per project), each bounded by its window."""

    def __init__(
        self,
        folder: Path | None = None,
        organization: str = "",
        project: str = "",
        since: datetime | None = None,
        until: datetime | None = None,
        *,
        token: str = "sntrys-test",
        write_token: str = "sntrys-write",
    ) -> None:
        self.token = token
        self.write_token = write_token
        self.calls: list[Call] = []
        self.notes: dict[str, list[Json]] = defaultdict(list)
        self.notes_per_page = 100
        self._note_ids = itertools.count(4_300_001)
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._closing = asyncio.Event()
        self.exports: list[Export] = []
        self._runner: web.AppRunner | None = None
        self.port = 0
        if folder is not None:
            assert since is not None and until is not None
            self.add(folder, organization, project, since, until)

    def add(
        self, folder: Path, organization: str, project: str, since: datetime, until: datetime
    ) -> Export:
        export = Export(folder, organization, project, since, until)
        self.exports.append(export)
        return export

    # -- lifecycle -------------------------------------------------------------------

    @property
    def host(self) -> str:
        """host:port, as @sentry/mcp-server's --host wants it (no scheme)."""
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application(middlewares=[self._middleware])
        routes = [
            ("/api/0/auth/", self._auth),
            ("/api/0/organizations/", self._organizations),
            ("/api/0/organizations/{org}/", self._organization),
            ("/api/0/organizations/{org}/projects/", self._projects),
            ("/api/0/projects/{org}/{project}/", self._project),
            ("/api/0/projects/{org}/{project}/stacktrace-link/", self._stacktrace_link),
            ("/api/0/organizations/{org}/issues/", self._list_issues),
            ("/api/0/organizations/{org}/issues/{issue}/", self._get_issue),
            ("/api/0/organizations/{org}/issues/{issue}/events/", self._list_events),
            ("/api/0/organizations/{org}/issues/{issue}/events/{event}/", self._get_event),
            ("/api/0/organizations/{org}/issues/{issue}/autofix/", self._autofix),
            ("/api/0/organizations/{org}/issues/{issue}/external-issues/", self._empty_list),
            ("/api/0/organizations/{org}/replay-count/", self._replay_count),
            ("/api/0/organizations/{org}/events/", self._no_events),
            ("/api/0/organizations/{org}/releases/", self._releases),
            ("/api/0/projects/{org}/{project}/releases/", self._releases),
        ]
        for path, handler in routes:
            app.router.add_get(path, handler)
        notes = "/api/0/organizations/{org}/issues/{issue}/comments/"
        app.router.add_get(notes, self._faulty("list_notes", self._list_notes))
        app.router.add_post(notes, self._faulty("create_note", self._create_note))
        app.router.add_delete(notes + "{note}/", self._faulty("delete_note", self._delete_note))
        # Anything else (writes included) is Sentry's JSON 404, not aiohttp's text one.
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets  # type: ignore[attr-defined]
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        self._closing.set()  # wake handlers holding an answer back
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def calls_to(self, fragment: str) -> list[Call]:
        return [c for c in self.calls if fragment in c.path]

    # -- notes: seeding and faults ----------------------------------------------------

    def add_note(self, issue: str, text: str, user: Json | None = None) -> Json:
        """Seed a note on issue id `issue` (no call recorded), by someone else by default."""
        author = user or {"id": "2", "name": "Jane Oncall", "email": "jane@example.com"}
        return self._new_note(issue, text, author)

    def fail_next(
        self, route: str, status: int = 502, count: int = 1, retry_after: int | None = None
    ) -> None:
        """The next `count` calls to `route` answer `status` and are NOT applied;
        `retry_after` adds a Retry-After header (as Sentry's 429 has)."""
        self._queue(route, count, _Fault("fail", status=status, retry_after=retry_after))

    def drop_next(self, route: str, count: int = 1) -> None:
        """The connection is closed before answering; the call is NOT applied."""
        self._queue(route, count, _Fault("drop"))

    def drop_after_apply_next(self, route: str, count: int = 1) -> None:
        """The call IS applied, then the connection is closed without an answer."""
        self._queue(route, count, _Fault("drop_after_apply"))

    def timeout_after_apply_next(self, route: str, delay: float = 30.0, count: int = 1) -> None:
        """The call IS applied, then the answer is held back `delay` seconds (more than the
        client's timeout); shutting the fake down releases it."""
        self._queue(route, count, _Fault("timeout_after_apply", delay=delay))

    def clear_faults(self) -> int:
        """Forget the faults queued and not yet used; how many there were."""
        left = sum(len(queue) for queue in self._faults.values())
        self._faults.clear()
        return left

    def _queue(self, route: str, count: int, fault: _Fault) -> None:
        assert route in NOTE_ROUTES, f"faults are for {NOTE_ROUTES}"
        self._faults[route].extend([fault] * count)

    # -- plumbing ---------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.calls.append(Call(request.method, request.path, dict(request.query)))
        given = request.headers.get("Authorization")
        if "/comments/" in request.path:  # notes take the write token; reading them, either
            if given == f"Bearer {self.token}" and request.method != "GET":
                return _detail(403, "You do not have permission to perform this action.")
            if given not in (f"Bearer {self.write_token}", f"Bearer {self.token}"):
                return _detail(401, "Invalid token")
        elif given != f"Bearer {self.token}":
            return _detail(401, "Invalid token header. No credentials provided.")
        org = request.match_info.get("org")
        if org is not None and not self._of(org):
            return _detail(404, "The requested resource does not exist")
        return await handler(request)

    def _of(self, org: str) -> list[Export]:
        return [e for e in self.exports if e.organization == org]

    def _issue_of(self, request: web.Request) -> tuple[Export, Json] | None:
        ref = request.match_info["issue"]
        for export in self._of(request.match_info["org"]):
            issue = export.find_issue(ref)
            if issue is not None:
                return export, issue
        return None

    def _org(self, slug: str) -> Json:
        return {
            "id": str(sorted({e.organization for e in self.exports}).index(slug) + 1),
            "slug": slug,
            "name": slug,
            "links": {
                "organizationUrl": f"http://{self.host}/organizations/{slug}/",
                "regionUrl": "",
            },
        }

    def _project_json(self, export: Export) -> Json:
        return {
            **export.project,
            "name": export.project.get("name") or export.slug,
            "platform": export.project.get("platform"),
            "hasProfiles": False,
            "hasReplays": False,
            "hasLogs": False,
            "firstTransactionEvent": False,
            "organization": self._org(export.organization),
        }

    def _issue_json(self, export: Export, issue: Json) -> Json:
        out = copy.deepcopy(issue)
        out["id"] = str(out["id"])
        out.setdefault("shortId", out["id"])
        out.setdefault("culprit", None)
        out.setdefault("status", "unresolved")
        out.setdefault("userCount", 0)
        out["count"] = str(out.get("count", "0"))
        out.setdefault("permalink", f"http://{self.host}/issues/{out['id']}/")
        if not isinstance(out.get("project"), dict):
            out["project"] = export.project
        out["project"] = {**out["project"], "id": str(out["project"].get("id"))}
        for key in ("firstSeen", "lastSeen"):
            moment = _time(out.get(key))
            out[key] = _iso(moment) if moment else None
        return out

    def _event_json(self, event: Json, issue: Json) -> Json:
        out = copy.deepcopy(event)
        out.setdefault("id", out.get("eventID"))
        out.setdefault("eventID", out["id"])
        out["groupID"] = str(out.get("groupID") or issue["id"])
        out.setdefault("title", issue.get("title") or "")
        out.setdefault("message", "")
        out.setdefault("type", "error")
        out.setdefault("culprit", issue.get("culprit"))
        out.setdefault("entries", [])
        if isinstance(out.get("release"), str):
            out["release"] = {"version": out["release"]}
        for key in ("dateCreated", "dateReceived"):
            moment = _time(out.get(key))
            if moment is not None:
                out[key] = _iso(moment)
        return out

    # -- handlers --------------------------------------------------------------------------

    async def _auth(self, request: web.Request) -> web.Response:
        return web.json_response(BOT_USER)

    async def _organizations(self, request: web.Request) -> web.Response:
        orgs = sorted({e.organization for e in self.exports})
        return web.json_response([self._org(o) for o in orgs])

    async def _organization(self, request: web.Request) -> web.Response:
        return web.json_response(self._org(request.match_info["org"]))

    async def _projects(self, request: web.Request) -> web.Response:
        exports = self._of(request.match_info["org"])
        return web.json_response([self._project_json(e) for e in exports])

    async def _project(self, request: web.Request) -> web.Response:
        for export in self._of(request.match_info["org"]):
            if export.named(request.match_info["project"]):
                return web.json_response(self._project_json(export))
        return _detail(404, "The requested resource does not exist")

    async def _releases(self, request: web.Request) -> web.Response:
        """Releases newest first, as Sentry lists them: those the events name, created by then."""
        project = request.match_info.get("project")
        exports = [
            e for e in self._of(request.match_info["org"]) if not project or e.named(project)
        ]
        if project and not exports:
            return _detail(404, "The requested resource does not exist")
        rows: dict[str, Json] = {}
        for export in exports:
            for issue in export.issues:
                for event in export.events(issue, datetime.min.replace(tzinfo=UTC), export.until):
                    version, when = _release(event), _time(event.get("dateCreated"))
                    if version and when:
                        row = rows.setdefault(version, self._release_json(export, version, event))
                        row["firstEvent"] = _iso(min(_time(row["firstEvent"]) or when, when))
                        row["lastEvent"] = _iso(max(_time(row["lastEvent"]) or when, when))
        query = request.query.get("query", "").lower()
        found = [r for r in rows.values() if query in r["version"].lower()]
        found.sort(key=lambda r: r["dateCreated"], reverse=True)
        return web.json_response(found[: int(request.query.get("per_page", "100") or 100)])

    def _release_json(self, export: Export, version: str, event: Json) -> Json:
        given = event.get("release") if isinstance(event.get("release"), dict) else {}
        when = _time(given.get("dateCreated")) or _time(event.get("dateCreated"))
        deploy = given.get("lastDeploy") if isinstance(given.get("lastDeploy"), dict) else None
        return {
            "id": abs(hash(version)) % 10**9,
            "version": version,
            "shortVersion": version,
            "dateCreated": _iso(when) if when else None,
            "dateReleased": None,
            "firstEvent": None,
            "lastEvent": None,
            "newGroups": 0,
            "lastCommit": None,
            "lastDeploy": None
            if deploy is None
            else {
                "id": "1",
                "environment": deploy.get("environment"),
                "dateStarted": None,
                "dateFinished": _iso(_time(deploy.get("dateFinished")))
                if _time(deploy.get("dateFinished"))
                else None,
            },
            "projects": [
                {
                    "id": export.project["id"],
                    "slug": export.slug,
                    "name": export.project.get("name") or export.slug,
                    "platform": export.project.get("platform"),
                }
            ],
        }

    async def _stacktrace_link(self, request: web.Request) -> web.Response:
        return web.json_response({"config": None, "sourceUrl": None, "integrations": []})

    async def _list_issues(self, request: web.Request) -> web.Response:
        projects = request.query.getall("project", [])
        exports = [
            e
            for e in self._of(request.match_info["org"])
            if not projects or str(e.project["id"]) in projects
        ]
        found = [(e, i) for e in exports for i in e.search(request)]
        sort = request.query.get("sort", "date")
        keys: dict[str, Callable[[Json], Any]] = {
            "freq": lambda i: int(i.get("count") or 0),
            "new": lambda i: _time(i.get("firstSeen")),
            "user": lambda i: int(i.get("userCount") or 0),
        }
        key = keys.get(sort, lambda i: _time(i.get("lastSeen")))
        found.sort(key=lambda pair: key(pair[1]), reverse=True)
        limit = int(request.query.get("limit", "25") or 25)
        return web.json_response([self._issue_json(e, i) for e, i in found[:limit]])

    async def _get_issue(self, request: web.Request) -> web.Response:
        found = self._issue_of(request)
        if found is None:
            return _detail(404, "The requested resource does not exist")
        return web.json_response(self._issue_json(*found))

    async def _list_events(self, request: web.Request) -> web.Response:
        found = self._issue_of(request)
        if found is None:
            return _detail(404, "The requested resource does not exist")
        export, issue = found
        events = export.events(issue, *export.window(request))
        filters, words = _terms(request.query.get("query", ""))
        for key, value, negated in filters:
            if key == "release":
                events = [e for e in events if (_release(e) or "").endswith(value) is not negated]
            elif key not in ("is", "issue", "issue.id"):
                events = [e for e in events if (_tags(e).get(key) in (None, value)) is not negated]
        if words:
            events = [e for e in events if all(w in str(e.get("title", "")).lower() for w in words)]
        if request.query.get("sort", "-timestamp") in ("timestamp", "+timestamp"):
            events.reverse()
        per_page = int(request.query.get("per_page", "50") or 50)
        full = request.query.get("full") == "true"
        out = []
        for event in events[:per_page]:
            shaped = self._event_json(event, issue)
            if not full:
                shaped["entries"] = []
            out.append(shaped)
        return web.json_response(out)

    async def _get_event(self, request: web.Request) -> web.Response:
        found = self._issue_of(request)
        if found is None:
            return _detail(404, "The requested resource does not exist")
        export, issue = found
        events = export.events(issue, export.since, export.until)
        wanted = request.match_info["event"]
        if wanted == "latest":
            event = events[0] if events else None
        else:
            clean = wanted.lower().replace("-", "")
            event = next(
                (e for e in events if str(e.get("eventID") or e.get("id")).lower() == clean),
                None,
            )
        if event is None:
            return _detail(404, "The requested resource does not exist")
        return web.json_response(self._event_json(event, issue))

    async def _autofix(self, request: web.Request) -> web.Response:
        return web.json_response({"autofix": None})

    async def _empty_list(self, request: web.Request) -> web.Response:
        return web.json_response([])

    async def _replay_count(self, request: web.Request) -> web.Response:
        return web.json_response({})

    async def _no_events(self, request: web.Request) -> web.Response:
        fields = {f: "string" for f in request.query.getall("field", [])}
        return web.json_response({"data": [], "meta": {"fields": fields}})

    async def _unknown(self, request: web.Request) -> web.Response:
        return _detail(404, "The requested resource does not exist")

    # -- notes (GroupNotesEndpoint, GroupNotesDetailsEndpoint) ------------------------------

    def _faulty(self, route: str, apply: Handler) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            fault = self._faults[route].popleft() if self._faults.get(route) else None
            if fault is not None and fault.kind == "fail":
                answer = _detail(fault.status, FAULT_DETAILS.get(fault.status, "Internal Error"))
                if fault.retry_after is not None:
                    answer.headers["Retry-After"] = str(fault.retry_after)
                return answer
            if fault is not None and fault.kind == "drop":
                return _dropped(request)
            response = await apply(request)
            if fault is not None and fault.kind == "drop_after_apply":
                return _dropped(request)
            if fault is not None and fault.kind == "timeout_after_apply":
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), fault.delay)
            return response

        return handler

    def _new_note(self, issue: str, text: str, user: Json) -> Json:
        note = {
            "id": str(next(self._note_ids)),
            "user": user,
            "sentry_app": None,
            "type": "note",
            "data": {"text": text},
            "dateCreated": _iso(datetime.now(UTC)),
        }
        self.notes[issue].append(note)
        return note

    def _issue_id(self, request: web.Request) -> str | None:
        found = self._issue_of(request)
        return str(found[1]["id"]) if found else None

    async def _list_notes(self, request: web.Request) -> web.Response:
        issue = self._issue_id(request)
        if issue is None:
            return _detail(404, "The requested resource does not exist")
        newest = list(reversed(self.notes.get(issue, [])))
        cursor = request.query.get("cursor", "0:0:0").split(":")
        offset = int(cursor[1]) if len(cursor) == 3 and cursor[1].isdigit() else 0
        size = self.notes_per_page
        page = newest[offset : offset + size]
        url = f"http://{self.host}{request.path}"

        def link(rel: str, at: int, results: bool) -> str:
            at_cursor = f"0:{max(at, 0)}:{int(rel == 'previous')}"
            flag = "true" if results else "false"
            params = f'rel="{rel}"; results="{flag}"; cursor="{at_cursor}"'
            return f"<{url}?&cursor={at_cursor}>; {params}"

        links = [link("previous", offset - size, offset > 0)]
        links.append(link("next", offset + size, offset + size < len(newest)))
        return web.json_response(copy.deepcopy(page), headers={"Link": ", ".join(links)})

    async def _create_note(self, request: web.Request) -> web.Response:
        issue = self._issue_id(request)
        if issue is None:
            return _detail(404, "The requested resource does not exist")
        try:
            body = await request.json()
        except ValueError:
            return _detail(400, "Malformed request")
        text = body.get("text") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text.strip():
            return web.json_response({"text": ["This field is required."]}, status=400)
        an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
        for note in self.notes.get(issue, []):
            moment = _time(note["dateCreated"])
            if (
                note["user"]["id"] == BOT_USER["id"]
                and note["data"] == {"text": text}
                and moment is not None
                and moment >= an_hour_ago
            ):
                return _detail(400, DUPLICATE)
        return web.json_response(self._new_note(issue, text, dict(BOT_USER)), status=201)

    async def _delete_note(self, request: web.Request) -> web.Response:
        issue = self._issue_id(request)
        notes = self.notes.get(issue or "", [])
        wanted = request.match_info["note"]
        # Sentry finds only the token user's own notes: anyone else's is a 404.
        mine = [n for n in notes if n["id"] == wanted and n["user"]["id"] == BOT_USER["id"]]
        if issue is None or not mine:
            return _detail(404, "The requested resource does not exist")
        notes.remove(mine[0])
        return web.Response(status=204)


def _dropped(request: web.Request) -> web.Response:
    assert request.transport is not None
    request.transport.close()
    return web.Response()


def _terms(query: str) -> tuple[list[tuple[str, str, bool]], list[str]]:
    filters: list[tuple[str, str, bool]] = []
    words: list[str] = []
    for negated, key, value, phrase, word in _TOKEN.findall(query or ""):
        if key:
            filters.append((key.lower(), value.strip('"'), bool(negated)))
        elif phrase or word:
            words.append((phrase or word).lower())
    return filters, words


def _tags(event: Json) -> dict[str, str]:
    return {
        str(t["key"]): str(t.get("value"))
        for t in event.get("tags") or []
        if isinstance(t, dict) and "key" in t
    }


def _release(event: Json) -> str | None:
    release = event.get("release")
    if isinstance(release, dict):
        return release.get("version")
    if isinstance(release, str):
        return release
    return _tags(event).get("release")
