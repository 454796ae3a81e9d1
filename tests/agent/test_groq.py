"""GroqModel through the real groq SDK against FakeChat, alone and inside the real Loop."""

from __future__ import annotations

import json
from typing import Any

import groq
import pytest

from agent import prompt
from agent.domain import Investigation, Message, State, ToolCall
from agent.loop import Loop
from agent.models.groq import INVALID_JSON, GroqModel, parse_arguments, to_wire
from agent.ports import ToolResult, ToolSpec
from agent.tools.catalog import Catalog
from agent.tools.local import LOCAL_TOOLS
from tests.agent.test_domain import scope
from tests.fakes.chat import FakeChat

KEY = "gsk-test-0123456789-secret"
MODEL = "llama-test"


class FakeErrors:
    """An in-process toolset standing in for the error tracker's tool server."""

    name = "sentry"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    async def get_tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="search_issues",
                description="Search issues.",
                parameters={
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            ),
            ToolSpec(name="get_issue_details", description="One issue."),
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        return ToolResult(
            text=f"{name} says: value is null at Foo.java:14",
            title=name,
            source="sentry",
            link="https://sentry.example/1",
            data={"issue": {"id": "42"}, "secret_structured": "only for surfaces"},
        )


def args(**kw: Any) -> str:
    return json.dumps(kw)


SEARCH = ("sentry__search_issues", args(query="null"))
FINISH = (
    "finish_investigation",
    args(
        root_cause="value is null at Foo.java:14",
        facts=[{"text": "the event says so", "evidence": ["E1"], "quote": "value is null"}],
        hypotheses=["a recent change"],
        uncertainties=["one event"],
        recommended_check="replay the event",
        confidence="high",
    ),
)


@pytest.fixture
async def chat():
    async with FakeChat(api_key=KEY) as fake:
        yield fake


@pytest.fixture
async def model(chat: FakeChat):
    m = GroqModel(MODEL, api_key=KEY, base_url=chat.base_url, max_retries=2)
    yield m
    await m.aclose()


async def run(model: GroqModel) -> tuple[Investigation, FakeErrors]:
    errors = FakeErrors()

    async def save(inv: Investigation) -> None:
        return None

    loop = Loop(model=model, catalog=Catalog([errors], LOCAL_TOOLS), retriever=None, save=save)
    inv = await loop.run(Investigation.open("why do orders fail?", scope()))
    return inv, errors


def tool_replies(inv: Investigation) -> list[str]:
    return [m.content for m in inv.messages if m.role == "tool"]


def wire_tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


# -- through the loop ---------------------------------------------------------------


async def test_a_tool_call_then_finish_completes_and_sums_usage(chat, model):
    chat.script(
        [
            {"content": "Looking.", "tool_calls": [SEARCH], "usage": (100, 20)},
            {"content": None, "tool_calls": [FINISH], "usage": (150, 30)},
        ]
    )
    inv, errors = await run(model)

    assert inv.state is State.COMPLETED, inv.stop_reason
    assert errors.calls == [("search_issues", {"query": "null"})]
    assert inv.stats.model_calls == 2
    assert (inv.stats.input_tokens, inv.stats.output_tokens) == (250, 50)
    assert inv.diagnosis.root_cause == "value is null at Foo.java:14"
    assert inv.messages[2].content == "Looking."  # the assistant's text is kept
    assert chat.problems == [] and chat.remaining == 0

    first, second = chat.requests
    assert first["model"] == MODEL and first["temperature"] == 0
    assert first["messages"][0] == {
        "role": "system",
        "content": prompt.system("en"),
    }
    assert first["messages"][1]["role"] == "user"
    assert "why do orders fail?" in first["messages"][1]["content"]
    assert first["tool_choice"] == "auto"
    tools = {t["function"]["name"]: t for t in first["tools"]}
    assert {"sentry__search_issues", "sentry__get_issue_details", "finish_investigation"} <= set(
        tools
    )
    assert all(t["type"] == "function" for t in first["tools"])
    assert tools["sentry__search_issues"]["function"]["parameters"]["required"] == ["query"]
    assert tools["sentry__search_issues"]["function"]["description"] == "Search issues."

    # the second request carries the assistant's call and the tool result for its id
    assistant = second["messages"][2]
    assert assistant["role"] == "assistant" and assistant["content"] == "Looking."
    (wire_call,) = assistant["tool_calls"]
    assert wire_call["type"] == "function"
    assert wire_call["function"] == {"name": SEARCH[0], "arguments": SEARCH[1]}
    (tool_msg,) = wire_tool_messages(second)
    assert tool_msg["tool_call_id"] == wire_call["id"] == inv.messages[2].tool_calls[0].id
    assert tool_msg["content"].startswith("[E1] search_issues\n")
    assert set(tool_msg) == {"role", "tool_call_id", "content"}

    # our own fields never go on the wire; the key is only in the header
    for body in chat.requests:
        for m in body["messages"]:
            assert "data" not in m and "evidence_id" not in m
    assert not any("secret_structured" in raw for raw in chat.raw)
    assert not any(KEY in raw for raw in chat.raw)
    assert chat.authorizations == [f"Bearer {KEY}"] * 2


