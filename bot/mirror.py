"""A project's code through a local mirror clone (`git clone --mirror`) kept fresh.

The bot reads code only from the mirror, through mcp-server-git and the read-only code
tools, pinned to the mirror's path (the model never names a repository). The mirror is
fetched when the bot starts and again when a call names a commit it does not hold yet (a
release deployed after the last fetch), never more often than `min_interval` seconds:
a model asking for made-up SHAs cannot turn into a stream of fetches.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.errors import InputError
from agent.ports import Retriever, ToolResult, Toolset, ToolSpec

log = logging.getLogger(__name__)

DEFAULT_MIN_INTERVAL = 60.0
GIT_TIMEOUT = 300.0
_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
# Variables that would point git at another repository than the mirror.
_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
# Arguments of mcp-server-git and the code tools that name a commit.
REVISION_ARGUMENTS = ("revision", "head", "base", "target")


class MirrorError(InputError):
    """The mirror cannot be created, read or fetched."""


# Answers git's prompts from the environment of the one git process that needs it: the
# token is never in a URL, the mirror's config, a credential store or a log line.
_ASKPASS = """#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "${INCIDENT_BOT_GIT_USER:-x-access-token}" ;;
  *) printf '%s\\n' "$INCIDENT_BOT_GIT_TOKEN" ;;
esac
"""
_askpass_path: Path | None = None


def askpass() -> Path:
    """The GIT_ASKPASS script (no secret in it), written once per process."""
    global _askpass_path
    if _askpass_path is None or not _askpass_path.is_file():
        folder = Path(tempfile.mkdtemp(prefix="incident-bot-git-"))
        path = folder / "askpass.sh"
        path.write_text(_ASKPASS, encoding="utf-8")
        path.chmod(stat.S_IRWXU)
        _askpass_path = path
    return _askpass_path


async def _git(cwd: Path | None, *args: str, token: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION}
    env |= {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    auth: list[str] = []
    if token:
        env |= {"GIT_ASKPASS": str(askpass()), "INCIDENT_BOT_GIT_TOKEN": token}
        # No credential helper may keep the token once git has it.
        auth = ["-c", "credential.helper="]
    proc = await asyncio.create_subprocess_exec(
        "git",
        *(["-C", str(cwd)] if cwd else []),
        *auth,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), GIT_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return 124, f"git {args[0]} timed out after {GIT_TIMEOUT:g} s"
    text = out.decode(errors="replace") if proc.returncode == 0 else err.decode(errors="replace")
    if token:
        text = text.replace(token, "***")
    return proc.returncode or 0, text.strip()


class Mirror:
    """A bare mirror clone at `path`, cloned from `url` when it does not exist yet."""

    def __init__(
        self,
        path: Path,
        url: str | None = None,
        *,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        token: Callable[[], str | None] | None = None,
    ) -> None:
        """`token` reads the token of a private upstream when git needs it (from the
        environment, e.g. `lambda: os.environ.get("ORDERS_GIT_TOKEN")`)."""
        self.path = Path(path)
        self.url = url
        self.token = token or (lambda: None)
        self.min_interval = min_interval
        self.clock = clock
        self.fetches = 0  # fetches run (a clone counts as one)
        self.last_error: str | None = None
        self._last: float | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Clone the mirror if it is missing, check it is one, and fetch it.

        A fetch that fails at start (the upstream is unreachable) is logged and the bot
        serves what the mirror holds; a path that is not a bare repository is an error."""
        if not self.path.exists():
            if not self.url:
                raise MirrorError(f"no git mirror at {self.path} and no url to clone it from")
            async with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                code, text = await _git(
                    None,
                    "clone",
                    "--mirror",
                    "--quiet",
                    self.url,
                    str(self.path),
                    token=self.token(),
                )
                if code != 0:
                    raise MirrorError(f"cannot clone {self.url} into {self.path}: {text[:300]}")
                self._last = self.clock()
                self.fetches += 1
            return
        code, text = await _git(self.path, "rev-parse", "--is-bare-repository")
        if code != 0 or text != "true":
            raise MirrorError(f"{self.path} is not a bare mirror clone (git clone --mirror)")
        if self.url:
            # The configured upstream, not the one the mirror was first cloned from.
            code, current = await _git(self.path, "config", "--get", "remote.origin.url")
            if code != 0 or current != self.url:
                await _git(self.path, "remote", "set-url", "origin", self.url)
        await self.fetch(force=True)

    async def aclose(self) -> None:
        """Nothing runs between fetches."""

    async def fetch(self, *, force: bool = False) -> bool:
        """Fetch from the upstream unless the last fetch is younger than `min_interval`.

        Returns whether a fetch ran and succeeded; a failure is kept in `last_error`."""
        async with self._lock:
            now = self.clock()
            if not force and self._last is not None and now - self._last < self.min_interval:
                return False
            self._last = now  # a failing upstream is not retried sooner either
            self.fetches += 1
            code, text = await _git(
                self.path, "fetch", "--prune", "--quiet", "origin", token=self.token()
            )
            if code != 0:
                self.last_error = text[:300] or f"git fetch exited with {code}"
                log.warning("fetching the mirror %s failed: %s", self.path, self.last_error)
                return False
            self.last_error = None
            return True

    async def git(self, *args: str) -> tuple[int, str]:
        """A read-only git command in the mirror: (exit code, output or error)."""
        return await _git(self.path, *args)

    async def commit_of(self, revision: str) -> str | None:
        """The full SHA of the commit `revision` names in the mirror, or None."""
        if not revision or revision.startswith("-"):
            return None
        code, text = await _git(
            self.path, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"
        )
        return text if code == 0 and text else None

    async def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        code, _ = await _git(self.path, "merge-base", "--is-ancestor", ancestor, descendant)
        return code == 0

    async def has_commit(self, revision: str) -> bool:
        code, _ = await _git(self.path, "cat-file", "-e", f"{revision}^{{commit}}")
        return code == 0

    async def ensure(self, revision: str) -> bool:
        """Whether the mirror holds `revision`, fetching once (bounded) if it does not."""
        if await self.has_commit(revision):
            return True
        return await self.fetch() and await self.has_commit(revision)


