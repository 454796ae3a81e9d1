"""The terminal surface: evidence cards as they arrive, then the diagnosis and the draft."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markdown import Markdown
from rich.panel import Panel
from rich.prompt import Prompt
from rich.text import Text

from agent.domain import Evidence, Investigation, State

SOURCE_STYLE = {"sentry": "magenta", "code": "cyan", "docs": "green"}


def console() -> Console:
    return Console(highlight=False)


def header(out: Console, inv: Investigation) -> None:
    s = inv.scope
    out.print(
        Panel(
            Text(inv.question, style="bold"),
            title=f"/investigate · {s.project_key}",
            subtitle=f"{s.since:%Y-%m-%d %H:%M} → {s.until:%Y-%m-%d %H:%M} UTC",
            expand=False,
        )
    )


def excerpt(text: str, lines: int = 4, width: int = 110) -> str:
    kept = [ln[:width] for ln in text.strip().splitlines() if ln.strip()][:lines]
    return "\n".join(kept)


def card(out: Console, ev: Evidence) -> None:
    style = SOURCE_STYLE.get(ev.source, "white")
    title = Text.assemble((f"{ev.id} ", "bold"), (f"{ev.source} ", style), ev.title)
    body = Text(excerpt(ev.content), style="dim")
    if ev.link:
        body.append(f"\n{ev.link}", style="underline blue")
    out.print(Panel(body, title=title, title_align="left", border_style=style))


def ask(out: Console, inv: Investigation) -> str:
    out.print(Panel(inv.pending_question or "", title="question for you", border_style="yellow"))
    return Prompt.ask("answer").strip()


def ending(out: Console, inv: Investigation) -> None:
    d = inv.diagnosis
    if inv.state is State.WAITING_FOR_OPERATOR:
        out.print(Panel(inv.pending_question or "", title="waiting for the operator"))
        return
    if d is None:
        out.print(f"[red]{inv.state}[/red] {inv.stop_reason or ''}")
        return
    lines = [f"**{d.root_cause}**", ""]
    if inv.state is State.STOPPED:
        lines.insert(0, f"_Stopped: {inv.stop_reason}_\n")
    lines += [f"- {f.text} ({', '.join(f.evidence)})" for f in d.facts]
    if d.hypotheses:
        lines += ["", "**Hypotheses**", *[f"- {h}" for h in d.hypotheses]]
    if d.uncertainties:
        lines += ["", "**Uncertainties**", *[f"- {u}" for u in d.uncertainties]]
    if d.recommended_check:
        lines += ["", f"**Recommended check:** {d.recommended_check}"]
    if d.suspect:
        s = d.suspect
        lines += ["", f"**Suspect:** `{s.path}:{s.line_start}` commit `{s.commit or '?'}`"]
    if d.report and inv.state is State.STOPPED:
        lines += ["", "---", "**The model's own report, verbatim:**", "", d.report]
    st = inv.stats
    out.print(
        Panel(
            Markdown("\n".join(lines)),
            title=f"diagnosis · {inv.state} · confidence {d.confidence}",
            subtitle=(
                f"{st.model_calls} model calls · {st.tool_calls} tool calls · "
                + (f"{st.tokens:,} tokens · " if st.tokens else "")
                + (f"pre-fetch {st.prefetch_calls} calls · " if st.prefetch else "")
                + f"{st.wall_seconds:.2f} s"
            ),
        )
    )
    if inv.draft:
        dr = inv.draft
        out.print(
            Panel(
                Group(Text(dr.title, style="bold"), Markdown(dr.body)),
                title=f"GitHub issue draft · {dr.repository} · v{dr.version} · {dr.hash[:8]}",
                border_style="blue",
            )
        )
