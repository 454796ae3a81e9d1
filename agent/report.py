"""Turning a diagnosis into words: the GitHub issue draft and the salvage of a stopped run."""

from __future__ import annotations

import re

from agent.domain import Diagnosis, Draft, Fact, Investigation

LABELS = {
    "en": {
        "summary": "Summary",
        "suspect": "Suspect",
        "facts": "Facts (cited)",
        "hypotheses": "Hypotheses",
        "uncertainties": "Uncertainties",
        "check": "Recommended check",
        "evidence": "Evidence",
        "question": "Question",
        "confidence": "Confidence",
        "commit": "commit",
        "stopped": "The investigation stopped before a conclusion",
        "gathered": "Evidence gathered",
        "partial": "Partial: the diagnosis below was salvaged from the evidence gathered.",
        "unknown_cause": "The cause is not established yet.",
        "salvage_check": "Continue the investigation, or read the evidence listed here.",
    },
    "es": {
        "summary": "Resumen",
        "suspect": "Sospechoso",
        "facts": "Hechos (citados)",
        "hypotheses": "Hipótesis",
        "uncertainties": "Incertidumbres",
        "check": "Comprobación recomendada",
        "evidence": "Evidencias",
        "question": "Pregunta",
        "confidence": "Confianza",
        "commit": "commit",
        "stopped": "La investigación se detuvo antes de llegar a una conclusión",
        "gathered": "Evidencias reunidas",
        "partial": "Parcial: el diagnóstico se ha rescatado de las evidencias reunidas.",
        "unknown_cause": "La causa todavía no está establecida.",
        "salvage_check": "Continuar la investigación o revisar las evidencias listadas.",
    },
}


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_TICKS = re.compile(r"`+")


def code_span(text: object, limit: int = 300) -> str:
    """Text from evidence as one inline code span: shown as written, never read as markup.

    Exception messages, commit subjects, doc lines and titles are data. Inside a code span a
    planted link, image, @mention, HTML or "ignore previous instructions" is inert text in
    GitHub Markdown and, escaped by the Slack renderer, in mrkdwn. The fence is longer than
    any run of backticks inside, so the text cannot close it (CommonMark).
    """
    body = " ".join(_CONTROL.sub(" ", str(text)).split())
    if len(body) > limit:
        body = body[: limit - 1].rstrip() + "…"
    if not body:
        return "` `"
    fence = "`" * (max((len(m) for m in _TICKS.findall(body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def labels(language: str) -> dict[str, str]:
    return LABELS.get(language.split("-")[0].lower(), LABELS["en"])


def draft_for(inv: Investigation, diagnosis: Diagnosis, title: str | None = None) -> Draft:
    t = labels(inv.scope.language)
    if not title:
        title = first_sentence(diagnosis.root_cause, 120)
    lines = [f"## {t['summary']}", "", diagnosis.root_cause, ""]
    if diagnosis.suspect:
        s = diagnosis.suspect
        where = f"`{s.path}:{s.line_start}" + (
            f"-{s.line_end}`" if s.line_end != s.line_start else "`"
        )
        commit = f" — {t['commit']} `{s.commit}`" if s.commit else ""
        lines += [f"**{t['suspect']}:** {where}{commit}", ""]
    lines += [f"## {t['facts']}", ""]
    for fact in diagnosis.facts:
        lines.append(f"- {fact.text} ({', '.join(fact.evidence)})")
    if diagnosis.hypotheses:
        lines += ["", f"## {t['hypotheses']}", ""]
        lines += [f"- {h}" for h in diagnosis.hypotheses]
    if diagnosis.uncertainties:
        lines += ["", f"## {t['uncertainties']}", ""]
        lines += [f"- {u}" for u in diagnosis.uncertainties]
    if diagnosis.recommended_check:
        lines += ["", f"## {t['check']}", "", diagnosis.recommended_check]
    cited = {e for fact in diagnosis.facts for e in fact.evidence}
    lines += ["", f"## {t['evidence']}", ""]
    for ev in inv.evidence:
        if ev.id in cited:
            link = f" — {ev.link}" if ev.link else ""
            lines.append(f"- {ev.id} ({ev.source}) {code_span(ev.title)}{link}")
    lines += ["", f"_{t['question']}: {inv.question} · {t['confidence']}: {diagnosis.confidence}_"]
    return Draft(
        repository=inv.scope.issues_repository or inv.scope.repository,
        title=title,
        body="\n".join(lines).strip(),
    )


def salvage(inv: Investigation, reason: str, prose: str | None = None) -> Diagnosis:
    """A low-confidence diagnosis from whatever was gathered: nothing is thrown away."""
    t = labels(inv.scope.language)
    root = first_paragraph(prose) if prose else None
    facts = [
        Fact(text=code_span(ev.title), evidence=[ev.id])
        for ev in inv.evidence
        if ev.source != "local"
    ]
    return Diagnosis(
        root_cause=root or f"{t['stopped']} ({reason}). {t['unknown_cause']}",
        facts=facts,
        uncertainties=[f"{t['stopped']}: {reason}.", t["partial"]],
        recommended_check=t["salvage_check"],
        confidence="low",
        report=prose or None,
    )


def stopped(inv: Investigation, diagnosis: Diagnosis, reason: str) -> Diagnosis:
    """A diagnosis extracted from a stopped run: low confidence, and it says why."""
    t = labels(inv.scope.language)
    return diagnosis.model_copy(
        update={
            "uncertainties": [*diagnosis.uncertainties, f"{t['stopped']}: {reason}.", t["partial"]],
            "confidence": "low",
        }
    )


_NOT_PROSE = re.compile(r"^(#{1,6}\s|[-*_=]{3,}\s*$|(\*\*|__)[^*_]+(\*\*|__):?\s*$|>\s|```)")


def first_paragraph(markdown: str | None) -> str | None:
    """The first real paragraph: headings, rules and bold-only lines are skipped."""
    if not markdown:
        return None
    for block in re.split(r"\n\s*\n", markdown):
        lines = [ln for ln in block.strip().splitlines() if not _NOT_PROSE.match(ln.strip())]
        text = " ".join(ln.strip() for ln in lines).strip()
        if len(text) >= 20:
            return text
    return None


def first_sentence(text: str, limit: int) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"
