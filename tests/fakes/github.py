"""A fake GitHub REST v3 API (issues): an aiohttp server on 127.0.0.1, port 0.

::

    async with FakeGitHub(repos=["acme/shop"]) as github:
        async with aiohttp.ClientSession(headers={"Authorization": "Bearer ghs-test"}) as s:
            async with s.post(f"{github.api_url}/repos/acme/shop/issues", json={"title": "x"}) as r:
                assert r.status == 201

Routes (names used by ``calls_to`` and the fault injection helpers):

==================  ======  ==========================================================
create_issue        POST    /repos/{owner}/{repo}/issues
list_issues         GET     /repos/{owner}/{repo}/issues
get_issue           GET     /repos/{owner}/{repo}/issues/{number}
update_issue        PATCH   /repos/{owner}/{repo}/issues/{number}
add_labels          POST    /repos/{owner}/{repo}/issues/{number}/labels
remove_label        DELETE  /repos/{owner}/{repo}/issues/{number}/labels/{name}
create_comment      POST    /repos/{owner}/{repo}/issues/{number}/comments
list_comments       GET     /repos/{owner}/{repo}/issues/{number}/comments
get_user            GET     /user
get_repo            GET     /repos/{owner}/{repo}
==================  ======  ==========================================================

The token is fine-grained by default (``grants``: its repository permissions; a write to
an issue without ``issues=write`` is refused with 403 and ``X-Accepted-GitHub-Permissions``,
before the body is looked at). Set ``scopes`` to make it a classic token: every answer then
carries ``X-OAuth-Scopes``, and a write without ``repo`` (or ``public_repo`` on a public
repository) is answered 404, as GitHub hides what a token may not reach. ``permissions``
of GET /repos/{owner}/{repo} is the account's role there.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import zlib
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlencode

from aiohttp import web

JSONDict = dict[str, Any]

DOCS = "https://docs.github.com/rest"


class Call(NamedTuple):
    """One request as it arrived."""

    route: str  # e.g. "create_issue"; "unknown" for paths the fake does not serve
    method: str  # HTTP verb
    path: str
    query: dict[str, str]
    body: Any  # the decoded JSON body, or None


@dataclass
class _Fault:
    kind: str  # "fail", "drop", "drop_after_apply", "timeout_after_apply"
    status: int = 502
    body: Any = None
    headers: dict[str, str] | None = None
    delay: float = 0.0


class _HttpError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"message": message, **extra, "documentation_url": DOCS, "status": str(status)}
        self.headers: dict[str, str] = {}


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(value: str) -> datetime:
    dt = datetime.fromisoformat(value)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


class FakeGitHub:
    """Fake GitHub REST server (see module docstring).

    State, all readable by tests:

    - ``issues``: "owner/repo" → list of issues (GitHub JSON shape), in creation order.
    - ``comments``: ("owner/repo", number) → list of comments.
    - ``calls``: every request as ``Call(route, method, path, query, body)``, in arrival order.

    ``clock`` (a callable returning an aware datetime) stamps created_at/updated_at/closed_at;
    set ``github.clock`` in a test to control ``since`` filtering.
    """

    def __init__(
        self,
        *,
        token: str = "ghs-test",
        repos: Iterable[str] = ("acme/shop",),
        login: str = "incident-bot[bot]",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.token = token
        self.login = login
        self.clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))
        self.issues: dict[str, list[JSONDict]] = {r: [] for r in repos}
        # A fine-grained token's repository permissions; a classic token's scopes (None:
        # the token is fine-grained).
        self.grants: dict[str, str] = {"metadata": "read", "contents": "read", "issues": "write"}
        self.scopes: list[str] | None = None
        self.private = True
        # The account's role in the repositories, as GET /repos/{owner}/{repo} says.
        self.permissions: JSONDict = {
            "admin": False,
            "maintain": False,
            "push": True,
            "triage": True,
            "pull": True,
        }
        self.comments: dict[tuple[str, int], list[JSONDict]] = defaultdict(list)
        self.calls: list[Call] = []
        self._ids = itertools.count(1_000_001)
        self._faults: dict[str, deque[_Fault]] = defaultdict(deque)
        self._cond: asyncio.Condition | None = None
        self._closing: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None
        self.api_url = ""
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> FakeGitHub:
        self._cond = asyncio.Condition()
        self._closing = asyncio.Event()
        app = web.Application()
        issue = "/repos/{owner}/{repo}/issues/{number:\\d+}"
        routes: list[tuple[str, str, str, Callable[..., JSONDict | list[Any]]]] = [
            ("POST", "/repos/{owner}/{repo}/issues", "create_issue", self._create_issue),
            ("GET", "/repos/{owner}/{repo}/issues", "list_issues", self._list_issues),
            ("GET", issue, "get_issue", self._get_issue),
            ("PATCH", issue, "update_issue", self._update_issue),
            ("POST", issue + "/labels", "add_labels", self._add_labels),
            ("DELETE", issue + "/labels/{name}", "remove_label", self._remove_label),
            ("POST", issue + "/comments", "create_comment", self._create_comment),
            ("GET", issue + "/comments", "list_comments", self._list_comments),
            ("GET", "/user", "get_user", self._get_user),
            ("GET", "/repos/{owner}/{repo}", "get_repo", self._get_repo),
        ]
        for verb, path, name, apply in routes:
            app.router.add_route(verb, path, self._endpoint(name, apply))
        app.router.add_route("*", "/{tail:.*}", self._endpoint("unknown", self._not_found))
        self._runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self.api_url = f"http://127.0.0.1:{self.port}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._closing is not None:
            self._closing.set()  # wake handlers sleeping in timeout_after_apply
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ test helpers

    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route]

    def add_issue(
        self,
        repo: str,
        title: str,
        body: str | None = None,
        *,
        labels: Iterable[str] = (),
        state: str = "open",
        creator: str | None = None,
        created_at: datetime | None = None,
    ) -> JSONDict:
        """Seed an issue directly (no call recorded); returns the stored issue."""
        issue = self._new_issue(repo, title, body, list(labels), creator or self.login, created_at)
        if state == "closed":
            issue.update(state="closed", state_reason="completed", closed_at=issue["created_at"])
        return issue

    async def wait_for(
        self,
        predicate: Callable[[FakeGitHub], bool],
        timeout: float = 5,  # noqa: ASYNC109
    ) -> None:
        """Wait until ``predicate(self)`` is true; re-checked after every request handled."""
        assert self._cond is not None, "FakeGitHub is not running"
        try:
            async with asyncio.timeout(timeout), self._cond:
                await self._cond.wait_for(lambda: predicate(self))
        except TimeoutError:
            routes = [c.route for c in self.calls]
            raise TimeoutError(
                f"FakeGitHub.wait_for: condition not met in {timeout}s; calls so far: {routes}"
            ) from None

    def fail_next(
        self,
        route: str,
        status: int = 502,
        *,
        body: Any = None,
        retry_after: int | None = None,
        count: int = 1,
    ) -> None:
        """The next ``count`` requests to ``route`` answer ``status`` and are NOT applied.

        ``body`` defaults to ``{"message": ...}``; ``retry_after`` adds a Retry-After header
        (GitHub sends one with 403/429 secondary rate limits).
        """
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        for _ in range(count):
            self._faults[route].append(_Fault("fail", status=status, body=body, headers=headers))

    def timeout_after_apply_next(self, route: str, delay: float = 30.0, count: int = 1) -> None:
        """The next requests are applied, then the answer is held back ``delay`` seconds
        (choose more than the client's timeout). Shutting the fake down releases it."""
        for _ in range(count):
            self._faults[route].append(_Fault("timeout_after_apply", delay=delay))

    def clear_faults(self) -> None:
        """Forget the faults queued and not yet used."""
        self._faults.clear()

    def add_repo(self, repo: str) -> None:
        self.issues.setdefault(repo, [])

    def drop_next(self, route: str, count: int = 1) -> None:
        """The connection is closed before answering; the request is NOT applied."""
        for _ in range(count):
            self._faults[route].append(_Fault("drop"))

    def drop_after_apply_next(self, route: str, count: int = 1) -> None:
        """The request IS applied, then the connection is closed without an answer."""
        for _ in range(count):
            self._faults[route].append(_Fault("drop_after_apply"))

    # ------------------------------------------------------------------ HTTP plumbing

    def _endpoint(
        self, route: str, apply: Callable[..., JSONDict | list[Any]]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handler(request: web.Request) -> web.StreamResponse:
            body: Any = None
            raw = await request.text() if request.can_read_body else ""
            if raw.strip():
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = _INVALID_JSON
            self.calls.append(Call(route, request.method, request.path, dict(request.query), body))
            try:
                return await self._serve(request, route, apply, body)
            finally:
                await self._notify()

        return handler

    async def _serve(
        self,
        request: web.Request,
        route: str,
        apply: Callable[..., JSONDict | list[Any]],
        body: Any,
    ) -> web.StreamResponse:
        fault = self._faults[route].popleft() if self._faults.get(route) else None
        if fault is not None and fault.kind == "fail":
            payload = fault.body
            if payload is None:
                payload = {"message": "Server Error" if fault.status >= 500 else "Error"}
            return web.json_response(payload, status=fault.status, headers=fault.headers)
        if fault is not None and fault.kind == "drop":
            self._close(request)
            return web.Response()

        try:
            self._check_auth(request)
            self._check_grant(request, route)
            if body is _INVALID_JSON:
                raise _HttpError(400, "Problems parsing JSON")
            status, result, headers = self._apply(request, apply, body)
        except _HttpError as e:
            status, result, headers = e.status, e.body, e.headers
        if self.scopes is not None and status != 401:
            headers = {"X-OAuth-Scopes": ", ".join(self.scopes), **headers}

        if fault is not None and fault.kind == "drop_after_apply":
            await self._notify()
            self._close(request)
            return web.Response()
        if fault is not None and fault.kind == "timeout_after_apply":
            await self._notify()
            assert self._closing is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), fault.delay)
        headers = {
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "4999",
            **headers,
        }
        return web.json_response(result, status=status, headers=headers)

    @staticmethod
    def _close(request: web.Request) -> None:
        assert request.transport is not None
        request.transport.close()

    async def _notify(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._cond.notify_all()

    def _check_auth(self, request: web.Request) -> None:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or value.strip() != self.token:
            raise _HttpError(401, "Bad credentials")

    def _check_grant(self, request: web.Request, route: str) -> None:
        """What the token may not do is refused before anything is read: a classic token
        without `repo` does not see a private repository, nor write to a public one without
        `public_repo`; a fine-grained one may not write to issues without issues=write."""
        if "owner" not in request.match_info:
            return
        if self.scopes is not None:
            writes = "repo" in self.scopes or ("public_repo" in self.scopes and not self.private)
            if (self.private and "repo" not in self.scopes) or (
                route in _ISSUE_WRITES and not writes
            ):
                raise _HttpError(404, "Not Found")
        elif route in _ISSUE_WRITES and self.grants.get("issues") != "write":
            error = _HttpError(403, "Resource not accessible by personal access token")
            error.headers["X-Accepted-GitHub-Permissions"] = "issues=write"
            raise error

    def _apply(
        self, request: web.Request, apply: Callable[..., JSONDict | list[Any]], body: Any
    ) -> tuple[int, JSONDict | list[Any], dict[str, str]]:
        info = request.match_info
        kwargs: dict[str, Any] = {"query": request.query, "body": body}
        if "owner" in info:
            repo = f"{info['owner']}/{info['repo']}"
            if repo not in self.issues:
                raise _HttpError(404, "Not Found")
            kwargs["repo"] = repo
        if "number" in info:
            kwargs["issue"] = self._issue(kwargs["repo"], int(info["number"]))
        if "name" in info:
            kwargs["name"] = info["name"]
        headers: dict[str, str] = {}
        kwargs["headers"] = headers
        result = apply(**kwargs)
        status = 201 if apply in (self._create_issue, self._create_comment) else 200
        return status, result, headers

    def _issue(self, repo: str, number: int) -> JSONDict:
        issue = next((i for i in self.issues[repo] if i["number"] == number), None)
        if issue is None:
            raise _HttpError(404, "Not Found")
        return issue

    # ------------------------------------------------------------------ shapes

    def _user(self) -> JSONDict:
        return {
            "login": self.login,
            "id": 9_000_001,
            "node_id": "BOT_kgDOfake",
            "type": "Bot" if self.login.endswith("[bot]") else "User",
            "site_admin": False,
            "html_url": f"https://github.com/apps/{self.login.removesuffix('[bot]')}",
            "url": f"{self.api_url}/users/{self.login}",
        }

    def _label(self, repo: str, name: str) -> JSONDict:
        label_id = zlib.crc32(f"{repo}:{name}".encode())
        return {
            "id": label_id,
            "node_id": f"LA_fake{label_id}",
            "url": f"{self.api_url}/repos/{repo}/labels/{name}",
            "name": name,
            "color": "ededed",
            "default": False,
            "description": None,
        }

    @staticmethod
    def _label_names(value: Any) -> list[str]:
        if not isinstance(value, list):
            raise _HttpError(422, "Validation Failed")
        names = []
        for item in value:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name:
                raise _HttpError(422, "Validation Failed")
            if name not in names:
                names.append(name)
        return names

    def _new_issue(
        self,
        repo: str,
        title: str,
        body: str | None,
        labels: list[str],
        creator: str,
        created_at: datetime | None,
    ) -> JSONDict:
        number = len(self.issues[repo]) + 1
        now = _iso(created_at or self.clock())
        url = f"{self.api_url}/repos/{repo}/issues/{number}"
        issue_id = next(self._ids)
        user = self._user()
        if creator != self.login:
            user.update(login=creator, type="User", html_url=f"https://github.com/{creator}")
        issue: JSONDict = {
            "id": issue_id,
            "node_id": f"I_fake{issue_id}",
            "url": url,
            "repository_url": f"{self.api_url}/repos/{repo}",
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "number": number,
            "title": title,
            "body": body,
            "state": "open",
            "state_reason": None,
            "locked": False,
            "labels": [self._label(repo, n) for n in labels],
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": 0,
            "user": user,
            "author_association": "NONE",
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
        }
        self.issues[repo].append(issue)
        return issue

    def _touch(self, issue: JSONDict) -> None:
        issue["updated_at"] = _iso(self.clock())

    # ------------------------------------------------------------------ routes

    def _create_issue(self, *, repo: str, body: Any, headers: dict[str, str], **_: Any) -> JSONDict:
        if not isinstance(body, dict):
            raise _HttpError(400, "Problems parsing JSON")
        title = body.get("title")
        if not isinstance(title, str | int) or title == "":
            raise _HttpError(
                422,
                "Validation Failed",
                errors=[{"resource": "Issue", "code": "missing_field", "field": "title"}],
            )
        # GitHub's limits, in characters as its error says (not bytes).
        for field, limit in (("title", 256), ("body", 65_536)):
            if len(str(body.get(field) or "")) > limit:
                raise _HttpError(
                    422,
                    "Validation Failed",
                    errors=[
                        {
                            "resource": "Issue",
                            "code": "custom",
                            "field": field,
                            "message": f"{field} is too long (maximum is {limit} characters)",
                        }
                    ],
                )
        labels = self._label_names(body.get("labels", []))
        issue = self._new_issue(repo, str(title), body.get("body"), labels, self.login, None)
        headers["Location"] = issue["url"]
        return copy.deepcopy(issue)

    def _list_issues(self, *, repo: str, query: Any, headers: dict[str, str], **_: Any) -> list:
        state = query.get("state", "open")
        if state not in ("open", "closed", "all"):
            raise _HttpError(422, "Validation Failed")
        items = [i for i in self.issues[repo] if state == "all" or i["state"] == state]
        if "creator" in query:
            items = [i for i in items if i["user"]["login"] == query["creator"]]
        if query.get("labels"):
            wanted = set(query["labels"].split(","))
            items = [i for i in items if wanted <= {label["name"] for label in i["labels"]}]
        if "since" in query:
            try:
                since = _parse_iso(query["since"])
            except ValueError as e:
                raise _HttpError(422, "Validation Failed") from e
            items = [i for i in items if _parse_iso(i["updated_at"]) >= since]
        sort = query.get("sort", "created")
        key = {"created": "created_at", "updated": "updated_at", "comments": "comments"}.get(sort)
        if key is None:
            raise _HttpError(422, "Validation Failed")
        items.sort(key=lambda i: (i[key], i["number"]), reverse=query.get("direction") != "asc")
        try:
            per_page = max(1, min(int(query.get("per_page", 30)), 100))
            page = max(1, int(query.get("page", 1)))
        except ValueError as e:
            raise _HttpError(422, "Validation Failed") from e
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.api_url}/repos/{repo}/issues"

        def link(p: int, rel: str) -> str:
            return f'<{base}?{urlencode({**query, "per_page": per_page, "page": p})}>; rel="{rel}"'

        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        if links:
            headers["Link"] = ", ".join(links)
        return copy.deepcopy(items[(page - 1) * per_page : page * per_page])

    def _get_issue(self, *, issue: JSONDict, **_: Any) -> JSONDict:
        return copy.deepcopy(issue)

    def _update_issue(self, *, repo: str, issue: JSONDict, body: Any, **_: Any) -> JSONDict:
        if not isinstance(body, dict):
            raise _HttpError(400, "Problems parsing JSON")
        state = body.get("state", issue["state"])
        if state not in ("open", "closed"):
            raise _HttpError(422, "Validation Failed")
        reason = body.get("state_reason")
        if reason not in (None, "completed", "not_planned", "reopened"):
            raise _HttpError(422, "Validation Failed")
        labels = self._label_names(body["labels"]) if "labels" in body else None
        for field in ("title", "body"):
            if field in body:
                issue[field] = body[field]
        if labels is not None:
            issue["labels"] = [self._label(repo, n) for n in labels]
        if state == "closed" and issue["state"] == "open":
            issue.update(state="closed", closed_at=_iso(self.clock()))
            issue["state_reason"] = reason or "completed"
        elif state == "open" and issue["state"] == "closed":
            issue.update(state="open", closed_at=None, state_reason=reason or "reopened")
        elif "state_reason" in body:
            issue["state_reason"] = reason
        self._touch(issue)
        return copy.deepcopy(issue)

    def _add_labels(self, *, repo: str, issue: JSONDict, body: Any, **_: Any) -> list:
        names = self._label_names(body.get("labels") if isinstance(body, dict) else body)
        have = [label["name"] for label in issue["labels"]]
        issue["labels"] += [self._label(repo, n) for n in names if n not in have]
        self._touch(issue)
        return copy.deepcopy(issue["labels"])

    def _remove_label(self, *, issue: JSONDict, name: str, **_: Any) -> list:
        if name not in {label["name"] for label in issue["labels"]}:
            raise _HttpError(404, "Label does not exist")
        issue["labels"] = [label for label in issue["labels"] if label["name"] != name]
        self._touch(issue)
        return copy.deepcopy(issue["labels"])

    def _create_comment(
        self, *, repo: str, issue: JSONDict, body: Any, headers: dict[str, str], **_: Any
    ) -> JSONDict:
        text = body.get("body") if isinstance(body, dict) else None
        if not isinstance(text, str) or not text:
            raise _HttpError(
                422,
                "Validation Failed",
                errors=[{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            )
        comment_id = next(self._ids)
        now = _iso(self.clock())
        comment = {
            "id": comment_id,
            "node_id": f"IC_fake{comment_id}",
            "url": f"{self.api_url}/repos/{repo}/issues/comments/{comment_id}",
            "html_url": f"{issue['html_url']}#issuecomment-{comment_id}",
            "issue_url": issue["url"],
            "body": text,
            "user": self._user(),
            "author_association": "NONE",
            "created_at": now,
            "updated_at": now,
        }
        self.comments[(repo, issue["number"])].append(comment)
        issue["comments"] += 1
        self._touch(issue)
        headers["Location"] = comment["url"]
        return copy.deepcopy(comment)

    def _list_comments(self, *, repo: str, issue: JSONDict, query: Any, **_: Any) -> list:
        try:
            per_page = max(1, min(int(query.get("per_page", 30)), 100))
            page = max(1, int(query.get("page", 1)))
        except ValueError as e:
            raise _HttpError(422, "Validation Failed") from e
        items = self.comments[(repo, issue["number"])]
        return copy.deepcopy(items[(page - 1) * per_page : page * per_page])

    def _get_user(self, **_: Any) -> JSONDict:
        return self._user()

    def _get_repo(self, *, repo: str, **_: Any) -> JSONDict:
        return {
            "full_name": repo,
            "private": self.private,
            "has_issues": True,
            "permissions": dict(self.permissions),
        }

    def _not_found(self, **_: Any) -> JSONDict:
        raise _HttpError(404, "Not Found")


_INVALID_JSON = object()
_ISSUE_WRITES = {"create_issue", "update_issue", "add_labels", "remove_label", "create_comment"}
