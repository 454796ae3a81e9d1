"""A finding an on-call engineer can act on, computed from the stored evidence and a suspect.

Given the evidence of an investigation (Sentry issues and events, the code at the running
revision, blame, the changes and their diffs, greps, docs) and a suspect (path, lines,
commit), this module finds the suspect hunk and states: the change quoted (before → after),
the input the failing events carry (agent/trigger.py), the smallest change that would undo
the suspect one as a suggested diff (a hypothesis, never applied), every affected file and
line, the risk and complexity of that change, what raised or lowered the confidence, the
window the errors were seen in and the other issues of the window that look related.

It reads the evidence by its shape, not by tool name, so the offline investigator, the
model path and a salvaged run all get the same answer from the same items. Nothing here
is a special case of one incident: every rule is about diffs, stacks and events in general.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field

from agent import stacktrace, trigger
from agent.domain import (
    AffectedWindow,
    ConfidenceFactor,
    Evidence,
    FixAssessment,
    Location,
    Message,
    ProposedChange,
    QuotedChange,
    RelatedIssue,
    TriggerInput,
)
from agent.tools.code import _parse_patch as parse_patch

QUOTE_LINES = 20
MAX_REVERT = 16  # changed lines of a hunk that is undone whole
DIFF_CONTEXT = 3
MAX_STACK = 8
MAX_CHANGED = 10
MAX_RELATED = 5
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
COMMENT = re.compile(r"^\s*(//|#|/\*|\*|--|\"\"\"|'''|<!--)")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "restore-removed": "Restores the lines commit {commit} removed from {path}.",
        "restore-previous": "Restores what {path}:{line} read before commit {commit}.",
        "revert-added": "Takes out the lines commit {commit} added to {path}.",
        "hypothesis": "A hypothesis to check against the intent of the change, not a tested fix.",
        "numbered_commit": "Lines are numbered as in commit {commit}: the running revision "
        "was not read or no longer has these lines.",
        "lines": "{n} line(s) changed in {files} file(s)",
        "restores": "it brings back code that ran before commit {commit}",
        "removes": "it takes out code that commit {commit} added on purpose",
        "multi": "commit {commit} changed {n} files; undoing one hunk may leave the others "
        "inconsistent",
        "callers": "{n} call site(s) of {name} found in the evidence",
        "stack_callers": "{n} caller(s) of {name} on the stack",
        "no_callers": "callers of {name} were not searched",
        "release-known": "The events name the running release ({release}).",
        "release-unknown": "The events name no release: the running code is a guess.",
        "change-before-errors": "Commit {commit} landed {hours} h before the first error.",
        "change-after-errors": "Commit {commit} is dated after the first error.",
        "blame-agrees": "Blame of the crash line names the suspect commit.",
        "blame-differs": "Blame of the crash line names another commit ({commit}).",
        "guard-removed": "The change removed a guard and the exception is about a missing value.",
        "names-match": "Names of the exception appear in the changed lines ({names}).",
        "docs": "The documentation describes the expected behaviour ({path}).",
        "no-docs": "No documentation about the code involved was found.",
        "off-stack": "The fault is off the stack: the link from the change to the crash is "
        "inferred.",
        "one-event": "Only one event was read in full.",
        "events": "{n} events were read in full.",
        "no-hunk": "No change of the suspect commit could be quoted.",
        "shares-frame": "shares {names}",
        "same-entry": "same entry point ({entry})",
        "same-release": "events of release {release}",
        "after-release": "first seen after release {release} was deployed",
        "failing-request": "the failing requests",
        "failing-job": "the failing jobs",
        "failing-cli": "the failing command",
        "failing-unknown": "the failing events",
        "replay-request": "Replay one of the failing requests",
        "replay-job": "Re-run one of the failing jobs with its payload",
        "replay-cli": "Run the failing command again with the same arguments",
        "replay-unknown": "Reproduce one of the failing events",
    },
    "es": {
        "restore-removed": "Restaura las líneas que el commit {commit} eliminó de {path}.",
        "restore-previous": "Restaura lo que decía {path}:{line} antes del commit {commit}.",
        "revert-added": "Quita las líneas que el commit {commit} añadió a {path}.",
        "hypothesis": "Una hipótesis que hay que contrastar con la intención del cambio, no un "
        "arreglo probado.",
        "numbered_commit": "Las líneas se numeran como en el commit {commit}: la revisión en "
        "marcha no se leyó o ya no tiene estas líneas.",
        "lines": "{n} línea(s) cambiada(s) en {files} fichero(s)",
        "restores": "recupera código que funcionaba antes del commit {commit}",
        "removes": "quita código que el commit {commit} añadió a propósito",
        "multi": "el commit {commit} cambió {n} ficheros; deshacer un solo fragmento puede "
        "dejar los demás incoherentes",
        "callers": "{n} llamada(s) a {name} encontradas en las evidencias",
        "stack_callers": "{n} llamador(es) de {name} en la traza",
        "no_callers": "no se buscaron las llamadas a {name}",
        "release-known": "Los eventos indican la versión en marcha ({release}).",
        "release-unknown": "Los eventos no indican la versión: el código en marcha es una "
        "suposición.",
        "change-before-errors": "El commit {commit} llegó {hours} h antes del primer error.",
        "change-after-errors": "El commit {commit} tiene fecha posterior al primer error.",
        "blame-agrees": "El blame de la línea del fallo señala el commit sospechoso.",
        "blame-differs": "El blame de la línea del fallo señala otro commit ({commit}).",
        "guard-removed": "El cambio quitó una comprobación y la excepción trata de un valor "
        "ausente.",
        "names-match": "Nombres de la excepción aparecen en las líneas cambiadas ({names}).",
        "docs": "La documentación describe el comportamiento esperado ({path}).",
        "no-docs": "No se encontró documentación sobre el código implicado.",
        "off-stack": "El fallo está fuera de la traza: la relación entre el cambio y el error "
        "es una inferencia.",
        "one-event": "Solo se leyó completo un evento.",
        "events": "Se leyeron completos {n} eventos.",
        "no-hunk": "No se pudo citar ningún cambio del commit sospechoso.",
        "shares-frame": "comparte {names}",
        "same-entry": "mismo punto de entrada ({entry})",
        "same-release": "eventos de la versión {release}",
        "after-release": "visto por primera vez tras desplegar la versión {release}",
        "failing-request": "las peticiones fallidas",
        "failing-job": "los trabajos fallidos",
        "failing-cli": "el comando fallido",
        "failing-unknown": "los eventos fallidos",
        "replay-request": "Reproducir una de las peticiones fallidas",
        "replay-job": "Volver a lanzar uno de los trabajos fallidos con su carga",
        "replay-cli": "Volver a ejecutar el comando fallido con los mismos argumentos",
        "replay-unknown": "Reproducir uno de los eventos fallidos",
    },
}


def texts(language: str) -> dict[str, str]:
    return TEXTS.get((language or "en").split("-")[0].lower(), TEXTS["en"])


def failing(event: Mapping[str, Any] | None, language: str) -> str:
    """ "the failing requests", "the failing jobs"…: what failed, as the events show it."""
    kind = trigger.kind_of(event) if event else "unknown"
    return texts(language)[f"failing-{kind}"]


def replay_phrase(event: Mapping[str, Any] | None, language: str) -> str:
    """How to make it fail again, in words that fit the incident (a request, a job, a CLI)."""
    kind = trigger.kind_of(event) if event else "unknown"
    return texts(language)[f"replay-{kind}"]


# -- the evidence, by shape ---------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One stored evidence item as this module reads it."""

    id: str
    tool: str
    data: Any
    content: str
    path: str | None = None
    revision: str | None = None

    def has(self, key: str, kind: type = list) -> bool:
        return isinstance(self.data, Mapping) and isinstance(self.data.get(key), kind)


