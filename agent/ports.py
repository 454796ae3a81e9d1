"""The ports the loop talks through. `search`, `storage` and `bot` implement them."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from agent.domain import Investigation, Message

Source = Literal["sentry", "code", "docs", "local"]


class ToolSpec(BaseModel):
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolResult(BaseModel):
    """What a tool returned.

    `text` is what the model reads; `data` is the structured content (the
    offline investigator and the surfaces read it, a real model never does).
    """

    text: str
    title: str
    source: Source
    data: Any = None
    link: str | None = None
    path: str | None = None
    revision: str | None = None
    is_error: bool = False


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class ModelResponse(BaseModel):
    message: Message
    usage: Usage = Field(default_factory=Usage)


class Model(Protocol):
    """One async request: messages and tool schemas in, an assistant message out.
    `require_tool`: the answer must call one of the tools (no prose)."""

    async def request(
        self, messages: list[Message], tools: list[ToolSpec], *, require_tool: bool = False
    ) -> ModelResponse: ...


@runtime_checkable
class Toolset(Protocol):
    """A source of tools, local or behind MCP. Names here are bare; the catalog prefixes them."""

    name: str

    async def get_tools(self) -> list[ToolSpec]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...


class Passage(BaseModel):
    path: str
    heading: str
    line_start: int
    line_end: int
    revision: str
    text: str
    score: float = 0.0


class Retriever(Protocol):
    """Passages of the project's docs. `revision`, when given, is the running revision the
    docs must be read at; without it the retriever uses its default."""

    async def search(
        self, query: str, limit: int = 5, revision: str | None = None
    ) -> list[Passage]: ...


class RevisionFiles(Protocol):
    """Answers whether a file exists at a revision (to validate a suspect)."""

    async def file_exists(self, path: str, revision: str) -> bool: ...


class UsageLedger(Protocol):
    """The tokens every investigation spent on one UTC day (``"2026-11-30"``), as stored:
    the daily token budget is checked against it before each model request."""

    async def tokens_on(self, day: str) -> int: ...


class Job(BaseModel):
    id: int
    kind: str
    investigation_id: str
    attempts: int = 0
    worker: str | None = None


class InvestigationStore(Protocol):
    """Persistence of the aggregate. `save` writes over the version it read, or raises
    ConcurrencyError; on success it bumps `inv.version`. `create` stores a new one, and
    saves `replacing` (the run a re-run supersedes) in the same transaction, so no reader
    sees the old run pointing at one not stored yet."""

    async def create(self, inv: Investigation, replacing: Investigation | None = None) -> None: ...

    async def load(self, investigation_id: str) -> Investigation: ...

    async def save(self, inv: Investigation) -> None: ...

    async def running_on(self, inv: Investigation) -> str | None:
        """An earlier investigation still at work on the same subject (the same error)."""
        ...


class JobQueue(Protocol):
    """The database is the queue: jobs are claimed with a lease that expires if a worker dies."""

    async def enqueue(self, kind: str, investigation_id: str) -> Job: ...

    async def claim(self, worker: str, lease_seconds: float) -> Job | None: ...

    async def renew(self, job: Job, lease_seconds: float) -> None: ...

    async def complete(self, job: Job) -> None: ...
