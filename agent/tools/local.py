"""The tools the loop itself provides: search_knowledge, ask_clarification, finish_investigation."""

from __future__ import annotations

from typing import Any

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


def _shape(kind: str, keys: str) -> dict[str, Any]:
    """A finding field as the model is told of it: its keys in one line. The loop validates
    it fully (agent/domain.py) and refuses a malformed one with the reason; a full nested
    schema here would cost every request hundreds of tokens for fields that are optional."""
    if kind == "array":
        return {"type": "array", "items": {"type": "object"}, "description": keys}
    return {"type": "object", "description": keys}


# The finding: optional; each part left out is computed from the evidence.
FINDING_PROPERTIES: dict[str, Any] = {
    "change": _shape("object", "the suspect hunk: commit, path, before[], after[], evidence[]"),
    "trigger": _shape(
        "object", "input: kind request|job|cli, entry, fields[{name,value,source}], absent[]"
    ),
    "proposed_change": _shape(
        "object", "a hypothesis: path, diff (unified, at the running revision), rationale"
    ),
    "affected": _shape("array", "path, line_start, line_end, role fault|crash|stack|changed"),
    "fix": _shape("object", "risk, complexity (low|medium|high), reasons[]"),
    "confidence_factors": _shape("array", "effect raises|lowers, factor, text, evidence[]"),
    "window": _shape("object", "first_seen, last_seen, events, release, per_hour_after"),
    "related_issues": _shape("array", "id, short_id, title, reasons[], evidence[]"),
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
