"""The Investigation aggregate and the values it owns.

An Investigation owns its state, messages, evidence, diagnosis and draft and
refuses an illegal transition. `version` is the optimistic-concurrency
counter: the store saves only over the version it read.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
import uuid
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from agent.errors import IdempotencyConflict, IllegalTransition, InputError, StaleDraft

MAX_QUESTION_CHARS = 2000
# GitHub's limits on an issue, in characters (its error: "maximum is 65536 characters").
MAX_TITLE_CHARS = 256
GITHUB_BODY_CHARS = 65_536
# The publisher appends a hidden marker to the body (agent.publish.github.marker).
MARKER_ROOM = 512
MAX_BODY_CHARS = GITHUB_BODY_CHARS - MARKER_ROOM

# Bidi embeddings, overrides and isolates: invisible, they make text read in another
# order than it is stored ("Trojan Source"). Marks (U+200E/F) are harmless and kept.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Letters that show as nothing (fillers, the blank braille pattern).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def without_bidi_controls(text: str) -> str:
    return BIDI_CONTROLS.sub("", text)


def has_visible(text: str) -> bool:
    """True when something would show: not only spaces, zero-width or format characters."""
    return any(unicodedata.category(ch)[0] not in "CZ" and ch not in _BLANK_LETTERS for ch in text)


def check_text(text: str, what: str, limit: int, *, field: str | None = None) -> str:
    """`text` stripped, or InputError saying why it cannot be used as `what`."""
    text = text.strip()
    found = BIDI_CONTROLS.search(text)
    if found:
        raise InputError(
            f"the {what} contains an invisible direction control (U+{ord(found[0]):04X}) "
            "that makes text read differently than it is written; remove it",
            field=field,
        )
    if not has_visible(text):
        raise InputError(f"the {what} is empty", field=field)
    if len(text) > limit:
        raise InputError(
            f"the {what} has {len(text)} characters; the limit is {limit}", field=field
        )
    return text


def utcnow() -> datetime:
    return datetime.now(UTC)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class State(StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    WAITING_FOR_OPERATOR = "WAITING_FOR_OPERATOR"
    COMPLETED = "COMPLETED"
    STOPPED = "STOPPED"
    PUBLISH_QUEUED = "PUBLISH_QUEUED"
    PUBLISHED = "PUBLISHED"
    PUBLISH_UNKNOWN = "PUBLISH_UNKNOWN"
    # Never run: a gate (a concurrency cap, the daily token budget) refused it at intake,
    # with the reason in stop_reason. Final; a re-run is a new investigation.
    SKIPPED = "SKIPPED"


# Where a run is, or may still go, at work: a re-run or a cancel stops it.
ACTIVE = frozenset({"QUEUED", "RUNNING", "WAITING_FOR_OPERATOR"})

TRANSITIONS: dict[State, frozenset[State]] = {
    State.QUEUED: frozenset({State.RUNNING, State.STOPPED, State.SKIPPED}),
    State.RUNNING: frozenset(
        {State.WAITING_FOR_OPERATOR, State.COMPLETED, State.STOPPED, State.RUNNING}
    ),
    State.WAITING_FOR_OPERATOR: frozenset({State.RUNNING, State.STOPPED}),
    # A stopped run may be continued with more budget.
    State.STOPPED: frozenset({State.RUNNING}),
    State.COMPLETED: frozenset({State.PUBLISH_QUEUED}),
    # Back to COMPLETED when the tracker refused the issue outright (nothing was created)
    # or when a step before the issue was created failed and was rolled back. Once the
    # issue exists it stays published, whatever the side steps after it do.
    State.PUBLISH_QUEUED: frozenset({State.PUBLISHED, State.PUBLISH_UNKNOWN, State.COMPLETED}),
    State.PUBLISH_UNKNOWN: frozenset({State.PUBLISHED, State.PUBLISH_QUEUED}),
    State.PUBLISHED: frozenset(),
    State.SKIPPED: frozenset(),
}


class Scope(BaseModel):
    """What the investigation is authorized to read. Set by configuration, never by the model."""

    project_key: str
    repository: str
    sentry_organization: str
    sentry_project: str
    release_prefix: str = ""
    language: str = "en"
    since: datetime
    until: datetime
    # When the question was asked: "since this morning" is read against it.
    asked_at: datetime | None = None
    # Where the draft is published, when not the code repository.
    issues_repository: str | None = None


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """A chat-completions-shaped message.

    `data` carries a tool result's structured content; adapters that talk to a
    real model send only `content`.
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    evidence_id: str | None = None
    data: Any = None