def named_commits(arguments: dict[str, Any]) -> list[str]:
    """The commit SHAs a call names (`revision`, `head`, `base`, `target`; `SHA:path`)."""
    found = []
    for key in REVISION_ARGUMENTS:
        value = arguments.get(key)
        if isinstance(value, str):
            sha = value.split(":", 1)[0].strip()
            if _SHA.match(sha):
                found.append(sha)
    return found


class FreshRevisions:
    """A Toolset over the mirror: a commit a call names is fetched before the call runs."""

    def __init__(self, inner: Toolset, mirror: Mirror) -> None:
        self.name = inner.name
        self.inner = inner
        self.mirror = mirror

    @property
    def pinned(self) -> dict[str, Any]:
        """The inner toolset's pinned arguments (the catalog refuses any other value)."""
        pinned = getattr(self.inner, "pinned", None)
        return pinned if isinstance(pinned, dict) else {}

    async def get_tools(self) -> list[ToolSpec]:
        return await self.inner.get_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        for sha in named_commits(arguments or {}):
            if not await self.mirror.ensure(sha):
                log.info("commit %s is not in the mirror %s", sha, self.mirror.path)
        return await self.inner.call_tool(name, arguments)


async def sources_for(project: Any) -> tuple[Mirror | None, Retriever | None]:
    """The code mirror and the exported docs a project's configuration names (bot/config.py:
    `code_mirror`, `code_url`, `fetch_interval_seconds`, `docs_corpus`), the docs checked
    against their manifest and indexed. InputError says what is wrong with either."""
    from search.corpus import CorpusError
    from search.export import open_corpus

    mirror = None
    if project is not None and project.code_mirror is not None:
        mirror = Mirror(
            project.code_mirror, project.code_url, min_interval=project.fetch_interval_seconds
        )
    docs: Retriever | None = None
    if project is not None and project.docs_corpus is not None:
        try:
            docs = await open_corpus(project.docs_corpus, project.language)
        except CorpusError as exc:
            raise InputError(f"project `{project.key}`: {exc}") from None
    return mirror, docs