async def test_malformed_json_arguments_get_an_error_reply_then_the_model_finishes(chat, model):
    broken = '{"query": "null", '
    chat.script(
        [
            {"tool_calls": [("sentry__search_issues", broken)]},
            {"tool_calls": [SEARCH]},
            {"tool_calls": [FINISH]},
        ]
    )
    inv, errors = await run(model)

    assert inv.state is State.COMPLETED, inv.stop_reason
    assert errors.calls == [("search_issues", {"query": "null"})]  # the broken call never ran
    assert inv.messages[2].tool_calls[0].arguments == {INVALID_JSON: broken}
    reply = tool_replies(inv)[0]
    assert reply.startswith("ERROR: arguments are not valid JSON")
    assert broken in reply

    second = chat.requests[1]
    (tool_msg,) = wire_tool_messages(second)
    assert tool_msg["content"].startswith("ERROR: arguments are not valid JSON")
    assert tool_msg["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]
    # what goes back to the server is still a JSON string
    sent = second["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == {INVALID_JSON: broken}
    assert chat.problems == []


async def test_malformed_finish_arguments_are_refused_before_validation(chat, model):
    chat.script(
        [
            {"tool_calls": [SEARCH]},
            {"tool_calls": [("finish_investigation", "{'root_cause': 'single quotes'}")]},
            {"tool_calls": [FINISH]},
        ]
    )
    inv, _ = await run(model)
    assert inv.state is State.COMPLETED
    assert tool_replies(inv)[1].startswith("ERROR: arguments are not valid JSON")


async def test_unknown_and_repeated_calls_go_back_to_the_model(chat, model):
    chat.script(
        [
            {"tool_calls": [SEARCH]},
            {"tool_calls": [SEARCH]},
            {"tool_calls": [("github__create_issue", args(title="pwned"))]},
            {"tool_calls": [FINISH]},
        ]
    )
    inv, errors = await run(model)

    assert inv.state is State.COMPLETED
    replies = tool_replies(inv)
    assert replies[1].startswith("ERROR: refused: an identical call")
    assert replies[2].startswith("ERROR: unknown tool")
    assert len(errors.calls) == 1
    last = wire_tool_messages(chat.requests[-1])
    assert [m["content"] for m in last] == replies[:3]
    assert chat.problems == []


async def test_a_rate_limit_is_retried_by_the_sdk(chat, model):
    chat.script([429, {"tool_calls": [SEARCH]}, {"tool_calls": [FINISH]}])
    inv, _ = await run(model)

    assert inv.state is State.COMPLETED, inv.stop_reason
    assert chat.statuses == [429, 200, 200]
    assert inv.stats.model_calls == 2  # the retry is the SDK's, not a model call of ours
    assert chat.requests[0] == chat.requests[1]


async def test_a_server_that_keeps_failing_stops_the_run_with_a_salvage(chat, model):
    chat.script([{"tool_calls": [SEARCH]}, 500, 500, 500])
    inv, _ = await run(model)

    assert chat.statuses == [200, 500, 500, 500]  # one try and max_retries=2 retries
    assert inv.state is State.STOPPED
    assert "model is unavailable" in inv.stop_reason
    assert "InternalServerError" in inv.stop_reason
    assert inv.diagnosis is not None and inv.diagnosis.confidence == "low"
    assert [f.evidence for f in inv.diagnosis.facts] == [["E1"]]
    assert KEY not in inv.stop_reason


# -- the adapter alone ----------------------------------------------------------------


async def test_without_tools_no_tools_are_sent_and_text_comes_back(chat, model):
    chat.script([{"content": "hello", "usage": (7, 3)}])
    response = await model.request([Message(role="user", content="hi")], [])

    assert response.message.role == "assistant"
    assert response.message.content == "hello" and response.message.tool_calls == []
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)
    (body,) = chat.requests
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]


