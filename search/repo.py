"""The docs of a repository at the revision that runs: indexed once per revision, on disk.

`RepoDocs` reads the Markdown under configurable paths (by default `docs/` and the top-level
README) from git's objects at a revision — never a work tree — following symlinks that
stay inside the repository, and keeps one whoosh index per commit in `index_dir` so that a
restart or a second investigation of the same release reuses it.
"""

from __future__ import annotations

import asyncio
import json
import posixpath
import shutil
from collections.abc import Sequence
from pathlib import Path

from agent.ports import Passage
from search.chunks import chunk_docs
from search.corpus import (
    MARKDOWN_SUFFIXES,
    MAX_FILE_BYTES,
    CorpusError,
    DocFile,
    _decode,
    _git,
    _parse_batch,
    resolve_revision,
)
from search.index import DocsIndex
from search.retriever import DocsRetriever

DEFAULT_PATHS = ("docs/", "README.md")
_LINK = b"120000"
_FILE = (b"100644", b"100755")
_MAX_HOPS = 8
STAMP = "built-from.json"


def _under(path: str, wanted: str) -> bool:
    wanted = wanted.strip("/")
    return not wanted or path == wanted or path.startswith(f"{wanted}/")


async def load_paths(
    repo_dir: Path, revision: str, paths: Sequence[str] = DEFAULT_PATHS
) -> list[DocFile]:
    """The Markdown files under `paths` at `revision`, sorted by path. A symlink whose
    target lies inside the repository is followed (to a file or to a folder); one that
    leaves it, or loops, is skipped."""
    sha = await resolve_revision(repo_dir, revision)
    # Only the paths asked for are listed (the tree of a large repository is not: its size
    # would set the time), then what their links point at, a hop at a time.
    whole = any(not wanted.strip("/") for wanted in paths)
    tree = await _entries(repo_dir, sha, None if whole else [w.strip("/") for w in paths])
    targets: dict[str, bytes] = {}
    for _ in range(_MAX_HOPS):
        links = {p: oid for p, (mode, oid, _) in tree.items() if mode == _LINK}
        unread = [p for p in links if p not in targets]
        read = await _blobs(repo_dir, [links[p] for p in unread])
        targets |= dict(zip(unread, read, strict=True))
        missing = sorted(
            {
                joined
                for path in unread
                if (joined := _joined(path, targets[path])) is not None
                and joined not in tree
                and not any(p.startswith(f"{joined}/") for p in tree)
            }
        )
        if not missing:
            break
        tree |= await _entries(repo_dir, sha, missing)

    def resolve(path: str, hops: int = 0) -> str | None:
        """The regular file or folder a path ends at, or None outside the repository."""
        if path not in links:
            return path
        if hops >= _MAX_HOPS:
            return None
        joined = _joined(path, targets.get(path, b""))
        return None if joined is None else resolve(joined, hops + 1)

    chosen: dict[str, str] = {}  # cited path -> oid
    for wanted in paths:
        for path in sorted(p for p in tree if _under(p, wanted)):
            _add(path, resolve, tree, chosen, hops=0)
    if not chosen:
        return []
    contents = await _blobs(repo_dir, list(chosen.values()))
    docs = [DocFile(p, _decode(c)) for p, c in zip(chosen, contents, strict=True)]
    return sorted(docs, key=lambda d: d.path)


def _joined(path: str, target_bytes: bytes) -> str | None:
    """Where the link at `path` points, inside the repository; None when it leaves it."""
    target = _decode(target_bytes).strip()
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if not target or target.startswith("/") or joined == ".." or joined.startswith("../"):
        return None
    return joined


async def _entries(
    repo_dir: Path, sha: str, specs: list[str] | None
) -> dict[str, tuple[bytes, str, int]]:
    """path -> (mode, oid, size) of the blobs at `sha`, under `specs` (None: all)."""
    args = ["ls-tree", "-r", "-l", "-z", sha]
    if specs is not None:
        args += ["--", *(f":(literal){spec}" for spec in specs)]
    tree: dict[str, tuple[bytes, str, int]] = {}
    for record in (await _git(repo_dir, *args)).split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, kind, oid, size = meta.split()
        if kind == b"blob":
            tree[raw.decode("utf-8", "replace")] = (mode, oid.decode(), int(size or 0))
    return tree


