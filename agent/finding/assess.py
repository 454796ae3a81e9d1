"""Where the fault reaches, how risky its fix is, and what raised or lowered the confidence:
each stated from what the evidence counts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent import stacktrace
from agent.domain import ConfidenceFactor, FixAssessment, Location, ProposedChange
from agent.finding.evidence import Items, blamed, events_of, parse_time, release_version
from agent.finding.hunk import Located, Suspected, same_commit

MAX_STACK = 8
MAX_CHANGED = 10
NULLISH = re.compile(
    r"null|none|nil\b|undefined|keyerror|key ?error|missing|not found|empty|absent|"
    r"index out of range|indexerror|no such",
    re.IGNORECASE,
)
GUARD = re.compile(
    r"\bnull\b|\bNone\b|\bnil\b|\bundefined\b|\?\?|\?\.|\|\||\.get\(|getOrDefault|orElse|"
    r"\bdefault\b|Optional|\bif\b|\bunless\b|isset|empty\(|len\(|\btry\b|\bexcept\b|\bcatch\b|"
    r"\brescue\b|fallback|\bor\b",
)
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")


# -- where, how risky, how sure ----------------------------------------------------------


def affected(
    s: Suspected | None, stack: list[tuple[stacktrace.Frame, str]], located: Located | None
) -> list[Location]:
    out: list[Location] = []
    keys: set[tuple[str, int]] = set()

    def add(loc: Location) -> None:
        # The crash line is listed even when it is the fault line too: both facts matter.
        if loc.role == "crash" or (loc.path, loc.line_start) not in keys:
            keys.add((loc.path, loc.line_start))
            out.append(loc)

    if s is not None:
        add(Location(path=s.path, line_start=s.line_start, line_end=s.line_end, role="fault",
                     commit=s.commit, function=function_of(located, stack, s)))  # fmt: skip
    for i, (frame, p) in enumerate(stack[:MAX_STACK]):
        line = frame.lineno
        if line is None:
            continue  # a frame without a line names no place to look
        add(Location(path=p, line_start=line, line_end=line, role="crash" if i == 0 else "stack",
                     function=frame.function))  # fmt: skip
    if located is not None:
        shown = 0
        for f in located.commit.get("files") or []:
            for hunk in f.get("hunks") or []:
                if shown >= MAX_CHANGED or not f.get("path"):
                    break
                start = max(1, int(hunk.get("new_start") or 1))
                end = max(start, start + int(hunk.get("new_lines") or 1) - 1)
                function = declared_name(hunk.get("function")) or None
                add(Location(path=f["path"], line_start=start, line_end=end, role="changed",
                             commit=located.sha, function=function))  # fmt: skip
                shown += 1
    return out


_KEYWORDS = {"def", "func", "function", "fun", "fn", "class", "sub", "if", "for", "while"}
_DEFINITION = re.compile(
    r"^\s*(export\s+)?(async\s+)?(def|func|function|fun|fn|sub|public|private|protected|"
    r"internal|static|override|suspend)\b|^\s*[A-Za-z_$][\w$]*\s*\([^)]*\)\s*\{"
)


def declared_name(header: Any) -> str:
    """The function a definition line declares: the identifier before its '('."""
    text = str(header or "")
    if not _DEFINITION.search(text):
        return ""
    for m in re.finditer(r"([A-Za-z_$][\w$]*)\s*\(", text):
        if m.group(1) not in _KEYWORDS:
            return m.group(1)
    return ""


def function_of(
    located: Located | None, stack: list[tuple[stacktrace.Frame, str]], s: Suspected
) -> str | None:
    """The function the fault lines sit in: a frame of the stack in that file near them,
    else the definition named by the hunk's header."""
    near = [
        (abs((fr.lineno or 0) - s.line_start), fr.function)
        for fr, p in stack
        if p == s.path
        and stacktrace_last(fr.function or "")
        and abs((fr.lineno or 0) - s.line_start) <= 40
    ]
    if near:
        return min(near)[1]
    if located is not None and declared_name(located.hunk.get("function")):
        return declared_name(located.hunk.get("function"))
    return None


def assess(
    located: Located | None,
    proposal: ProposedChange | None,
    stack: list[tuple[stacktrace.Frame, str]],
    ev: Items,
    s: Suspected | None,
    t: dict[str, str],
) -> FixAssessment | None:
    if located is None or proposal is None or s is None:
        return None
    lines = sum(1 for x in proposal.diff.splitlines()[3:] if x.startswith(("-", "+")))
    commit_files = len(located.commit.get("files") or [])
    function = function_of(located, stack, s) or ""
    name = stacktrace_last(function)
    callers = _callers(ev, name) if name else None
    reasons = [t["lines"].format(n=lines, files=1)]
    reasons.append(
        t["removes" if proposal.strategy == "revert-added" else "restores"].format(
            commit=located.sha[:7]
        )
    )
    if commit_files > 1:
        reasons.append(t["multi"].format(commit=located.sha[:7], n=commit_files))
    on_stack = [i for i, (fr, p) in enumerate(stack) if p == s.path and fr.function == function]
    if callers is not None:
        reasons.append(t["callers"].format(n=callers, name=name))
    elif on_stack and name and len(stack) - 1 > on_stack[0]:
        callers = len(stack) - 1 - on_stack[0]
        reasons.append(t["stack_callers"].format(n=callers, name=name))
    elif name:
        reasons.append(t["no_callers"].format(name=name))
    score = 0
    score += 0 if lines <= 4 else 1 if lines <= 20 else 2
    score += 1 if proposal.strategy == "revert-added" else 0
    score += 1 if commit_files >= 4 else 0
    score += 1 if (callers or 0) > 5 else 0
    score += 1 if (callers or 0) > 20 else 0
    risk = "low" if score == 0 else "medium" if score <= 2 else "high"
    complexity = "low" if lines <= 4 else "medium" if lines <= 20 else "high"
    return FixAssessment(
        risk=risk,
        complexity=complexity,
        lines_changed=lines,
        files_touched=1,
        callers=callers,
        reasons=reasons,
    )


