"""The offline investigator: a Model adapter with no LLM behind it.

It reads the transcript (the results of the tools it asked for) and decides the
next call, following the evidence chain: the issue the question is about → its
newest event → the crashing in-app frame → the code at the release → blame of
the crash line and the recent changes → the change that explains the exception
→ the docs about the identifiers involved → a cited diagnosis.

It is a pure function of the transcript, so a resumed run picks up where the
last one stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent import finding, stacktrace, trigger
from agent.domain import Message, Scope, ToolCall
from agent.models import changes, docsearch, failing, relevance
from agent.models.words import Words, words_for
from agent.ports import ModelResponse, ToolSpec

SENTRY_SEARCH = "sentry__search_issues"
SENTRY_DETAILS = "sentry__get_issue_details"
LIST_FILES = "code__list_directory"
FIND_FILES = "code__find_files"
SHOW = "git__git_show"
BLAME = "code__git_blame"
CHANGES = "code__git_changes"
DOCS = "search_knowledge"
ASK = "ask_clarification"
FINISH = "finish_investigation"

Action = tuple[str, dict[str, Any]]
MAX_DEEP_PATHS = 8


@dataclass
class Result:
    name: str
    arguments: dict[str, Any]
    content: str
    data: Any
    evidence_id: str | None
    is_error: bool


@dataclass
class Trail:
    """The transcript, indexed by tool name."""

    question: str
    results: dict[str, list[Result]] = field(default_factory=dict)
    answers: list[str] = field(default_factory=list)
    asked: int = 0
    call_count: int = 0

    @classmethod
    def read(cls, messages: list[Message]) -> Trail:
        opening = next((m.content for m in messages if m.role == "user"), "")
        # The opening message states the question first; the scope after it is not the ask.
        question = opening.removeprefix("Question: ").split("\n\n", 1)[0]
        trail = cls(question=question)
        calls: dict[str, ToolCall] = {}
        for m in messages:
            for call in m.tool_calls:
                calls[call.id] = call
                trail.call_count += 1
                if call.name == ASK:
                    trail.asked += 1
            if m.role == "tool" and m.tool_call_id in calls:
                call = calls[m.tool_call_id]
                if call.name == ASK:
                    trail.answers.append(m.content)
                    continue
                trail.results.setdefault(call.name, []).append(
                    Result(
                        call.name,
                        call.arguments,
                        strip_header(m.content),
                        m.data,
                        m.evidence_id,
                        m.content.startswith("ERROR:"),
                    )
                )
        return trail

    def due(self, name: str) -> bool:
        """Not asked yet, or failed fewer than twice (a source may come back)."""
        results = self.results.get(name, [])
        return not results or (results[-1].is_error and len(results) < 2)

    def last(self, name: str) -> Result | None:
        found = self.results.get(name)
        return found[-1] if found else None

    def shown(self, path: str) -> Result | None:
        """The git_show result of `path` at some revision, if it was read."""
        for r in self.results.get(SHOW, []):
            if not r.is_error and str(r.arguments.get("revision", "")).endswith(f":{path}"):
                return r
        return None

    def ok(self, name: str) -> Result | None:
        r = self.last(name)
        return r if r is not None and not r.is_error else None


def squash(text: str) -> str:
    return " ".join(text.split())


def strip_header(content: str) -> str:
    """Tool messages open with "[E3] title"; the tool's own text follows."""
    if content.startswith("[E"):
        return content.split("\n", 1)[1] if "\n" in content else ""
    return content


