"""A Model adapter on the official groq SDK (chat completions with tools).

Our Messages become chat-completions messages and the answer comes back as a Message:

- system / user → ``{"role", "content"}``;
- assistant → ``{"role", "content", "tool_calls": [{id, type: "function",
  function: {name, arguments: <JSON string>}}]}`` (``content`` is left out when the
  message only calls tools);
- tool → ``{"role": "tool", "tool_call_id", "content"}``.

Our own fields (``data``, ``evidence_id``, the tool message's ``name``) are never sent:
the model reads ``content`` only.

Tool-call arguments that are not a JSON object do not raise: the call comes back as
``ToolCall(arguments={INVALID_JSON: <the raw text, at most 500 chars>})`` and the loop
answers it with an ``ERROR: arguments are not valid JSON: …`` tool result, so the model
can try again.

Errors: the SDK itself retries 408, 409, 429 and 5xx (``max_retries`` times, honouring
retry-after). Whatever ``groq.APIError`` remains propagates; the loop then stops the
run and salvages what was gathered. The API key lives only in the SDK client: it is
never logged nor put in an exception message here.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from groq import AsyncGroq

from agent.domain import Message, ToolCall
from agent.ports import ModelResponse, ToolSpec, Usage

log = logging.getLogger(__name__)

# The key of the one argument a call with unparseable arguments carries (see the loop).
INVALID_JSON = "__invalid_json__"
RAW_ARGUMENTS_CHARS = 500


class GroqModel:
    """One chat completion per request, through ``AsyncGroq``."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        max_retries: int = 2,
        timeout: float = 60.0,
        temperature: float = 0.0,
        client: AsyncGroq | None = None,
    ) -> None:
        self.model = model
        self.temperature = temperature
        self._owns_client = client is None
        if client is None:
            if not api_key:
                raise ValueError("GroqModel needs an API key (GROQ_API_KEY)")
            client = AsyncGroq(
                api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout
            )
        self._client = client

    def __repr__(self) -> str:
        return f"GroqModel(model={self.model!r})"

    async def aclose(self) -> None:
        """Close the HTTP client if this adapter created it."""
        if self._owns_client:
            await self._client.close()

    async def request(
        self, messages: list[Message], tools: list[ToolSpec], *, require_tool: bool = False
    ) -> ModelResponse:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [to_wire(m) for m in messages],
            "temperature": self.temperature,
        }
        if tools:
            params["tools"] = [tool_to_wire(t) for t in tools]
            params["tool_choice"] = "required" if require_tool else "auto"
        log.debug(
            "groq request: model=%s messages=%d tools=%d", self.model, len(messages), len(tools)
        )
        completion = await self._client.chat.completions.create(**params)
        if not completion.choices:
            raise RuntimeError(f"the model {self.model!r} returned no choices")
        answer = completion.choices[0].message
        calls = [
            ToolCall(
                id=tc.id, name=tc.function.name, arguments=parse_arguments(tc.function.arguments)
            )
            for tc in answer.tool_calls or []
        ]
        usage = Usage()
        if completion.usage is not None:
            usage = Usage(
                input_tokens=completion.usage.prompt_tokens or 0,
                output_tokens=completion.usage.completion_tokens or 0,
            )
        log.debug(
            "groq answer: finish=%s tool_calls=%d in=%d out=%d",
            completion.choices[0].finish_reason,
            len(calls),
            usage.input_tokens,
            usage.output_tokens,
        )
        return ModelResponse(
            message=Message(role="assistant", content=answer.content or "", tool_calls=calls),
            usage=usage,
        )


def to_wire(m: Message) -> dict[str, Any]:
    """A chat-completions message: only what the model should read."""
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant":
        out: dict[str, Any] = {"role": "assistant"}
        if m.content or not m.tool_calls:
            out["content"] = m.content
        if m.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        # Always valid JSON, even for a call whose arguments were not.
                        "arguments": json.dumps(c.arguments, ensure_ascii=False, default=str),
                    },
                }
                for c in m.tool_calls
            ]
        return out
    return {"role": m.role, "content": m.content}


def tool_to_wire(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def parse_arguments(raw: str | None) -> dict[str, Any]:
    """The arguments as a dict; anything but a JSON object is kept raw for the loop to refuse."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    return {INVALID_JSON: raw[:RAW_ARGUMENTS_CHARS]}
