"""One runtime for every project: each investigation reads its own project's sources only.

A project's `agent.sources.Sources` are live (bot/sources.py: Sentry through its MCP
server, a mirror clone, the docs at the release) or a recorded incident (recorded/);
the runtime does not know which. Long-lived servers shared by several projects (one
mcp-server-git, one Sentry MCP server per distinct configuration) are its `shared`.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from agent.budget import Limits
from agent.domain import Investigation
from agent.errors import InputError, SourceUnavailable
from agent.loop import Loop
from agent.models.offline import OfflineInvestigator
from agent.ports import Model, Retriever, ToolResult, Toolset, ToolSpec, UsageLedger
from agent.sources import Sources
from agent.tools.catalog import Catalog
from agent.tools.local import LOCAL_TOOLS
from agent.tools.mcp import McpToolset
from bot.metrics import Timed, observed
from bot.mirror import FreshRevisions, Mirror
from bot.releases import Releases, ResolvedReleases
from recorded.scenario import Scenario
from recorded.sources import recorded_sources

log = logging.getLogger(__name__)

# mcp-server-git's read operations; its write tools are never offered.
GIT_READ_TOOLS = frozenset({"git_log", "git_show", "git_branch"})


class Service(Protocol):
    async def start(self) -> None: ...

    async def aclose(self) -> None: ...


def git_server(repo_dir: Path | None = None) -> McpToolset:
    """One long-lived mcp-server-git session; views pin the repository per investigation."""
    args = ["-m", "mcp_server_git"]
    if repo_dir is not None:
        args += ["--repository", str(repo_dir)]
    return McpToolset(
        name="git",
        command=sys.executable,
        args=args,
        env=None,
        allow=set(GIT_READ_TOOLS),
        pinned={"repo_path": str(repo_dir)} if repo_dir is not None else {},
        source="code",
    )


class Unavailable:
    """A toolset whose source did not start: every call says why (SourceUnavailable)."""

    def __init__(self, inner: Toolset, reason: str) -> None:
        self.name = inner.name
        self.inner = inner
        self.reason = reason

    @property
    def pinned(self) -> dict[str, Any]:
        pinned = getattr(self.inner, "pinned", None)
        return pinned if isinstance(pinned, dict) else {}

    async def get_tools(self) -> list[ToolSpec]:
        return await self.inner.get_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        raise SourceUnavailable(self.reason)


class Runtime:
    """The loop of each investigation, over the sources of the project it is about."""

    def __init__(
        self,
        projects: Mapping[str, Sources],
        *,
        shared: Sequence[Service] = (),
        limits: Limits | None = None,
        model: Callable[[Investigation], Model] | None = None,
        can_ask: bool = True,
        extract_model: Callable[[Investigation], Model] | None = None,
        prefetch: bool = True,
        repo_map: bool = True,
        ledger: UsageLedger | None = None,
    ) -> None:
        """`model` builds the chat model of an investigation (None: the offline
        investigator); `extract_model` the pass-2 model. The deterministic pre-fetch runs
        only in front of a chat model: the offline investigator is that chain already.
        `ledger` (the store) answers the tokens spent today, for the daily budget."""
        self.projects = dict(projects)
        self.shared = list(shared)
        self.limits = limits or Limits()
        self.can_ask = can_ask
        self.model = model or (lambda inv: OfflineInvestigator(inv.scope))
        self.extract_model = extract_model
        self.prefetch = prefetch and model is not None
        self.repo_map = repo_map and model is not None  # for a model, not the offline one
        self.ledger = ledger
        self._ready: dict[str, asyncio.Task[None]] = {}
        self.started = False

    @classmethod
    def recorded(
        cls,
        scenario: Scenario,
        repo_dir: Path,
        *,
        git: McpToolset | None = None,
        sentry: McpToolset | None = None,
        mirror: Mirror | None = None,
        docs: Retriever | None = None,
        **options: object,
    ) -> Runtime:
        """A recorded incident as the one project. `git` and `sentry` are shared servers
        their owner starts (else the runtime runs its own mcp-server-git, and Sentry is the
        recording); `mirror` keeps `repo_dir` fresh, `docs` replaces the bundle's docs."""
        own = git is None
        server = git or git_server(repo_dir)
        sources = recorded_sources(scenario, repo_dir, server, sentry)
        # Releases resolve against the recording's clone as against a live mirror: the
        # previous release, from the events or Sentry's list, bounds the window.
        releases = Releases(mirror or Mirror(repo_dir), scenario.scope.release_prefix)
        sources.sentry = ResolvedReleases(sources.sentry, releases)
        shared: list[Service] = []
        if mirror is not None:
            sources.code = [FreshRevisions(t, mirror) for t in sources.code]
            shared.append(mirror)  # cloned before a git server pinned to it starts
        if own:
            shared.append(server)
        if docs is not None:
            sources.docs = docs
        return cls(
            {scenario.scope.project_key: sources},
            shared=shared,
            **options,  # type: ignore[arg-type]
        )

    def sources(self, project_key: str) -> Sources:
        try:
            return self.projects[project_key]
        except KeyError:
            raise InputError(f"no sources are configured for project `{project_key}`") from None

    async def start(self, *, wait: bool = True) -> None:
        """Start the shared servers, then each project's sources. With `wait=False` the
        projects start in the background (a clone may take minutes): an investigation
        waits for its own project only, and the process answers Slack meanwhile."""
        for service in self.shared:  # in order: a mirror exists before its git server
            await service.start()
        self.started = True
        for key, sources in self.projects.items():
            self._ready[key] = asyncio.create_task(sources.start(), name=f"sources:{key}")
        if wait:
            await asyncio.gather(*self._ready.values())

    def ready(self) -> dict[str, str | None]:
        """Per project: None once its sources started, else why not (yet)."""
        out: dict[str, str | None] = {}
        for key in self.projects:
            task = self._ready.get(key)
            if task is None or not task.done():
                out[key] = "starting"
            elif task.cancelled():
                out[key] = "cancelled"
            else:
                exc = task.exception()
                out[key] = None if exc is None else str(exc)[:300]
        return out

    async def aclose(self) -> None:
        for task in self._ready.values():
            task.cancel()
        await asyncio.gather(*self._ready.values(), return_exceptions=True)
        for sources in self.projects.values():
            try:
                await sources.aclose()
            except Exception:
                log.exception("closing the sources failed")
        for service in reversed(self.shared):
            await service.aclose()

    async def loop_for(
        self, inv: Investigation, save: Callable[[Investigation], Awaitable[None]]
    ) -> Loop:
        key = inv.scope.project_key
        sources = self.sources(key)
        ready = self._ready.get(key)
        if ready is not None and ready.done() and not ready.cancelled() and ready.exception():
            # The clone or fetch failed before (the upstream was down): try again now.
            self._ready[key] = ready = asyncio.create_task(sources.start(), name=f"sources:{key}")
        code = sources.code
        if ready is not None:
            try:
                await asyncio.shield(ready)  # its clone or first fetch
            except Exception as exc:
                # The run stops at its first read of the code, saying why; Continue (or
                # the next investigation) tries to start the sources again.
                log.warning("the sources of project %s did not start: %s", key, exc)
                code = [Unavailable(t, f"the code of project `{key}`: {exc}") for t in code]
        # Asking only makes sense where someone can answer.
        local = [t for t in LOCAL_TOOLS if self.can_ask or t.name != "ask_clarification"]
        catalog = Catalog([Timed(t) for t in (sources.sentry, *code)], local)
        return Loop(
            model=self.model(inv),
            catalog=catalog,
            retriever=sources.docs,
            save=observed(save),
            files=sources.files,
            limits=self.limits,
            extractor=self.extract_model(inv) if self.extract_model else None,
            prefetch=self.prefetch,
            ledger=self.ledger,
            # The map is read from git as the file checks are (GitCodeTools has both).
            repo_map=sources.files if self.repo_map and hasattr(sources.files, "outline") else None,  # type: ignore[arg-type]
        )