def from_evidence(items: Iterable[Evidence]) -> list[Record]:
    return [
        Record(ev.id, ev.tool, ev.data, ev.content, ev.path, ev.revision)
        for ev in items
        if ev.source != "local"
    ]


def from_results(results: Iterable[Any]) -> list[Record]:
    """Records from results shaped like the offline investigator's (name, arguments,
    content, data, evidence_id, is_error), in the order given."""
    out = []
    for r in results:
        if r.is_error or not r.evidence_id:
            continue
        path, revision = _call_target(r.arguments or {})
        out.append(Record(r.evidence_id, r.name, r.data, r.content, path, revision))
    return sorted(out, key=lambda rec: _evidence_number(rec.id))


def from_messages(messages: Sequence[Message]) -> list[Record]:
    """Records from a transcript: tool messages that stored evidence, with their calls."""
    calls = {c.id: c for m in messages for c in m.tool_calls}
    out = []
    for m in messages:
        if m.role != "tool" or not m.evidence_id or m.content.startswith("ERROR:"):
            continue
        call = calls.get(m.tool_call_id or "")
        path, revision = _call_target(call.arguments if call else {})
        content = m.content.split("\n", 1)[1] if m.content.startswith("[E") else m.content
        out.append(Record(m.evidence_id, m.name or "", m.data, content, path, revision))
    return out


