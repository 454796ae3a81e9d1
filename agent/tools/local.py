"""The tools the loop itself provides: search_knowledge, ask_clarification, finish_investigation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent.domain import (
    AffectedWindow,
    ConfidenceFactor,
    FixAssessment,
    Location,
    ProposedChange,
    QuotedChange,
    RelatedIssue,
    TriggerInput,
)
from agent.ports import Retriever, ToolResult, ToolSpec

MAX_PASSAGES = 5

SEARCH_KNOWLEDGE = ToolSpec(
    name="search_knowledge",
    description=(
        "Search the project's own documentation at the running revision. Returns at most 5 "
        "passages, each with path, heading, line range and revision. Query with identifiers "
        "(field names, keys, function names) and plain words."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "identifiers and words to look for"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PASSAGES},
        },
        "required": ["query"],
    },
)

ASK_CLARIFICATION = ToolSpec(
    name="ask_clarification",
    description=(
        "Ask the operator one short question when an essential fact is missing and cannot be "
        "found with the other tools. The investigation waits for the answer."
    ),
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)

_STRINGS = {"type": "array", "items": {"type": "string"}}


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema with its definitions inlined and titles and defaults dropped:
    plain enough for any chat-completions tool schema."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
            if "anyOf" in node:  # `X | None`: the model either sends X or leaves it out
                kinds = [k for k in node["anyOf"] if k.get("type") != "null"]
                if len(kinds) == 1:
                    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
                    return inline({**kinds[0], **rest})
            return {
                k: inline(v)
                for k, v in node.items()
                if k not in ("title", "default", "$defs", "description")
            }
        if isinstance(node, list):
            return [inline(x) for x in node]
        return node

    return inline(raw)


# The finding: optional, each part computed from the evidence when left out.
FINDING_PROPERTIES: dict[str, Any] = {
    "change": {
        **_schema(QuotedChange),
        "description": "the suspect hunk quoted: lines before and after, citing the diff's item",
    },
    "trigger": _schema(TriggerInput),
    "proposed_change": {
        **_schema(ProposedChange),
        "description": "the smallest change that would fix it, as a unified diff; a hypothesis",
    },
    "affected": {"type": "array", "items": _schema(Location)},
    "fix": {**_schema(FixAssessment), "description": "risk and complexity of the proposed change"},
    "confidence_factors": {"type": "array", "items": _schema(ConfidenceFactor)},
    "window": _schema(AffectedWindow),
    "related_issues": {"type": "array", "items": _schema(RelatedIssue)},
}

FINISH_INVESTIGATION = ToolSpec(
    name="finish_investigation",
    description=(
        "End the investigation with a diagnosis. Every fact cites evidence ids (E1, E2…) "
        "that exist; a quote, when given, must appear verbatim in the cited evidence. Keep "
        "hypotheses and uncertainties apart from facts. The suspect file must exist at the "
        "running revision."
    ),
    parameters={
        "type": "object",
        "properties": {
            "root_cause": {"type": "string"},
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "evidence": {**_STRINGS, "minItems": 1},
                        "quote": {"type": "string"},
                    },
                    "required": ["text", "evidence"],
                },
            },
            "hypotheses": _STRINGS,
            "uncertainties": _STRINGS,
            "recommended_check": {"type": "string"},
            "suspect": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "line_start": {"type": "integer", "minimum": 1},
                    "line_end": {"type": "integer", "minimum": 1},
                    "commit": {"type": "string"},
                    "revision": {
                        "type": "string",
                        "description": "the running revision the path and lines refer to",
                    },
                },
                "required": ["path", "line_start", "line_end"],
            },
            "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
            "issue_title": {"type": "string"},
            "issue_body": {"type": "string"},
            **FINDING_PROPERTIES,
        },
        "required": ["root_cause", "facts", "confidence"],
    },
)

LOCAL_TOOLS = [SEARCH_KNOWLEDGE, ASK_CLARIFICATION, FINISH_INVESTIGATION]


async def search_knowledge(
    retriever: Retriever, arguments: dict[str, Any], repository: str, revision: str | None
) -> ToolResult:
    query = str(arguments.get("query") or "").strip()
    if not query:
        return ToolResult(
            text="search_knowledge needs a non-empty query",
            title="search_knowledge",
            source="docs",
            is_error=True,
        )
    try:
        limit = int(arguments.get("limit") or MAX_PASSAGES)
    except (TypeError, ValueError):
        limit = MAX_PASSAGES
    passages = await retriever.search(
        query, limit=max(1, min(limit, MAX_PASSAGES)), revision=revision
    )
    if not passages:
        return ToolResult(
            text=f"No passage of the documentation matches {query!r}.",
            title=f"docs: {query[:60]}",
            source="docs",
            data={"passages": []},
        )
    parts = []
    for i, p in enumerate(passages, 1):
        parts.append(
            f"[{i}] {p.path} § {p.heading} (lines {p.line_start}-{p.line_end}, "
            f"revision {p.revision[:7]})\n{p.text.strip()}"
        )
    top = passages[0]
    return ToolResult(
        text="\n\n".join(parts),
        title=f"docs: {top.path} § {top.heading}",
        source="docs",
        link=(
            f"https://github.com/{repository}/blob/{top.revision}/{top.path}"
            f"#L{top.line_start}-L{top.line_end}"
        ),
        path=top.path,
        revision=top.revision,
        data={"query": query, "passages": [p.model_dump() for p in passages]},
    )
