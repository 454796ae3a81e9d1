"""What one project's investigations read, behind the ports: the same shape whether the
sources are live (Sentry's MCP server, a mirror clone, the docs at the release) or a
recorded incident (recorded/)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agent.ports import Retriever, RevisionFiles, Toolset


@dataclass
class Sources:
    """`sentry` and `code` are offered to the model (scope already pinned); `files`
    checks a suspect exists at a revision; `docs` answers search_knowledge. `starts` run
    before the first investigation (a clone, a fetch), `closes` when the process stops."""

    sentry: Toolset
    code: list[Toolset]
    files: RevisionFiles
    docs: Retriever | None
    starts: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    closes: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def start(self) -> None:
        for start in self.starts:
            await start()

    async def aclose(self) -> None:
        for close in reversed(self.closes):
            await close()