async def test_several_tool_calls_in_one_answer(chat, model):
    chat.script([{"content": None, "tool_calls": [SEARCH, ("sentry__get_issue_details", "")]}])
    response = await model.request([Message(role="user", content="go")], [])

    first, second = response.message.tool_calls
    assert response.message.content == ""
    assert (first.name, first.arguments) == ("sentry__search_issues", {"query": "null"})
    assert (second.name, second.arguments) == ("sentry__get_issue_details", {})
    assert first.id != second.id


async def test_a_wrong_key_raises_an_api_error_that_does_not_name_the_key(chat):
    wrong = "gsk-wrong-key-987654321"
    model = GroqModel(MODEL, api_key=wrong, base_url=chat.base_url, max_retries=2)
    try:
        with pytest.raises(groq.AuthenticationError) as caught:
            await model.request([Message(role="user", content="hi")], [])
    finally:
        await model.aclose()
    assert chat.statuses == [401]  # not retried
    assert wrong not in str(caught.value) and KEY not in str(caught.value)
    assert wrong not in repr(model)


async def test_a_caller_supplied_client_is_used(chat):
    client = groq.AsyncGroq(api_key=KEY, base_url=chat.base_url, max_retries=0)
    model = GroqModel(MODEL, api_key="", client=client)
    chat.script([{"content": "ok"}])
    try:
        response = await model.request([Message(role="user", content="hi")], [])
    finally:
        await client.close()
    assert response.message.content == "ok"


def test_an_empty_key_is_refused():
    with pytest.raises(ValueError, match="API key"):
        GroqModel(MODEL, api_key="")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        (None, {}),
        ("  ", {}),
        ("{oops", {INVALID_JSON: "{oops"}),
        ("[1, 2]", {INVALID_JSON: "[1, 2]"}),
        ("null", {INVALID_JSON: "null"}),
        ("{" + "x" * 900, {INVALID_JSON: ("{" + "x" * 900)[:500]}),
    ],
)
def test_parse_arguments_never_raises(raw, expected):
    assert parse_arguments(raw) == expected


def test_to_wire_sends_only_what_the_model_reads():
    call = ToolCall(id="c1", name="sentry__search_issues", arguments={"query": "ñ"})
    assert to_wire(Message(role="assistant", tool_calls=[call])) == {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "sentry__search_issues", "arguments": '{"query": "ñ"}'},
            }
        ],
    }
    assert to_wire(Message(role="assistant", content="")) == {"role": "assistant", "content": ""}
    tool = Message(
        role="tool",
        tool_call_id="c1",
        name="sentry__search_issues",
        evidence_id="E1",
        content="[E1] x",
        data={"big": "structure"},
    )
    assert to_wire(tool) == {"role": "tool", "tool_call_id": "c1", "content": "[E1] x"}