def _call_target(arguments: Mapping[str, Any]) -> tuple[str | None, str | None]:
    revision = str(arguments.get("revision") or arguments.get("head") or "") or None
    path = arguments.get("path")
    if revision and ":" in revision:
        revision, _, path = revision.partition(":")
    return (str(path) if path else None), revision


def _evidence_number(evidence_id: str) -> int:
    digits = re.sub(r"\D", "", evidence_id)
    return int(digits) if digits else 0


@dataclass
class Items:
    """The evidence sorted by kind; the newest item of each kind last."""

    details: list[Record] = field(default_factory=list)
    searches: list[Record] = field(default_factory=list)
    event_lists: list[Record] = field(default_factory=list)
    changes: list[Record] = field(default_factory=list)
    blames: list[Record] = field(default_factory=list)
    listings: list[Record] = field(default_factory=list)
    matches: list[Record] = field(default_factory=list)
    docs: list[Record] = field(default_factory=list)
    files: list[Record] = field(default_factory=list)
    patches: list[Record] = field(default_factory=list)

    @classmethod
    def sort(cls, records: Iterable[Record]) -> Items:
        ev = cls()
        for r in records:
            if isinstance(r.data, Mapping) and isinstance(r.data.get("event"), Mapping):
                ev.details.append(r)
            elif r.has("issues"):
                ev.searches.append(r)
            elif r.has("events"):
                ev.event_lists.append(r)
            elif r.has("commits"):
                ev.changes.append(r)
            elif r.has("lines") and r.has("path", str):
                ev.blames.append(r)
            elif r.has("entries"):
                ev.listings.append(r)
            elif r.has("matches"):
                ev.matches.append(r)
            elif r.has("passages"):
                ev.docs.append(r)
            elif r.tool.endswith("git_show") and "diff --git" in r.content:
                ev.patches.append(r)
            elif r.tool.endswith("git_show") and r.path:
                ev.files.append(r)
        return ev

    def file(self, path: str) -> Record | None:
        for r in reversed(self.files):
            if r.path == path:
                return r
        return None

    def repo_files(self) -> list[str]:
        known: dict[str, None] = {}
        for r in self.listings:
            known.update(
                dict.fromkeys(str(e) for e in r.data["entries"] if not str(e).endswith("/"))
            )
        for r in [*self.files, *self.blames]:
            if r.path:
                known[r.path] = None
        for r in self.changes:
            for c in r.data["commits"]:
                known.update(
                    dict.fromkeys(f.get("path") for f in c.get("files") or [] if f.get("path"))
                )
        return list(known)


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


