"""The Slack messages and views of incident-bot, built with slack_sdk's Block Kit models.

Every function here is pure: domain objects in, a dict ready for the Web API out
(`{"text": fallback, "blocks": [...], "metadata": {...}}` for messages, a view
dict for modals and App Home). The models validate Slack's limits when they are
serialized; the text is cut here first so that it stays inside them.

Text that comes from tools, documents or the model is data: `&`, `<` and `>`
are escaped so that a planted `<!channel>`, `<@U…>` or `<https://…|label>` is
shown, never executed, and every mrkdwn object is `verbatim` so that Slack does
not turn bare names or URLs into mentions or links either. The only links and
mentions in a message are the ones built here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from agent.domain import (
    BIDI_CONTROLS,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    Approval,
    Draft,
    Evidence,
    Investigation,
    State,
    without_bidi_controls,
)
from agent.publish.publisher import not_done_line
from agent.report import labels

# -- identifiers the listeners match on ----------------------------------------

ACTION_CONTINUE = "continue"
ACTION_DRAFT_EDIT = "draft_edit"
ACTION_DRAFT_APPROVE = "draft_approve"
ACTION_DRAFT_DISCARD = "draft_discard"
ACTION_CREATE_ANYWAY = "publish_create_anyway"
ACTION_RERUN = "rerun"
CALLBACK_DRAFT_EDIT = "draft_edit_submit"
CALLBACK_INVESTIGATE = "investigate_submit"
SHORTCUT_INVESTIGATE = "investigate_this"  # the message shortcut (manifest.yml)
INPUT_ACTION = "value"  # the action_id of every input element in the modals

EVENT_INVESTIGATION = "incident_bot_investigation"
EVENT_EVIDENCE = "incident_bot_evidence"
EVENT_QUESTION = "incident_bot_question"
EVENT_DIAGNOSIS = "incident_bot_diagnosis"
EVENT_DRAFT = "incident_bot_draft"
EVENT_PUBLISH = "incident_bot_publish"

USAGE = "/investigate [project] <question> [since..until]"

# -- Slack's limits, and the sizes chosen inside them ---------------------------

MAX_BLOCKS = 50  # per message
SECTION_CHARS = 3000
FIELD_CHARS = 2000
HEADER_CHARS = 150
BUTTON_TEXT_CHARS = 75
BUTTON_VALUE_CHARS = 2000
CONTEXT_CHARS = 2000
INPUT_CHARS = 3000  # plain_text_input max_length
FALLBACK_CHARS = 3000  # the notification text; Slack cuts at 40,000 but 4,000 is the advice
GITHUB_TITLE_CHARS = MAX_TITLE_CHARS

EXCERPT_LINES = 6
EXCERPT_LINE_CHARS = 160
EXCERPT_CHARS = 600
PREVIEW_CHARS = 1200
ITEM_CHARS = 1500  # one fact, hypothesis or uncertainty
HOME_ITEMS = 20
DEFAULT_EXTRA_CALLS = 4

STATE_LABELS: dict[State, tuple[str, str]] = {
    State.QUEUED: (":hourglass_flowing_sand:", "Queued"),
    State.RUNNING: (":mag:", "Investigating"),
    State.WAITING_FOR_OPERATOR: (":raising_hand:", "Waiting for your answer"),
    State.COMPLETED: (":white_check_mark:", "Completed"),
    State.STOPPED: (":double_vertical_bar:", "Stopped"),
    State.PUBLISH_QUEUED: (":outbox_tray:", "Publishing issue"),
    State.PUBLISHED: (":memo:", "Issue published"),
    State.PUBLISH_UNKNOWN: (":grey_question:", "Publish outcome unknown"),
    State.SKIPPED: (":no_entry_sign:", "Skipped"),
}
# A finished, stopped or skipped investigation can be run again from its root message.
RERUNNABLE = frozenset({State.COMPLETED, State.STOPPED, State.PUBLISHED, State.SKIPPED})

SOURCE_LABELS: dict[str, tuple[str, str]] = {
    "sentry": (":rotating_light:", "Sentry"),
    "code": (":computer:", "Code"),
    "docs": (":books:", "Docs"),
}

CONFIDENCE_LABELS = {
    "high": ":large_green_circle: High",
    "medium": ":large_yellow_circle: Medium",
    "low": ":red_circle: Low",
}


# -- text: escaping, cutting, links ---------------------------------------------

_BROADCAST = re.compile(r"(?i)@(?=(?:here|channel|everyone)\b)")
_WORD_JOINER = "\u2060"


def escape(text: str) -> str:
    """Data as mrkdwn: `&`, `<`, `>` escaped; a bare @here/@channel/@everyone defused;
    bidi direction controls dropped (they would make it read in another order)."""
    text = without_bidi_controls(text.replace("\x00", ""))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub("@" + _WORD_JOINER, text)


def clip(text: str, limit: int) -> str:
    """Plain text cut to `limit` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def clip_mrkdwn(text: str, limit: int) -> str:
    """mrkdwn cut to `limit` without breaking an entity, a link or a code block."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 5]  # room for "…" and a closing "\n```"
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    lt = cut.rfind("<")
    if lt != -1 and ">" not in cut[lt:]:
        cut = cut[:lt]
    cut = cut.rstrip() + "…"
    if cut.count("```") % 2:
        cut += "\n```"
    return cut


def _utf16_cut(text: str, limit: int) -> str:
    """At most `limit` UTF-16 code units (how a browser's maxlength counts)."""
    if len(text.encode("utf-16-le")) <= 2 * limit:
        return text
    out, units = [], 0
    for ch in text:
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            break
        out.append(ch)
    return "".join(out)


def _safe_url(url: str | None) -> str | None:
    """An http(s) URL ready to sit inside `<…|…>`, or None when it is not one."""
    if not url:
        return None
    url = url.strip()
    if not re.match(r"(?i)^https?://[^\s/?#]+", url) or len(url) > 2000:
        return None
    if any(ord(ch) < 0x20 or ch.isspace() for ch in url) or BIDI_CONTROLS.search(url):
        return None
    url = url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    return url.replace("&", "&amp;")


def link(url: str | None, label: str) -> str:
    """`<url|label>` for an http(s) URL; otherwise the label alone (both escaped)."""
    safe = _safe_url(url)
    label = " ".join(label.split()) or (url or "")
    if safe is None:
        return escape(label)
    return f"<{safe}|{escape(label)}>"


def code(text: str) -> str:
    """Inline code: backticks inside would end it early, so they become quotes."""
    text = re.sub(r"[\r\n]+", " ", text).replace("`", "'")
    return "`" + escape(text) + "`"


def code_block(lines: Iterable[str]) -> str:
    body = "\n".join(escape(ln).replace("```", "`\u200b``") for ln in lines)
    return f"```\n{body}\n```"


def mention(user: str | None) -> str | None:
    """`<@U…>` for a Slack user id; an escaped name for anything else."""
    if not user:
        return None
    if re.fullmatch(r"[UW][A-Z0-9]{2,20}", user):
        return f"<@{user}>"
    return escape(user)


def _slack_date(moment: datetime, fmt: str = "{date_short_pretty} {time}") -> str:
    """A date Slack shows in each reader's time zone, with a UTC fallback."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    fallback = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(moment.timestamp())}^{fmt}|{fallback}>"


def _window(inv: Investigation) -> str:
    s = inv.scope
    since, until = s.since.astimezone(UTC), s.until.astimezone(UTC)
    end = f"{until:%H:%M}" if since.date() == until.date() else f"{until:%Y-%m-%d %H:%M}"
    return f"{since:%Y-%m-%d %H:%M} → {end} UTC"


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _budget(inv: Investigation) -> str:
    st = inv.stats
    return " · ".join(
        [
            _plural(st.model_calls, "model call"),
            _plural(st.tool_calls, "tool call"),
            *([_plural(st.tokens, "token")] if st.tokens else []),
            _duration(st.wall_seconds),
        ]
    )


def _one_line(text: str, limit: int) -> str:
    """The first sentence (or line) of `text`, at most `limit` characters."""
    text = " ".join(text.split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return clip(sentence, limit)


_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _repo_url(repository: str) -> str | None:
    return f"https://github.com/{repository}" if _REPO.fullmatch(repository) else None


def _repo_link(repository: str) -> str:
    return link(_repo_url(repository), repository)


def _commit_link(repository: str, sha: str) -> str:
    sha = sha.strip()
    base = _repo_url(repository)
    if base and _FULL_SHA.fullmatch(sha.lower()):
        return f"<{base}/commit/{sha.lower()}|{code(sha[:7])}>"
    return code(sha[:12])


# -- Markdown → mrkdwn --------------------------------------------------------------

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_MD_LINK = re.compile(
    r"!?\[([^\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+\"[^\"]*\")?\s*\)"
    r"|<(https?://[^>\s|]+)>"
)
_BOLD_STARS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_BOLD_UNDERSCORES = re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_BOLD_MARK = "\x00"


def _emphasis(escaped: str) -> str:
    text = _BOLD_STARS.sub(lambda m: f"{_BOLD_MARK}{m[1]}{_BOLD_MARK}", escaped)
    text = _BOLD_UNDERSCORES.sub(lambda m: f"{_BOLD_MARK}{m[1]}{_BOLD_MARK}", text)
    text = _ITALIC_STAR.sub(lambda m: f"_{m[1]}_", text)
    text = _STRIKE.sub(lambda m: f"~{m[1]}~", text)
    return text.replace(_BOLD_MARK, "*")


def _strip_emphasis(text: str) -> str:
    return re.sub(r"\*\*|__", "", text)


def _inline_text(text: str, links: bool) -> str:
    out, pos = [], 0
    for m in _MD_LINK.finditer(text):
        out.append(_emphasis(escape(text[pos : m.start()])))
        url = m[3] or m[2]
        label = _strip_emphasis(m[1] if m[3] is None else "") or url
        if links:
            out.append(link(url, label))
        elif label == url:
            out.append(escape(url))
        else:
            out.append(f"{escape(label)} ({escape(url)})")
        pos = m.end()
    out.append(_emphasis(escape(text[pos:])))
    return "".join(out)


def _inline(text: str, links: bool) -> str:
    """One line of Markdown as mrkdwn; code spans are kept as they are."""
    text = text.replace("\x00", "")
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(text):
        out.append(_inline_text(text[pos : m.start()], links))
        out.append(code(m[2]) if m[2].strip() else escape(m[0]))
        pos = m.end()
    out.append(_inline_text(text[pos:], links))
    return "".join(out)


def md_to_mrkdwn(markdown: str, *, links: bool = True) -> str:
    """GitHub Markdown as Slack mrkdwn: **bold** → *bold*, headings → bold lines,
    [text](url) → <url|text> (or `text (url)` with links=False, for tool text),
    lists → bullets, fences kept. Everything else is escaped."""
    out: list[str] = []
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append("```")
            continue
        if in_fence:
            out.append(escape(line).replace("```", "`\u200b``"))
            continue
        if not line.strip():
            out.append("")
            continue
        if _RULE.match(line):
            continue
        if m := _HEADING.match(line):
            title = _inline(_strip_emphasis(m[1]), links)
            if title:
                out.append(f"*{title}*")
            continue
        if m := _BULLET.match(line):
            depth = len(m[1].expandtabs(4)) // 2
            out.append("    " * depth + ("◦ " if depth else "• ") + _inline(m[2], links))
            continue
        if m := _QUOTE.match(line):
            out.append("> " + _inline(m[1], links))
            continue
        out.append(_inline(line.strip(), links))
    if in_fence:
        out.append("```")
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _markdown_preview(markdown: str, limit: int) -> tuple[str, bool]:
    """The first whole lines of `markdown` up to about `limit` characters."""
    kept, size = [], 0
    lines = markdown.strip().splitlines()
    for line in lines:
        if size + len(line) + 1 > limit:
            if not kept:
                kept.append(clip(line, limit))
            return "\n".join(kept).rstrip(), True
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept), False


# -- blocks -----------------------------------------------------------------------


def _md(text: str, limit: int = SECTION_CHARS) -> MarkdownTextObject:
    text = without_bidi_controls(text)  # whatever built it, none reaches Slack
    return MarkdownTextObject(text=clip_mrkdwn(text, limit) or "—", verbatim=True)


def _plain(text: str, limit: int) -> PlainTextObject:
    text = " ".join(without_bidi_controls(text).split())
    return PlainTextObject(text=clip(text or "—", limit), emoji=True)


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=_md(text))


def _fields(fields: Sequence[str]) -> SectionBlock:
    return SectionBlock(fields=[_md(f, FIELD_CHARS) for f in fields[:10]])


def _context(*parts: str | None) -> ContextBlock:
    text = " · ".join(p for p in parts if p)
    return ContextBlock(elements=[_md(text, CONTEXT_CHARS)])


def _header(text: str) -> HeaderBlock:
    return HeaderBlock(text=_plain(text, HEADER_CHARS))


def _button(
    text: str,
    action_id: str,
    value: dict[str, Any],
    style: str | None = None,
    confirm: ConfirmObject | None = None,
) -> ButtonElement:
    encoded = json.dumps(value, separators=(",", ":"))
    if len(encoded) > BUTTON_VALUE_CHARS:
        raise ValueError(f"a button value of {len(encoded)} characters")
    return ButtonElement(
        text=_plain(text, BUTTON_TEXT_CHARS),
        action_id=action_id,
        value=encoded,
        style=style,
        confirm=confirm,
    )


def _packed(
    title: str, items: Sequence[str], *, max_sections: int, nouns: tuple[str, str]
) -> list[SectionBlock]:
    """`title` and one line per item, packed into as few sections as fit.

    Past `max_sections` the rest is counted, not shown: the message stays
    inside Slack's 50 blocks whatever the number of items.
    """
    room = SECTION_CHARS - 80  # always room for the "…and N more" line
    sections: list[str] = []
    current = title
    for i, item in enumerate(items):
        line = clip_mrkdwn(item, ITEM_CHARS)
        if len(current) + 1 + len(line) <= room:
            current += "\n" + line
            continue
        if len(sections) + 1 >= max_sections:
            left = len(items) - i
            current += f"\n_…and {left:,} more {nouns[0] if left == 1 else nouns[1]}_"
            break
        sections.append(current)
        current = line
    sections.append(current)
    return [_section(s) for s in sections]


def _message(
    text: str, blocks: Sequence[Block], metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    if len(blocks) > MAX_BLOCKS:  # every builder is bounded; this is a bug if it happens
        raise ValueError(f"a message of {len(blocks)} blocks")
    payload: dict[str, Any] = {
        "text": clip_mrkdwn(without_bidi_controls(text), FALLBACK_CHARS),
        "blocks": [b.to_dict() for b in blocks],
    }
    if metadata is not None:
        payload["metadata"] = metadata
    return payload


def _metadata(event_type: str, **payload: Any) -> dict[str, Any]:
    return {
        "event_type": event_type,
        "event_payload": {k: v for k, v in payload.items() if v is not None},
    }


# -- the thread's root message -----------------------------------------------------


def root_message(inv: Investigation, thread_link: str | None = None) -> dict[str, Any]:
    """The message that opens the thread, updated as the investigation moves on."""
    emoji, label = STATE_LABELS[inv.state]
    fields = [
        f"*Status*\n{emoji} {label}",
        f"*Project*\n{code(inv.scope.project_key)}",
    ]
    requester = mention(inv.requester)
    if requester:
        fields.append(f"*Requested by*\n{requester}")
    fields.append(f"*Window*\n{_window(inv)}")
    blocks: list[Block] = [
        _section(f":mag: *{escape(inv.question)}*"),
        _fields(fields),
    ]
    d = inv.diagnosis
    if inv.superseded_by is not None:
        blocks.append(
            _section(
                f":repeat: *Superseded* by a re-run ({code(inv.superseded_by[:8])}) "
                "further down this thread; this report is kept for the record."
            )
        )
    if inv.state is State.SKIPPED:
        reason = escape(inv.stop_reason or "no reason recorded")
        blocks.append(_section(f"*Skipped, not investigated:* {reason}"))
    elif inv.state is State.STOPPED:
        reason = escape(inv.stop_reason or "no reason recorded")
        blocks.append(_section(f"*Stopped:* {reason}"))
    elif inv.state is State.WAITING_FOR_OPERATOR:
        blocks.append(_section("I asked a question in the thread: reply there to continue."))
    elif d is not None and inv.state in (
        State.COMPLETED,
        State.PUBLISH_QUEUED,
        State.PUBLISHED,
        State.PUBLISH_UNKNOWN,
    ):
        blocks.append(_section(f"*Root cause:* {escape(_one_line(d.root_cause, 300))}"))
    issue = issue_link(inv)
    if issue is not None:
        blocks.append(_section(f":link: *Issue:* {issue}"))
    blocks.append(
        _context(
            f"Budget used: {_budget(inv)}",
            _plural(len(inv.evidence), "evidence item"),
            link(thread_link, "Open thread") if _safe_url(thread_link) else None,
            f"Re-run of {code(inv.rerun_of[:8])}" if inv.rerun_of else None,
        )
    )
    if inv.state in RERUNNABLE and inv.superseded_by is None:
        value = {"investigation_id": inv.id}
        blocks.append(ActionsBlock(elements=[_button("Re-run", ACTION_RERUN, value)]))
    text = f"{emoji} {label}: {escape(clip(inv.question, 200))}"
    return _message(
        text,
        blocks,
        _metadata(
            EVENT_INVESTIGATION,
            investigation_id=inv.id,
            version=inv.version,
            state=str(inv.state),
        ),
    )


# -- evidence cards ------------------------------------------------------------------


def _excerpt(content: str) -> tuple[list[str], int]:
    """The first meaningful lines, each and all cut short; and how many there were."""
    lines = [ln.rstrip() for ln in content.splitlines() if ln.strip()]
    kept: list[str] = []
    size = 0
    for ln in lines[:EXCERPT_LINES]:
        ln = clip(ln.expandtabs(4), EXCERPT_LINE_CHARS)
        if size + len(ln) > EXCERPT_CHARS:
            room = EXCERPT_CHARS - size
            if room > 20:
                kept.append(clip(ln, room))
            break
        kept.append(ln)
        size += len(ln) + 1
    return kept, len(lines)


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    return [ln[cut:] for ln in lines]


def evidence_card(inv_id: str, ev: Evidence) -> dict[str, Any]:
    """One evidence item as a card in the thread."""
    emoji, label = SOURCE_LABELS.get(ev.source, (":paperclip:", ev.source.title() or "Tool"))
    title = clip(" ".join(ev.title.split()) or ev.tool, 300)
    head = f"*{escape(ev.id)}* · {emoji} {escape(label)} · {link(ev.link, title)}"
    blocks: list[Block] = [_section(head)]
    lines, total = _excerpt(ev.content)
    if lines:
        if ev.source == "code":
            body = code_block(_dedent(lines))
        else:
            body = md_to_mrkdwn("\n".join(lines), links=False)
            if "```" not in body:
                body = "\n".join(f"> {ln}" if ln else ">" for ln in body.splitlines())
        blocks.append(_section(body))
    shown = f"{len(lines)} of {total:,} lines" if total > len(lines) else None
    revision = f"@ {code(ev.revision[:7])}" if ev.revision else None
    blocks.append(
        _context(
            f"Retrieved {_slack_date(ev.retrieved_at)}",
            code(ev.tool),
            revision,
            shown,
        )
    )
    return _message(
        f"{ev.id} · {label}: {escape(title)}",
        blocks,
        _metadata(
            EVENT_EVIDENCE,
            investigation_id=inv_id,
            evidence_id=ev.id,
            content_hash=ev.content_hash,
        ),
    )


# -- a question for the operator -------------------------------------------------------


def question_message(inv: Investigation, question: str, requester: str | None) -> dict[str, Any]:
    """The model's clarification question, asked in the thread."""
    who = mention(requester)
    lead = f"{who} I need one detail to continue:" if who else "I need one detail to continue:"
    quoted = "\n".join(f"> {ln}" for ln in escape(question.strip() or "?").splitlines())
    blocks: list[Block] = [
        _section(f":raising_hand: {lead}\n{quoted}"),
        _context("Reply in this thread to continue."),
    ]
    text = f"{lead} {escape(clip(' '.join(question.split()), 500))}"
    return _message(
        text,
        blocks,
        _metadata(EVENT_QUESTION, investigation_id=inv.id, version=inv.version),
    )


def duplicate_message(inv: Investigation, other_link: str | None) -> dict[str, Any]:
    """This run found that another one is already on the same error, and yields to it."""
    where = link(other_link, "that thread") if other_link else "another thread"
    text = f"This error is already being investigated in {where}; follow it there."
    return _message(text, [_section(f":link: {text}")])


# -- the diagnosis -------------------------------------------------------------------------


def _running_revision(inv: Investigation) -> str | None:
    for ev in reversed(inv.evidence):
        if ev.source == "code" and ev.revision and _FULL_SHA.fullmatch(ev.revision.lower()):
            return ev.revision.lower()
    return None


def _suspect_link(inv: Investigation) -> str | None:
    d = inv.diagnosis
    if d is None or d.suspect is None:
        return None
    s = d.suspect
    lines = f"{s.line_start}" if s.line_end == s.line_start else f"{s.line_start}-{s.line_end}"
    label = code(f"{s.path}:{lines}")
    base, rev = _repo_url(inv.scope.repository), _running_revision(inv)
    path = s.path.lstrip("/")
    if base and rev and re.fullmatch(r"[\w./@+-]+", path) and ".." not in path:
        anchor = f"L{s.line_start}" + (f"-L{s.line_end}" if s.line_end != s.line_start else "")
        return f"<{base}/blob/{rev}/{path}#{anchor}|{label}>"
    return label


def _refs(ids: Sequence[str], evidence_links: dict[str, str]) -> str:
    refs = []
    for ev_id in ids:
        url = evidence_links.get(ev_id)
        refs.append(link(url, ev_id) if _safe_url(url) else escape(ev_id))
    return ", ".join(refs)


def diagnosis_message(
    inv: Investigation,
    evidence_links: dict[str, str],
    *,
    extra_calls: int = DEFAULT_EXTRA_CALLS,
) -> dict[str, Any]:
    """Root cause, cited facts, then what is not established; a stopped run can continue."""
    d = inv.diagnosis
    stopped = inv.state is State.STOPPED
    # A stopped run that was continued keeps its partial diagnosis until it ends again.
    continuing = inv.state in (State.QUEUED, State.RUNNING, State.WAITING_FOR_OPERATOR)
    if stopped:
        head = ":warning: Partial diagnosis"
    elif continuing:
        head = ":hourglass_flowing_sand: Partial diagnosis"
    else:
        head = ":white_check_mark: Diagnosis"
    blocks: list[Block] = [_header(head)]
    if stopped:
        reason = escape(inv.stop_reason or "no reason recorded")
        blocks.append(
            _section(
                f"*Partial result: the investigation stopped* ({reason}).\n"
                "What was gathered is below; continue to give it more budget."
            )
        )
    elif continuing:
        blocks.append(
            _section("*Partial result.* The investigation is continuing; this will be replaced.")
        )
    if d is None:
        blocks.append(_section("_No diagnosis yet: nothing conclusive was gathered._"))
    else:
        blocks.append(_section(f"*Root cause*\n{escape(d.root_cause)}"))
        fields = []
        suspect = _suspect_link(inv)
        if suspect:
            fields.append(f"*Suspect*\n{suspect}")
        if d.suspect and d.suspect.commit:
            fields.append(f"*Commit*\n{_commit_link(inv.scope.repository, d.suspect.commit)}")
        fields.append(f"*Confidence*\n{CONFIDENCE_LABELS.get(d.confidence, d.confidence)}")
        blocks.append(_fields(fields))
        if d.facts:
            facts = [
                f"• {escape(clip(f.text, ITEM_CHARS))} ({_refs(f.evidence, evidence_links)})"
                for f in d.facts
            ]
            blocks += _packed(
                f"*Facts* ({len(d.facts)}, each cited)",
                facts,
                max_sections=6,
                nouns=("fact", "facts"),
            )
        blocks += finding_blocks(inv)
        unverified = bool(d.hypotheses or d.uncertainties or d.recommended_check)
        if unverified:
            blocks.append(DividerBlock())
        if d.hypotheses:
            blocks += _packed(
                "*Hypotheses* _(not established)_",
                [f"• {escape(h)}" for h in d.hypotheses],
                max_sections=2,
                nouns=("hypothesis", "hypotheses"),
            )
        if d.uncertainties:
            blocks += _packed(
                "*Uncertainties*",
                [f"• {escape(u)}" for u in d.uncertainties],
                max_sections=2,
                nouns=("uncertainty", "uncertainties"),
            )
        if d.recommended_check:
            blocks.append(_section(f"*Recommended check*\n{escape(d.recommended_check)}"))
    blocks.append(_context(f"Budget used: {_budget(inv)}", f"Investigation {code(inv.id[:8])}"))
    if inv.superseded_by is not None:
        blocks.append(_section(":repeat: _Superseded by a re-run further down this thread._"))
    elif stopped:
        value = {"investigation_id": inv.id, "version": inv.version}
        blocks.append(
            ActionsBlock(
                elements=[
                    _button(
                        f"Continue (+{extra_calls} calls)", ACTION_CONTINUE, value, style="primary"
                    )
                ]
            )
        )
    if stopped:
        text = f"Partial diagnosis (stopped: {escape(clip(inv.stop_reason or '?', 200))})"
    elif continuing:
        text = "Partial diagnosis (continuing)"
    elif d is not None:
        text = f"Diagnosis: {escape(_one_line(d.root_cause, 300))}"
    else:
        text = "Diagnosis"
    return _message(
        text,
        blocks,
        _metadata(
            EVENT_DIAGNOSIS,
            investigation_id=inv.id,
            version=inv.version,
            state=str(inv.state),
            confidence=d.confidence if d else None,
        ),
    )


# -- the finding: what to act on ------------------------------------------------------------

FINDING_DIFF_LINES = 40


def _diff_block(lines: Sequence[str]) -> str:
    shown = [clip(x, 200) for x in lines[:FINDING_DIFF_LINES]]
    if len(lines) > FINDING_DIFF_LINES:
        shown.append(f"… {len(lines) - FINDING_DIFF_LINES} more")
    return code_block(shown)


def finding_blocks(inv: Investigation) -> list[Block]:
    """The change, the input, the proposed change, risk, places, factors, window, related:
    at most eight sections, each cut to Slack's 3,000 characters, in the incident's language."""
    d = inv.diagnosis
    if d is None:
        return []
    t = labels(inv.scope.language)
    out: list[Block] = []
    c = d.change
    if c is not None:
        head = (
            f"*{escape(t['change'])}* · {_commit_link(inv.scope.repository, c.commit)} · "
            f"{code(c.path)}"
        )
        summary = f"\n{escape(clip(c.summary, 200))}" if c.summary else ""
        body = [f"-{x}" for x in c.before] + [f"+{x}" for x in c.after]
        out.append(_section(f"{head}{summary}\n{_diff_block(body)}"))
    g = d.trigger
    if g is not None and (g.fields or g.absent or g.entry):
        kind = escape(t.get(f"kind.{g.kind}", g.kind))
        entry = f" {code(clip(g.entry, 200))}" if g.entry else ""
        lines = [f"*{escape(t['trigger'])}* · {kind}{entry}"]
        lines += [f"• {code(clip(a, 120))}: {escape(t['absent'])}" for a in g.absent]
        lines += [
            f"• {code(clip(f.name, 120))} = {code(clip(f.value, 160))} _({escape(f.source)})_"
            for f in g.fields
        ]
        out.append(_section("\n".join(lines)))
    p = d.proposed_change
    if p is not None:
        out.append(
            _section(
                f"*{escape(t['proposed'])}*\n{escape(clip(p.rationale, 600))}\n"
                f"{_diff_block(p.diff.splitlines())}"
            )
        )
    fields = []
    if d.fix is not None:
        f = d.fix
        fields.append(
            f"*{escape(t['risk']).capitalize()}*\n{escape(t.get(f'level.{f.risk}', f.risk))}"
        )
        level = t.get(f"clevel.{f.complexity}", f.complexity)
        fields.append(f"*{escape(t['complexity']).capitalize()}*\n{escape(level)}")
    w = d.window
    if w is not None:
        seen = [x.strftime("%Y-%m-%d %H:%M") for x in (w.first_seen, w.last_seen) if x]
        if seen:
            fields.append(f"*{escape(t['window'])}*\n{' → '.join(seen)} UTC")
        rates = [
            f"{label} {value:g}"
            for label, value in (
                (t["before"], w.per_hour_before),
                (t["after"], w.per_hour_after),
                (t["overall"], w.per_hour),
            )
            if value is not None
        ]
        if rates:
            fields.append(f"*{escape(t['per_hour'])}*\n{escape(' · '.join(rates))}")
    if fields:
        out.append(_fields(fields))
    if d.fix is not None and d.fix.reasons:
        out.append(_context(*(escape(clip(r, 300)) for r in d.fix.reasons[:4])))
    if d.affected:
        items = []
        for loc in d.affected:
            span = f"{loc.line_start}" + (
                f"-{loc.line_end}" if loc.line_end != loc.line_start else ""
            )
            role = escape(t.get(f"role.{loc.role}", loc.role))
            items.append(f"• {code(f'{loc.path}:{span}')} — {role}")
        out += _packed(
            f"*{escape(t['affected'])}*", items, max_sections=1, nouns=("place", "places")
        )
    if d.confidence_factors:
        items = [
            f"• {'↑' if cf.effect == 'raises' else '↓'} {escape(clip(cf.text, 300))}"
            for cf in d.confidence_factors
        ]
        out += _packed(
            f"*{escape(t['factors'])}*", items, max_sections=1, nouns=("factor", "factors")
        )
    if d.related_issues:
        items = []
        for r in d.related_issues:
            name = link(r.link, r.short_id or r.id)
            count = f" ({r.count} {escape(t['events'])})" if r.count is not None else ""
            why = escape(clip("; ".join(r.reasons), 300))
            items.append(f"• {name} {escape(clip(r.title, 120))}{count}: {why}")
        out += _packed(
            f"*{escape(t['related'])}*", items, max_sections=1, nouns=("issue", "issues")
        )
    return out


# -- the issue draft ---------------------------------------------------------------------


def _require_draft(inv: Investigation) -> Draft:
    if inv.draft is None:
        raise ValueError(f"investigation {inv.id} has no draft")
    return inv.draft


def draft_ref(inv: Investigation) -> dict[str, Any]:
    """What an Edit or Approve names: the draft as it was shown."""
    dr = _require_draft(inv)
    return {"investigation_id": inv.id, "version": dr.version, "hash": dr.hash}


def _draft_blocks(inv: Investigation, dr: Draft) -> list[Block]:
    preview, cut = _markdown_preview(dr.body, PREVIEW_CHARS)
    blocks: list[Block] = [
        _section(f":memo: *GitHub issue draft* for {_repo_link(dr.repository)}"),
        _section(f"*{escape(clip(' '.join(dr.title.split()), 500))}*"),
    ]
    if preview:
        body = md_to_mrkdwn(preview, links=True)
        if cut:
            body = clip_mrkdwn(body, SECTION_CHARS - 2) + "\n…"
        blocks.append(_section(body))
    size = f"preview of {len(dr.body):,} characters" if cut else None
    blocks.append(_context(f"v{dr.version} · {dr.hash[:8]}", size))
    return blocks


def _approved_by(inv: Investigation) -> str:
    """' by <@U…>' when the approver is known, else an empty string."""
    who = mention(inv.approval.approver) if inv.approval else None
    return f" by {who}" if who else ""


def draft_message(inv: Investigation) -> dict[str, Any]:
    """The draft with Edit / Approve & publish / Discard, each bound to this version and hash.

    A discarded draft keeps its text and loses its buttons; a draft whose
    publication was refused (back to COMPLETED with a reason) says why.
    """
    dr = _require_draft(inv)
    ref = draft_ref(inv)
    if inv.superseded_by is not None and inv.approval is None:
        return _message(
            f"GitHub issue draft v{dr.version} superseded: {escape(clip(dr.title, 200))}",
            [
                *_draft_blocks(inv, dr),
                _section(":repeat: Superseded by a re-run: this draft can no longer be published."),
            ],
            _metadata(EVENT_DRAFT, **ref, status="superseded"),
        )
    if inv.discarded:
        return _message(
            f"GitHub issue draft v{dr.version} discarded: {escape(clip(dr.title, 200))}",
            [
                *_draft_blocks(inv, dr),
                _section(":wastebasket: Discarded: nothing will be published."),
            ],
            _metadata(EVENT_DRAFT, **ref, status="discarded"),
        )
    refused = []
    last = inv.past_approvals[-1] if inv.past_approvals else None
    if inv.state is State.COMPLETED and last and last.outcome != "refused" and inv.stop_reason:
        why = escape(clip(inv.stop_reason, 500))
        refused = [_section(f":leftwards_arrow_with_hook: *Publishing was rolled back:* {why}")]
    elif inv.state is State.COMPLETED and inv.stop_reason:
        refused = [_section(f":x: *Publishing was refused:* {escape(inv.stop_reason)}")]
    confirm = ConfirmObject(
        title=clip("Publish this issue?", 100),
        text=MarkdownTextObject(
            text=clip_mrkdwn(
                f"This opens an issue in *{escape(dr.repository)}* with v{dr.version} "
                f"({dr.hash[:8]}) exactly as shown. It is published once.",
                300,
            ),
            verbatim=True,
        ),
        confirm="Publish",
        deny="Cancel",
    )
    actions = ActionsBlock(
        elements=[
            _button("Edit", ACTION_DRAFT_EDIT, ref),
            _button("Approve & publish", ACTION_DRAFT_APPROVE, ref, "primary", confirm),
            _button("Discard", ACTION_DRAFT_DISCARD, ref, "danger"),
        ]
    )
    return _message(
        f"GitHub issue draft v{dr.version}: {escape(clip(dr.title, 200))}",
        [*_draft_blocks(inv, dr), *refused, actions],
        _metadata(EVENT_DRAFT, **ref, status="draft"),
    )


def publishing_message(inv: Investigation) -> dict[str, Any]:
    """The draft message once approved: no buttons, publishing under way."""
    dr = _require_draft(inv)
    if inv.state is State.PUBLISH_UNKNOWN:
        status = (
            ":grey_question: The outcome of publishing is unknown. A retry looks for "
            "the issue first and never creates a second one."
        )
    else:
        status = (
            f":outbox_tray: v{dr.version} approved{_approved_by(inv)}: "
            f"publishing to {_repo_link(dr.repository)}…"
        )
    return _message(
        f"Publishing the issue: {escape(clip(dr.title, 200))}",
        [*_draft_blocks(inv, dr), _section(status)],
        _metadata(EVENT_DRAFT, **draft_ref(inv), status="publishing"),
    )


def _not_done(a: Approval | None) -> list[SectionBlock]:
    """The side steps of a publication that are not done, one line each; [] when none.
    The Slack link is left out: a message of the thread shown means it is caught up."""
    steps = [s for s in a.not_done() if s.name != "slack_link"] if a else []
    if not steps:
        return []
    lines = [f"• {escape(clip(not_done_line(s), 300))}" for s in steps]
    head = ":warning: *Published, but not everything was done:*"
    return [_section("\n".join([head, *lines]))]


def published_message(inv: Investigation, url: str, number: int) -> dict[str, Any]:
    """The draft message once published: no buttons, a link to the issue, and the side
    steps that are not done."""
    dr = _require_draft(inv)
    issue = link(url, f"{dr.repository}#{number}")
    by = _approved_by(inv)
    approved = f", approved{by}" if by else ""
    return _message(
        f"Published as {escape(dr.repository)}#{number}: {escape(clip(dr.title, 200))}",
        [
            *_draft_blocks(inv, dr),
            _section(f":white_check_mark: Published as {issue}{approved}"),
            *_not_done(inv.approval),
        ],
        _metadata(
            EVENT_DRAFT,
            **draft_ref(inv),
            status="published",
            issue_url=url,
            issue_number=number,
        ),
    )


# -- the publication, in the thread ----------------------------------------------------

LOG_LINES = 20


def issue_link(inv: Investigation) -> str | None:
    """`<url|owner/repo#N>` while the current approval's issue stands (created, adopted or
    published, not being rolled back); None otherwise."""
    a = inv.approval
    if a is None or a.issue_url is None or a.issue_number is None or a.rolling_back:
        return None
    if a.outcome not in ("queued", "published"):
        return None
    repository = inv.draft.repository if inv.draft else ""
    return link(a.issue_url, f"{repository}#{a.issue_number}")


def _log_lines(a: Approval) -> list[str]:
    marks = {"done": ":white_check_mark:", "already done": ":white_check_mark:"}
    lines = []
    for e in a.log[-LOG_LINES:]:
        mark = marks.get(e.outcome, ":x:" if e.outcome == "failed" else ":grey_question:")
        what = "undo " + e.step if e.action == "compensate" else e.step
        detail = f" — {escape(clip(e.detail, 200))}" if e.detail else ""
        lines.append(f"{mark} {code(what)}: {escape(e.outcome)}{detail}")
    return lines


def publish_message(inv: Investigation, a: Approval) -> dict[str, Any] | None:
    """One thread message per approval, updated as its publication goes: the link once the
    issue exists; when the answer was lost and no issue carries the marker, a question to
    the approvers with "Create anyway"; after a rollback, the log of compensations; once
    published, the side steps not done. None while there is nothing to say."""
    dr = _require_draft(inv)
    who = mention(a.approver) or "the approver"
    current = a is inv.approval
    meta = _metadata(
        EVENT_PUBLISH, investigation_id=inv.id, version=a.version, hash=a.hash, status=a.outcome
    )
    if a.outcome in ("rolled back", "rollback incomplete") or a.rolling_back:
        if a.rolling_back:
            head = f":leftwards_arrow_with_hook: *Publishing v{a.version} is being rolled back.*"
        elif a.outcome == "rolled back":
            head = f":leftwards_arrow_with_hook: *Publishing v{a.version} was rolled back.*"
        else:
            head = (
                f":warning: *The rollback of v{a.version} is incomplete:* {who}, "
                "a person has to finish what failed below."
            )
        why = escape(clip(a.reason or "", 600))
        return _message(
            f"Publishing v{a.version} was rolled back",
            [
                _section(f"{head}\n{why}"),
                *_packed("*Log*", _log_lines(a), max_sections=3, nouns=("entry", "entries")),
            ],
            meta,
        )
    if current and a.outcome == "unknown":
        reason = escape(clip(a.reason or "the answer was lost", 600))
        ref = {**draft_ref(inv), "creates": a.creates_sent}
        if a.lookup == "nothing":
            text = (
                f":grey_question: {who}: GitHub's answer to creating the issue was lost "
                f"({reason}), and no issue of ours carries this draft's marker. It was most "
                "likely not created. *Create anyway* publishes it (approvers only); nothing is "
                "created without it."
            )
            confirm = ConfirmObject(
                title="Create the issue anyway?",
                text=MarkdownTextObject(
                    text=f"This creates the issue in *{escape(dr.repository)}* once more.",
                    verbatim=True,
                ),
                confirm="Create",
                deny="Cancel",
            )
            button = _button("Create anyway", ACTION_CREATE_ANYWAY, ref, "danger", confirm)
        else:
            text = (
                f":grey_question: {who}: GitHub's answer to creating the issue was lost and "
                f"looking for it failed too ({reason}). *Look again* searches before anything "
                "is created."
            )
            button = _button("Look again", ACTION_DRAFT_APPROVE, draft_ref(inv))
        return _message(
            "Publishing outcome unknown", [_section(text), ActionsBlock(elements=[button])], meta
        )
    issue = issue_link(inv) if current else None
    if issue is not None:
        done = "Published as" if inv.state is State.PUBLISHED else "Issue created:"
        shown: list[Block] = [_section(f":link: {done} {issue}{_approved_by(inv)}")]
        missing = _not_done(a)
        if missing:
            # Approving again runs the steps not done (approvers only), and nothing else.
            retry = _button("Retry", ACTION_DRAFT_APPROVE, draft_ref(inv))
            shown += [*missing, ActionsBlock(elements=[retry])]
        return _message(f"{done} {dr.repository}#{a.issue_number}", shown, meta)
    return None


# -- modals -----------------------------------------------------------------------------


def edit_modal(inv: Investigation, channel: str | None = None) -> dict[str, Any]:
    """Edit the draft's title and body; saving makes version + 1 of exactly what was shown.
    `channel`: where Edit was clicked (a submission names no channel of its own)."""
    dr = _require_draft(inv)
    body = _utf16_cut(without_bidi_controls(dr.body), INPUT_CHARS)
    blocks: list[Block] = [
        _context(f"{_repo_link(dr.repository)} · v{dr.version} · {dr.hash[:8]}"),
        InputBlock(
            block_id="title",
            label=_plain("Title", 2000),
            element=PlainTextInputElement(
                action_id=INPUT_ACTION,
                initial_value=_utf16_cut(without_bidi_controls(dr.title), GITHUB_TITLE_CHARS),
                max_length=GITHUB_TITLE_CHARS,
            ),
        ),
        InputBlock(
            block_id="body",
            label=_plain("Body (Markdown)", 2000),
            element=PlainTextInputElement(
                action_id=INPUT_ACTION,
                initial_value=body,
                multiline=True,
                max_length=INPUT_CHARS,
            ),
        ),
    ]
    if len(body) < len(dr.body):
        blocks.append(
            _context(
                f":warning: The body has {len(dr.body):,} characters; Slack edits at most "
                f"{INPUT_CHARS:,}, so only the first {len(body):,} are shown. "
                "Saving keeps only what is above."
            )
        )
    view = View(
        type="modal",
        callback_id=CALLBACK_DRAFT_EDIT,
        title=_plain("Edit issue draft", 24),
        submit=_plain(f"Save as v{dr.version + 1}", 24),
        close=_plain("Cancel", 24),
        private_metadata=json.dumps(
            {**draft_ref(inv), **({"channel_id": channel} if channel else {})},
            separators=(",", ":"),
        ),
        blocks=blocks,
    )
    return view.to_dict()


_SLACK_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")


def slack_to_plain(text: str) -> str:
    """A Slack message's text as a person reads it: links, mentions and entities unwrapped."""

    def unwrap(m: re.Match[str]) -> str:
        target, label = m[1], m[2]
        if target.startswith("@"):
            return "@" + (label or target[1:])
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            return label or "@" + target[1:].split("^")[0]
        if label and label != target:
            return f"{label} ({target})"
        return target.removeprefix("mailto:")

    text = _SLACK_LINK.sub(unwrap, text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return without_bidi_controls(text)


def investigate_modal(
    question: str, channel_id: str, *, message_ts: str | None = None
) -> dict[str, Any]:
    """The "Investigate this" message shortcut: the message's text as the question."""
    initial = _utf16_cut(slack_to_plain(question).strip(), MAX_QUESTION_CHARS)
    meta: dict[str, str] = {"channel_id": channel_id}
    if message_ts:
        meta["message_ts"] = message_ts
    view = View(
        type="modal",
        callback_id=CALLBACK_INVESTIGATE,
        title=_plain("Investigate this", 24),
        submit=_plain("Investigate", 24),
        close=_plain("Cancel", 24),
        private_metadata=json.dumps(meta, separators=(",", ":")),
        blocks=[
            InputBlock(
                block_id="question",
                label=_plain("What should I investigate?", 2000),
                element=PlainTextInputElement(
                    action_id=INPUT_ACTION,
                    initial_value=initial or None,
                    multiline=True,
                    max_length=MAX_QUESTION_CHARS,
                    placeholder=_plain("e.g. errors when saving orders since this morning", 150),
                ),
                hint=_plain(
                    "I read the error tracker, the code at the running release and the docs, "
                    "and reply in a thread in this channel.",
                    2000,
                ),
            )
        ],
    )
    return view.to_dict()


# -- App Home -----------------------------------------------------------------------------


SKIPPED_ITEMS = 10


def home_view(
    items: list[tuple[str, str, State, str | None]],
    skipped: Sequence[tuple[str, str, str]] = (),
) -> dict[str, Any]:
    """The user's recent investigations: (investigation_id, question, state, thread permalink);
    then the runs a gate skipped (investigation_id, question, reason), for everyone to see."""
    blocks: list[Block] = [_header("Your investigations")]
    how_to = f"Start one in a channel with {code(USAGE)}, or use *Investigate this* on a message."
    if not items:
        blocks.append(_section(f":wave: *No investigations yet.*\n{how_to}"))
    else:
        blocks += [_context(how_to), DividerBlock()]
        for inv_id, question, state, permalink in items[:HOME_ITEMS]:
            emoji, label = STATE_LABELS.get(state, (":grey_question:", str(state)))
            q = clip(" ".join(question.split()), 200)
            title = f"*{link(permalink, q)}*" if _safe_url(permalink) else f"*{escape(q)}*"
            blocks.append(_section(f"{title}\n{emoji} {label} · {code(inv_id[:8])}"))
        if len(items) > HOME_ITEMS:
            blocks.append(_context(f"Showing the {HOME_ITEMS} most recent of {len(items)}."))
    if skipped:
        emoji, label = STATE_LABELS[State.SKIPPED]
        blocks += [DividerBlock(), _header("Skipped, not investigated")]
        for inv_id, question, reason in skipped[:SKIPPED_ITEMS]:
            q = escape(clip(" ".join(question.split()), 200))
            why = escape(clip(reason, 300))
            blocks.append(_section(f"*{q}*\n{emoji} {label}: {why} · {code(inv_id[:8])}"))
    return View(type="home", blocks=blocks).to_dict()


# -- errors and help ------------------------------------------------------------------------


def error_ephemeral(text: str) -> dict[str, Any]:
    """A short error for the one person who caused it (respond() or chat.postEphemeral)."""
    safe = escape(text.strip() or "Something went wrong.")
    return _message(safe, [_section(f":warning: {safe}")])


def help_message() -> dict[str, Any]:
    """help_text() as a message (for chat.postEphemeral), not escaped a second time."""
    return _message(help_text(), [_section(help_text())])


def help_text() -> str:
    """/investigate usage, as mrkdwn."""
    return "\n".join(
        [
            f"*Usage:* `{escape(USAGE)}`",
            "• *project*: a configured project key; optional when the channel has only one.",
            "• *question*: what is going wrong, in your own words (up to 2,000 characters).",
            "• *since..until*: the window in UTC, as dates, times or relative amounts "
            "(`2026-11-28..2026-11-29`, `2026-11-28T09:00Z..`, `-6h..`); "
            "by default the last 24 hours (or the project's configured window).",
            "Example: `/investigate orders errors when saving orders -6h..`",
            "I reply in a thread with each piece of evidence, ask there if I need something, "
            "and end with a diagnosis and a GitHub issue draft you can edit and approve.",
        ]
    )
