"""The suspect hunk: found in the diffs read, read back in diff order, quoted, and undone
as the smallest suggested diff against the running revision."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.domain import ProposedChange, QuotedChange
from agent.finding.evidence import Items
from agent.tools.code import _parse_patch as parse_patch

QUOTE_LINES = 20
MAX_REVERT = 16  # changed lines of a hunk that is undone whole
DIFF_CONTEXT = 3
COMMENT = re.compile(r"^\s*(//|#|/\*|\*|--|\"\"\"|'''|<!--)")


@dataclass
class Suspected:
    path: str
    line_start: int
    line_end: int
    commit: str | None = None


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


def same_commit(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    a, b = a.lower(), b.lower()
    return len(min(a, b, key=len)) >= 7 and (a.startswith(b) or b.startswith(a))


def locate(ev: Items, s: Suspected) -> Located | None:
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
        if not same_commit(str(commit.get("sha")), s.commit):
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