@dataclass
class Suspected:
    path: str
    line_start: int
    line_end: int
    commit: str | None = None


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
    issue, events, details_ids = _events(ev)
    event = events[0] if events else None
    files = ev.repo_files()
    excs = stacktrace.exceptions(event) if event else []
    stack = _stack(excs, files)
    suspect = (
        Suspected(path, line_start or 1, line_end or line_start or 1, commit) if path else None
    )
    if suspect and not suspect.commit:
        suspect.commit = _blamed(ev, suspect.path, suspect.line_start)
    located = _locate(ev, suspect) if suspect else None
    finding = Finding()
    code_lines: list[str] = [fr.context_line or "" for fr, _ in stack]
    if located is not None:
        finding.change = located.quote()
        code_lines += [text for tag, _, _, text in located.sequence if tag != " "]
        finding.proposed_change = located.propose(suspect, t)  # type: ignore[arg-type]
    finding.trigger = trigger.trigger_of(events, code_lines, details_ids)
    finding.affected = _affected(suspect, stack, located)
    finding.fix = _assess(located, finding.proposed_change, stack, ev, suspect, t)
    finding.window = _window(issue, event, details_ids)
    finding.related_issues = _related(ev, issue, stack, finding.window, t)
    finding.confidence_factors = (
        factors if factors is not None else _factors(ev, event, excs, stack, suspect, located, t)
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


# -- the issue and its events --------------------------------------------------------------


def _events(ev: Items) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The issue followed (the newest details read), its events newest first, and the ids."""
    if not ev.details:
        return {}, [], []
    last = ev.details[-1]
    issue = dict(last.data.get("issue") or {})
    same = [
        r for r in ev.details if str((r.data.get("issue") or {}).get("id")) == str(issue.get("id"))
    ]
    pairs: dict[str, tuple[dict[str, Any], str]] = {}
    for r in same:
        e = r.data["event"]
        pairs.setdefault(str(e.get("eventID") or e.get("id") or r.id), (e, r.id))
    ordered = sorted(pairs.values(), key=lambda p: str(p[0].get("dateCreated") or ""), reverse=True)
    return issue, [e for e, _ in ordered], list(dict.fromkeys(i for _, i in ordered))


def _stack(
    excs: list[stacktrace.ExceptionInfo], files: list[str]
) -> list[tuple[stacktrace.Frame, str]]:
    """Application frames that map to repository files, crash end first, every exception."""
    out: dict[tuple[str, int | None], tuple[stacktrace.Frame, str]] = {}
    for exc in reversed(excs):
        for frame, p in stacktrace.stack_paths(exc, files):
            out.setdefault((p, frame.lineno), (frame, p))
    if not out:  # no listing read: frames whose own path is a known file
        for exc in reversed(excs):
            for frame in reversed(exc.frames):
                p = stacktrace.normalize_path(frame.filename or "")
                if p in files and not stacktrace.is_library(frame):
                    out.setdefault((p, frame.lineno), (frame, p))
    return list(out.values())


def _blamed(ev: Items, path: str, line: int) -> str | None:
    for r in reversed(ev.blames):
        if r.data.get("path") != path:
            continue
        for row in r.data["lines"]:
            if row.get("line") == line and row.get("commit"):
                return str(row["commit"])
    return None


# -- the suspect hunk ---------------------------------------------------------------------

Entry = tuple[str, int, int, str]  # tag (" ", "-", "+"), old line, new line, text


def sequence(hunk: Mapping[str, Any]) -> list[Entry]:
    """The hunk's lines in diff order, each with its old and new line numbers."""
    removed = {int(n): t for n, t in hunk.get("removed") or []}
    added = {int(n): t for n, t in hunk.get("added") or []}
    if hunk.get("lines"):
        context = {int(n): t for tag, n, t in hunk["lines"] if tag == " "}
    else:
        context = {int(n): t for n, t in hunk.get("context") or []}
    o, n = int(hunk.get("old_start") or 0), int(hunk.get("new_start") or 0)
    o_end = o + int(hunk.get("old_lines") or 0)
    n_end = n + int(hunk.get("new_lines") or 0)
    out: list[Entry] = []
    while o < o_end or n < n_end:
        if o in removed and o < o_end:
            out.append(("-", o, n, removed[o]))
            o += 1
        elif n in added and n < n_end:
            out.append(("+", o, n, added[n]))
            n += 1
        elif n in context:
            out.append((" ", o, n, context[n]))
            o, n = o + 1, n + 1
        else:  # a line the evidence does not hold (cut output): stop rather than guess
            break
    return out


def _blocks(seq: list[Entry]) -> list[tuple[int, int]]:
    """[start, end) index ranges of consecutive changed lines."""
    out, start = [], None
    for i, (tag, *_rest) in enumerate(seq):
        if tag != " " and start is None:
            start = i
        elif tag == " " and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(seq)))
    return out


