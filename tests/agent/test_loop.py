from typing import Any

import pytest

from agent.budget import Limits
from agent.domain import Investigation, Message, State, ToolCall
from agent.loop import Loop
from agent.models.scripted import ScriptedModel
from agent.ports import Passage, ToolResult, ToolSpec
from agent.tools.catalog import Catalog
from agent.tools.local import LOCAL_TOOLS
from tests.agent.test_domain import scope


class FakeErrors:
    """An in-process toolset standing in for a tool server."""

    name = "sentry"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    async def get_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(name="search_issues"),
            ToolSpec(name="get_issue_details"),
            ToolSpec(name="explode"),
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        if name == "explode":
            raise OSError("connection reset")
        return ToolResult(
            text=f"{name} says: value is null at Foo.java:14",
            title=name,
            source="sentry",
            link="https://sentry.example/1",
        )


class Files:
    async def file_exists(self, path: str, revision: str) -> bool:
        return path == "src/Foo.java"


class Docs:
    async def search(self, query: str, limit: int = 5, revision: str | None = None):
        return [
            Passage(
                path="docs/a.md",
                heading="A",
                line_start=1,
                line_end=3,
                revision="abc",
                text="A missing value must be stored as empty.",
            )
        ]


def call(name: str, n: int = 1, **arguments: Any) -> Message:
    return Message(
        role="assistant", tool_calls=[ToolCall(id=f"c{n}", name=name, arguments=arguments)]
    )


def finish(n: int, **over: Any) -> Message:
    args = {
        "root_cause": "value is null at Foo.java:14",
        "facts": [{"text": "the event says so", "evidence": ["E1"], "quote": "value is null"}],
        "hypotheses": ["a recent change"],
        "uncertainties": ["one event"],
        "recommended_check": "replay",
        "confidence": "high",
        "suspect": {
            "path": "src/Foo.java",
            "line_start": 14,
            "line_end": 14,
            "commit": "abc",
            "revision": "abc",
        },
    } | over
    return call("finish_investigation", n, **args)


def make(model: ScriptedModel, limits: Limits | None = None, saves: list | None = None):
    errors = FakeErrors()

    async def save(inv: Investigation) -> None:
        if saves is not None:
            saves.append((inv.state, len(inv.evidence)))

    loop = Loop(
        model=model,
        catalog=Catalog([errors], LOCAL_TOOLS),
        retriever=Docs(),
        save=save,
        files=Files(),
        limits=limits,
    )
    return loop, errors


def tool_replies(inv: Investigation) -> list[str]:
    return [m.content for m in inv.messages if m.role == "tool"]


async def test_evidence_then_a_valid_finish_completes_with_a_draft():
    model = ScriptedModel([call("sentry__search_issues", 1, query="x"), finish(2)])
    saves: list = []
    loop, _ = make(model, saves=saves)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert inv.state is State.COMPLETED
    assert [e.id for e in inv.evidence] == ["E1"]
    assert inv.evidence[0].source == "sentry" and inv.evidence[0].link
    assert inv.diagnosis.suspect.path == "src/Foo.java"
    assert inv.draft.version == 1 and inv.draft.repository == "acme/orders"
    assert "E1" in inv.draft.body
    assert inv.stats.model_calls == 2 and inv.stats.tool_calls == 2
    assert (State.RUNNING, 1) in saves  # evidence is saved as it arrives
    # the model saw the catalog with server__tool names and the local tools
    names = {t.name for t in model.requests[0][1]}
    assert {"sentry__search_issues", "search_knowledge", "finish_investigation"} <= names


async def test_repeated_unknown_and_failing_calls_go_back_to_the_model():
    model = ScriptedModel(
        [
            call("sentry__search_issues", 1, query="x"),
            call("sentry__search_issues", 2, query="x"),
            call("github__create_issue", 3, title="pwned"),
            call("sentry__explode", 4),
            finish(5),
        ]
    )
    loop, errors = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    replies = tool_replies(inv)
    assert "identical call" in replies[1]
    assert "unknown tool" in replies[2]
    assert "the tool failed: OSError" in replies[3]
    assert len(errors.calls) == 2  # the refused calls never reached the toolset
    assert inv.state is State.COMPLETED and len(inv.evidence) == 1


@pytest.mark.parametrize(
    ("override", "why"),
    [
        ({"facts": [{"text": "t", "evidence": ["E9"]}]}, "does not exist"),
        ({"facts": [{"text": "t", "evidence": ["E1"], "quote": "not there"}]}, "quote"),
        ({"suspect": {"path": "src/Nope.java", "line_start": 1, "line_end": 1}}, "does not exist"),
        ({"facts": []}, "at least one fact"),
        ({"facts": "nonsense"}, "malformed"),
    ],
)
async def test_an_invalid_finish_is_refused_and_the_model_tries_again(override, why):
    model = ScriptedModel([call("sentry__search_issues", 1), finish(2, **override), finish(3)])
    loop, _ = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert why in tool_replies(inv)[1]
    assert inv.state is State.COMPLETED


