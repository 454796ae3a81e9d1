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
        refused = await self.refusal(name, arguments)
        if refused:
            return ToolResult(text=refused, title=name, source="local", is_error=True)
        bare = name.split(SEPARATOR, 1)[1]
        return await entry.toolset.call_tool(bare, arguments)

    async def refusal(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Why the arguments of a call are refused before anything runs, or None.

        Text the model read in evidence must not move the scope: a scope argument that
        configuration pins (organization, project, repository path…) may only be sent
        with its configured value, and an argument the tool's schema does not declare is
        refused rather than passed on to the server.
        """
        entry = (await self.entries()).get(name)
        spec = entry.spec if entry is not None else self._local.get(name)
        if spec is None or not isinstance(arguments, dict):
            return None
        pinned = getattr(entry.toolset, "pinned", None) if entry is not None else None
        pinned = pinned if isinstance(pinned, dict) else {}
        properties = spec.parameters.get("properties")
        declared = set(properties) if isinstance(properties, dict) else set()
        strict = bool(declared) or spec.parameters.get("additionalProperties") is False
        problems = []
        for key, value in arguments.items():
            if key in pinned:
                if value not in (None, pinned[key]):
                    problems.append(f"{key!r} is fixed by configuration and cannot be changed")
            elif strict and key not in declared:
                problems.append(f"{key!r} is not an argument of {name}")
        if not problems:
            return None
        return f"refused: {'; '.join(problems)} (the scope of an investigation is not the model's)"


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
