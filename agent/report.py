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
        "change": "Change",
        "trigger": "Triggering input",
        "proposed": "Proposed change (hypothesis, not tested)",
        "affected": "Affected files and lines",
        "fix": "Fix",
        "risk": "risk",
        "complexity": "complexity",
        "factors": "Confidence factors",
        "window": "Affected window",
        "related": "Related issues",
        "absent": "absent or null",
        "first_seen": "first seen",
        "last_seen": "last seen",
        "events": "events",
        "release": "release",
        "deployed": "deployed",
        "per_hour": "events/hour",
        "before": "before the release",
        "after": "after",
        "overall": "overall",
        "in_events": "in {n} of {m} events",
        "kind.request": "web request",
        "kind.job": "job of a worker",
        "kind.cli": "command line",
        "kind.unknown": "entry point unknown",
        "role.fault": "fault",
        "role.crash": "crash",
        "role.stack": "on the stack",
        "role.changed": "changed by the commit",
        "level.low": "low",
        "level.medium": "medium",
        "level.high": "high",
        "clevel.low": "low",
        "clevel.medium": "medium",
        "clevel.high": "high",
        "callers": "callers",
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
        "change": "Cambio",
        "trigger": "Entrada que lo provoca",
        "proposed": "Cambio propuesto (hipótesis, sin probar)",
        "affected": "Ficheros y líneas afectados",
        "fix": "Arreglo",
        "risk": "riesgo",
        "complexity": "complejidad",
        "factors": "Factores de confianza",
        "window": "Ventana afectada",
        "related": "Incidencias relacionadas",
        "absent": "ausente o null",
        "first_seen": "primera vez",
        "last_seen": "última vez",
        "events": "eventos",
        "release": "versión",
        "deployed": "desplegada",
        "per_hour": "eventos/hora",
        "before": "antes de la versión",
        "after": "después",
        "overall": "en total",
        "in_events": "en {n} de {m} eventos",
        "kind.request": "petición web",
        "kind.job": "trabajo de un worker",
        "kind.cli": "línea de comandos",
        "kind.unknown": "punto de entrada desconocido",
        "role.fault": "fallo",
        "role.crash": "error",
        "role.stack": "en la traza",
        "role.changed": "cambiado por el commit",
        "level.low": "bajo",
        "level.medium": "medio",
        "level.high": "alto",
        "clevel.low": "baja",
        "clevel.medium": "media",
        "clevel.high": "alta",
        "callers": "llamadores",
    },
}


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
_TICKS = re.compile(r"`+")
_CONTROL_NO_TAB = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\u2028\u2029]+")  # code keeps its tabs


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
    lines += finding_markdown(diagnosis, t)
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
    body = fit("\n".join(lines).strip(), BODY_CHARS)
    return Draft(
        repository=inv.scope.issues_repository or inv.scope.repository, title=title, body=body
    )


# GitHub refuses a body over 65,536 characters; the publisher appends a hidden marker.
BODY_CHARS = 60_000
DIFF_LINES = 60