def _meaningful(text: str) -> bool:
    return bool(text.strip()) and not COMMENT.match(text)


@dataclass
class Located:
    commit: dict[str, Any]
    file: dict[str, Any]
    hunk: dict[str, Any]
    sequence: list[Entry]
    block: tuple[int, int]
    evidence: str
    release: list[str] | None  # the file at the running revision, if read
    revision: str | None
    release_id: str | None = None

    @property
    def sha(self) -> str:
        return str(self.commit.get("sha") or "")

    def changed(self) -> tuple[list[Entry], list[Entry]]:
        lines = self.sequence[self.block[0] : self.block[1]]
        return [e for e in lines if e[0] == "-"], [e for e in lines if e[0] == "+"]

    def quote(self) -> QuotedChange:
        removed = [e for e in self.sequence if e[0] == "-"]
        added = [e for e in self.sequence if e[0] == "+"]
        first = self.sequence[self.block[0]]
        return QuotedChange(
            commit=self.sha,
            path=str(self.file.get("path")),
            old_path=self.file.get("old_path")
            if self.file.get("old_path") not in (None, self.file.get("path"))
            else None,
            summary=str(self.commit.get("summary") or ""),
            author=str(self.commit.get("author") or ""),
            date=str(self.commit.get("date") or ""),
            old_start=removed[0][1] if removed else first[1],
            new_start=added[0][2] if added else first[2],
            before=[t for *_, t in removed][:QUOTE_LINES],
            after=[t for *_, t in added][:QUOTE_LINES],
            evidence=[self.evidence],
        )

    def span(self) -> list[Entry]:
        """What to undo: the whole hunk when it is small (its blocks often depend on each
        other: a rename and its use), else the block nearest the suspect with its context."""
        changed = [e for e in self.sequence if e[0] != " "]
        if len(changed) <= MAX_REVERT:
            return self.sequence
        i, j = self.block
        before = [e for e in self.sequence[:i] if e[0] == " "][-DIFF_CONTEXT:]
        after = [e for e in self.sequence[j:] if e[0] == " "][:DIFF_CONTEXT]
        return [*before, *self.sequence[i:j], *after]

    def propose(self, s: Suspected, t: dict[str, str]) -> ProposedChange | None:
        span = self.span()
        removed = [e for e in span if e[0] == "-"]
        added = [e for e in span if e[0] == "+"]
        if not removed and not added:
            return None
        strategy = (
            "restore-removed"
            if not added
            else "revert-added"
            if not removed
            else "restore-previous"
        )
        path = str(self.file.get("path"))
        now = [e[3] for e in span if e[0] != "-"]  # the new side: what the file has now
        placed = self._place(now, s.line_start)
        numbered_at = self.revision if placed is not None else self.sha
        first = placed + 1 if placed is not None else max(1, span[0][2])
        body: list[str] = []
        for k, entry in enumerate(span):
            tag, text = entry[0], entry[3]
            if tag == " ":
                body.append(f" {text}")
            elif tag == "+":
                body.append(f"-{text}")
            # The old lines of a block go back after the block's new lines are taken out.
            if tag != " " and (k + 1 == len(span) or span[k + 1][0] == " "):
                start = k
                while start > 0 and span[start - 1][0] != " ":
                    start -= 1
                body += [f"+{e[3]}" for e in span[start : k + 1] if e[0] == "-"]
        old_count = len(now)
        new_count = len([e for e in span if e[0] != "+"])
        header = f"@@ -{first},{old_count} +{first},{new_count} @@"
        diff = "\n".join([f"--- a/{path}", f"+++ b/{path}", header, *body])
        line = s.line_start if placed is not None else (added[0][2] if added else first)
        why = t[strategy].format(commit=self.sha[:7], path=path, line=line) + " " + t["hypothesis"]
        if numbered_at == self.sha and self.revision != self.sha:
            why += " " + t["numbered_commit"].format(commit=self.sha[:7])
        cited = [self.evidence, *([self.release_id] if placed is not None else [])]
        return ProposedChange(
            path=path,
            diff=diff,
            rationale=why,
            strategy=strategy,
            numbered_at=numbered_at,
            evidence=[c for c in cited if c],
        )

    def _place(self, now: list[str], near: int) -> int | None:
        """Where the new side of the span starts in the running revision's file (0-based);
        None when that file was not read or has moved on since the commit."""
        if self.release is None or not now:
            return None
        lines = [x.rstrip() for x in self.release]
        want = [x.rstrip() for x in now]
        hits = [i for i in range(len(lines) - len(want) + 1) if lines[i : i + len(want)] == want]
        return min(hits, key=lambda k: abs(k + 1 - near)) if hits else None


