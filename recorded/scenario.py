"""A recorded incident (../shared/scenarios/README.md): checked whole before anything runs."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent.domain import Scope, default_window
from agent.errors import InputError
from agent.locale import answer_language

REQUIRED = ("project_key", "question", "repository", "sentry")


@dataclass(frozen=True)
class Scenario:
    folder: Path
    question: str
    scope: Scope
    raw: dict[str, Any]

    @property
    def bundle(self) -> Path:
        return self.folder / "repo.bundle"

    @property
    def sentry(self) -> Path:
        return self.folder / "sentry"


def _time(value: Any, name: str) -> datetime:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"scenario.json: {name} is not an ISO date: {value!r}") from None


def load_scenario(folder: Path) -> Scenario:
    """Read and check a scenario folder; every problem is an InputError with one line."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"no scenario folder at {folder}")
    for name in ("scenario.json", "repo.bundle", "sentry/issues.json"):
        if not (folder / name).is_file():
            raise InputError(f"the scenario {folder} has no {name}")
    try:
        raw = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
        issues = json.loads((folder / "sentry" / "issues.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"the scenario {folder} has a file that is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise InputError("scenario.json must hold an object")
    missing = [k for k in REQUIRED if k not in raw]
    if missing:
        raise InputError(f"scenario.json lacks {', '.join(missing)}")
    if not isinstance(issues, list):
        raise InputError("sentry/issues.json must hold a list of issues")
    for issue in issues:
        if not (folder / "sentry" / "events" / f"{issue.get('id')}.json").is_file():
            raise InputError(f"the scenario has no events file for issue {issue.get('id')}")
    sentry = raw["sentry"] or {}
    if "now" in raw:
        since, until = default_window(_time(raw["now"], "now"))
    if "since" in raw:
        since = _time(raw["since"], "since")
    if "until" in raw:
        until = _time(raw["until"], "until")
    if "now" not in raw and not ("since" in raw and "until" in raw):
        raise InputError("scenario.json needs since and until, or now")
    scope = Scope(
        project_key=str(raw["project_key"]),
        repository=str(raw["repository"]),
        sentry_organization=str(sentry.get("organization", "")),
        sentry_project=str(sentry.get("project", "")),
        release_prefix=str(raw.get("release_prefix", "")),
        # The project's language; without one, the question's.
        language=answer_language(None, raw.get("language"), str(raw["question"])),
        since=since,
        until=until,
        asked_at=_time(raw["now"], "now") if "now" in raw else None,
    )
    return Scenario(folder=folder, question=str(raw["question"]), scope=scope, raw=raw)


async def git(*args: str, cwd: Path | None = None) -> str:
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise InputError(f"git {args[0]} failed: {err.decode(errors='replace').strip()[:200]}")
    return out.decode()


async def clone(scenario: Scenario, into: Path) -> Path:
    """A bare clone of the bundle: the code source reads it at any revision."""
    target = into / "repo.git"
    try:
        await git("clone", "-q", "--bare", str(scenario.bundle.resolve()), str(target))
    except InputError:
        raise InputError(f"{scenario.bundle} is not a valid git bundle") from None
    return target