def _add(path: str, resolve, tree, chosen: dict[str, str], hops: int) -> None:
    real = resolve(path)
    if real is None or hops > _MAX_HOPS:
        return
    entry = tree.get(real)
    if entry is None:  # a folder (or nothing): the files under it
        for inner in sorted(p for p in tree if p.startswith(f"{real}/")):
            _add(inner, resolve, tree, chosen, hops + 1)
        return
    mode, oid, size = entry
    if mode in _FILE and real.lower().endswith(MARKDOWN_SUFFIXES) and size <= MAX_FILE_BYTES:
        chosen.setdefault(real, oid)  # cited where it lives, once


async def _blobs(repo_dir: Path, oids: list[str]) -> list[bytes]:
    if not oids:
        return []
    out = await _git(
        repo_dir, "cat-file", "--batch", stdin="".join(f"{o}\n" for o in oids).encode()
    )
    return _parse_batch(out, len(oids))


class RepoDocs:
    """`agent.ports.Retriever` over the docs of a repository, at the revision asked for
    (else `default_revision`, resolved on each search: a fetch may move it)."""

    def __init__(
        self,
        repo_dir: Path,
        language: str = "en",
        *,
        paths: Sequence[str] = DEFAULT_PATHS,
        index_dir: Path | None = None,
        default_revision: str = "HEAD",
    ) -> None:
        self.repo_dir = Path(repo_dir)
        self.language = language
        self.paths = tuple(paths)
        self.index_dir = index_dir
        self.default_revision = default_revision
        self.builds = 0  # indexes built (not reopened) by this object
        self._indexes: dict[str, DocsRetriever] = {}
        self._lock = asyncio.Lock()

    async def retriever(self, revision: str | None = None) -> DocsRetriever:
        sha = await resolve_revision(self.repo_dir, revision or self.default_revision)
        async with self._lock:
            if sha not in self._indexes:
                self._indexes[sha] = await self._open_or_build(sha)
            return self._indexes[sha]

    async def search(
        self, query: str, limit: int = 5, revision: str | None = None
    ) -> list[Passage]:
        try:
            retriever = await self.retriever(revision)
        except CorpusError:
            if revision is None:
                raise
            retriever = await self.retriever(None)  # a revision the docs cannot read
        return await retriever.search(query, limit)

    def _stamp(self, sha: str) -> dict[str, object]:
        return {"revision": sha, "paths": list(self.paths), "language": self.language}

    async def _open_or_build(self, sha: str) -> DocsRetriever:
        folder = self.index_dir / sha if self.index_dir is not None else None
        if folder is not None and (folder / STAMP).is_file():
            try:
                if json.loads((folder / STAMP).read_text("utf-8")) == self._stamp(sha):
                    index = await asyncio.to_thread(DocsIndex.open, folder)
                    return DocsRetriever.from_index(index)
            except (OSError, ValueError) as exc:
                raise CorpusError(f"the docs index at {folder} is unreadable: {exc}") from exc
        chunks = chunk_docs(await load_paths(self.repo_dir, sha, self.paths), sha)
        self.builds += 1
        if folder is None:
            return await asyncio.to_thread(lambda: DocsRetriever(chunks, language=self.language))
        return await asyncio.to_thread(self._build_on_disk, folder, chunks, sha)

    def _build_on_disk(self, folder: Path, chunks: list, sha: str) -> DocsRetriever:
        # Built beside, then renamed: a crash mid-build leaves no half index to reopen.
        staging = folder.with_name(f".{folder.name}.building")
        shutil.rmtree(staging, ignore_errors=True)
        DocsIndex.build(chunks, language=self.language, directory=staging)
        (staging / STAMP).write_text(json.dumps(self._stamp(sha)), "utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
        return DocsRetriever.from_index(DocsIndex.open(folder))
