"""The investigation loop: the model proposes, the application validates, executes and records.

Everything the loop learns is written to the Investigation and saved at once, so a
surface (Slack, the terminal) can follow from the store and a worker that dies can be
replaced by another that resumes from the saved messages.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from agent import extract, finding, prefetch, prompt, repomap, report
from agent.budget import Budget, Limits, Phase
from agent.domain import (
    Diagnosis,
    Draft,
    Evidence,
    Fact,
    Investigation,
    Message,
    State,
    Suspect,
    ToolCall,
    utcnow,
)
from agent.errors import IllegalTransition, SourceUnavailable, ToolFailure
from agent.ports import Model, Retriever, RevisionFiles, ToolResult, Usage, UsageLedger
from agent.tools.catalog import Catalog
from agent.tools.local import LOCAL_TOOLS, search_knowledge

log = logging.getLogger(__name__)

Save = Callable[[Investigation], Awaitable[None]]

NUDGE = (
    "Call finish_investigation now with your diagnosis: facts that cite evidence ids, "
    "hypotheses, uncertainties and the suspect file, line and commit."
)


class Loop:
    def __init__(
        self,
        *,
        model: Model,
        catalog: Catalog,
        retriever: Retriever | None,
        save: Save,
        files: RevisionFiles | None = None,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.monotonic,
        extractor: Model | None = None,
        prefetch: bool = False,
        ledger: UsageLedger | None = None,
        today: Callable[[], str] = lambda: utcnow().date().isoformat(),
        repo_map: repomap.Outline | None = None,
        map_tokens: int = repomap.DEFAULT_TOKENS,
    ) -> None:
        """`extractor` is the pass-2 model (None: no pass 2); `prefetch` runs the
        deterministic evidence chain before the first model request; `ledger` answers the
        tokens spent today by every investigation (the daily budget); `today` is the UTC
        day tokens are booked on."""
        self.model = model
        self.catalog = catalog
        self.retriever = retriever
        self.save = save
        self.files = files
        self.limits = limits or Limits()
        self.clock = clock
        self.extractor = extractor
        self.prefetch = prefetch
        self.ledger = ledger
        self.today = today
        # A map of the repository at the running revision, given before the first request.
        self.repo_map = repo_map
        self.map_tokens = map_tokens

    async def run(self, inv: Investigation) -> Investigation:
        """Run until the investigation completes, stops, or waits for the operator."""
        if inv.state is State.QUEUED:
            inv.start()
        elif inv.state is not State.RUNNING:
            raise IllegalTransition(f"cannot run an investigation in state {inv.state}")
        budget = Budget(self.limits.with_extra(inv.extra_budget), inv.stats)
        started, before = self.clock(), inv.stats.wall_seconds
        if not inv.messages:
            inv.messages.extend(prompt.opening(inv, budget))
            if self.prefetch:
                await self.save(inv)
                await self._prefetch(inv)
            if self.repo_map is not None and inv.state is State.RUNNING:
                await self._map(inv)
        await self.save(inv)

        nudged = False
        while inv.state is State.RUNNING:
            elapsed = before + self.clock() - started
            inv.stats.wall_seconds = round(elapsed, 4)
            pending = unanswered_calls(inv)
            if pending:
                # A worker died between the model's answer and its tool results.
                await self._execute(inv, pending, budget)
                continue
            reason = budget.exhausted(elapsed)
            if reason:
                await self._stop(inv, reason)
                break
            reason = await self._daily_exhausted()
            if reason:
                # No model request at all, not even pass 2: the day's tokens are spent.
                await self._stop(inv, reason, extract=False)
                break
            phase = budget.phase(context_chars(inv.messages))
            tools = await self.catalog.specs(phase)
            try:
                response = await self.model.request(list(inv.messages), tools)
            except Exception as exc:
                log.warning("model request failed: %s", type(exc).__name__)
                await self._stop(inv, f"the model is unavailable ({type(exc).__name__})")
                break
            inv.stats.model_calls += 1
            self._account(inv, response.usage)
            message = response.message.model_copy(update={"role": "assistant"})
            inv.messages.append(message)
            await self.save(inv)
            if message.tool_calls:
                nudged = False
                await self._execute(inv, message.tool_calls, budget, phase)
            elif not nudged:
                nudged = True
                inv.messages.append(Message(role="user", content=NUDGE))
                await self.save(inv)
            else:
                await self._from_prose(inv, message.content)
        inv.stats.wall_seconds = round(before + self.clock() - started, 4)
        await self.save(inv)
        return inv

    async def _execute(
        self,
        inv: Investigation,
        calls: list[ToolCall],
        budget: Budget,
        phase: Phase | None = None,
    ) -> None:
        # Calls are judged by the catalog the model was shown when it made them.
        phase = phase or budget.phase(context_chars(inv.messages))
        offered = {spec.name for spec in await self.catalog.specs(phase)}
        asks: list[ToolCall] = []
        for call in calls:
            if inv.state is not State.RUNNING:
                # finish was accepted (or the run stopped): the rest are answered, not run.
                self._reply(inv, call, "not executed: the investigation has ended", error=True)
                continue
            if call.name == "ask_clarification" and call.name in offered:
                asks.append(call)
                continue
            inv.stats.tool_calls += 1
            await self._one(inv, call, offered, budget, phase)
            await self.save(inv)
        if asks and inv.state is State.RUNNING:
            for extra in asks[1:]:
                self._reply(inv, extra, "only one question at a time", error=True)
            inv.stats.tool_calls += 1
            question = str(asks[0].arguments.get("question") or "").strip()
            if question:
                inv.ask(question[:1000])
            else:
                self._reply(inv, asks[0], "ask_clarification needs a question", error=True)
            await self.save(inv)

    async def _one(
        self, inv: Investigation, call: ToolCall, offered: set[str], budget: Budget, phase: Phase
    ) -> None:
        if "__invalid_json__" in call.arguments:  # set by a model adapter (agent/models/groq.py)
            raw = call.arguments["__invalid_json__"]
            self._reply(
                inv, call, f"arguments are not valid JSON: {raw}; send one JSON object", error=True
            )
            return
        if call.name not in offered:
            why = "unknown tool" if call.name not in await self._known() else "not available now"
            self._reply(inv, call, f"{why}: {call.name!r} ({phase} phase)", error=True)
            return
        refused = await self.catalog.refusal(call.name, call.arguments)
        if refused:  # a scope argument changed, or one the tool does not declare
            self._reply(inv, call, refused, error=True)
            return
        if is_repeated(inv, call):
            self._reply(inv, call, "refused: an identical call was already made", error=True)
            return
        stored = prefetch.prefetched(inv, call)
        ev_stored = inv.evidence_by_id(stored) if stored else None
        if ev_stored is not None:
            # Pre-fetched already: the stored item's full text, without running it again.
            self._tool_message(inv, call, ev_stored)
            return
        if call.name == "finish_investigation":
            try:
                diagnosis, title, body = await self._validate_finish(inv, call.arguments)
            except ToolFailure as exc:
                self._reply(inv, call, f"finish_investigation refused: {exc}", error=True)
                return
            self._reply(inv, call, "diagnosis accepted")
            self._complete(inv, diagnosis, title, body)
            return
        if inv.stats.tool_calls > budget.limits.tool_calls:
            self._reply(inv, call, "the tool-call budget is spent: finish now", error=True)
            return
        try:
            result = await self._call(inv, call)
        except SourceUnavailable as exc:
            self._reply(inv, call, f"source unavailable: {exc}", error=True)
            await self._stop(inv, f"a source is unavailable: {exc}")
            return
        if result.is_error:
            self._reply(inv, call, result.text[: self.limits.result_chars], error=True)
            return
        self._tool_message(inv, call, self._record(inv, call, result))

    def _record(self, inv: Investigation, call: ToolCall, result: ToolResult) -> Evidence:
        """Store a successful result as evidence E<n>."""
        text = result.text
        if len(text) > self.limits.result_chars:
            text = text[: self.limits.result_chars] + "\n[truncated]"
        if inv.subject is None and result.source == "sentry" and isinstance(result.data, dict):
            issue = result.data.get("issue")
            if isinstance(issue, dict) and issue.get("id"):
                inv.subject = f"sentry:{issue['id']}"
        return inv.add_evidence(
            source=result.source,
            tool=call.name,
            title=result.title,
            content=text,
            link=result.link,
            path=result.path,
            revision=result.revision,
            data=result.data,
        )

    def _tool_message(self, inv: Investigation, call: ToolCall, ev: Evidence) -> None:
        inv.messages.append(evidence_message(call, ev))

    # -- pre-fetch, pass 2, token accounting ------------------------------------------

    async def _prefetch(self, inv: Investigation) -> None:
        """The deterministic evidence chain, then its dossier as a user message."""

        async def fetch(call: ToolCall) -> Message:
            if inv.state is not State.RUNNING:  # e.g. stopped as a duplicate meanwhile
                return Message(
                    role="tool", tool_call_id=call.id, name=call.name, content="ERROR: ended"
                )
            inv.stats.prefetch_calls += 1
            try:
                result = await self._call(inv, call)
            except SourceUnavailable as exc:
                result = ToolResult(
                    text=f"source unavailable: {exc}",
                    title=call.name,
                    source="local",
                    is_error=True,
                )
            if result.is_error:
                return Message(
                    role="tool",
                    tool_call_id=call.id,
                    name=call.name,
                    content="ERROR: " + result.text[: self.limits.result_chars],
                )
            ev = self._record(inv, call, result)
            await self.save(inv)  # each card appears as it is found
            return evidence_message(call, ev)

        try:
            dossier = await prefetch.gather(inv, await self.catalog.specs(Phase.EXPLORE), fetch)
        except Exception as exc:  # the model can still discover it all itself
            log.warning("pre-fetch failed: %s", type(exc).__name__)
            return
        if dossier is not None and inv.state is State.RUNNING:
            inv.messages.append(dossier)
            inv.stats.prefetch = True

    async def _map(self, inv: Investigation) -> None:
        assert self.repo_map is not None
        try:
            found = await repomap.message(self.repo_map, inv, tokens=self.map_tokens)
        except Exception as exc:  # the model can list the files itself
            log.warning("repository map failed: %s", type(exc).__name__)
            return
        inv.messages.append(found)
        inv.stats.repo_map_chars = len(found.content)

    def _account(self, inv: Investigation, usage: Usage) -> None:
        inv.stats.add_tokens(usage.input_tokens, usage.output_tokens, self.today())

    async def _daily_exhausted(self) -> str | None:
        """Why no model request may be made today, or None."""
        limit = self.limits.tokens_per_day
        if limit is None or self.ledger is None:
            return None
        day = self.today()
        spent = await self.ledger.tokens_on(day)
        if spent >= limit:
            return (
                f"daily token budget exhausted: {spent:,} of {limit:,} tokens spent on "
                f"{day} (UTC) by all investigations"
            )
        return None

    def _complete(
        self, inv: Investigation, diagnosis: Diagnosis, title: str | None, body: str | None
    ) -> None:
        draft = report.draft_for(inv, diagnosis, title)
        if body:
            draft = Draft(repository=draft.repository, title=draft.title, body=body)
        inv.complete(diagnosis, draft)

    async def _extract(
        self, inv: Investigation, notes: str, reason: str | None
    ) -> tuple[Diagnosis, str | None, str | None] | None:
        """Pass 2: one request to the extraction model, validated like a finish; None if it
        is not configured, has nothing to work from, or fails."""
        if self.extractor is None or not any(ev.source != "local" for ev in inv.evidence):
            return None
        if await self._daily_exhausted():
            return None
        finish = [t for t in LOCAL_TOOLS if t.name == "finish_investigation"]
        try:
            response = await self.extractor.request(
                extract.messages(inv, notes, reason), finish, require_tool=True
            )
        except Exception as exc:
            log.warning("pass 2: the extraction model failed: %s", type(exc).__name__)
            return None
        inv.stats.extract_calls += 1
        self._account(inv, response.usage)
        args = extract.arguments(response.message)
        if args is None:
            log.info("pass 2: no diagnosis in the extraction model's answer")
            return None
        try:
            return await self._validate_finish(inv, args)
        except ToolFailure as exc:
            log.info("pass 2: the extracted diagnosis was refused: %s", exc)
            return None

    async def _from_prose(self, inv: Investigation, prose: str) -> None:
        """The model concluded in prose: pass 2 extracts the diagnosis, else its first
        paragraph becomes the root cause and the prose is kept verbatim."""
        found = await self._extract(inv, prose, None)
        if found is None:
            await self._stop(
                inv, "the model ended without calling finish_investigation", prose, extract=False
            )
            return
        diagnosis, title, body = found
        self._complete(inv, diagnosis.model_copy(update={"report": prose or None}), title, body)
        await self.save(inv)

    async def _call(self, inv: Investigation, call: ToolCall) -> ToolResult:
        try:
            if call.name == "search_knowledge":
                if self.retriever is None:
                    return ToolResult(
                        text="no documentation is configured",
                        title="docs",
                        source="docs",
                        is_error=True,
                    )
                # The docs are read at the revision the code evidence was read at.
                revision = next(
                    (
                        ev.revision
                        for ev in reversed(inv.evidence)
                        if ev.source == "code" and ev.revision
                    ),
                    None,
                )
                return await search_knowledge(
                    self.retriever, call.arguments, inv.scope.repository, revision
                )
            return await self.catalog.call(call.name, call.arguments)
        except SourceUnavailable:
            raise
        except Exception as exc:  # a broken tool is the model's news, not a crash
            log.warning("tool %s failed: %s", call.name, type(exc).__name__)
            return ToolResult(
                text=f"the tool failed: {type(exc).__name__}: {str(exc)[:300]}",
                title=call.name,
                source="local",
                is_error=True,
            )

    async def _known(self) -> set[str]:
        return set(await self.catalog.entries()) | {t.name for t in LOCAL_TOOLS}

    def _reply(self, inv: Investigation, call: ToolCall, text: str, error: bool = False) -> None:
        inv.messages.append(
            Message(
                role="tool",
                tool_call_id=call.id,
                name=call.name,
                content=("ERROR: " + text) if error else text,
            )
        )

    async def _stop(
        self, inv: Investigation, reason: str, prose: str | None = None, extract: bool = True
    ) -> None:
        """Stop with a salvaged diagnosis: pass 2 when it works, else the evidence list."""
        for call in unanswered_calls(inv):
            self._reply(inv, call, f"not executed: {reason}", error=True)
        found = await self._extract(inv, prose or extract_notes(inv), reason) if extract else None
        if found is not None:
            diagnosis = report.stopped(inv, found[0], reason)
        else:
            diagnosis = report.salvage(inv, reason, prose)
        inv.stop(reason, diagnosis)
        await self.save(inv)

    async def _validate_finish(
        self, inv: Investigation, args: dict[str, Any]
    ) -> tuple[Diagnosis, str | None, str | None]:
        problems: list[str] = []
        try:
            facts = [Fact.model_validate(f) for f in args.get("facts") or []]
            suspect = Suspect.model_validate(args["suspect"]) if args.get("suspect") else None
            diagnosis = Diagnosis(
                root_cause=str(args.get("root_cause") or "").strip(),
                facts=facts,
                hypotheses=[str(h) for h in args.get("hypotheses") or []],
                uncertainties=[str(u) for u in args.get("uncertainties") or []],
                recommended_check=str(args.get("recommended_check") or ""),
                suspect=suspect,
                confidence=args.get("confidence") or "low",
            )
        except (ValidationError, TypeError, KeyError) as exc:
            raise ToolFailure(f"malformed arguments: {short_errors(exc)}") from None
        given = {k: args[k] for k in finding.FIELDS if args.get(k) not in (None, [], {})}
        try:
            diagnosis = Diagnosis.model_validate({**diagnosis.model_dump(), **given})
        except ValidationError as exc:
            raise ToolFailure(
                f"malformed finding: {short_errors(exc)} (leave a part out to have it "
                "computed from the evidence)"
            ) from None
        if not diagnosis.root_cause:
            problems.append("root_cause is empty")
        if not diagnosis.facts:
            problems.append("at least one fact citing evidence is needed")
        for i, fact in enumerate(diagnosis.facts, 1):
            missing = [e for e in fact.evidence if inv.evidence_by_id(e) is None]
            if missing:
                problems.append(f"fact {i} cites evidence that does not exist: {missing}")
            elif fact.quote and not any(
                squash(fact.quote) in squash(inv.evidence_by_id(e).content)  # type: ignore[union-attr]
                for e in fact.evidence
            ):
                problems.append(f"fact {i}: the quote does not appear in {fact.evidence}")
        problems += finding.problems(diagnosis, inv.evidence_by_id)
        s = diagnosis.suspect
        if s is not None:
            if s.line_end < s.line_start:
                problems.append("suspect.line_end is before line_start")
            revision = (args.get("suspect") or {}).get("revision")
            if self.files is not None and not await self._suspect_exists(inv, s.path, revision):
                problems.append(f"suspect file {s.path!r} does not exist at the running revision")
        if problems:
            raise ToolFailure("; ".join(problems))
        # What the model left out of the finding is computed from the evidence.
        diagnosis = finding.completed(diagnosis, finding.from_evidence(inv.evidence), inv.scope)
        return diagnosis, args.get("issue_title") or None, args.get("issue_body") or None

    async def _suspect_exists(self, inv: Investigation, path: str, revision: str | None) -> bool:
        assert self.files is not None
        revisions = [revision] if revision else []
        revisions += [ev.revision for ev in inv.evidence if ev.source == "code" and ev.revision]
        for rev in dict.fromkeys(revisions):
            try:
                if await self.files.file_exists(path, rev):
                    return True
            except Exception:
                continue
        return False


def evidence_message(call: ToolCall, ev: Evidence) -> Message:
    """The tool message that answers `call` with evidence `ev`."""
    return Message(
        role="tool",
        tool_call_id=call.id,
        name=call.name,
        evidence_id=ev.id,
        content=f"[{ev.id}] {ev.title}\n{ev.content}",
        data=ev.data,
    )


extract_notes = extract.notes_of


def unanswered_calls(inv: Investigation) -> list[ToolCall]:
    """Tool calls of the last assistant message that have no result yet."""
    for i in range(len(inv.messages) - 1, -1, -1):
        m = inv.messages[i]
        if m.role == "assistant":
            answered = {x.tool_call_id for x in inv.messages[i + 1 :] if x.role == "tool"}
            return [c for c in m.tool_calls if c.id not in answered]
    return []


def is_repeated(inv: Investigation, call: ToolCall) -> bool:
    """An identical call that already has an answer; one that failed may be tried again."""
    key = call_key(call)
    failed = {
        m.tool_call_id for m in inv.messages if m.role == "tool" and m.content.startswith("ERROR:")
    }
    for m in inv.messages:
        for earlier in m.tool_calls:
            if earlier.id == call.id:
                return False  # only calls made before this one count
            if call_key(earlier) == key and earlier.id not in failed:
                return True
    return False


def call_key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


def context_chars(messages: list[Message]) -> int:
    return sum(len(m.content) + sum(len(str(c.arguments)) for c in m.tool_calls) for m in messages)


def squash(text: str) -> str:
    return " ".join(text.split())


def short_errors(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
    return str(exc)[:200]