class Evidence(BaseModel):
    id: str
    source: str
    tool: str
    title: str
    link: str | None = None
    retrieved_at: datetime
    content: str
    content_hash: str
    path: str | None = None
    revision: str | None = None
    data: Any = None

    def card(self) -> dict[str, Any]:
        """The public view: what the JSON document and the surfaces show."""
        return {
            "id": self.id,
            "source": self.source,
            "tool": self.tool,
            "title": self.title,
            "link": self.link,
            "retrieved_at": self.retrieved_at.isoformat(),
            "path": self.path,
            "revision": self.revision,
            "content_hash": self.content_hash,
        }


class Fact(BaseModel):
    text: str
    evidence: list[str] = Field(min_length=1)
    quote: str | None = None


class Suspect(BaseModel):
    path: str
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)
    commit: str | None = None


# -- what an on-call engineer acts on (agent/finding/ computes these from the evidence) --

IncidentKind = Literal["request", "job", "cli", "unknown"]


class QuotedChange(BaseModel):
    """The suspect hunk as the commit made it: the lines before → after."""

    commit: str
    path: str
    old_path: str | None = None
    summary: str = ""
    author: str = ""
    date: str = ""
    # First line of each side, numbered as in the commit's parent (before) and the commit (after).
    old_start: int = Field(default=1, ge=0)
    new_start: int = Field(default=1, ge=0)
    before: list[str] = Field(default_factory=list)
    after: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class InputField(BaseModel):
    """One value the failing events carry; secrets never reach here (agent/trigger.scrub)."""

    name: str
    value: str
    source: str  # "request.data", "request.query", "tag", "job", "argv", "frame", ...
    events: int = Field(default=1, ge=0)  # in how many of the events read it appears


class TriggerInput(BaseModel):
    kind: IncidentKind = "unknown"
    entry: str | None = None  # "POST /orders", a job name, a command line
    fields: list[InputField] = Field(default_factory=list)
    # Fields the suspect code reads that the failing input lacks or sends as null.
    absent: list[str] = Field(default_factory=list)
    events_read: int = Field(default=0, ge=0)
    evidence: list[str] = Field(default_factory=list)


class ProposedChange(BaseModel):
    """The smallest code change that would undo the suspect one. Always a hypothesis."""

    status: Literal["hypothesis"] = "hypothesis"
    path: str
    diff: str  # a unified diff against the running revision (or the commit, see `numbered_at`)
    rationale: str = ""
    strategy: Literal["restore-removed", "restore-previous", "revert-added"] = "restore-previous"
    numbered_at: str | None = None  # the revision the diff's line numbers refer to
    evidence: list[str] = Field(default_factory=list)  # the diff's and the file's items


class Location(BaseModel):
    path: str
    line_start: int = Field(ge=1)
    line_end: int = Field(ge=1)
    role: Literal["fault", "crash", "stack", "changed"] = "stack"
    function: str | None = None
    commit: str | None = None


class FixAssessment(BaseModel):
    """Risk and complexity of the proposed change, stated from what the evidence counts."""

    risk: Literal["low", "medium", "high"]
    complexity: Literal["low", "medium", "high"]
    lines_changed: int = Field(ge=0)
    files_touched: int = Field(ge=0)
    callers: int | None = None  # call sites of the changed function found in the evidence
    reasons: list[str] = Field(default_factory=list)


class ConfidenceFactor(BaseModel):
    """One thing that raised or lowered the confidence, in plain words and with its weight."""

    effect: Literal["raises", "lowers"]
    factor: str  # a stable key: "release-known", "change-in-window", "blame-agrees", ...
    text: str
    weight: float = 0.0
    evidence: list[str] = Field(default_factory=list)


class AffectedWindow(BaseModel):
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    events: int | None = None
    release: str | None = None
    release_at: datetime | None = None  # when the running release was deployed
    per_hour_before: float | None = None  # events per hour before the release (None: unknown)
    per_hour_after: float | None = None
    per_hour: float | None = None  # over the whole span, first seen to last seen
    evidence: list[str] = Field(default_factory=list)


