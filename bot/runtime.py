"""Wiring for one recorded incident: its sources as tools, its docs, and the loop that uses them."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from agent.budget import Limits
from agent.domain import Investigation
from agent.loop import Loop
from agent.models.offline import OfflineInvestigator
from agent.ports import Model, Passage, Retriever, Toolset, UsageLedger
from agent.tools.catalog import Catalog, Pinned
from agent.tools.code import GitCodeTools, git_annotator
from agent.tools.local import LOCAL_TOOLS
from agent.tools.mcp import McpToolset
from agent.tools.sentry_export import RecordedSentry
from agent.tools.sentry_mcp import sentry_pins
from bot.mirror import FreshRevisions, Mirror
from bot.recorded import Scenario
from search.retriever import DocsRetriever

# mcp-server-git's read operations; its write tools are never offered.
GIT_READ_TOOLS = frozenset({"git_log", "git_show", "git_branch"})


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


class RepoDocs:
    """The docs/ of a repository, indexed once per revision that is asked for."""

    def __init__(self, repo_dir: Path, language: str, default_revision: str = "HEAD") -> None:
        self.repo_dir = repo_dir
        self.language = language
        self.default_revision = default_revision
        self._indexes: dict[str, DocsRetriever] = {}
        self._lock = asyncio.Lock()

    async def search(
        self, query: str, limit: int = 5, revision: str | None = None
    ) -> list[Passage]:
        revision = revision or self.default_revision
        async with self._lock:
            if revision not in self._indexes:
                self._indexes[revision] = await DocsRetriever.from_repo(
                    self.repo_dir, revision, self.language
                )
        return await self._indexes[revision].search(query, limit)


class ScenarioRuntime:
    """The tools of one recorded incident, offered as the real servers would offer them."""

    def __init__(
        self,
        scenario: Scenario,
        repo_dir: Path,
        *,
        git: McpToolset | None = None,
        limits: Limits | None = None,
        model: Callable[[Investigation], Model] | None = None,
        can_ask: bool = True,
        extract_model: Callable[[Investigation], Model] | None = None,
        prefetch: bool = True,
        repo_map: bool = True,
        ledger: UsageLedger | None = None,
        sentry: McpToolset | None = None,
        mirror: Mirror | None = None,
        docs: Retriever | None = None,
    ) -> None:
        """`model` builds the chat model of an investigation (None: the offline
        investigator); `extract_model` the pass-2 model. The deterministic pre-fetch runs
        only in front of a chat model: the offline investigator is that chain already.
        `ledger` (the store) answers the tokens spent today, for the daily budget.
        `sentry`, a long-lived @sentry/mcp-server session (its owner starts and closes
        it), replaces the recorded export."""
        self.scenario = scenario
        self.repo_dir = repo_dir
        self.limits = limits or Limits()
        self.can_ask = can_ask
        self.model = model or (lambda inv: OfflineInvestigator(inv.scope))
        self.extract_model = extract_model
        self.prefetch = prefetch and model is not None
        self.repo_map = repo_map and model is not None  # for a model, not the offline one
        self.ledger = ledger
        scope = scenario.scope
        self._own_git = git is None
        self.git = git or git_server(repo_dir)
        self.sentry = RecordedSentry(
            scenario.sentry,
            scope.sentry_organization,
            scope.sentry_project,
            scope.since,
            scope.until,
        )
        # The model never chooses the organization or the project.
        pins = sentry_pins(scope.sentry_organization, scope.sentry_project)
        self._sentry: Toolset = (
            sentry.view(pinned=pins) if sentry is not None else Pinned(self.sentry, pins)
        )
        self.code = GitCodeTools(repo_dir, scope.repository)
        self.docs = RepoDocs(repo_dir, scope.language)
        self._git_view = self.git.view(
            pinned={"repo_path": str(repo_dir)}, annotate=git_annotator(scope.repository)
        )
        # `mirror` (bot/mirror.py) is repo_dir kept fresh: a commit a call names is fetched
        # into it first. `docs` replaces the docs read from repo_dir (an exported corpus).
        self.mirror = mirror
        self._code: Toolset = self.code
        if mirror is not None:
            self._git_view = FreshRevisions(self._git_view, mirror)
            self._code = FreshRevisions(self.code, mirror)
        self.retriever: Retriever = docs or self.docs

    async def start(self) -> None:
        if self.mirror is not None:
            await self.mirror.start()
        if self._own_git:
            await self.git.start()

    async def aclose(self) -> None:
        if self._own_git:
            await self.git.aclose()

    async def loop_for(
        self, inv: Investigation, save: Callable[[Investigation], Awaitable[None]]
    ) -> Loop:
        # Asking only makes sense where someone can answer.
        local = [t for t in LOCAL_TOOLS if self.can_ask or t.name != "ask_clarification"]
        catalog = Catalog([self._sentry, self._git_view, self._code], local)
        return Loop(
            model=self.model(inv),
            catalog=catalog,
            retriever=self.retriever,
            save=save,
            files=self.code,
            limits=self.limits,
            extractor=self.extract_model(inv) if self.extract_model else None,
            prefetch=self.prefetch,
            ledger=self.ledger,
            repo_map=self.code if self.repo_map else None,
        )