def _hunks_of(ev: Items) -> Iterable[tuple[dict[str, Any], dict[str, Any], str]]:
    """(commit, file) pairs of every change and patch read, newest evidence first."""
    for r in reversed(ev.changes):
        for c in r.data["commits"]:
            for f in c.get("files") or []:
                yield c, f, r.id
    for r in reversed(ev.patches):
        m = re.search(r"commit ([0-9a-f]{7,64})", r.content)
        sha = m.group(1) if m else (r.revision or "")
        files = parse_patch(r.content[r.content.find("diff --git") :])
        for f in files:
            yield {"sha": sha, "summary": "", "author": "", "date": ""}, f, r.id


def _same_commit(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    a, b = a.lower(), b.lower()
    return len(min(a, b, key=len)) >= 7 and (a.startswith(b) or b.startswith(a))


def _locate(ev: Items, s: Suspected) -> Located | None:
    """The suspect commit's hunk in the suspect file nearest the suspect lines."""
    release_rec = ev.file(s.path)
    release = release_rec.content.splitlines() if release_rec is not None else None
    revision = release_rec.revision if release_rec is not None else None
    rid = release_rec.id if release_rec is not None else None
    if revision is None:
        revision = next((r.revision for r in reversed(ev.changes) if r.revision), None)
    wanted = {
        release[n - 1].strip()
        for n in range(s.line_start, s.line_end + 1)
        if release and 0 < n <= len(release)
    }
    best: tuple[tuple[int, int], Located] | None = None
    seen: set[tuple[str, str]] = set()
    for commit, file, rec_id in _hunks_of(ev):
        if not _same_commit(str(commit.get("sha")), s.commit):
            continue
        if s.path not in (file.get("path"), file.get("old_path")):
            continue
        if (str(commit.get("sha")), rec_id) in seen and best is not None:
            continue
        for hunk in file.get("hunks") or []:
            seq = sequence(hunk)
            for block in _blocks(seq):
                lines = seq[block[0] : block[1]]
                texts_ = [e[3].strip() for e in lines if e[0] == "+"]
                if wanted and wanted & set(texts_):
                    distance = 0
                else:
                    numbers = [e[2] for e in lines]
                    distance = min(
                        0
                        if s.line_start <= n <= s.line_end
                        else min(abs(n - s.line_start), abs(n - s.line_end))
                        for n in numbers
                    )
                noise = 0 if any(_meaningful(e[3]) for e in lines) else 1
                key = (noise, distance)
                if best is None or key < best[0]:
                    found = Located(commit, file, hunk, seq, block, rec_id, release, revision, rid)
                    best = (key, found)
        seen.add((str(commit.get("sha")), rec_id))
    return best[1] if best else None


# -- where, how risky, how sure ----------------------------------------------------------


def _affected(
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
                     commit=s.commit, function=_function_of(located, stack, s)))  # fmt: skip
    for i, (frame, p) in enumerate(stack[:MAX_STACK]):
        line = frame.lineno or 1
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
                function = _name(hunk.get("function")) or None
                add(Location(path=f["path"], line_start=start, line_end=end, role="changed",
                             commit=located.sha, function=function))  # fmt: skip
                shown += 1
    return out


