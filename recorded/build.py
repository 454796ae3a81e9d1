"""Build recorded incident scenarios from recipes: plain files plus a list of commits.

A recipe folder holds ``recipe.json`` (the commits), ``files/`` (the file versions the
commits reference) and templates (``scenario.json``, ``expected.json``, ``sentry/**``) in
which ``{{sha:N}}`` / ``{{sha7:N}}`` stand for the full / short SHA of commit N (0-based).
Commits are made with fixed identities and dates in a clean git environment, so building
the same recipe twice gives the same SHAs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path, PurePosixPath

_SHA_TEMPLATE = re.compile(r"\{\{sha(7?):(\d+)\}\}")
_TOP_TEMPLATES = ("scenario.json", "expected.json")
_FIELDS = ("message", "author", "email", "date")


def build_scenario(recipe: Path, out: Path) -> Path:
    """Build the scenario folder ``out`` (repo.bundle, scenario.json, expected.json, sentry/)."""
    recipe, out = Path(recipe), Path(out)
    commits = _load_commits(recipe)
    if not (recipe / "sentry" / "issues.json").is_file():
        raise ValueError(f"recipe {recipe}: missing sentry/issues.json")
    sentry = sorted(p for p in (recipe / "sentry").rglob("*") if p.is_file())
    names = [*_TOP_TEMPLATES, *(p.relative_to(recipe).as_posix() for p in sentry)]
    with tempfile.TemporaryDirectory(prefix="scenario-") as tmp:
        work, home = Path(tmp) / "repo", Path(tmp) / "home"
        home.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TZ": "UTC"}
        env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull, "LC_ALL": "C"}
        _git(env, None, "init", "-q", "-b", "main", str(work))
        shas = []
        for commit in commits:
            _apply(recipe, work, commit["files"])
            _git(env, work, "add", "-A")
            flags = ("-q", "--allow-empty", "--no-verify", "--cleanup=whitespace")
            _git(env | _identity(commit), work, "commit", *flags, "-m", commit["message"])
            shas.append(_git(env, work, "rev-parse", "HEAD").strip())
        rendered = {name: _render(recipe / name, shas) for name in names}
        out.mkdir(parents=True, exist_ok=True)
        (out / "repo.bundle").unlink(missing_ok=True)
        _git(env, work, "bundle", "create", str((out / "repo.bundle").resolve()), "HEAD", "main")
    for name, text in rendered.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return out


def _load_commits(recipe: Path) -> list[dict]:
    try:
        commits = json.loads((recipe / "recipe.json").read_text(encoding="utf-8"))["commits"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"recipe {recipe}: no readable recipe.json with 'commits': {exc}") from exc
    if not isinstance(commits, list) or not commits:
        raise ValueError(f"recipe {recipe}: 'commits' must be a non-empty list")
    for i, commit in enumerate(commits):
        ok = isinstance(commit, dict) and isinstance(commit.get("files"), dict)
        if not ok or not all(isinstance(commit.get(k), str) and commit[k].strip() for k in _FIELDS):
            raise ValueError(f"recipe {recipe}: commit {i} needs strings {_FIELDS} and 'files'")
        try:
            _git_date(commit["date"])
        except ValueError as exc:
            raise ValueError(f"recipe {recipe}: commit {i}: {exc}") from exc
    return commits


def _identity(commit: dict) -> dict[str, str]:
    """Author and committer: the commit's author, at the commit's date."""
    values = {"NAME": commit["author"], "EMAIL": commit["email"], "DATE": _git_date(commit["date"])}
    return {f"GIT_{role}_{key}": v for role in ("AUTHOR", "COMMITTER") for key, v in values.items()}


def _git_date(value: str) -> str:
    """``<unix seconds> <+hhmm>``, git's own date format, from an ISO date with an offset."""
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"date {value!r} has no UTC offset")
    return f"{int(moment.timestamp())} {moment.strftime('%z')}"


def _apply(recipe: Path, work: Path, files: dict) -> None:
    source_root = (recipe / "files").resolve()
    for repo_path, source in files.items():
        rel = PurePosixPath(str(repo_path))
        if rel.is_absolute() or ".." in rel.parts or not rel.parts or rel.parts[0] == ".git":
            raise ValueError(f"recipe {recipe}: bad repository path {repo_path!r}")
        target = work.joinpath(*rel.parts)
        if source is None:
            if not target.is_file():
                raise ValueError(f"recipe {recipe}: cannot delete absent file {repo_path!r}")
            target.unlink()
            continue
        origin = (source_root / str(source)).resolve()
        if not isinstance(source, str) or not origin.is_relative_to(source_root):
            raise ValueError(f"recipe {recipe}: bad source {source!r} for {repo_path!r}")
        if not origin.is_file():
            raise ValueError(f"recipe {recipe}: missing files/{source} for {repo_path!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(origin.read_bytes())


def _render(path: Path, shas: list[str]) -> str:
    def sub(match: re.Match) -> str:
        index = int(match.group(2))
        if index >= len(shas):
            raise ValueError(f"{path}: {match.group(0)} but the recipe has {len(shas)} commits")
        return shas[index][:7] if match.group(1) else shas[index]

    try:
        text = _SHA_TEMPLATE.sub(sub, path.read_text(encoding="utf-8"))
        if path.suffix == ".json":
            json.loads(text)
    except (OSError, UnicodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"recipe template {path}: {exc}") from exc
    return text


def _git(env: dict, repo: Path | None, *args: str) -> str:
    cmd = ["git", *(["-C", str(repo)] if repo else []), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return done.stdout
