"""A deterministic policy model for FakeChat: it explores the way an LLM would, from the
wire alone.

It reads only what a real model reads (the request's messages and the tools offered),
keeps track of the facts it needs — the issue, its newest event and stack trace, the
files at the release, the crashing code, its blame, the recent history, the docs — and
calls one tool (or two independent ones) per turn until it has them, then calls
finish_investigation with facts citing the evidence ids it saw. Items a pre-fetch dossier
lists count as seen, so with a complete dossier it finishes at once. A tool that is not
offered (the funnel) or that failed is given up, as a model would.

    FakeChat(api_key=..., policy=Explorer())
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

NEEDS = {
    "sentry__search_issues": "issues",
    "sentry__get_issue_details": "event",
    "code__list_directory": "files",
    "git__git_show": "code",
    "code__git_blame": "blame",
    "code__git_changes": "history",
    "search_knowledge": "docs",
}
_EVIDENCE = re.compile(r"^\[(E\d+)\]")
_DOSSIER_ITEM = re.compile(r"^- (E\d+) · ([\w-]+)\((\{.*\})\) · ")
_LEAD = re.compile(r"^- suspect (\S+):(\d+)(?:, commit (\w+))?")
_ISSUE = re.compile(r"^## \d+\. \[([^\]]+)\]")
# Words every question about errors has: they tell no issue apart.
GENERIC = {"error", "erro", "fail", "falla", "falle", "probl", "issue"}
_FRAME = re.compile(r"^(?!…)(\S+?):(\d+) in (\S+)")


@dataclass
class Seen:
    """What the transcript holds, need by need."""

    question: str = ""
    prefix: str = ""
    since: str = ""  # the window's first day, "2026-11-28"
    evidence: dict[str, str] = field(default_factory=dict)  # need → evidence id
    texts: dict[str, str] = field(default_factory=dict)  # need → the tool's text
    args: dict[str, dict[str, Any]] = field(default_factory=dict)  # need → call arguments
    failed: set[str] = field(default_factory=set)
    lead: tuple[str, int, str | None] | None = None


def read(body: dict[str, Any]) -> Seen:
    seen = Seen()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in body["messages"]:
        content = m.get("content") or ""
        if m["role"] == "user" and content.startswith("Question: "):
            seen.question = content.removeprefix("Question: ").split("\n\n", 1)[0]
            found = re.search(r"release versions look like (\S*)<commit sha>", content)
            seen.prefix = found.group(1) if found else ""
            window = re.search(r"Time window: (\S+?)T", content)
            seen.since = window.group(1) if window else ""
        elif m["role"] == "user" and content.startswith("Pre-fetched evidence"):
            read_dossier(seen, content)
        elif m["role"] == "user" and content.startswith("Repository map at "):
            read_map(seen, content)
        for c in m.get("tool_calls") or []:
            calls[c["id"]] = (c["function"]["name"], json.loads(c["function"]["arguments"]))
        if m["role"] == "tool" and m["tool_call_id"] in calls:
            name, arguments = calls[m["tool_call_id"]]
            need = NEEDS.get(name)
            if need is None:
                continue
            ev = _EVIDENCE.match(content)
            if ev:
                seen.evidence[need] = ev.group(1)
                seen.texts[need] = content
                seen.args[need] = arguments
            else:
                seen.failed.add(need)
    return seen


def read_dossier(seen: Seen, text: str) -> None:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        item = _DOSSIER_ITEM.match(line)
        if item and item.group(2) in NEEDS:
            need = NEEDS[item.group(2)]
            seen.evidence[need] = item.group(1)
            seen.args[need] = json.loads(item.group(3))
            excerpt = lines[i + 1] if i + 1 < len(lines) else ""
            seen.texts[need] = excerpt.removeprefix("  excerpt: ")
        lead = _LEAD.match(line)
        if lead:
            seen.lead = (lead.group(1), int(lead.group(2)), lead.group(3))


def read_map(seen: Seen, text: str) -> None:
    """The files a repository map names, as a listing would give them (header first):
    a model with the map has no need to list the repository."""
    paths, folder = [], ""
    for line in text.splitlines()[1:]:
        if not line.startswith("  ") and line.endswith("/"):
            folder = "" if line == "./" else line
        elif line.startswith("  "):
            names = [line.strip().split(":", 1)[0]] if ":" in line else line.strip().split(", ")
            paths += [folder + n for n in names if n and " " not in n]
    if paths and "files" not in seen.texts:
        seen.texts["files"] = "\n".join(["(map)", *paths])


class Explorer:
    """FakeChat's ``policy``: the next answer, from the request body."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        seen = read(body)
        calls = self.next_calls(seen, offered)
        if not calls:
            return {"tool_calls": [("finish_investigation", json.dumps(self.finish(seen)))]}
        return {"tool_calls": [(name, json.dumps(args)) for name, args in calls]}

    # -- exploring --------------------------------------------------------------------

    def next_calls(self, seen: Seen, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
        def due(need: str) -> bool:
            return need not in seen.evidence and need not in seen.failed

        wanted: list[tuple[str, dict[str, Any]]] = []
        if due("issues"):
            wanted = [("sentry__search_issues", {"query": "is:unresolved"})]
        elif due("event") and "issues" in seen.evidence:
            issue = self.issue(seen)
            if issue:
                wanted = [("sentry__get_issue_details", {"issueId": issue})]
        elif due("files") and "files" not in seen.texts and "event" in seen.texts:
            wanted = [
                (
                    "code__list_directory",
                    {"revision": self.sha(seen), "path": "", "recursive": True},
                )
            ]
        elif due("code") and self.crash(seen):
            path, _line = self.crash(seen)  # type: ignore[misc]
            wanted = [("git__git_show", {"revision": f"{self.sha(seen)}:{path}"})]
        elif (due("blame") or due("history")) and self.crash(seen):
            path, line = self.crash(seen)  # type: ignore[misc]
            sha = self.sha(seen)
            if due("blame"):
                span = {"start_line": max(1, line - 2), "end_line": line + 2}
                wanted.append(("code__git_blame", {"revision": sha, "path": path, **span}))
            if due("history"):
                wanted.append(("code__git_changes", {"head": sha, "max_commits": 15}))
        elif due("docs") and "event" in seen.texts:
            wanted = [("search_knowledge", {"query": self.doc_query(seen)})]
        return [(name, args) for name, args in wanted if name in offered]

    def issue(self, seen: Seen) -> str | None:
        """The listed issue whose title shares most word stems with the question; errors
        before warnings, and new ones (first seen in the window) before old ones."""
        stems = {w[:5] for w in re.findall(r"\w{3,}", seen.question.lower())} - GENERIC
        best, best_score = None, -1.0
        lines = seen.texts["issues"].splitlines()
        for i, line in enumerate(lines):
            m = _ISSUE.match(line)
            if not m:
                continue
            block = "\n".join(lines[i + 1 : i + 12]).split("\n## ", 1)[0].lower()
            title = " ".join(lines[i + 1 : i + 3]).lower()
            score = float(len(stems & {w[:5] for w in re.findall(r"\w{3,}", title)}))
            if re.search(r"\*\*level\*\*: (error|fatal)", block):
                score += 1.5
            first = re.search(r"\*\*first seen\*\*: (\S+)", block)
            if first and seen.since and first.group(1) >= seen.since:
                score += 1
            if score > best_score:
                best, best_score = m.group(1), score
        return best

    def sha(self, seen: Seen) -> str:
        for need in ("files", "code", "blame"):
            args = seen.args.get(need) or {}
            revision = str(args.get("revision") or args.get("head") or "")
            if revision:
                return revision.split(":", 1)[0]
        m = re.search(r"\*\*Release\*\*: (\S+)", seen.texts.get("event", ""))
        if m:
            sha = re.search(r"[0-9a-f]{7,40}$", m.group(1).removeprefix(seen.prefix))
            if sha:
                return sha.group(0)
        return "HEAD"

    def crash(self, seen: Seen) -> tuple[str, int] | None:
        """The innermost stack frame whose file is in the listing; else what the calls
        already made (a dossier's) say about it."""
        files = [p.strip() for p in seen.texts.get("files", "").splitlines()[1:] if p.strip()]
        frames = [
            (re.sub(r"^\w+:/+", "", m.group(1)), int(m.group(2)))
            for line in seen.texts.get("event", "").splitlines()
            if (m := _FRAME.match(line))
        ]
        for name, line in reversed(frames):
            for path in files:
                if path == name or path.endswith("/" + name.lstrip("/")):
                    return path, line
        blame = seen.args.get("blame") or {}
        if blame.get("path"):
            return str(blame["path"]), int(blame.get("start_line", 1)) + 2
        revision = str((seen.args.get("code") or {}).get("revision", ""))
        if ":" in revision:
            return revision.split(":", 1)[1], 1
        return None

    def doc_query(self, seen: Seen) -> str:
        event = seen.texts.get("event", "")
        m = re.search(r"```\n([\w.$]+)(?::|\n)", event)
        words = [m.group(1).rsplit(".", 1)[-1]] if m else []
        crash = self.crash(seen)
        if crash:
            words.append(crash[0].rsplit("/", 1)[-1].rsplit(".", 1)[0])
        return " ".join(words) or seen.question

    # -- finishing --------------------------------------------------------------------

    def finish(self, seen: Seen) -> dict[str, Any]:
        labels = {
            "issues": "The error tracker lists the issue the question is about.",
            "event": "Its newest event carries the exception and the stack trace.",
            "code": "The crashing line is in the code at the running release.",
            "blame": "Blame names the commit that last changed the crashing line.",
            "history": "The recent history holds the change that touched it.",
            "docs": "The docs state how the value involved should be handled.",
        }
        facts = [
            {"text": text, "evidence": [seen.evidence[need]]}
            for need, text in labels.items()
            if need in seen.evidence
        ]
        out: dict[str, Any] = {
            "root_cause": "The change named below makes the crashing line fail.",
            "facts": facts,
            "hypotheses": ["The last change to the crashing code introduced the failure."],
            "uncertainties": [f"Not read: {n}." for n in labels if n not in seen.evidence],
            "recommended_check": "Replay a failing request against the release.",
            "confidence": "medium" if len(facts) >= 4 else "low",
        }
        suspect = self.suspect(seen)
        if suspect is not None:
            out["suspect"] = suspect
        return out

    def suspect(self, seen: Seen) -> dict[str, Any] | None:
        sha = self.sha(seen)
        if seen.lead is not None:
            path, line, commit = seen.lead
        else:
            crash = self.crash(seen)
            if crash is None:
                return None
            path, line = crash
            m = re.search(rf"^L{line} (\w+) ", seen.texts.get("blame", ""), re.MULTILINE)
            commit = m.group(1) if m else None
            if commit:  # the full id, as the history prints it
                full = re.search(rf"^commit ({commit}\w*)", seen.texts.get("history", ""), re.M)
                commit = full.group(1) if full else commit
        out: dict[str, Any] = {"path": path, "line_start": line, "line_end": line}
        if sha != "HEAD":
            out["revision"] = sha
        if commit:
            out["commit"] = commit
        return out


@dataclass
class Searcher:
    """FakeChat's ``policy`` for load: ``searches`` knowledge searches, then ``finish``. It
    reads no tracker, so runs on one incident never stop as duplicates of one another, and
    every run costs the same model calls (``searches`` + 1)."""

    finish: dict[str, Any]
    searches: int = 3

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < self.searches:
            query = ("customer reference", "orders null", "save order")[done % 3]
            return {"tool_calls": [("search_knowledge", json.dumps({"query": query}))]}
        return {"tool_calls": [("finish_investigation", json.dumps(self.finish))]}
