"""GitHub issues over the REST API, through gidgethub. The write token is used here and
nowhere else: no tool the model can call ever reaches this module.

Every call maps gidgethub's and aiohttp's exceptions into the project's:

- a lost answer (timeout, dropped connection, a 5xx) → `PublishUnknown`: the write may
  have happened, so only an idempotent call may simply be sent again;
- a refusal (4xx) → `PublishFailed`, with the status; `retryable` for rate limits.

`base_url` is GITHUB_API_URL, so GitHub Enterprise (`https://ghe.example/api/v3`) works.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import aiohttp
from gidgethub import BadRequest, GitHubBroken, HTTPException, RateLimitExceeded
from gidgethub.aiohttp import GitHubAPI

from agent.errors import PublishFailed, PublishUnknown

T = TypeVar("T")

API_VERSION = {"X-GitHub-Api-Version": "2022-11-28"}
ISSUES = "/repos/{owner}/{repo}/issues"
ISSUE = "/repos/{owner}/{repo}/issues/{number}"
LOOKUP_PAGES = 10  # 1,000 issues by the bot since the attempt: far more than ever happen


def marker_fields(investigation_id: str, draft_hash: str, approval_key: str) -> str:
    """What a marker names. The approval is named too (hashed, the key is not shown): an
    earlier, rolled-back attempt is never taken for it."""
    approval = hashlib.sha256(approval_key.encode()).hexdigest()[:16]
    return f"investigation={investigation_id} draft={draft_hash} approval={approval}"


def marker(investigation_id: str, draft_hash: str, approval_key: str) -> str:
    """Hidden in the issue body, so a lost answer is settled by finding the issue later."""
    return f"<!-- incident-bot {marker_fields(investigation_id, draft_hash, approval_key)} -->"


@dataclass(frozen=True)
class Issue:
    number: int
    url: str  # the html_url people open
    title: str
    body: str
    state: str

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Issue:
        return cls(
            number=int(raw["number"]),
            url=str(raw["html_url"]),
            title=str(raw.get("title") or ""),
            body=str(raw.get("body") or ""),
            state=str(raw.get("state") or ""),
        )


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The seconds a Retry-After header asks for (a number; an HTTP date is not used by
    GitHub or Sentry for it); None when absent or unreadable."""
    raw = (headers or {}).get("Retry-After") or (headers or {}).get("retry-after")
    try:
        return max(0.0, float(raw)) if raw is not None else None
    except ValueError:
        return None


def _waiting(wait: float | None) -> str:
    return f", retry after {wait:.0f} s" if wait is not None else ""


def _split(repository: str) -> dict[str, str]:
    owner, _, repo = repository.partition("/")
    return {"owner": owner, "repo": repo}


class GitHubIssues:
    """The issue tracker the publisher writes to (`agent.publish.publisher.IssueTracker`)."""

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        timeout: float = 10.0,
        login: str | None = None,
        requester: str = "incident-bot",
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.requester = requester
        self._login = login

    async def _call(self, what: str, work: Callable[[GitHubAPI], Awaitable[T]]) -> T:
        """One request (or one paginated read) with its own session and timeout."""
        try:
            timeout = aiohttp.ClientTimeout(total=self.timeout)
            async with aiohttp.ClientSession(timeout=timeout) as http:
                gh = GitHubAPI(http, self.requester, oauth_token=self._token, base_url=self.api_url)
                return await work(gh)
        except GitHubBroken as exc:
            raise PublishUnknown(f"{what}: GitHub answered {int(exc.status_code)}") from None
        except RateLimitExceeded as exc:
            wait = retry_after(exc.headers)
            if wait is None and exc.rate_limit is not None:
                wait = max(0.0, (exc.rate_limit.reset_datetime - datetime.now(UTC)).total_seconds())
            raise PublishFailed(
                f"{what}: GitHub's rate limit ({int(exc.status_code)}){_waiting(wait)}",
                status=429,
                retryable=True,
                retry_after=wait,
            ) from None
        except BadRequest as exc:
            status = int(exc.status_code)
            # A 429, or a 403 with Retry-After (a secondary rate limit), passes with time.
            wait = retry_after(exc.headers)
            raise PublishFailed(
                f"{what}: GitHub refused ({status}){_waiting(wait)}: {str(exc)[:200]}",
                status=status,
                retryable=status == 429 or wait is not None,
                retry_after=wait,
            ) from None
        except HTTPException as exc:  # a redirect gidgethub does not follow
            raise PublishFailed(f"{what}: GitHub answered {int(exc.status_code)}") from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise PublishUnknown(f"{what}: GitHub did not answer ({type(exc).__name__})") from None

    async def login(self) -> str:
        """Who the token is: the creator the lookups filter on (GET /user, once)."""
        if self._login is None:
            user = await self._call("who am I", lambda gh: gh.getitem("/user"))
            self._login = str(user["login"])
        return self._login

    async def create_issue(self, repository: str, title: str, body: str) -> Issue:
        """POST an issue. NOT idempotent: a PublishUnknown here is settled by `find_issue`."""
        raw = await self._call(
            "create the issue",
            lambda gh: gh.post(
                ISSUES,
                _split(repository),
                data={"title": title, "body": body},
                extra_headers=API_VERSION,
            ),
        )
        return Issue.of(raw)

    async def find_issue(self, repository: str, marker: str, since: datetime) -> Issue | None:
        """The issue carrying `marker` among those the bot created in the repository since
        `since`. Lists issues by creator and time (GET /repos/{o}/{r}/issues), never the
        search API, whose index lags behind a create by seconds to minutes."""
        creator = await self.login()

        async def scan(gh: GitHubAPI) -> Issue | None:
            pages, seen = 0, 0
            url_vars = {
                **_split(repository),
                "creator": creator,
                "since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "state": "all",
                "per_page": "100",
            }
            template = ISSUES + "{?creator,since,state,per_page}"
            async for raw in gh.getiter(template, url_vars, extra_headers=API_VERSION):
                seen += 1
                if "pull_request" not in raw and marker in str(raw.get("body") or ""):
                    return Issue.of(raw)
                if seen % 100 == 0:
                    pages += 1
                    if pages >= LOOKUP_PAGES:
                        break
            return None

        return await self._call("look for the issue", scan)

    async def add_labels(self, repository: str, number: int, labels: list[str]) -> None:
        """Idempotent: adding a label the issue has is a no-op on GitHub."""
        await self._call(
            "add labels",
            lambda gh: gh.post(
                ISSUE + "/labels",
                {**_split(repository), "number": number},
                data={"labels": labels},
                extra_headers=API_VERSION,
            ),
        )