def stacktrace_last(function: str) -> str:
    """`Class.method`, `(*T).Method`, `Ns\\Class::method` → the bare method name."""
    parts = re.split(r"[.:\\#]+|\)\.?", function or "")
    names = [p for p in parts if p and re.fullmatch(r"[A-Za-z_$][\w$]*[?!]?", p)]
    return names[-1].rstrip("?!") if names else ""


def _callers(ev: Items, name: str) -> int | None:
    """Call sites of `name` in the greps and symbol searches read; None if none looked."""
    call = re.compile(rf"(?<![\w$]){re.escape(name)}\s*\(")
    looked, found = False, set()
    for r in ev.matches:
        data = r.data
        if name not in str(data.get("pattern") or data.get("name") or ""):
            continue
        looked = True
        for m in data["matches"]:
            if m.get("kind") or not call.search(str(m.get("text") or "")):
                continue
            text = str(m.get("text") or "")
            if re.search(rf"\b(def|func|function|fun|fn)\s+{re.escape(name)}\b", text):
                continue
            found.add((m.get("path"), m.get("line")))
    return len(found) if looked else None


def factors_of(
    ev: Items,
    event: Mapping[str, Any] | None,
    excs: list[stacktrace.ExceptionInfo],
    stack: list[tuple[stacktrace.Frame, str]],
    s: Suspected | None,
    located: Located | None,
    t: dict[str, str],
) -> list[ConfidenceFactor]:
    """What the evidence says for and against the suspect, each with its items."""
    out: list[ConfidenceFactor] = []
    details = [ev.details[-1].id] if ev.details else []

    def add(effect: str, factor: str, weight: float, cited: list[str], **kw: Any) -> None:
        out.append(
            ConfidenceFactor(
                effect=effect,  # type: ignore[arg-type]
                factor=factor,
                text=t[factor].format(**kw),
                weight=weight,
                evidence=[c for c in cited if c],
            )
        )

    if event is not None:
        release = release_version(event)
        sha = re.search(r"([0-9a-f]{7,40})$", release or "")
        if sha:
            add("raises", "release-known", 1.0, details, release=sha.group(1)[:7])
        else:
            add("lowers", "release-unknown", -1.0, details)
    if located is None and s is not None:
        add("lowers", "no-hunk", -2.0, [])
    if located is not None:
        first = (
            parse_time(ev.details[-1].data.get("issue", {}).get("firstSeen"))
            if ev.details
            else None
        )
        when = parse_time(located.commit.get("date"))
        if first and when:
            hours = (first - when).total_seconds() / 3600
            cited = [located.evidence, *details]
            if hours >= 0:
                add("raises", "change-before-errors", 1.0, cited, commit=located.sha[:7],
                    hours=f"{hours:.1f}")  # fmt: skip
            else:
                add("lowers", "change-after-errors", -2.0, cited, commit=located.sha[:7])
        exc_text = " ".join(f"{e.type or ''} {e.value or ''}" for e in excs)
        removed, added = located.changed()
        gone = [e[3] for e in removed]
        if (
            NULLISH.search(exc_text)
            and any(GUARD.search(x) for x in gone)
            and not any(GUARD.search(x) for x in (e[3] for e in added))
        ):
            add("raises", "guard-removed", 1.5, [located.evidence, *details])
        names = {
            n for n in stacktrace.identifiers(" ".join(e.value or "" for e in excs)) if len(n) > 2
        }
        changed = " ".join(e[3] for e in located.sequence if e[0] != " ")
        hit = sorted(n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", changed))
        if hit:
            add(
                "raises", "names-match", 1.0, [located.evidence, *details], names=", ".join(hit[:4])
            )
    if s is not None and stack:
        crash_frame, crash_path = stack[0]
        by_blame = blamed(ev, crash_path, crash_frame.lineno or 0)
        blame_id = next((r.id for r in reversed(ev.blames) if r.data.get("path") == crash_path), "")
        if by_blame and same_commit(by_blame, s.commit):
            add("raises", "blame-agrees", 1.0, [blame_id])
        elif by_blame and s.commit:
            add("lowers", "blame-differs", -0.5, [blame_id], commit=by_blame[:7])
        if s.path not in {p for _, p in stack}:
            add("lowers", "off-stack", -0.5, details)
    passages = [(r, r.data["passages"]) for r in ev.docs if r.data["passages"]]
    if passages:
        r, found = passages[-1]
        add("raises", "docs", 0.5, [r.id], path=found[0].get("path"))
    elif ev.details:
        add("lowers", "no-docs", -0.5, [])
    n_events = len(events_of(ev)[1])
    if n_events == 1:
        add("lowers", "one-event", -0.5, details)
    elif n_events > 1:
        add("raises", "events", 0.5, events_of(ev)[2], n=n_events)
    return out
