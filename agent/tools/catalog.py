"""The catalog the model sees: `server__tool` names over every toolset, narrowed by phase."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.budget import Phase
from agent.ports import ToolResult, Toolset, ToolSpec

SEPARATOR = "__"
_EXPLORING = re.compile(r"^(search|find|list|grep)_|_(grep|log|search)$|^git_(log|grep)$")


@dataclass(frozen=True)
class Entry:
    qualified: str
    toolset: Toolset
    spec: ToolSpec
    exploring: bool


def is_exploring(bare_name: str) -> bool:
    """Tools that discover (searches, listings, logs) close first as the budget runs down.

    search_knowledge stays open: it reads the docs about identifiers already found.
    """
    return bare_name != "search_knowledge" and bool(_EXPLORING.search(bare_name))


class Catalog:
    def __init__(self, toolsets: list[Toolset], local: list[ToolSpec]) -> None:
        self._toolsets = toolsets
        self._local = {spec.name: spec for spec in local}
        self._entries: dict[str, Entry] | None = None

    async def entries(self) -> dict[str, Entry]:
        if self._entries is None:
            entries: dict[str, Entry] = {}
            for ts in self._toolsets:
                for spec in await ts.get_tools():
                    qualified = f"{ts.name}{SEPARATOR}{spec.name}"
                    entries[qualified] = Entry(
                        qualified,
                        ts,
                        spec.model_copy(update={"name": qualified}),
                        is_exploring(spec.name),
                    )
            self._entries = entries
        return self._entries

    async def specs(self, phase: Phase) -> list[ToolSpec]:
        if phase is Phase.FINISH:
            return [self._local["finish_investigation"]]
        out = []
        for entry in (await self.entries()).values():
            if phase is Phase.EXPLORE or not entry.exploring:
                out.append(entry.spec)
        for name, spec in self._local.items():
            if phase is Phase.EXPLORE or not is_exploring(name):
                out.append(spec)
        return out

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        entry = (await self.entries()).get(name)
        if entry is None:
            return ToolResult(
                text=f"unknown tool {name!r}", title=name, source="local", is_error=True
            )
        bare = name.split(SEPARATOR, 1)[1]
        return await entry.toolset.call_tool(bare, arguments)


class Pinned:
    """A toolset whose scope arguments (organization, project, repository) come from
    configuration: hidden from the model's schemas and overwritten in every call."""

    def __init__(self, inner: Toolset, pinned: dict[str, Any]) -> None:
        self.name = inner.name
        self.inner = inner
        self.pinned = pinned
        self._properties: dict[str, set[str]] = {}

    async def get_tools(self) -> list[ToolSpec]:
        out = []
        for spec in await self.inner.get_tools():
            params = dict(spec.parameters)
            props = dict(params.get("properties") or {})
            self._properties[spec.name] = set(props)
            params["properties"] = {k: v for k, v in props.items() if k not in self.pinned}
            if "required" in params:
                params["required"] = [r for r in params["required"] if r not in self.pinned]
            out.append(spec.model_copy(update={"parameters": params}))
        return out

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name not in self._properties:
            await self.get_tools()
        accepted = self._properties.get(name, set())
        merged = {k: v for k, v in (arguments or {}).items() if k not in self.pinned}
        merged |= {k: v for k, v in self.pinned.items() if k in accepted}
        return await self.inner.call_tool(name, merged)
