"""An exported docs corpus: `docs/` of one commit, copied out with a manifest, and its index.

`export_corpus` copies the files under `docs/` as they are in a commit of a repository
(read from git's object store, never from a work tree) into a folder, and writes
`manifest.json` there: the full revision and a sha256 and size per file.

`open_corpus` is what a bot does at start: the files on disk must be exactly those of
the manifest (a file changed, added or removed since the export is an error that names
the file, never a silent reindex of whatever is there); the whoosh index kept beside them
is reused when it was built from this manifest, and rebuilt when it was not.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from agent.ports import Passage
from search.chunks import chunk_docs
from search.corpus import (
    DOCS_DIR,
    MARKDOWN_SUFFIXES,
    CorpusError,
    _decode,
    _git,
    _parse_batch,
    resolve_revision,
)
from search.index import DocsIndex
from search.retriever import DocsRetriever

MANIFEST = "manifest.json"
INDEX_DIR = ".index"
STAMP = "built-from.json"
FORMAT = 1
_REGULAR = (b"100644", b"100755")


@dataclass(frozen=True)
class Manifest:
    revision: str
    docs_dir: str
    files: dict[str, dict[str, Any]]  # repository path -> {"sha256", "size"}
    source: str = ""
    exported_at: str = ""

    @property
    def digest(self) -> str:
        """What the index is built from: the revision and every file's hash."""
        basis = json.dumps(
            {"revision": self.revision, "files": {p: f["sha256"] for p, f in self.files.items()}},
            sort_keys=True,
        )
        return hashlib.sha256(basis.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "revision": self.revision,
            "docs_dir": self.docs_dir,
            "source": self.source,
            "exported_at": self.exported_at,
            "files": dict(sorted(self.files.items())),
        }

    @classmethod
    def load(cls, folder: Path) -> Manifest:
        path = folder / MANIFEST
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CorpusError(
                f"no {MANIFEST} in {folder}: export the docs first "
                "(incident-bot export-corpus --repo PATH --rev REV --out DIR)"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorpusError(f"{path} is not readable JSON: {exc}") from None
        try:
            files = raw["files"]
            if raw.get("format") != FORMAT or not isinstance(files, dict):
                raise ValueError("unknown format")
            manifest = cls(
                revision=str(raw["revision"]),
                docs_dir=str(raw.get("docs_dir") or DOCS_DIR),
                files={
                    str(p): {"sha256": str(f["sha256"]), "size": int(f["size"])}
                    for p, f in files.items()
                },
                source=str(raw.get("source") or ""),
                exported_at=str(raw.get("exported_at") or ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorpusError(f"{path} is not a docs manifest: {exc}") from None
        for rel in manifest.files:
            _check_relative(rel, path)
        return manifest


def _check_relative(rel: str, where: Path | str) -> PurePosixPath:
    pure = PurePosixPath(rel)
    if pure.is_absolute() or not pure.parts or any(p in ("", ".", "..") for p in pure.parts):
        raise CorpusError(f"{where}: refusing the path {rel!r}")
    return pure


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- export ------------------------------------------------------------------------------


async def export_corpus(
    repo_dir: Path, revision: str, out: Path, docs_dir: str = DOCS_DIR
) -> Manifest:
    """Copy `docs_dir/` of `revision` into `out` and write its manifest; return it.

    `out` must be absent, empty, or an earlier export (it has a manifest); its docs are
    replaced as a whole. Symlinks and submodules under docs/ are not copied.
    """
    repo_dir, out = Path(repo_dir), Path(out)
    sha = await resolve_revision(repo_dir, revision)
    prefix = docs_dir.strip("/")
    listing = await _git(repo_dir, "ls-tree", "-r", "-l", "-z", sha, "--", f"{prefix}/")
    entries: list[tuple[str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid, _size = meta.split()
        if kind == b"blob" and mode in _REGULAR:
            path = raw_path.decode("utf-8", "surrogateescape")
            _check_relative(path, f"{repo_dir}@{sha[:7]}")
            entries.append((oid.decode(), path))
    if not entries:
        raise CorpusError(f"{repo_dir} has no files under {prefix}/ at {sha[:7]}")
    batch = "".join(f"{oid}\n" for oid, _ in entries).encode()
    contents = _parse_batch(await _git(repo_dir, "cat-file", "--batch", stdin=batch), len(entries))
    manifest = Manifest(
        revision=sha,
        docs_dir=prefix,
        files={
            path: {"sha256": _sha256(data), "size": len(data)}
            for (_, path), data in zip(entries, contents, strict=True)
        },
        source=str(repo_dir.resolve()),
        exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    await asyncio.to_thread(_write_export, out, prefix, entries, contents, manifest)
    return manifest


def _write_export(
    out: Path, prefix: str, entries: list[tuple[str, str]], contents: list[bytes], m: Manifest
) -> None:
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise CorpusError(f"{out} is not empty and holds no earlier export: refusing to write")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        for (_, path), data in zip(entries, contents, strict=True):
            target = staging.joinpath(*PurePosixPath(path).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        top = PurePosixPath(prefix).parts[0]
        old = out / top
        if old.exists():
            shutil.rmtree(old)
        (staging / top).rename(old)
        tmp = out / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(m.to_json(), indent=2, ensure_ascii=False) + "\n", "utf-8")
        os.replace(tmp, out / MANIFEST)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# -- verify and index ----------------------------------------------------------------------


def verify(folder: Path, manifest: Manifest) -> None:
    """The files on disk are exactly the manifest's; CorpusError names the first difference."""
    root = folder / manifest.docs_dir
    again = "export the docs again with `incident-bot export-corpus`"
    on_disk = (
        {p.relative_to(folder).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}
        if root.is_dir()
        else set()
    )
    missing = sorted(set(manifest.files) - on_disk)
    if missing:
        raise CorpusError(
            f"the docs at {folder} do not match {MANIFEST}: {missing[0]} is missing "
            f"({len(missing)} file(s) missing); {again}"
        )
    extra = sorted(on_disk - set(manifest.files))
    if extra:
        raise CorpusError(
            f"the docs at {folder} do not match {MANIFEST}: {extra[0]} is not in the manifest "
            f"of {manifest.revision[:7]}; {again}"
        )
    for rel, expected in sorted(manifest.files.items()):
        path = folder.joinpath(*PurePosixPath(rel).parts)
        if path.is_symlink():
            raise CorpusError(f"the docs at {folder}: {rel} is a symlink; {again}")
        actual = _sha256(path.read_bytes())
        if actual != expected["sha256"]:
            raise CorpusError(
                f"the docs at {folder} do not match {MANIFEST}: {rel} was changed on disk "
                f"(sha256 {actual[:12]}… on disk, the manifest of {manifest.revision[:7]} says "
                f"{expected['sha256'][:12]}…); {again}"
            )


@dataclass(frozen=True)
class OpenedCorpus:
    manifest: Manifest
    retriever: DocsRetriever
    rebuilt: bool

    @property
    def revision(self) -> str:
        return self.manifest.revision

    async def search(
        self, query: str, limit: int = 5, revision: str | None = None
    ) -> list[Passage]:
        """agent.ports.Retriever; the corpus holds one revision, the exported one."""
        return await self.retriever.search(query, limit)


def _stamp(manifest: Manifest, language: str) -> dict[str, Any]:
    return {"manifest": manifest.digest, "revision": manifest.revision, "language": language}


def open_corpus_sync(folder: Path, language: str = "en") -> OpenedCorpus:
    folder = Path(folder)
    manifest = Manifest.load(folder)
    verify(folder, manifest)
    index_dir = folder / INDEX_DIR
    wanted = _stamp(manifest, language)
    try:
        current = json.loads((index_dir / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        current = None
    if current == wanted:
        try:
            return OpenedCorpus(
                manifest, DocsRetriever.from_index(DocsIndex.open(index_dir)), False
            )
        except Exception:  # a damaged index is rebuilt like a stale one
            pass
    docs = []
    for rel in sorted(manifest.files):
        if rel.lower().endswith(MARKDOWN_SUFFIXES):
            data = folder.joinpath(*PurePosixPath(rel).parts).read_bytes()
            docs.append((rel, _decode(data)))
    chunks = chunk_docs(docs, manifest.revision)
    staging = Path(tempfile.mkdtemp(prefix=".index-", dir=folder))
    try:
        index = DocsIndex.build(chunks, language=language, directory=staging)
        del index
        (staging / STAMP).write_text(json.dumps(wanted), encoding="utf-8")
        if index_dir.exists():
            shutil.rmtree(index_dir)
        staging.rename(index_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return OpenedCorpus(manifest, DocsRetriever.from_index(DocsIndex.open(index_dir)), True)


async def open_corpus(folder: Path, language: str = "en") -> OpenedCorpus:
    """Check the exported docs against their manifest and open their index, rebuilding it
    when it was built from another manifest (or language). CorpusError when the files on
    disk differ from the manifest."""
    return await asyncio.to_thread(open_corpus_sync, folder, language)
