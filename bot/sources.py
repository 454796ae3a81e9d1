"""A configured project's live sources, and the runtime over every project of the file.

Per project (bot/config.py): Sentry through the declared MCP server (one process per
server, shared by the projects that name it, the organization and project pinned per
call), its releases resolved to commits of the mirror (bot/releases.py), the code from a
mirror clone kept fresh (bot/mirror.py), and the docs from the mirror at the revision
that ran, indexed once per revision under the data folder — or an exported corpus.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent.errors import InputError
from agent.ports import Retriever
from agent.sources import Sources
from agent.tools.code import GitCodeTools, git_annotator
from agent.tools.mcp import McpToolset
from agent.tools.sentry_mcp import sentry_pins
from bot.config import Project, Projects
from bot.mcp_servers import ServerConfig
from bot.mirror import FreshRevisions, Mirror
from bot.releases import Releases, ResolvedReleases
from bot.runtime import Runtime, Service, git_server
from search.repo import RepoDocs


def _absolute(path: Path) -> Path:
    return path.absolute()


def sentry_config_of(project: Project, servers: Mapping[str, ServerConfig]) -> ServerConfig:
    """The declared server a project reads Sentry through; InputError says what is missing."""
    if project.sentry_server is not None:
        config = servers.get(project.sentry_server)
        if config is None:
            raise InputError(
                f"project `{project.key}` names sentry_server `{project.sentry_server}`, "
                "which the projects file does not declare under [servers]"
            )
        return config
    declared = [c for c in servers.values() if c.preset == "sentry"]
    if len(declared) != 1:
        raise InputError(
            f'project `{project.key}`: declare one [servers.NAME] with preset = "sentry" '
            "(or name it with sentry_server)"
            if not declared
            else f"project `{project.key}`: several Sentry servers are declared; "
            "name one with sentry_server"
        )
    return declared[0]


def mirror_of(project: Project, data_dir: Path, environ: Mapping[str, str]) -> Mirror:
    if project.code_mirror is None and not project.code_url:
        raise InputError(f"project `{project.key}` needs code_url (or code_mirror)")
    path = project.code_mirror or data_dir / "mirrors" / f"{project.key}.git"
    variable = project.code_token_env
    return Mirror(
        path,
        project.code_url,
        min_interval=project.fetch_interval_seconds,
        token=(lambda: environ.get(variable) or None) if variable else None,
    )


async def docs_of(project: Project, mirror: Mirror | None, data_dir: Path) -> Retriever:
    """The exported corpus the project names, else the docs of its mirror."""
    if project.docs_corpus is not None:
        from search.corpus import CorpusError
        from search.export import open_corpus

        try:
            return await open_corpus(project.docs_corpus, project.language)
        except CorpusError as exc:
            raise InputError(f"project `{project.key}`: {exc}") from None
    if mirror is None:
        raise InputError(f"project `{project.key}`: no code, so no docs (or set docs_corpus)")
    return RepoDocs(
        mirror.path,
        project.language,
        paths=project.docs_paths,
        index_dir=data_dir / "docs" / project.key,
    )


async def live_sources(
    project: Project,
    sentry: McpToolset,
    git: McpToolset,
    data_dir: Path,
    environ: Mapping[str, str],
) -> Sources:
    mirror = mirror_of(project, data_dir, environ)
    code = GitCodeTools(mirror.path, project.repository)
    view = git.view(
        pinned={"repo_path": str(mirror.path)}, annotate=git_annotator(project.repository)
    )
    pins = sentry_pins(project.sentry_organization, project.sentry_project)
    docs = await docs_of(project, mirror, data_dir)
    return Sources(
        sentry=ResolvedReleases(sentry.view(pinned=pins), Releases(mirror, project.release_prefix)),
        code=[FreshRevisions(view, mirror), FreshRevisions(code, mirror)],
        files=code,
        docs=docs,
        starts=[mirror.start],
    )


async def live_runtime(
    projects: Projects,
    servers: Mapping[str, ServerConfig],
    data_dir: Path,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> Runtime:
    """Every project of the file with its live sources; one process per Sentry server
    the projects use, and one mcp-server-git for all of them (views pin the mirror)."""
    environ = os.environ if environ is None else environ
    if not projects.projects:
        raise InputError("the projects file declares no [projects.NAME]")
    data_dir = _absolute(data_dir)  # mcp-server-git gets the mirror's path as it is
    git = git_server()
    started: dict[str, McpToolset] = {}
    shared: list[Service] = []
    per_project: dict[str, Sources] = {}
    for project in projects.projects.values():
        config = sentry_config_of(project, servers)
        if config.name not in started:
            started[config.name] = config.toolset(environ)
            shared.append(started[config.name])
        per_project[project.key] = await live_sources(
            project, started[config.name], git, data_dir, environ
        )
    return Runtime(per_project, shared=[*shared, git], **options)
