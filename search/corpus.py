"""Read the Markdown docs of a git repository at a revision, without checking out a work tree."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import NamedTuple

DOCS_DIR = "docs"
MARKDOWN_SUFFIXES = (".md", ".markdown")
# A doc bigger than this is generated or vendored, not prose worth indexing.
MAX_FILE_BYTES = 2_000_000
GIT_TIMEOUT_SECONDS = 30.0

# Variables that would point git at another repository than `repo_dir` (e.g. inside a hook).
_GIT_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


class CorpusError(Exception):
    """The docs could not be read: not a repository, unknown revision, git missing or failing."""


class DocFile(NamedTuple):
    path: str
    text: str


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"  # stable, English error messages
    return env


async def _git(repo_dir: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run one git command in `repo_dir`; return stdout or raise CorpusError with git's message."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "-C",
            str(repo_dir),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=_git_env(),
        )
    except OSError as exc:  # git not installed, cannot exec
        raise CorpusError(f"cannot run git: {exc}") from exc
    try:
        # communicate() writes stdin and drains stdout together, so a big batch cannot deadlock.
        out, err = await asyncio.wait_for(proc.communicate(stdin), GIT_TIMEOUT_SECONDS)
    except TimeoutError as exc:
        proc.kill()
        await proc.wait()
        raise CorpusError(f"git {args[0]} timed out after {GIT_TIMEOUT_SECONDS:g}s") from exc
    if proc.returncode != 0:
        message = err.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
        raise CorpusError(f"git {args[0]} failed in {repo_dir}: {message}")
    return out


async def resolve_revision(repo_dir: Path, revision: str) -> str:
    """The full commit SHA `revision` names in `repo_dir` (passages cite it, links pin it)."""
    if not revision or revision.startswith("-") or "\n" in revision:
        raise CorpusError(f"invalid revision {revision!r}")
    try:
        out = await _git(repo_dir, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    except CorpusError as exc:
        if "not a git repository" in str(exc) or "cannot change to" in str(exc):
            raise CorpusError(f"not a git repository: {repo_dir}") from exc
        # --quiet: an unknown revision is just exit status 1, without a message.
        raise CorpusError(f"unknown revision {revision!r} in {repo_dir}") from exc
    sha = out.decode().strip()
    if not sha:
        raise CorpusError(f"unknown revision {revision!r} in {repo_dir}")
    return sha


def _is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def _parse_ls_tree(out: bytes) -> list[tuple[str, str]]:
    """(object id, path) of the Markdown blobs in `git ls-tree -r -l -z` output."""
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid, size = meta.split()
        path = raw_path.decode("utf-8", "replace")
        # Only regular files: symlinks (120000) and submodules would yield targets or nothing.
        if kind != b"blob" or mode not in (b"100644", b"100755") or not _is_markdown(path):
            continue
        if int(size) > MAX_FILE_BYTES:
            continue
        entries.append((oid.decode(), path))
    return entries


def _parse_batch(out: bytes, count: int) -> list[bytes]:
    """Contents from `git cat-file --batch` output: `<oid> <type> <size>\\n<content>\\n` each."""
    contents: list[bytes] = []
    pos = 0
    for _ in range(count):
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        if len(header) != 3:  # "<oid> missing": the object store is damaged
            raise CorpusError(f"git cat-file: {out[pos:eol].decode(errors='replace')}")
        size = int(header[2])
        start = eol + 1
        contents.append(out[start : start + size])
        pos = start + size + 1
    return contents


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text.removeprefix("\ufeff")


async def load_docs(repo_dir: Path, revision: str, docs_dir: str = DOCS_DIR) -> list[DocFile]:
    """The Markdown files under `docs_dir/` at `revision`, sorted by path.

    A repository without a docs folder often states its contract in the README: then the
    Markdown files at the top level are the docs. One `git ls-tree` and one
    `git cat-file --batch` for all the files, whatever their number.
    """
    sha = await resolve_revision(repo_dir, revision)
    listing = await _git(repo_dir, "ls-tree", "-r", "-l", "-z", sha, "--", f"{docs_dir}/")
    entries = _parse_ls_tree(listing)
    if not entries:
        top = await _git(repo_dir, "ls-tree", "-l", "-z", sha)
        entries = [(oid, path) for oid, path in _parse_ls_tree(top) if "/" not in path]
    if not entries:
        return []
    # Object ids rather than `<rev>:<path>` so odd path characters never reach cat-file's stdin.
    batch_input = "".join(f"{oid}\n" for oid, _ in entries).encode()
    out = await _git(repo_dir, "cat-file", "--batch", stdin=batch_input)
    contents = _parse_batch(out, len(entries))
    docs = [DocFile(path, _decode(data)) for (_, path), data in zip(entries, contents, strict=True)]
    return sorted(docs, key=lambda d: d.path)