class OfflineInvestigator:
    """Investigates from the evidence itself; needs no model and no network."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.words: Words = words_for(scope.language)
        self._analysis: tuple[int, Analysis | None] | None = None

    async def request(
        self, messages: list[Message], tools: list[ToolSpec], *, require_tool: bool = False
    ) -> ModelResponse:
        offered = {t.name for t in tools}
        trail = Trail.read(messages)
        action = self.decide(trail, offered)
        if isinstance(action, str):
            return ModelResponse(message=Message(role="assistant", content=action))
        actions = action if isinstance(action, list) else [action]
        actions = [(n, a) for n, a in actions if n in offered]
        if not actions:
            actions = [(FINISH, self.conclude(trail))]
        calls = [
            ToolCall(id=f"call_{trail.call_count + i}", name=name, arguments=arguments)
            for i, (name, arguments) in enumerate(actions, 1)
        ]
        return ModelResponse(message=Message(role="assistant", tool_calls=calls))

    # -- the chain -----------------------------------------------------------

    def decide(self, trail: Trail, offered: set[str]) -> Action | list[Action] | str:
        s = self.scope
        refusals = len([r for r in trail.results.get(FINISH, []) if r.is_error])
        if refusals >= 2:
            return self.words.cannot_finish
        if refusals:
            return FINISH, self.conclude(trail, safe=True)
        if FINISH in offered and offered == {FINISH}:
            return FINISH, self.conclude(trail)
        search = trail.last(SENTRY_SEARCH)
        if search is None or trail.due(SENTRY_SEARCH):
            return SENTRY_SEARCH, {
                "organizationSlug": s.sentry_organization,
                "projectSlugOrId": s.sentry_project,
                "query": "is:unresolved",
                "sort": "date",
                "limit": 50,
            }
        if search.is_error:
            return f"{self.words.tracker_unreadable}: {search.content[:300]}"
        issues = (search.data or {}).get("issues") or []
        if not issues:
            return FINISH, self.conclude(trail)
        choice = self.choose_issue(trail, issues)
        if isinstance(choice, str):
            if ASK in offered and trail.asked == 0:
                return ASK, {"question": choice}
            choice = relevance.rank(trail.question, issues, s.since, s.asked_at)[0][2]
        details = trail.last(SENTRY_DETAILS)
        if details is None or trail.due(SENTRY_DETAILS):
            return SENTRY_DETAILS, {
                "organizationSlug": s.sentry_organization,
                "issueId": str(choice.get("shortId") or choice.get("id")),
            }
        event = (details.data or {}).get("event") if not details.is_error else None
        instead = self.behind(trail, choice, issues)
        if instead is not None:
            # The issue chosen is a message with no stack: the error behind the symptom.
            asked = str(instead.get("shortId") or instead.get("id"))
            if details.arguments.get("issueId") != asked:
                return SENTRY_DETAILS, {"organizationSlug": s.sentry_organization, "issueId": asked}
        if not event:
            return FINISH, self.conclude(trail)
        sha = self.revision(trail, event)
        if sha is None:
            if ASK in offered and trail.asked == 0:
                return ASK, {"question": self.words.which_revision}
            sha = "HEAD"  # nobody to ask: read the newest code, and say so
        # The finder used before, even once the catalog narrows and no longer offers it.
        used = trail.last(FIND_FILES) is not None
        finder = FIND_FILES if FIND_FILES in offered or used else LIST_FILES
        listing = trail.last(finder)
        if listing is None or trail.due(finder):
            if finder == LIST_FILES:
                return LIST_FILES, {"revision": sha, "path": "", "recursive": True}
            names = stacktrace.file_names(stacktrace.exceptions(event))
            if names:
                return FIND_FILES, {"revision": sha, "names": names}
        files = ((listing.data or {}).get("entries") or []) if listing is not None else []
        crash = stacktrace.crash_frame(stacktrace.exceptions(event), files)
        if crash is None:
            return FINISH, self.conclude(trail)
        _, frame, path = crash
        line = frame.lineno or 1
        # Independent reads go out together, as parallel tool calls.
        reads: list[Action] = []
        if trail.shown(path) is None:
            reads.append((SHOW, {"revision": f"{sha}:{path}"}))
        if trail.last(BLAME) is None:
            span = {"start_line": max(1, line - 2), "end_line": line + 2}
            reads.append((BLAME, {"revision": sha, "path": path, **span}))
        if trail.last(CHANGES) is None:
            base = window_base(details.data)
            window = {"base": base, "head": sha} if base and sha != "HEAD" else {"head": sha}
            reads.append((CHANGES, {**window, "max_commits": 15}))
        reads = [r for r in reads if r[0] in offered]
        if reads:
            return reads
        analysis = self.analyse(trail)
        deeper = deeper_history(trail, analysis)
        if deeper is not None and CHANGES in offered:
            return CHANGES, deeper
        if analysis is not None and analysis.needs_file and SHOW in offered:
            # The fault is in an older commit of another file: read that file at the
            # release to find the line there.
            return SHOW, {"revision": f"{sha}:{analysis.change.path}"}  # type: ignore[union-attr]
        query = next_doc_query(trail, analysis) if analysis is not None else None
        if DOCS in offered and query:
            return DOCS, {"query": query}
        if (
            analysis is not None
            and ASK in offered
            and trail.asked == 0
            and trail.ok(CHANGES) is not None
            and analysis.confidence()[0] == "low"
        ):
            # Nothing singles out a change: ask the operator rather than guess.
            return ASK, {"question": self.words.ask_candidates(analysis)}
        return FINISH, self.conclude(trail)

    def choose_issue(self, trail: Trail, issues: list[dict[str, Any]]) -> dict[str, Any] | str:
        """The issue to follow, or a question for the operator when nothing tells them apart."""
        for answer in trail.answers:
            for issue in issues:
                ids = {str(issue.get("shortId", "")).lower(), str(issue.get("id", ""))}
                if any(tok.lower().strip(".,;:") in ids for tok in answer.split()):
                    return issue
        text = " ".join([trail.question, *trail.answers])
        ranked = relevance.rank(text, issues, self.scope.since, self.scope.asked_at)
        if len(ranked) == 1 or trail.answers:
            return ranked[0][2]
        (lex1, tot1, best), (_, tot2, _) = ranked[0], ranked[1]
        if lex1 == 0 and tot1 == tot2:
            options = "; ".join(
                f"{i.get('shortId')}: {str(i.get('title'))[:80]}" for _, _, i in ranked[:4]
            )
            return f"{self.words.which_issue} {options}"
        return self.breaking(best, [i for _, _, i in ranked[1:]])

    def behind(
        self, trail: Trail, choice: dict[str, Any], issues: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """When the issue followed is a message that carries no exception (a warning the
        question's words match), the error active in the window to follow instead: a fault
        of the code (not a timeout or a lost connection, which come and go) before others,
        in the order of relevance. None when the issue has a stack, or no error is active."""
        first = next(
            (r for r in trail.results.get(SENTRY_DETAILS, []) if not r.is_error and r.data),
            None,
        )
        event = (first.data or {}).get("event") if first is not None else None
        if not isinstance(event, dict) or stacktrace.exceptions(event):
            return None
        if choice.get("level") in ("error", "fatal"):
            return None
        since = self.scope.since
        text = " ".join([trail.question, *trail.answers])
        ranked = [i for _, _, i in relevance.rank(text, issues, since, self.scope.asked_at)]
        active = [
            i
            for i in ranked
            if i is not choice
            and relevance.EXCEPTION_TITLE.match(str(i.get("title") or ""))
            and (since is None or (relevance.parse_time(i.get("lastSeen")) or since) >= since)
        ]
        active.sort(key=lambda i: bool(TRANSIENT.search(str(i.get("title") or ""))))
        return active[0] if active else None

    def breaking(self, best: dict[str, Any], others: list[dict[str, Any]]) -> dict[str, Any]:
        """A message that reports the symptom ("payouts stuck: 3") has no stack to follow:
        the error that first appeared in the same window is where it breaks, if there is one."""
        title = str(best.get("title") or "")
        if relevance.EXCEPTION_TITLE.match(title) or best.get("level") in ("error", "fatal"):
            return best
        since = self.scope.since
        for issue in others:
            first = relevance.parse_time(issue.get("firstSeen"))
            is_error = relevance.EXCEPTION_TITLE.match(str(issue.get("title") or ""))
            if is_error and first is not None and since is not None and first >= since:
                return issue
        return best

    def revision(self, trail: Trail, event: dict[str, Any]) -> str | None:
        sha = stacktrace.release_sha(event, self.scope.release_prefix)
        if sha:
            return sha
        for answer in trail.answers:
            m = re.search(r"\b[0-9a-f]{7,40}\b", answer)
            if m:
                return m.group(0)
        stand_in = self.stand_in(trail)
        if stand_in is not None:
            return stand_in
        listing = trail.ok(FIND_FILES) or trail.ok(LIST_FILES)
        if listing is not None and listing.arguments.get("revision") == "HEAD":
            return "HEAD"  # the release was unknown and nobody could be asked
        return None

    def stand_in(self, trail: Trail) -> str | None:
        """The revision read instead of a release that names nothing in the repository: the
        default branch its release data names, or HEAD. None when the release resolved, or
        when no release data is known (then the operator may be asked)."""
        details = trail.ok(SENTRY_DETAILS)
        release = (details.data or {}).get("release") if details is not None else None
        if isinstance(release, dict) and release.get("commit") is None:
            return str(release.get("default_branch") or "HEAD")
        return None

    def unresolved(self, trail: Trail) -> str | None:
        """The version of a release that resolved to nothing, as Sentry named it."""
        if self.stand_in(trail) is None:
            return None
        details = trail.ok(SENTRY_DETAILS)
        assert details is not None
        return str(details.data["release"].get("version") or "")

    # -- analysis ------------------------------------------------------------

    def analyse(self, trail: Trail) -> Analysis | None:
        """The analysis of a transcript; computed once per transcript length."""
        key = sum(len(rs) for rs in trail.results.values())
        if self._analysis is None or self._analysis[0] != key:
            self._analysis = (key, self._analyse(trail))
        return self._analysis[1]

    def _analyse(self, trail: Trail) -> Analysis | None:
        details = trail.ok(SENTRY_DETAILS)
        listing = trail.ok(FIND_FILES) or trail.ok(LIST_FILES)
        if details is None or listing is None:
            return None
        event = details.data["event"]
        issue = details.data.get("issue") or {}
        files = listing.data.get("entries") or []
        excs = stacktrace.exceptions(event)
        found = stacktrace.crash_frame(excs, files)
        if found is None:
            return None
        exc, frame, path = found
        a = Analysis(issue=issue, event=event, exc=exc, frame=frame, path=path)
        a.revision = self.revision(trail, event) or ""
        a.stand_in = a.revision == self.stand_in(trail)
        line = frame.lineno or 1
        shown = trail.shown(path)
        lines = shown.content.splitlines() if shown is not None else []
        if 0 < line <= len(lines):
            a.crash_code = lines[line - 1].strip()
            nearby = lines[max(0, line - 4) : line]
        else:
            a.crash_code = (frame.context_line or "").strip()
            nearby = [a.crash_code]
        blame = trail.ok(BLAME)
        for row in (blame.data or {}).get("lines", []) if blame is not None else []:
            if row.get("line") == frame.lineno:
                a.blame = row
        # Frames of every exception of a chain: the cause and the one finally raised.
        stack: dict[tuple[str, int | None], tuple[stacktrace.Frame, str]] = {}
        for e in excs:
            for fr, p in stacktrace.stack_paths(e, files):
                stack.setdefault((p, fr.lineno), (fr, p))
        a.crash = changes.Crash(
            path=path,
            line=line,
            function=frame.function or "",
            exc_type=str(exc.type or ""),
            exc_value=str(exc.value or ""),
            code=a.crash_code,
            nearby=nearby,
            stack=list(stack.values()),
            first_seen=relevance.parse_time(issue.get("firstSeen")),
            blamed=(a.blame or {}).get("commit"),
            source=lines,
            callee=stacktrace.callee(exc, frame),
        )
        history = trail.ok(CHANGES)
        if history is not None:
            commits = window_commits(trail)
            a.released = released_before(details.data)
            ranked = changes.rank(
                a.crash, commits, released=a.released, errors_in=errors_in(details.data)
            )
            a.ranking = confirmed(ranked, trail.answers)
            a.change = a.ranking[0] if a.ranking else None
            a.root = next((c["sha"] for c in commits if c.get("parents") == []), None)
            # In a cut history a candidate with nothing of the failure's kind, no part in
            # making its value and no word from blame (a line of a frame two calls up or
            # more, edited since) explains less than a line that makes the value in a way that
            # raises this exception.
            c = a.change
            weak = c is not None and not (c.fits or c.producer or c.blamed or c.on_crash_line)
            # A lead in the crashing frame or the one that called it is kept: it is close to
            # the crash in calls, where a change is most likely to matter.
            depths = [i for i, (_, p) in enumerate(a.crash.stack) if c is not None and p == c.path]
            weak = weak and min(depths, default=2) >= 2
            if (c is None or weak) and a.history_cut:
                a.origin = changes.origin(a.crash, commits)
                if a.origin is not None and c is not None and not a.origin.fits:
                    a.origin = None  # it explains no more than the lead does
                if a.origin is not None:
                    a.change = None
        if a.change is not None:
            crash_text = changes.squash(changes.code_of(a.crash.code)) if a.crash else ""
            # The crash line itself, unless the suspect is another line of its hunk (the
            # bound test above an index).
            if a.change.on_crash_line and changes.squash(a.change.text) == crash_text:
                a.change_line = line
            else:
                content = trail.shown(a.change.path)
                a.change_line = changes.release_line(
                    a.change, content.content if content is not None else None
                )
                a.needs_file = a.change_line is None and content is None
        a.doc_query = doc_query(a)
        return a

    def conclude(self, trail: Trail, safe: bool = False) -> dict[str, Any]:
        """The finish_investigation arguments; `safe` drops every quote after a refusal."""
        args = self._conclude(trail)
        for fact in args.get("facts", []):
            quote = fact.get("quote")
            source = next(
                (
                    r
                    for rs in trail.results.values()
                    for r in rs
                    if r.evidence_id and r.evidence_id in fact["evidence"]
                ),
                None,
            )
            if quote and (safe or source is None or squash(quote) not in squash(source.content)):
                del fact["quote"]
        return args

    def _conclude(self, trail: Trail) -> dict[str, Any]:
        w = self.words
        facts: list[dict[str, Any]] = []
        hyps: list[str] = []
        unsure: list[str] = []
        search = trail.ok(SENTRY_SEARCH)
        a = self.analyse(trail)
        details = trail.ok(SENTRY_DETAILS)
        if search is not None and details is None:
            issues = (search.data or {}).get("issues") or []
            facts.append(
                {"text": w.issues_in_window(len(issues)), "evidence": [search.evidence_id]}
            )
            return {
                "root_cause": w.no_issue,
                "facts": facts,
                "uncertainties": [w.no_issue_detail],
                "recommended_check": w.check_tracker,
                "confidence": "low",
            }
        if details is None:
            return {"root_cause": w.nothing, "facts": [], "confidence": "low"}
        issue = details.data.get("issue") or {}
        event = details.data.get("event") or {}
        if search is not None:
            facts.append(
                {
                    "text": w.issue_fact(issue),
                    "evidence": [search.evidence_id, details.evidence_id],
                }
            )
        if a is None:
            facts.append(
                {"text": w.event_fact(event, None, None), "evidence": [details.evidence_id]}
            )
            return {
                "root_cause": w.no_frame(event),
                "facts": facts,
                "uncertainties": [w.no_frame_detail],
                "recommended_check": w.check_stack,
                "confidence": "low",
            }
        facts.append(
            {
                "text": w.event_fact(event, a.exc, a),
                "evidence": [details.evidence_id],
            }
        )
        shown = trail.shown(a.path)
        if shown is not None and a.crash_code:
            facts.append(
                {
                    "text": w.code_fact(a),
                    "evidence": [shown.evidence_id],
                    "quote": a.crash_code,
                }
            )
        blame = trail.ok(BLAME)
        if blame is not None and a.blame:
            facts.append({"text": w.blame_fact(a), "evidence": [blame.evidence_id]})
        changes = read_with(trail, a.change.sha) if a.change is not None else None
        if changes is not None and a.change is not None:
            fact = {"text": w.change_fact(a), "evidence": [changes.evidence_id]}
            quote = a.change_quote()
            if quote:
                fact["quote"] = quote
            facts.append(fact)
        found = doc_found(trail, a)
        doc_path = None
        if found is not None:
            docs, top = found
            doc_path = top["path"]
            quote = best_line(top["text"], a.doc_terms, a.nullish)
            fact = {"text": w.doc_fact(top, quote), "evidence": [docs.evidence_id]}
            if quote:
                fact["quote"] = quote
            facts.append(fact)
        suspect_path, line, commit = a.suspect()
        confidence, raised, lowered = a.confidence()
        hyps.append(w.hypothesis(a))
        if a.change is not None and a.change.path != a.path:
            hyps.append(w.elsewhere(a))
        hyps += [w.candidate(a, c) for c in a.ranking[1:3]]
        if a.change is None:
            unsure.append(w.history_cut(a) if a.history_cut else w.no_change_found)
            if a.origin is not None:
                hyps.append(w.origin(a))
        elif confidence == "low":
            unsure.append(w.weak_lead(a))
        history = trail.ok(CHANGES)
        base = history.arguments.get("base") if history is not None else None
        if base:
            unsure.append(w.window(str(base), a.revision))
        else:
            unsure.append(w.released_before(a.released) if a.released else w.no_previous_release)
        if a.stand_in:
            unsure.append(w.release_unresolved(self.unresolved(trail) or "", a.revision))
        elif a.revision == "HEAD":
            unsure.append(w.release_unknown)
        if a.change is not None and a.change_line is None:
            unsure.append(w.line_not_mapped)
        if doc_path is None:
            unsure.append(w.no_docs)
        unsure.append(w.one_event)
        unsure.append(w.factors(raised, lowered))
        suspect = {
            "path": suspect_path,
            "line_start": line,
            "line_end": line,
            "revision": a.revision,
        }
        if commit:
            suspect["commit"] = commit
        records = finding.from_results(r for rs in trail.results.values() for r in rs)
        return {
            **finding.arguments(records, suspect, self.scope.language),
            "root_cause": w.root_cause(a, confidence),
            "facts": [f for f in facts if all(f["evidence"])],
            "hypotheses": hyps,
            "uncertainties": unsure,
            "recommended_check": w.check(a, doc_path),
            "suspect": suspect,
            "confidence": confidence,
            "issue_title": w.title(a),
        }


@dataclass
class Analysis:
    issue: dict[str, Any]
    event: dict[str, Any]
    exc: stacktrace.ExceptionInfo
    frame: stacktrace.Frame
    path: str
    revision: str = ""
    stand_in: bool = False  # the revision is the default branch, read for an unknown release
    crash_code: str = ""
    crash: changes.Crash | None = None
    released: str | None = None  # the release Sentry lists before, which ran without the errors
    blame: dict[str, Any] | None = None
    change: changes.Change | None = None
    change_line: int | None = None  # the suspect line at the running revision
    needs_file: bool = False
    doc_query: str = ""
    doc_terms: list[str] = field(default_factory=list)
    doc_names: docsearch.Names = field(default_factory=docsearch.Names)
    ranking: list[changes.Change] = field(default_factory=list)
    root: str | None = None  # the root commit of the history read, when it was reached
    origin: changes.Change | None = None  # where the value is made, in a cut history

    @property
    def nullish(self) -> bool:
        return self.crash is not None and self.crash.nullish

    @property
    def change_score(self) -> float:
        return self.change.score if self.change is not None else 0.0

    def suspect(self) -> tuple[str, int, str | None]:
        if self.change is not None:
            return self.change.path, self.change_line or self.change.line, self.change.sha
        commit = self.blame.get("commit") if self.blame and not self.history_cut else None
        if self.origin is not None:  # no commit: the one that wrote the line cannot be seen
            return self.origin.path, self.origin.line, None
        return self.path, self.frame.lineno or 1, commit

    @property
    def history_cut(self) -> bool:
        """Blame of the crash line ends at the oldest commit available (a root, or the cut of
        a shallow or truncated history): what changed the line before it cannot be seen."""
        if not self.blame:
            return False
        return bool(self.blame.get("boundary")) or self.blame.get("commit") == self.root

    @property
    def runner_up(self) -> changes.Change | None:
        return self.ranking[1] if len(self.ranking) > 1 else None

    def confidence(self) -> tuple[str, list[str], list[str]]:
        """The level, with what raised it and what lowered it.

        high: one candidate clearly wins (well ahead of the next, on several features) and
        the chain is complete — the release is known, the change is inside the window before
        the first error, it is of a kind that raises this exception, and its line is known
        at the release. low: nothing explains the exception, or the best candidate barely
        explains it. medium otherwise."""
        up: list[str] = []
        down: list[str] = []
        c = self.change
        if c is None:
            down.append("no change in the window explains the exception")
            if self.history_cut:
                down.append("the history before the crash line's commit is not available")
            return "low", up, down
        second = self.runner_up.score if self.runner_up is not None else 0.0
        margin = c.score - second
        if margin >= 4:
            up.append(f"the suspect leads the next candidate by {margin:.1f} points")
        elif self.runner_up is not None:
            down.append(f"the next candidate is close ({second:.1f} against {c.score:.1f})")
        if c.fits:
            up.append("the change is of the kind that raises this exception")
        else:
            down.append("the change is not of a kind known to raise this exception")
        if c.blamed:
            up.append("blame of the crash line names the same commit")
        if c.on_crash_line:
            up.append("the change wrote the crash line itself")
        if c.producer:
            up.append("the change builds the value the failing code uses")
        known = self.revision != "HEAD" and not self.stand_in
        if not known:
            down.append("the release that ran is not known")
        if self.change_line is None:
            down.append("the suspect line could not be mapped to the release")
        complete = known and self.change_line is not None
        agree = c.blamed or c.on_crash_line or c.producer
        # A crash line rewritten around calls it already made is often a tidy-up beside the
        # fault; a runner-up elsewhere that fits the exception keeps that open.
        rival = next(
            (r for r in self.ranking[1:3] if r.fits and r.path != c.path and r.sha != c.sha), None
        )
        on_stack = {p for _, p in self.crash.stack} if self.crash is not None else set()
        # Another commit that fits the exception as well, not far behind: two explanations.
        contender = next(
            (
                r
                for r in self.ranking[1:3]
                if r.fits and r.sha != c.sha and r.score >= 0.6 * c.score
            ),
            None,
        )
        # Any other commit that close behind, fitting or not: the lead is not clear.
        close = self.runner_up is not None and self.runner_up.score >= 0.6 * c.score
        if close and margin >= 4 and contender is None:
            down.append(
                f"{self.runner_up.path} (commit {self.runner_up.sha[:7]}) is not far behind, "
                f"{second:.1f} against {c.score:.1f}"
            )
        if contender is not None:
            down.append(
                f"{contender.path} (commit {contender.sha[:7]}) explains it too, "
                f"{contender.score:.1f} against {c.score:.1f}"
            )
        # A rewrite of many lines holds the fault somewhere: which line is less sure.
        size = len(c.hunk.get("added") or []) + len(c.hunk.get("removed") or [])
        if size > LARGE_HUNK:
            down.append(f"the change rewrites {size} lines, and the suspect is one of them")
        beside = changes.defined_beside(c)
        if beside:
            down.append(f"the suspect line reads {beside}, which the same change defines")
        # A name the exception names, renamed on several lines of the change: which of them
        # is the fault is a choice among them.
        spread = renamed_lines(c, self.exc.value or "")
        if spread >= 3:
            down.append(f"the name the exception names changed on {spread} lines of the change")
        if c.rewrote and rival is not None:
            down.append(f"the crash line was only rewritten, and {rival.path} also fits")
        elif c.path not in on_stack and c.also:
            # Which file of the commit broke it is open when another one fits as well.
            down.append(f"the same commit also changed {c.also[0]} in a way that fits")
        elif (
            complete
            and c.fits
            and agree
            and margin >= 4
            and c.score >= 10
            and not contender
            and not close
            and size <= LARGE_HUNK
            and not beside
            and spread < 3
        ):
            return "high", up, down
        if c.score >= 6 and margin >= 1.5 and (c.fits or agree):
            return "medium", up, down
        return "low", up, down

    def change_quote(self) -> str | None:
        return self.change.text if self.change is not None and self.change.text else None

    def exception_terms(self) -> list[str]:
        return [t for t in stacktrace.identifiers(f"{self.exc.value}") if changes.useful(t)]

    def crash_terms(self) -> list[str]:
        return [t for t in stacktrace.identifiers(self.crash_code) if changes.useful(t)]


# Lines changed (added and removed) beyond which a hunk's suspect line is a guess among many.
LARGE_HUNK = 20


# Errors of the infrastructure that come and go: a timeout, a refused or lost connection.
TRANSIENT = re.compile(
    r"(?i)time_?out|timed out|connection|connect\b|unavailable|refused|reset by peer|"
    r"temporar|too many requests|\b50[234]\b"
)


def renamed_lines(change: changes.Change, message: str) -> int:
    """How many removed lines of the change name what the exception names as a whole word
    (`'minutes'`: a field, its entry in a list, its getter)."""
    named = [n for n in failing.named(message) if len(n) >= 3]
    if not named:
        return 0
    words = [re.compile(rf"(?<![A-Za-z0-9$]){re.escape(n)}(?![A-Za-z0-9$])", re.I) for n in named]
    removed = [str(t) for _, t in change.hunk.get("removed") or []]
    return sum(1 for t in removed if any(w.search(t) for w in words))


def window_commits(trail: Trail) -> list[dict[str, Any]]:
    """The commits of every history read, newest first, each once. A commit of the whole
    window lists all its files; the same commit read again for the stack's paths only is
    the same change, with fewer files."""
    read = [r for r in trail.results.get(CHANGES, []) if not r.is_error]
    reads = [(r.data or {}).get("commits") or [] for r in read]
    if len(reads) == 1:
        return reads[0]  # git's own order
    seen: dict[str, dict[str, Any]] = {}
    for commits in reads:
        for c in commits:
            seen.setdefault(str(c.get("sha")), c)
    never = datetime.min.replace(tzinfo=UTC)
    return sorted(
        seen.values(), key=lambda c: relevance.parse_time(c.get("date")) or never, reverse=True
    )


def read_with(trail: Trail, sha: str) -> Result | None:
    """The history read that holds commit `sha` (the first, when both do)."""
    for r in trail.results.get(CHANGES, []):
        if not r.is_error and any(c.get("sha") == sha for c in (r.data or {}).get("commits") or []):
            return r
    return None


def deeper_history(trail: Trail, a: Analysis | None) -> dict[str, Any] | None:
    """In a busy repository the window's newest commits may all be elsewhere, and the
    change that broke the stack's code older than them: when the window read was cut and
    no candidate clearly explains the exception, read the history of the stack's files
    alone, as deep. Asked once."""
    read = [r for r in trail.results.get(CHANGES, []) if not r.is_error]
    if len(read) != 1 or not (read[0].data or {}).get("truncated"):
        return None
    if a is None or a.crash is None or (a.change is not None and a.confidence()[0] == "high"):
        return None
    paths = list(dict.fromkeys(p for _, p in a.crash.stack))[:MAX_DEEP_PATHS]
    if not paths:
        return None
    first = read[0].arguments
    window = {k: first[k] for k in ("base", "head") if first.get(k)}
    return {**window, "paths": paths, "max_commits": first.get("max_commits") or 15}


def window_base(details: dict[str, Any] | None) -> str | None:
    """The previous release's commit, when it bounds the change window: the tag before the
    running release or the release Sentry lists before it, the errors being seen in no
    earlier release. When the issue's events show an earlier release, that release already
    failed, so the fault is older than it; and a parent commit is no release: both leave the
    window to the commits before the first error."""
    release = (details or {}).get("release") or {}
    base = release.get("window_base")
    return str(base) if base else None


def errors_in(details: dict[str, Any] | None) -> str | None:
    """The commit of the oldest release among the issue's events: it already failed."""
    release = (details or {}).get("release") or {}
    found = release.get("errors_in")
    return str(found) if found else None


def released_before(details: dict[str, Any] | None) -> str | None:
    """The release Sentry lists before the running one, which ran without the issue's
    errors (none of its events were of that release)."""
    release = (details or {}).get("release") or {}
    before = release.get("released_before")
    return str(before) if before else None


def confirmed(ranking: list[changes.Change], answers: list[str]) -> list[changes.Change]:
    """The ranking with the candidate an operator's answer names (by SHA prefix) first."""
    for answer in answers:
        for token in re.findall(r"\b[0-9a-f]{7,40}\b", answer.lower()):
            named = [c for c in ranking if c.sha.startswith(token)]
            if named:
                named[0].reasons.append("the operator named this commit")
                named[0].score = max(named[0].score, ranking[0].score + 1)
                return [named[0], *[c for c in ranking if c is not named[0]]]
    return ranking


def doc_query(a: Analysis) -> str:
    """The first search of the docs: the names on the failing path (agent/models/docsearch)."""
    a.doc_names = docsearch.failing_names(
        exc_value=str(a.exc.value or ""),
        crash=a.crash,
        crash_code=a.crash_code,
        frame=a.frame,
        path=a.path,
        change=a.change,
    )
    a.doc_terms = a.doc_names.specific + a.doc_names.words
    return a.doc_names.query()


def next_doc_query(trail: Trail, a: Analysis) -> str | None:
    """The next search of the docs, or None when what was found will do (or nothing will).

    A second search only when the first one's top passage states none of the failing
    names: with the names another passage states, when one does, else with the next names
    of the failing path."""
    done = [r for r in trail.results.get(DOCS, []) if not r.is_error]
    asked = {str(r.arguments.get("query") or "") for r in trail.results.get(DOCS, [])}
    if not a.doc_query:
        return None
    if not trail.results.get(DOCS):
        return a.doc_query
    if len(trail.results[DOCS]) >= 2 or not done:
        return None
    passages = (done[-1].data or {}).get("passages") or []
    if passages and docsearch.mentioned(docsearch.passage_text(passages[0]), a.doc_names):
        return None  # the ranking's best page states the failing names: it will do
    index = docsearch.best(passages, a.doc_names)
    if index > 0:  # another passage states the names: search by what it states
        stated = docsearch.mentioned(docsearch.passage_text(passages[index]), a.doc_names)
        query = " ".join(stated)
    else:  # nothing stated: the next names of the failing path
        query = a.doc_names.query(skip={t for q in asked for t in q.split()})
    return query if query and query not in asked else None


def doc_found(trail: Trail, a: Analysis) -> tuple[Result, dict[str, Any]] | None:
    """The docs result whose top passage (the one its evidence cites) states most of the
    failing names; None when no top passage states any: an unrelated page is not cited."""
    found: tuple[int, Result, dict[str, Any]] | None = None
    for r in trail.results.get(DOCS, []):
        passages = ((r.data or {}).get("passages") or []) if not r.is_error else []
        if not passages:
            continue
        top = passages[0]
        count = len(docsearch.mentioned(docsearch.passage_text(top), a.doc_names))
        if count and (found is None or count > found[0]):
            found = (count, r, top)
    return (found[1], found[2]) if found else None


ABSENCE = {
    "null",
    "none",
    "nil",
    "undefined",
    "missing",
    "optional",
    "omitted",
    "absent",
    "opcional",
    "omitido",
    "ausente",
    "vacía",
    "empty",
    "default",
}


def best_line(text: str, terms: list[str], nullish: bool = False) -> str | None:
    """The line of a passage that says most about the terms (and about absence, if nullish).

    A statement is prose: a line of a code block is quoted only when no prose line says
    anything, and a line holding an e-mail address (sample data of a person) never is."""
    wanted = set().union(*(changes.parts(t) for t in terms), set())
    best, best_score = None, (0, 0)
    for line, code in logical_lines(text):
        s = line.strip()
        if not s or s.startswith("#") or set(s) <= set("|-: `") or trigger.EMAIL.search(s):
            continue
        found = changes.words_of(s)
        score = len(found & wanted)
        if nullish:
            score += len(ABSENCE & set(re.findall(r"\w+", s.lower())))
        ranked = (0 if code else 1, score) if score else (0, 0)
        if ranked > best_score:
            best, best_score = s, ranked
    return best


def logical_lines(text: str) -> list[tuple[str, bool]]:
    """Lines with their wrapped continuations joined, list markers dropped, each with
    whether it is a line of a fenced code block (kept alone, never joined)."""
    out: list[tuple[str, bool]] = []
    fenced = False
    for raw in text.splitlines():
        line = raw.strip()
        if re.match(r"^(```|~~~)", line):
            fenced = not fenced
            out.append(("", False))
            continue
        if fenced:
            out.append((line, True))
            continue
        starts = not line or re.match(r"^([-*+]|\d+[.)]|#|\||>)", line)
        last = out[-1] if out else ("", True)
        if line and not starts and last[0] and not last[1] and not last[0].startswith(("#", "|")):
            out[-1] = (f"{last[0]} {line}", False)
        else:
            out.append((re.sub(r"^([-*+]|\d+[.)])\s+", "", line), False))
    return out


def iso_day(value: str | None) -> str:
    when = relevance.parse_time(value)
    return when.strftime("%Y-%m-%d %H:%M UTC") if isinstance(when, datetime) else str(value or "?")
