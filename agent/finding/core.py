"""The finding for a suspect, from the evidence alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from agent import stacktrace, trigger
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
from agent.finding.assess import affected, assess, factors_of
from agent.finding.evidence import Items, Record, blamed, events_of, stack_of
from agent.finding.hunk import Suspected, locate
from agent.finding.texts import texts
from agent.finding.window import related, window_of

# -- the finding -------------------------------------------------------------------------


class Finding(BaseModel):
    change: QuotedChange | None = None
    trigger: TriggerInput | None = None
    proposed_change: ProposedChange | None = None
    affected: list[Location] = Field(default_factory=list)
    fix: FixAssessment | None = None
    confidence_factors: list[ConfidenceFactor] = Field(default_factory=list)
    window: AffectedWindow | None = None
    related_issues: list[RelatedIssue] = Field(default_factory=list)

    def arguments(self) -> dict[str, Any]:
        """The fields as finish_investigation arguments (JSON), empty ones left out."""
        dumped = self.model_dump(mode="json", exclude_none=True)
        return {k: v for k, v in dumped.items() if v not in ([], None)}


FIELDS = tuple(Finding.model_fields)


def compute(
    records: Sequence[Record],
    path: str | None,
    line_start: int | None = None,
    line_end: int | None = None,
    commit: str | None = None,
    *,
    language: str = "en",
    factors: list[ConfidenceFactor] | None = None,
) -> Finding:
    """The finding for a suspect, from the evidence alone. Every part is optional: what the
    evidence does not show is left out, never made up."""
    ev = Items.sort(records)
    t = texts(language)
    issue, events, details_ids = events_of(ev)
    event = events[0] if events else None
    files = ev.repo_files()
    excs = stacktrace.exceptions(event) if event else []
    stack = stack_of(excs, files)
    suspect = (
        Suspected(path, line_start or 1, line_end or line_start or 1, commit) if path else None
    )
    if suspect and not suspect.commit:
        suspect.commit = blamed(ev, suspect.path, suspect.line_start)
    located = locate(ev, suspect) if suspect else None
    finding = Finding()
    code_lines: list[str] = [fr.context_line or "" for fr, _ in stack]
    if located is not None:
        finding.change = located.quote()
        code_lines += [text for tag, _, _, text in located.sequence if tag != " "]
        finding.proposed_change = located.propose(suspect, t)  # type: ignore[arg-type]
    finding.trigger = trigger.trigger_of(events, code_lines, details_ids)
    finding.affected = affected(suspect, stack, located)
    finding.fix = assess(located, finding.proposed_change, stack, ev, suspect, t)
    finding.window = window_of(issue, event, details_ids)
    finding.related_issues = related(ev, issue, stack, finding.window, t)
    finding.confidence_factors = (
        factors if factors is not None else factors_of(ev, event, excs, stack, suspect, located, t)
    )
    return finding


def arguments(
    records: Sequence[Record],
    suspect: Mapping[str, Any] | None,
    language: str = "en",
    factors: list[ConfidenceFactor] | None = None,
) -> dict[str, Any]:
    """finish_investigation arguments for a suspect given as those arguments give it;
    `factors`, when given (a scorer's), replace the ones read from the evidence."""
    if not suspect or not suspect.get("path"):
        return compute(records, None, language=language, factors=factors).arguments()
    return compute(
        records,
        str(suspect["path"]),
        int(suspect.get("line_start") or 1),
        int(suspect.get("line_end") or suspect.get("line_start") or 1),
        suspect.get("commit"),
        language=language,
        factors=factors,
    ).arguments()