_KEYWORDS = {"def", "func", "function", "fun", "fn", "class", "sub", "if", "for", "while"}
_DEFINITION = re.compile(
    r"^\s*(export\s+)?(async\s+)?(def|func|function|fun|fn|sub|public|private|protected|"
    r"internal|static|override|suspend)\b|^\s*[A-Za-z_$][\w$]*\s*\([^)]*\)\s*\{"
)


def _name(header: Any) -> str:
    """The function a definition line declares: the identifier before its '('."""
    text = str(header or "")
    if not _DEFINITION.search(text):
        return ""
    for m in re.finditer(r"([A-Za-z_$][\w$]*)\s*\(", text):
        if m.group(1) not in _KEYWORDS:
            return m.group(1)
    return ""


def _function_of(
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
    if located is not None and _name(located.hunk.get("function")):
        return _name(located.hunk.get("function"))
    return None


def _assess(
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
    function = _function_of(located, stack, s) or ""
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


def _factors(
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
        release = _release_version(event)
        sha = re.search(r"([0-9a-f]{7,40})$", release or "")
        if sha:
            add("raises", "release-known", 1.0, details, release=sha.group(1)[:7])
        else:
            add("lowers", "release-unknown", -1.0, details)
    if located is None and s is not None:
        add("lowers", "no-hunk", -2.0, [])
    if located is not None:
        first = _time(ev.details[-1].data.get("issue", {}).get("firstSeen")) if ev.details else None
        when = _time(located.commit.get("date"))
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
        blamed = _blamed(ev, crash_path, crash_frame.lineno or 0)
        blame_id = next((r.id for r in reversed(ev.blames) if r.data.get("path") == crash_path), "")
        if blamed and _same_commit(blamed, s.commit):
            add("raises", "blame-agrees", 1.0, [blame_id])
        elif blamed and s.commit:
            add("lowers", "blame-differs", -0.5, [blame_id], commit=blamed[:7])
        if s.path not in {p for _, p in stack}:
            add("lowers", "off-stack", -0.5, details)
    passages = [(r, r.data["passages"]) for r in ev.docs if r.data["passages"]]
    if passages:
        r, found = passages[-1]
        add("raises", "docs", 0.5, [r.id], path=found[0].get("path"))
    elif ev.details:
        add("lowers", "no-docs", -0.5, [])
    n_events = len(_events(ev)[1])
    if n_events == 1:
        add("lowers", "one-event", -0.5, details)
    elif n_events > 1:
        add("raises", "events", 0.5, _events(ev)[2], n=n_events)
    return out


# -- when ----------------------------------------------------------------------------------


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _release_version(event: Mapping[str, Any]) -> str | None:
    release = event.get("release")
    if isinstance(release, Mapping):
        return str(release.get("version") or "") or None
    if isinstance(release, str) and release:
        return release
    return trigger._tags(event).get("release")


def _release_time(event: Mapping[str, Any]) -> datetime | None:
    release = event.get("release")
    if not isinstance(release, Mapping):
        return None
    deploy = release.get("lastDeploy") if isinstance(release.get("lastDeploy"), Mapping) else {}
    for value in (
        release.get("dateReleased"),
        deploy.get("dateFinished"),
        release.get("dateCreated"),
    ):
        when = _time(value)
        if when is not None:
            return when
    return None


def _window(
    issue: Mapping[str, Any], event: Mapping[str, Any] | None, cited: list[str]
) -> AffectedWindow | None:
    if not issue:
        return None
    first, last = _time(issue.get("firstSeen")), _time(issue.get("lastSeen"))
    try:
        count: int | None = int(issue.get("count"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        count = None
    release = _release_version(event) if event else None
    deployed = _release_time(event) if event else None
    w = AffectedWindow(
        first_seen=first, last_seen=last, events=count, release=release, release_at=deployed,
        evidence=cited[:1],
    )  # fmt: skip
    if first and last and count is not None:
        w.per_hour = round(count / max(1.0, (last - first).total_seconds() / 3600), 2)
    buckets = _buckets(issue)
    if deployed and buckets:
        before = [n for at, n in buckets if deployed - timedelta(hours=24) <= at < deployed]
        after = [n for at, n in buckets if deployed <= at <= deployed + timedelta(hours=24)]
        w.per_hour_before = round(sum(before) / max(1, len(before)), 2) if before else None
        w.per_hour_after = round(sum(after) / max(1, len(after)), 2) if after else None
    elif deployed and first and last and count is not None and first >= deployed:
        # No event of this issue before the release; the rate after it from its own span.
        w.per_hour_before = 0.0
        w.per_hour_after = round(count / max(1.0, (last - deployed).total_seconds() / 3600), 2)
    return w


def _buckets(issue: Mapping[str, Any]) -> list[tuple[datetime, int]]:
    """Sentry's `stats` of an issue ({"24h": [[epoch, n], ...]}) as hourly buckets."""
    stats = issue.get("stats")
    if not isinstance(stats, Mapping):
        return []
    out = []
    for series in stats.values():
        for point in series or []:
            try:
                out.append((datetime.fromtimestamp(int(point[0]), tz=UTC), int(point[1])))
            except (TypeError, ValueError, IndexError):
                continue
    return sorted(out)


# -- related issues --------------------------------------------------------------------------


def _related(
    ev: Items,
    issue: Mapping[str, Any],
    stack: list[tuple[stacktrace.Frame, str]],
    window: AffectedWindow | None,
    t: dict[str, str],
) -> list[RelatedIssue]:
    if not ev.searches or not issue:
        return []
    own = str(issue.get("id"))
    # A file is named by its last two path components (a module path or a file path);
    # a function by its bare name, when it is specific enough to mean the same code.
    files = {"/".join(p.rsplit(".", 1)[0].split("/")[-2:]).lower() for _, p in stack}
    functions = {
        stacktrace_last(fr.function or "").lower()
        for fr, _ in stack
        if len(stacktrace_last(fr.function or "")) >= 4
    }
    release = window.release if window else None
    deployed = window.release_at if window else None
    same_release: dict[str, str] = {}
    for r in ev.event_lists:
        for e in r.data["events"]:
            if release and e.get("issue_id") and e.get("release") == release:
                same_release.setdefault(str(e["issue_id"]), r.id)
    out: list[RelatedIssue] = []
    search = ev.searches[-1]
    for other in search.data["issues"]:
        oid = str(other.get("id"))
        if oid == own:
            continue
        meta = other.get("metadata") if isinstance(other.get("metadata"), Mapping) else {}
        where = " ".join(str(x or "") for x in (other.get("culprit"), meta.get("filename")))
        where = re.sub(r"[.\\:]+", "/", where.lower())
        shared = sorted(f for f in files if "/" in f and f in where)
        names = {stacktrace_last(str(meta.get("function") or "")).lower()}
        names.add(stacktrace_last(str(other.get("culprit") or "").split(" in ")[-1]).lower())
        shared += sorted(functions & names)
        reasons, cited = [], [search.id]
        if shared:
            reasons.append(t["shares-frame"].format(names=", ".join(shared[:3])))
        if other.get("culprit") and other.get("culprit") == issue.get("culprit"):
            reasons.append(t["same-entry"].format(entry=other["culprit"]))
        if oid in same_release and release:
            reasons.append(t["same-release"].format(release=release))
            cited.append(same_release[oid])
        seen = _time(other.get("firstSeen"))
        if deployed and seen and seen >= deployed and release:
            reasons.append(t["after-release"].format(release=release))
        if not reasons:
            continue
        try:
            count: int | None = int(other.get("count"))
        except (TypeError, ValueError):
            count = None
        out.append(
            RelatedIssue(
                id=oid,
                short_id=other.get("shortId"),
                title=str(other.get("title") or "")[:200],
                count=count,
                link=other.get("permalink"),
                reasons=reasons,
                evidence=cited,
            )
        )
    out.sort(key=lambda r: (-len(r.reasons), -(r.count or 0)))
    return out[:MAX_RELATED]


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
