"""A recorded incident as a project's sources: the same ports as the live ones."""

from __future__ import annotations

from pathlib import Path

from agent.ports import Toolset
from agent.sources import Sources
from agent.tools.catalog import Pinned
from agent.tools.code import GitCodeTools, git_annotator
from agent.tools.mcp import McpToolset
from agent.tools.sentry_mcp import sentry_pins
from recorded.scenario import Scenario
from recorded.sentry import RecordedSentry
from search.repo import DEFAULT_PATHS, RepoDocs

# A recording's docs: its docs/ folder (../shared/scenarios/README.md) and, as a live
# project's by default, the top-level README, where a small project states its contract.
RECORDED_DOCS = DEFAULT_PATHS


def recorded_sources(
    scenario: Scenario, repo_dir: Path, git: McpToolset, sentry: McpToolset | None = None
) -> Sources:
    """The scenario's Sentry export (or `sentry`, a live server serving the same data),
    its code in `repo_dir` through `git` (mcp-server-git) and the code tools, its docs.
    The organization, project and repository are pinned: the model never chooses them."""
    scope = scenario.scope
    pins = sentry_pins(scope.sentry_organization, scope.sentry_project)
    reader: Toolset
    if sentry is not None:
        reader = sentry.view(pinned=pins)
    else:
        export = RecordedSentry(
            scenario.sentry,
            scope.sentry_organization,
            scope.sentry_project,
            scope.since,
            scope.until,
        )
        reader = Pinned(export, pins)
    code = GitCodeTools(repo_dir, scope.repository)
    view = git.view(pinned={"repo_path": str(repo_dir)}, annotate=git_annotator(scope.repository))
    return Sources(
        sentry=reader,
        code=[view, code],
        files=code,
        docs=RepoDocs(repo_dir, scope.language, paths=RECORDED_DOCS),
    )