async def test_budget_exhaustion_salvages_what_was_gathered():
    steps = [call("sentry__search_issues", i, query=str(i)) for i in range(1, 10)]
    model = ScriptedModel(steps)
    loop, _ = make(model, limits=Limits(model_calls=3, tool_calls=16))
    inv = await loop.run(Investigation.open("why?", scope()))
    assert inv.state is State.STOPPED and "3 model calls" in inv.stop_reason
    assert inv.diagnosis.confidence == "low"
    assert [f.evidence for f in inv.diagnosis.facts] == [["E1"], ["E2"]]
    # the funnel offered only finish_investigation on the last call
    assert [t.name for t in model.requests[-1][1]] == ["finish_investigation"]


async def test_the_funnel_closes_exploring_tools_first():
    steps = [call("sentry__get_issue_details", i, id=str(i)) for i in range(1, 6)] + [finish(9)]
    model = ScriptedModel(steps)
    loop, _ = make(model, limits=Limits(model_calls=8, tool_calls=16, read_after=0.5))
    await loop.run(Investigation.open("why?", scope()))
    first = {t.name for t in model.requests[0][1]}
    later = {t.name for t in model.requests[4][1]}
    assert "sentry__search_issues" in first and "search_knowledge" in first
    assert "sentry__search_issues" not in later
    # reading what was found stays open: details and the docs about found identifiers
    assert {"sentry__get_issue_details", "search_knowledge"} <= later


async def test_prose_is_nudged_once_then_salvaged():
    prose = "# Diagnosis\n\n**Root cause**\n\nThe customer reference is null for legacy clients."
    model = ScriptedModel(
        [
            call("sentry__search_issues", 1),
            Message(role="assistant", content="hmm"),
            Message(role="assistant", content=prose),
        ]
    )
    loop, _ = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert inv.state is State.STOPPED
    assert inv.diagnosis.root_cause == "The customer reference is null for legacy clients."
    assert any(m.role == "user" and "finish_investigation" in m.content for m in inv.messages)


async def test_a_failing_model_stops_the_run_without_losing_evidence():
    def boom(messages, tools):
        raise TimeoutError("model timed out")

    model = ScriptedModel([call("sentry__search_issues", 1), boom])
    loop, _ = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert inv.state is State.STOPPED and "TimeoutError" in inv.stop_reason
    assert len(inv.evidence) == 1


async def test_clarification_waits_and_the_answer_resumes():
    model = ScriptedModel(
        [
            call("ask_clarification", 1, question="Which release?"),
            call("sentry__search_issues", 2),
            finish(3),
        ]
    )
    loop, _ = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert inv.state is State.WAITING_FOR_OPERATOR
    assert inv.pending_question == "Which release?"
    inv.answer("release abc")
    inv = await loop.run(inv)
    assert inv.state is State.COMPLETED
    asked = [m for m in model.requests[1][0] if m.role == "tool"]
    assert asked[-1].content == "release abc"


async def test_a_resumed_run_executes_calls_left_unanswered():
    model = ScriptedModel([finish(2)])
    loop, errors = make(model)
    inv = Investigation.open("why?", scope())
    inv.start()
    inv.messages.append(call("sentry__search_issues", 1, query="x"))  # a worker died here
    inv = await loop.run(inv)
    assert errors.calls == [("search_issues", {"query": "x"})]
    assert inv.state is State.COMPLETED and inv.stats.model_calls == 1


async def test_docs_are_searched_through_the_retriever_with_provenance():
    model = ScriptedModel(
        [
            call("search_knowledge", 1, query="missing value"),
            finish(
                2,
                facts=[{"text": "doc", "evidence": ["E1"], "quote": "stored as empty"}],
                suspect=None,
            ),
        ]
    )
    loop, _ = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    ev = inv.evidence[0]
    assert ev.source == "docs" and ev.path == "docs/a.md"
    assert ev.link == "https://github.com/acme/orders/blob/abc/docs/a.md#L1-L3"
    assert inv.state is State.COMPLETED


async def test_a_failed_call_may_be_tried_again_but_a_good_one_is_not_repeated():
    model = ScriptedModel(
        [
            call("sentry__explode", 1),
            call("sentry__explode", 2),
            call("sentry__search_issues", 3),
            call("sentry__search_issues", 4),
            finish(5),
        ]
    )
    loop, errors = make(model)
    inv = await loop.run(Investigation.open("why?", scope()))
    assert [name for name, _ in errors.calls] == ["explode", "explode", "search_issues"]
    assert "identical call" in tool_replies(inv)[3]
