"""The API's request and response bodies; the OpenAPI document is generated from them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.domain import (
    MAX_BODY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    Diagnosis,
    Investigation,
    Receipt,
    State,
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StartRequest(Strict):
    project: str = Field(min_length=1, max_length=100)
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    since: datetime | None = None
    until: datetime | None = None


class DraftEdit(Strict):
    expected_draft_version: int = Field(alias="expectedDraftVersion", ge=1)
    title: str = Field(max_length=MAX_TITLE_CHARS * 4)
    body: str = Field(max_length=MAX_BODY_CHARS * 2)


class Answer(Strict):
    text: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)


class IssueRequest(Strict):
    draft_version: int = Field(alias="draftVersion", ge=1)
    hash: str = Field(min_length=1, max_length=128)


class ErrorBody(BaseModel):
    code: Literal[
        "unauthorized", "forbidden", "invalid", "conflict", "not_found", "too_large", "unsupported"
    ]
    message: str
    field: str | None = None


class Error(BaseModel):
    error: ErrorBody


class EvidenceOut(BaseModel):
    id: str
    source: str
    tool: str
    title: str
    link: str | None
    retrieved_at: datetime
    path: str | None
    revision: str | None
    content_hash: str


class DraftOut(BaseModel):
    repository: str
    title: str
    body: str
    version: int
    hash: str
    discarded: bool


class MessageOut(BaseModel):
    role: str
    content: str
    tool: str | None = None


class Summary(BaseModel):
    id: str
    project: str
    question: str
    state: State
    created_at: datetime


class InvestigationOut(Summary):
    requester: str | None
    stop_reason: str | None
    pending_question: str | None
    evidence: list[EvidenceOut]
    diagnosis: Diagnosis | None
    draft: DraftOut | None
    messages: list[MessageOut]
    issue_url: str | None
    rerun_of: str | None
    superseded_by: str | None

    @classmethod
    def of(cls, inv: Investigation) -> InvestigationOut:
        d = inv.draft
        return cls(
            id=inv.id,
            project=inv.scope.project_key,
            question=inv.question,
            state=inv.state,
            created_at=inv.created_at,
            requester=inv.requester,
            stop_reason=inv.stop_reason,
            pending_question=inv.pending_question,
            evidence=[EvidenceOut.model_validate(ev.card()) for ev in inv.evidence],
            diagnosis=inv.diagnosis,
            draft=DraftOut(
                repository=d.repository,
                title=d.title,
                body=d.body,
                version=d.version,
                hash=d.hash,
                discarded=inv.discarded,
            )
            if d
            else None,
            messages=conversation(inv),
            issue_url=inv.publication.url if inv.publication else None,
            rerun_of=inv.rerun_of,
            superseded_by=inv.superseded_by,
        )


def conversation(inv: Investigation) -> list[MessageOut]:
    """The question, the bot's clarifications and the answers: what people said, not the
    model's tool traffic (which is evidence, shown as such)."""
    out = [MessageOut(role="operator", content=inv.question)]
    for m in inv.messages:
        for call in m.tool_calls:
            if call.name == "ask_clarification":
                question = str(call.arguments.get("question") or "")
                out.append(MessageOut(role="bot", content=question, tool=call.name))
        if m.role == "tool" and m.name == "ask_clarification":
            out.append(MessageOut(role="operator", content=m.content, tool=m.name))
    return out


class Page(BaseModel):
    items: list[Summary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last one."
    )


class Accepted(BaseModel):
    id: str
    state: State
    location: str


class ReceiptOut(BaseModel):
    investigation_id: str
    status: str
    draft_version: int
    hash: str
    approver: str
    issue_url: str | None

    @classmethod
    def of(cls, inv: Investigation, receipt: Receipt) -> ReceiptOut:
        pub = receipt.publication or inv.publication
        return cls(
            investigation_id=inv.id,
            status=receipt.status,
            draft_version=receipt.approval.version,
            hash=receipt.approval.hash,
            approver=receipt.approval.approver,
            issue_url=pub.url if pub else None,
        )


def error(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return Error(error=ErrorBody(code=code, message=message, field=field)).model_dump()  # type: ignore[arg-type]