def fenced(lines: list[str], info: str = "") -> list[str]:
    """Lines as a fenced code block whose fence no line can close (data stays data)."""
    clean = [_CONTROL_NO_TAB.sub(" ", x.rstrip("\n")) for x in lines[:DIFF_LINES]]
    if len(lines) > DIFF_LINES:
        clean.append(f"… {len(lines) - DIFF_LINES} more")
    longest = max((len(m) for x in clean for m in _TICKS.findall(x)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *clean, fence]


def cites_of(ids: list[str]) -> str:
    return f" ({', '.join(ids)})" if ids else ""


def _when(value: object) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if hasattr(value, "strftime") else "?"


def finding_markdown(d: Diagnosis, t: dict[str, str]) -> list[str]:
    """The finding's sections of the draft; empty parts are left out."""
    out: list[str] = []
    c = d.change
    if c is not None:
        cites = f" ({', '.join(c.evidence)})" if c.evidence else ""
        head = f"## {t['change']}: {t['commit']} `{c.commit[:12]}` — `{c.path}`{cites}"
        out += [head, ""]
        if c.summary:
            out += [code_span(c.summary, 200) + cites, ""]
        body = [f"-{x}" for x in c.before] + [f"+{x}" for x in c.after]
        out += [*fenced(body, "diff"), ""]
    g = d.trigger
    if g is not None and (g.fields or g.absent or g.entry):
        kind = t.get(f"kind.{g.kind}", g.kind)
        entry = f" {code_span(g.entry, 200)}" if g.entry else ""
        out += [f"## {t['trigger']}", "", f"{kind}{entry}{cites_of(g.evidence)}", ""]
        cites = f" ({', '.join(g.evidence)})" if g.evidence else ""
        out += [f"- {code_span(a, 120)}: {t['absent']}{cites}" for a in g.absent]
        for f in g.fields:
            seen = (
                f" · {t['in_events'].format(n=f.events, m=g.events_read)}"
                if g.events_read > 1
                else ""
            )
            where = ", ".join([f.source + seen, *g.evidence])
            out.append(f"- {code_span(f.name, 120)} = {code_span(f.value, 160)} ({where})")
        out.append("")
    p = d.proposed_change
    if p is not None:
        out += [f"## {t['proposed']}", "", p.rationale + cites_of(p.evidence), ""]
        out += [*fenced(p.diff.splitlines(), "diff"), ""]
    if d.fix is not None:
        f = d.fix
        risk = t.get(f"level.{f.risk}", f.risk)
        complexity = t.get(f"clevel.{f.complexity}", f.complexity)
        out += [f"## {t['fix']}: {t['risk']} {risk} · {t['complexity']} {complexity}", ""]
        out += [f"- {r}" for r in f.reasons] + [""]
    if d.affected:
        out += [f"## {t['affected']}", ""]
        for loc in d.affected:
            span = f"{loc.line_start}" + (
                f"-{loc.line_end}" if loc.line_end != loc.line_start else ""
            )
            fn = f" {code_span(loc.function, 80)}" if loc.function else ""
            commit = f" ({t['commit']} `{loc.commit[:7]}`)" if loc.commit else ""
            role = t.get(f"role.{loc.role}", loc.role)
            out.append(f"- {code_span(f'{loc.path}:{span}', 300)}{fn} — {role}{commit}")
        out.append("")
    if d.confidence_factors:
        out += [f"## {t['factors']}", ""]
        for cf in d.confidence_factors:
            sign = "↑" if cf.effect == "raises" else "↓"
            cites = f" ({', '.join(cf.evidence)})" if cf.evidence else ""
            out.append(f"- {sign} {cf.text}{cites}")
        out.append("")
    w = d.window
    if w is not None:
        out += [f"## {t['window']}", ""]
        out.append(
            f"- {t['first_seen']}: {_when(w.first_seen)} · {t['last_seen']}: {_when(w.last_seen)}"
        )
        if w.events is not None:
            out.append(f"- {t['events']}: {w.events}")
        if w.release:
            deployed = f" ({t['deployed']} {_when(w.release_at)})" if w.release_at else ""
            out.append(f"- {t['release']}: `{w.release}`{deployed}")
        rates = []
        if w.per_hour_before is not None:
            rates.append(f"{t['before']} {w.per_hour_before:g}")
        if w.per_hour_after is not None:
            rates.append(f"{t['after']} {w.per_hour_after:g}")
        if w.per_hour is not None:
            rates.append(f"{t['overall']} {w.per_hour:g}")
        if rates:
            out.append(f"- {t['per_hour']}: " + " · ".join(rates))
        out.append("")
    if d.related_issues:
        out += [f"## {t['related']}", ""]
        for r in d.related_issues:
            name = r.short_id or r.id
            label = f"[{name}]({r.link})" if r.link and r.link.startswith("https://") else name
            count = f", {r.count} {t['events']}" if r.count is not None else ""
            cites = f" ({', '.join(r.evidence)})" if r.evidence else ""
            out.append(f"- {label} {code_span(r.title, 150)}{count}: {'; '.join(r.reasons)}{cites}")
        out.append("")
    return out


def fit(body: str, limit: int) -> str:
    """The body cut at a line boundary to fit `limit`, with an open code fence closed."""
    if len(body) <= limit:
        return body
    cut = body[: body.rfind("\n", 0, limit - 200)]
    fences = [ln for ln in cut.splitlines() if ln.startswith("```")]
    if len(fences) % 2:
        cut += "\n" + re.match(r"`+", fences[-1]).group(0)  # type: ignore[union-attr]
    return cut + f"\n\n_… ({len(body) - len(cut):,} characters cut)_"


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