class RelatedIssue(BaseModel):
    id: str
    short_id: str | None = None
    title: str = ""
    count: int | None = None
    link: str | None = None
    reasons: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class Diagnosis(BaseModel):
    root_cause: str
    facts: list[Fact] = Field(default_factory=list)
    hypotheses: list[str] = Field(default_factory=list)
    uncertainties: list[str] = Field(default_factory=list)
    recommended_check: str = ""
    suspect: Suspect | None = None
    confidence: Literal["high", "medium", "low"] = "medium"
    # The model's own words (markdown, verbatim) when it ended with prose instead of finishing.
    report: str | None = None
    # The finding (all optional): what changed, what triggers it, what to change, where.
    change: QuotedChange | None = None
    trigger: TriggerInput | None = None
    proposed_change: ProposedChange | None = None
    affected: list[Location] = Field(default_factory=list)
    fix: FixAssessment | None = None
    confidence_factors: list[ConfidenceFactor] = Field(default_factory=list)
    window: AffectedWindow | None = None
    related_issues: list[RelatedIssue] = Field(default_factory=list)


class Draft(BaseModel):
    repository: str
    title: str
    body: str
    version: int = 1
    hash: str = ""

    def model_post_init(self, _context: Any) -> None:
        if not self.hash:
            self.hash = self.compute_hash(self.repository, self.title, self.body)

    @staticmethod
    def compute_hash(repository: str, title: str, body: str) -> str:
        return sha256(json.dumps([repository, title, body], ensure_ascii=False))

    def edited(self, *, version: int, title: str, body: str) -> Draft:
        """A new version; the edit must name the version it was made from."""
        if version != self.version:
            raise StaleDraft(
                f"edit of version {version}, but the draft is at version {self.version}"
            )
        title = check_text(title, "title", MAX_TITLE_CHARS, field="title")
        body = check_text(body, "body", MAX_BODY_CHARS, field="body")
        return Draft(repository=self.repository, title=title, body=body, version=self.version + 1)

    def fitted(self) -> Draft:
        """The draft as GitHub takes it: no direction controls, the title and the body cut
        to the limits. A written draft (the model's, the report's) is fitted; an edit is
        refused instead (`edited`), so that a person is told."""
        title = " ".join(without_bidi_controls(self.title).split())
        body = without_bidi_controls(self.body).strip()
        if len(title) > MAX_TITLE_CHARS:
            title = title[: MAX_TITLE_CHARS - 1].rstrip() + "…"
        if len(body) > MAX_BODY_CHARS:
            note = "\n\n_(cut at GitHub's size limit)_"
            body = body[: MAX_BODY_CHARS - len(note)].rstrip() + note
        if (title, body) == (self.title, self.body):
            return self
        return Draft(repository=self.repository, title=title, body=body, version=self.version)

    def check_approval(self, version: int, hash: str) -> None:
        if version != self.version or hash != self.hash:
            raise StaleDraft(
                f"approval of version {version} ({hash[:8]}), "
                f"but the draft is at version {self.version} ({self.hash[:8]})"
            )


class Origin(BaseModel):
    """Where the request came from, so the surface can answer there."""

    surface: str = "cli"
    channel: str | None = None
    # The Slack workspace the request came from: actions are taken only from it.
    team: str | None = None
    user: str | None = None
    thread_ts: str | None = None
    # A re-run answers in the thread of the investigation that opened it (the first of
    # the chain), not in a thread of its own.
    thread_of: str | None = None


StepStatus = Literal[
    # not_done: a side step after the pivot that failed; the issue stands, a re-run retries it.
    "started", "done", "failed", "unknown", "compensated", "compensation_failed", "not_done"
]
ApprovalOutcome = Literal[
    "queued", "published", "unknown", "refused", "rolled back", "rollback incomplete"
]


class StepRecord(BaseModel):
    """Where one step of the publication saga stands; saved before and after each call."""

    name: str
    status: StepStatus
    detail: str = ""
    at: datetime = Field(default_factory=utcnow)


class LogEntry(BaseModel):
    """One line of the publication log: a step or a compensation and how it ended."""

    step: str
    action: Literal["run", "compensate"]
    outcome: Literal["done", "already done", "failed", "unknown", "not done"]
    detail: str = ""
    at: datetime = Field(default_factory=utcnow)


