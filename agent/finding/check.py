"""A finish's finding checked against the evidence, and what it leaves out computed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent.finding.core import FIELDS, compute
from agent.finding.evidence import Record

# -- checking and completing a diagnosis ---------------------------------------------------


def _squash(text: str) -> str:
    return " ".join(text.split())


def _strings(data: Any) -> Iterable[str]:
    """Every string inside a tool's structured result, as written (no JSON escaping)."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _strings(value)


def problems(diagnosis: Any, lookup: Any) -> list[str]:
    """Why a finish's finding fields cannot be accepted: cited items that do not exist, a
    quoted change whose lines are not in the items it cites, a diff that is not one."""
    out: list[str] = []
    cited: list[tuple[str, list[str]]] = []
    if diagnosis.change is not None:
        cited.append(("change", diagnosis.change.evidence))
    if diagnosis.trigger is not None:
        cited.append(("trigger", diagnosis.trigger.evidence))
    if diagnosis.window is not None:
        cited.append(("window", diagnosis.window.evidence))
    if diagnosis.proposed_change is not None:
        cited.append(("proposed_change", diagnosis.proposed_change.evidence))
    cited += [(f"related_issues[{i}]", r.evidence) for i, r in enumerate(diagnosis.related_issues)]
    cited += [
        (f"confidence_factors[{i}]", f.evidence) for i, f in enumerate(diagnosis.confidence_factors)
    ]
    for name, ids in cited:
        missing = [e for e in ids if lookup(e) is None]
        if missing:
            out.append(f"{name} cites evidence that does not exist: {missing}")
    change = diagnosis.change
    if change is not None and not any(lookup(e) is None for e in change.evidence):
        if not change.evidence:
            out.append("change must cite the evidence that shows the diff")
        else:
            # The item's text may be cut at the result size; its data holds the whole diff.
            text = _squash(
                " ".join(
                    " ".join([lookup(e).content, *_strings(lookup(e).data)])
                    for e in change.evidence
                )
            )
            absent = [x for x in [*change.before, *change.after] if _squash(x) not in text]
            if absent:
                out.append(f"change: lines not in {change.evidence}: {absent[:2]}")
    p = diagnosis.proposed_change
    if p is not None:
        body = p.diff.splitlines()
        if not any(x.startswith("@@") for x in body) or not any(
            x.startswith(("-", "+")) and not x.startswith(("---", "+++")) for x in body
        ):
            out.append("proposed_change.diff is not a unified diff (an @@ header and -/+ lines)")
    return out


def completed(diagnosis: Any, records: Sequence[Record], scope: Any) -> Any:
    """The diagnosis with the finding fields it lacks computed from the evidence."""
    empty = [k for k in FIELDS if getattr(diagnosis, k) in (None, [])]
    if not empty or not records:
        return diagnosis
    s = diagnosis.suspect
    found = compute(
        records,
        s.path if s else None,
        s.line_start if s else None,
        s.line_end if s else None,
        s.commit if s else None,
        language=getattr(scope, "language", "en"),
    )
    return diagnosis.model_copy(update={k: getattr(found, k) for k in empty})
