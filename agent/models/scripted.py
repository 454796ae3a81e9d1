"""A scripted model for tests: it answers with the messages it was given, in order."""

from __future__ import annotations

from collections.abc import Callable

from agent.domain import Message
from agent.ports import ModelResponse, ToolSpec

Step = Message | Callable[[list[Message], list[ToolSpec]], Message]


class ScriptedModel:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[tuple[list[Message], list[ToolSpec]]] = []

    async def request(
        self, messages: list[Message], tools: list[ToolSpec], *, require_tool: bool = False
    ) -> ModelResponse:
        self.requests.append((list(messages), list(tools)))
        if not self.steps:
            raise RuntimeError("the script has no more steps")
        step = self.steps.pop(0)
        message = step(messages, tools) if callable(step) else step
        return ModelResponse(message=message)