class Approval(BaseModel):
    """One approval of one draft version, and everything its publication did."""

    approver: str
    version: int
    hash: str
    idempotency_key: str
    at: datetime = Field(default_factory=utcnow)
    outcome: ApprovalOutcome = "queued"
    reason: str | None = None
    # Issue creation: create calls sent, and how many the approvers allowed (one, plus one
    # per "Create anyway"). A lost answer is looked for before anything is sent again.
    creates_sent: int = 0
    creates_allowed: int = 1
    confirmed_by: list[str] = Field(default_factory=list)
    create_started_at: datetime | None = None
    lookup: Literal["found", "nothing", "failed"] | None = None
    issue_number: int | None = None
    issue_url: str | None = None
    steps: dict[str, StepRecord] = Field(default_factory=dict)
    log: list[LogEntry] = Field(default_factory=list)
    rolling_back: bool = False

    def binds(self, version: int, hash: str) -> bool:
        return self.version == version and self.hash == hash

    def compensations(self) -> list[LogEntry]:
        return [e for e in self.log if e.action == "compensate"]

    def not_done(self) -> list[StepRecord]:
        """The side steps after the issue was created that failed and wait for a re-run."""
        return [s for s in self.steps.values() if s.status == "not_done"]


class Receipt(BaseModel):
    """What an approval request got. `fresh`: the caller saves and queues the publication."""

    status: Literal[
        "queued",
        "retry",
        "in progress",
        "published",
        "refused",
        "rolled back",
        "rollback incomplete",
    ]
    approval: Approval
    publication: Publication | None = None

    @property
    def fresh(self) -> bool:
        # Published with side steps not done: queued again, the publication finishes them.
        pending = self.status == "published" and bool(self.approval.not_done())
        return self.status in ("queued", "retry") or pending


class Publication(BaseModel):
    number: int
    url: str
    at: datetime = Field(default_factory=utcnow)


class Stats(BaseModel):
    model_calls: int = 0
    tool_calls: int = 0
    # As the model API's usage field reports them, pass 2 (extraction) included.
    input_tokens: int = 0
    output_tokens: int = 0
    wall_seconds: float = 0.0
    # Tokens per UTC day ("2026-11-30": n): the daily budget sums these across investigations.
    tokens_by_day: dict[str, int] = Field(default_factory=dict)
    # Pass 2: requests to the extraction model for a structured diagnosis.
    extract_calls: int = 0
    # The deterministic pre-fetch: whether it ran, and the tool calls it made.
    prefetch: bool = False
    prefetch_calls: int = 0
    # The repository map given before the first request (agent/repomap.py): its size.
    repo_map_chars: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add_tokens(self, input_tokens: int, output_tokens: int, day: str) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.tokens_by_day[day] = self.tokens_by_day.get(day, 0) + input_tokens + output_tokens


class Investigation(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    question: str
    scope: Scope
    state: State = State.QUEUED
    version: int = 0
    created_at: datetime = Field(default_factory=utcnow)
    requester: str | None = None
    stop_reason: str | None = None
    pending_question: str | None = None
    messages: list[Message] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    diagnosis: Diagnosis | None = None
    draft: Draft | None = None
    stats: Stats = Field(default_factory=Stats)
    extra_budget: int = 0
    origin: Origin = Field(default_factory=Origin)
    approval: Approval | None = None
    # Earlier approvals that did not end in a publication (refused, rolled back), with logs.
    past_approvals: list[Approval] = Field(default_factory=list)
    publication: Publication | None = None
    discarded: bool = False
    # What the investigation turned out to be about (e.g. "sentry:5755875771").
    subject: str | None = None
    duplicate_of: str | None = None
    # Re-runs: the investigation this one runs again, and the one that replaced this one
    # (its report is superseded: its draft can no longer be edited or approved).
    rerun_of: str | None = None
    superseded_by: str | None = None

    @classmethod
    def open(cls, question: str, scope: Scope, requester: str | None = None) -> Investigation:
        question = check_text(" ".join(question.split()), "question", MAX_QUESTION_CHARS)
        if scope.since >= scope.until:
            raise InputError("the time window is empty: since must come before until")
        return cls(question=question, scope=scope, requester=requester)

    # -- state ---------------------------------------------------------------

    def _move(self, to: State) -> None:
        if to not in TRANSITIONS[self.state]:
            raise IllegalTransition(f"{self.state} → {to} is not allowed")
        self.state = to

    def start(self) -> None:
        if self.state is not State.QUEUED:
            raise IllegalTransition(f"only a queued investigation starts ({self.state})")
        self._move(State.RUNNING)
        self.stop_reason = None

    def ask(self, question: str) -> None:
        self._move(State.WAITING_FOR_OPERATOR)
        self.pending_question = question

    def pending_call_id(self) -> str | None:
        """The id of the ask_clarification call still waiting for its answer."""
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        for m in reversed(self.messages):
            for call in m.tool_calls:
                if call.name == "ask_clarification" and call.id not in answered:
                    return call.id
        return None

    def answer(self, text: str) -> None:
        """The operator's reply resumes the run; it becomes the clarification's tool result."""
        if self.state is not State.WAITING_FOR_OPERATOR:
            raise IllegalTransition(f"no question is pending ({self.state})")
        text = text.strip()
        if not text:
            raise InputError("the answer is empty")
        tool_call_id = self.pending_call_id()
        if tool_call_id is None:
            raise IllegalTransition("no clarification call is pending")
        self.messages.append(
            Message(role="tool", tool_call_id=tool_call_id, name="ask_clarification", content=text)
        )
        self.pending_question = None
        self._move(State.RUNNING)

    def complete(self, diagnosis: Diagnosis, draft: Draft) -> None:
        self._move(State.COMPLETED)
        self.diagnosis = diagnosis
        self.draft = draft.fitted()

    def stop(self, reason: str, salvage: Diagnosis | None, draft: Draft | None = None) -> None:
        self._move(State.STOPPED)
        self.stop_reason = reason
        self.diagnosis = salvage
        self.draft = draft.fitted() if draft is not None else None

    def stop_as_duplicate(self, other_id: str) -> None:
        """Another run is already on the same error: this one yields to it."""
        self._move(State.STOPPED)
        self.stop_reason = f"already under investigation ({other_id})"
        self.duplicate_of = other_id

    def skip(self, reason: str) -> None:
        """A gate refused the run before any worker took it; the reason is shown."""
        if self.state is not State.QUEUED or self.version:
            raise IllegalTransition(f"only a new investigation can be skipped ({self.state})")
        self._move(State.SKIPPED)
        self.stop_reason = reason

    def cancel(self, reason: str) -> None:
        """Stop a run that is queued, running or waiting; what it gathered is kept."""
        if self.state.value not in ACTIVE:
            raise IllegalTransition(f"only a run at work can be cancelled ({self.state})")
        self._move(State.STOPPED)
        self.pending_question = None
        self.stop_reason = reason

    def supersede(self, by: str) -> None:
        """A re-run replaces this one: a run at work stops, a report is marked superseded.
        A publication under way is not interrupted (the issue may be being created)."""
        if self.superseded_by is not None:
            raise IllegalTransition(f"already re-run as {self.superseded_by}")
        if self.state in (State.PUBLISH_QUEUED, State.PUBLISH_UNKNOWN):
            raise IllegalTransition("its issue is being published; re-run it once that is over")
        if self.state.value in ACTIVE:
            self.cancel(f"cancelled: re-run as {by}")
        self.superseded_by = by

    def _current(self) -> None:
        if self.superseded_by is not None:
            raise IllegalTransition(
                f"this report was superseded by a re-run ({self.superseded_by})"
            )

    def continue_with(self, extra_calls: int) -> None:
        self._current()
        if self.state is not State.STOPPED:
            raise IllegalTransition(f"only a stopped investigation can continue ({self.state})")
        self.extra_budget += extra_calls
        self._move(State.RUNNING)
        self.stop_reason = None

    def move_to(self, to: State) -> None:
        """Publishing states; the publisher owns their meaning."""
        self._move(to)

    def approve(self, *, approver: str, version: int, hash: str, idempotency_key: str) -> Receipt:
        """Queue the exact draft shown for publishing, once per Idempotency-Key.

        The same key with the same body (version, hash) returns that approval as it stands
        (a receipt: published, in progress, rolled back…) and publishes nothing; while its
        outcome is unknown it is a retry, which looks for the issue before anything else.
        The same key with another body is refused (IdempotencyConflict). A new key while
        an approval is under way or after the draft was published is a repeated click."""
        if self.approval is None:
            self._current()
        for earlier in [*self.past_approvals, *([self.approval] if self.approval else [])]:
            if earlier.idempotency_key != idempotency_key:
                continue
            if not earlier.binds(version, hash):
                raise IdempotencyConflict(
                    f"Idempotency-Key {idempotency_key!r} approved v{earlier.version} "
                    f"({earlier.hash[:8]}); it cannot approve v{version} ({hash[:8]})"
                )
            return self._receipt(earlier)
        if self.approval is not None and self.state in (
            State.PUBLISH_QUEUED,
            State.PUBLISHED,
            State.PUBLISH_UNKNOWN,
        ):
            if self.draft is not None:
                self.draft.check_approval(version, hash)
            return Receipt(
                status="published" if self.state is State.PUBLISHED else "in progress",
                approval=self.approval,
                publication=self.publication,
            )
        if self.draft is None or self.discarded:
            raise IllegalTransition("there is no draft to approve")
        self.draft.check_approval(version, hash)
        self._move(State.PUBLISH_QUEUED)
        self.stop_reason = None
        self.approval = Approval(
            approver=approver, version=version, hash=hash, idempotency_key=idempotency_key
        )
        return Receipt(status="queued", approval=self.approval)

    def _receipt(self, approval: Approval) -> Receipt:
        if approval is not self.approval:
            status = approval.outcome
            assert status in ("refused", "rolled back", "rollback incomplete")
            return Receipt(status=status, approval=approval)
        if self.state is State.PUBLISHED:
            return Receipt(status="published", approval=approval, publication=self.publication)
        if self.state is State.PUBLISH_UNKNOWN:
            # The retry of the same approval: the worker looks for the issue again, and
            # without it creates nothing (that takes "Create anyway").
            self._move(State.PUBLISH_QUEUED)
            approval.outcome = "queued"
            return Receipt(status="retry", approval=approval)
        return Receipt(status="in progress", approval=approval)

    def create_anyway(self, *, approver: str, version: int, hash: str, creates: int) -> None:
        """The second explicit approval after a lost answer that no lookup could settle:
        allows one more create call, bound to the draft and to the creates already sent."""
        a = self.approval
        if self.state is not State.PUBLISH_UNKNOWN or a is None or a.lookup != "nothing":
            raise IllegalTransition(f"there is nothing to create anyway ({self.state})")
        if not a.binds(version, hash) or creates != a.creates_sent:
            raise StaleDraft(
                f"create-anyway of v{version} ({hash[:8]}) after {creates} attempts, but the "
                f"approval is of v{a.version} ({a.hash[:8]}) after {a.creates_sent}"
            )
        a.creates_allowed = a.creates_sent + 1
        a.confirmed_by.append(approver)
        a.lookup = None
        a.outcome = "queued"
        self._move(State.PUBLISH_QUEUED)

    def publish_unknown(self, reason: str) -> None:
        assert self.approval is not None
        self._move(State.PUBLISH_UNKNOWN)
        self.approval.outcome = "unknown"
        self.approval.reason = reason
        self.stop_reason = reason

    def approval_ended(self, outcome: ApprovalOutcome, reason: str) -> None:
        """Refused or rolled back: the draft can be approved again, the record is kept."""
        self._move(State.COMPLETED)
        if self.approval is not None:
            self.approval.outcome = outcome
            self.approval.reason = reason
            self.past_approvals.append(self.approval)
        self.approval = None
        self.stop_reason = reason

    def publish_refused(self, reason: str) -> None:
        self.approval_ended("refused", reason)

    def published(self, number: int, url: str) -> None:
        self._move(State.PUBLISHED)
        self.publication = Publication(number=number, url=url)
        if self.approval is not None:
            self.approval.outcome = "published"
            self.approval.reason = None
        self.stop_reason = None

    def discard_draft(self, version: int) -> None:
        self._current()
        if self.draft is None or self.state is not State.COMPLETED:
            raise IllegalTransition("there is no draft to discard")
        if version != self.draft.version:
            raise StaleDraft(
                f"discard of version {version}, but the draft is at {self.draft.version}"
            )
        self.discarded = True

    # -- evidence and drafts -------------------------------------------------

    def add_evidence(
        self,
        *,
        source: str,
        tool: str,
        title: str,
        content: str,
        link: str | None = None,
        path: str | None = None,
        revision: str | None = None,
        data: Any = None,
    ) -> Evidence:
        ev = Evidence(
            id=f"E{len(self.evidence) + 1}",
            source=source,
            tool=tool,
            title=title,
            link=link,
            retrieved_at=utcnow(),
            content=content,
            content_hash=sha256(content),
            path=path,
            revision=revision,
            data=data,
        )
        self.evidence.append(ev)
        return ev

    def evidence_by_id(self, evidence_id: str) -> Evidence | None:
        for ev in self.evidence:
            if ev.id == evidence_id:
                return ev
        return None

    def edit_draft(self, *, version: int, title: str, body: str) -> Draft:
        self._current()
        if self.draft is None:
            raise IllegalTransition("there is no draft to edit")
        if self.state not in (State.COMPLETED, State.STOPPED) or self.discarded:
            raise IllegalTransition(f"the draft can no longer be edited ({self.state})")
        self.draft = self.draft.edited(version=version, title=title, body=body)
        return self.draft


def default_window(now: datetime, hours: int = 24) -> tuple[datetime, datetime]:
    return now - timedelta(hours=hours), now
