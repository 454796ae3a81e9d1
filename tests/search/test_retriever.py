"""Corpus export, index and retriever on real git repositories and real whoosh indexes."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.ports import Passage, Retriever
from search.chunks import Chunk, chunk_docs, split_markdown
from search.corpus import CorpusError, load_docs, resolve_revision
from search.index import DocsIndex
from search.retriever import MAX_PASSAGES, DocsRetriever

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared" / "scenarios"
ORDERS_REV = "835b04b442dc376f38b62e6ada802c1377f20c3b"
INVOICES_REV = "76204af7248e27cfc72a2f1116143910104a874b"
REV = "0" * 40

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def clone_scenario(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    bundle = SCENARIOS / name / "repo.bundle"
    if shutil.which("git") is None or not bundle.is_file():
        pytest.skip(f"scenario {name} or git not available")
    repo = tmp_path_factory.mktemp(name) / "repo"
    subprocess.run(
        ["git", "clone", "-q", str(bundle), str(repo), "-b", "main"],
        check=True,
        capture_output=True,
    )
    return repo


@pytest.fixture(scope="module")
def orders_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_scenario("orders-npe", tmp_path_factory)


@pytest.fixture(scope="module")
def invoices_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_scenario("python-keyerror", tmp_path_factory)


def line_number(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), 1) if fragment in line)


# --- corpus -------------------------------------------------------------------------------


async def test_load_docs_reads_the_markdown_at_the_revision(orders_repo: Path) -> None:
    docs = await load_docs(orders_repo, ORDERS_REV)

    assert [d.path for d in docs] == [
        "docs/components.md",
        "docs/decisions.md",
        "docs/deployments.md",
        "docs/diagnosis.md",
    ]
    for doc in docs:
        assert doc.text == git(orders_repo, "show", f"{ORDERS_REV}:{doc.path}")


async def test_load_docs_uses_one_cat_file_for_all_files(
    orders_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, ...]] = []
    real = asyncio.create_subprocess_exec

    async def spy(*args: str, **kwargs: object) -> asyncio.subprocess.Process:
        calls.append(args)
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spy)
    docs = await load_docs(orders_repo, "main")

    assert len(docs) == 4
    commands = [c[3] for c in calls]  # git -C <dir> <command>
    assert commands == ["rev-parse", "ls-tree", "cat-file"]


@needs_git
async def test_load_docs_reads_history_not_the_work_tree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs" / "sub").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    files = {
        "docs/a.md": "# A\nfirst version\n",
        "docs/b.markdown": "# B\n",
        "docs/sub/c.MD": "# C\n",
        "docs/image.png": "not markdown",
        "docs/notes.txt": "not markdown",
        "README.md": "# outside docs/\n",
        "docs/odd name ü.md": "# Odd\n",
    }
    for path, text in files.items():
        (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    first = git(repo, "rev-parse", "HEAD").strip()
    (repo / "docs" / "a.md").write_text("# A\nsecond version\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "two")
    (repo / "docs" / "a.md").write_text("# A\nuncommitted\n", encoding="utf-8")

    old = await load_docs(repo, first)
    new = await load_docs(repo, "HEAD")

    assert [d.path for d in old] == [
        "docs/a.md",
        "docs/b.markdown",
        "docs/odd name ü.md",
        "docs/sub/c.MD",
    ]
    assert old[0].text == "# A\nfirst version\n"
    assert new[0].text == "# A\nsecond version\n"
    assert await resolve_revision(repo, first[:7]) == first


@needs_git
async def test_without_a_docs_folder_the_top_level_markdown_is_the_docs(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    files = {
        "README.md": "# Tool\n\n## Contract\n\n`--limit` must be positive.\n",
        "CHANGELOG.md": "# Changes\n",
        "src/notes.md": "# not top level\n",
        "src/main.py": "print()\n",
    }
    for path, text in files.items():
        (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")

    docs = await load_docs(repo, "HEAD")

    assert [d.path for d in docs] == ["CHANGELOG.md", "README.md"]


@needs_git
async def test_corpus_errors_are_clear(tmp_path: Path, orders_repo: Path) -> None:
    with pytest.raises(CorpusError, match="not a git repository"):
        await load_docs(tmp_path, "HEAD")
    with pytest.raises(CorpusError, match="not a git repository"):
        await load_docs(tmp_path / "missing", "HEAD")
    with pytest.raises(CorpusError, match="unknown revision"):
        await load_docs(orders_repo, "f" * 40)
    with pytest.raises(CorpusError, match="invalid revision"):
        await load_docs(orders_repo, "--output=/tmp/x")
    with pytest.raises(CorpusError):
        await DocsRetriever.from_repo(orders_repo, "no-such-branch", "es")


# --- retrieval on the scenarios -----------------------------------------------------------


async def test_orders_contract_passage_comes_first(orders_repo: Path) -> None:
    retriever = await DocsRetriever.from_repo(orders_repo, ORDERS_REV, "es")
    components = git(orders_repo, "show", f"{ORDERS_REV}:docs/components.md")
    contract_line = line_number(components, "Una referencia ausente (campo omitido o `null`)")

    passages = await retriever.search("CustomerReference customerReference null strip")

    best = passages[0]
    assert best.path == "docs/components.md"
    assert "CustomerReference" in best.heading
    assert best.line_start <= contract_line <= best.line_end
    assert best.revision == ORDERS_REV
    assert best.score > 0
    lines = components.split("\n")[best.line_start - 1 : best.line_end]
    assert best.text == "\n".join(lines)
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


async def test_invoices_api_doc_comes_first(invoices_repo: Path) -> None:
    retriever = await DocsRetriever.from_repo(invoices_repo, INVOICES_REV, "en")

    passages = await retriever.search("due_in_days build_invoice")

    assert passages[0].path == "docs/api.md"
    assert "POST /invoices" in passages[0].heading
    api = git(invoices_repo, "show", f"{INVOICES_REV}:docs/api.md")
    due_line = line_number(api, "| `due_in_days` | no")
    assert passages[0].line_start <= due_line <= passages[0].line_end


async def test_spanish_stemming_on_the_scenario(orders_repo: Path) -> None:
    retriever = await DocsRetriever.from_repo(orders_repo, ORDERS_REV, "es")

    passages = await retriever.search("guardar pedido")

    assert any("guarda el pedido" in p.text for p in passages)


async def test_every_scenario_chunk_is_exact_file_lines(orders_repo: Path) -> None:
    docs = await load_docs(orders_repo, ORDERS_REV)
    texts = dict(docs)
    for chunk in chunk_docs(docs, ORDERS_REV):
        lines = texts[chunk.path].split("\n")[chunk.line_start - 1 : chunk.line_end]
        assert chunk.text == "\n".join(lines)


# --- retrieval on synthetic docs ----------------------------------------------------------


def retriever_for(docs: dict[str, str], language: str = "en") -> DocsRetriever:
    return DocsRetriever(chunk_docs(docs.items(), REV), language=language)


async def test_spanish_stemming_matches_inflected_forms() -> None:
    retriever = retriever_for(
        {
            "docs/a.md": "# Guía\n\n## Alta\nEl servicio guarda el pedido en la base.\n\n"
            "## Informes\nLos informes mensuales se envían por correo.\n"
        },
        language="es",
    )

    passages = await retriever.search("guardar pedidos")

    # Neither "guardar" nor "pedidos" is in the text: only their stems match.
    assert [p.heading for p in passages] == ["Guía › Alta"]


async def test_identifiers_match_whole_and_by_parts() -> None:
    retriever = retriever_for(
        {
            "docs/a.md": "# API\n\n## Body\nThe `customerReference` field is optional.\n\n"
            "## Terms\nSend `due_in_days`; it is trimmed with `String.strip`.\n\n"
            "## Other\nNothing relevant here at all.\n"
        }
    )

    async def top(query: str) -> str:
        return (await retriever.search(query))[0].heading

    assert await top("customerReference") == "API › Body"
    assert await top("CustomerReference") == "API › Body"
    assert await top("customer reference") == "API › Body"
    assert await top("due_in_days") == "API › Terms"
    assert await top("due days") == "API › Terms"
    assert await top("String.strip") == "API › Terms"


async def test_headings_weigh_more_than_body() -> None:
    retriever = retriever_for(
        {"docs/a.md": "# Guide\n\n## Timeouts\nHow long to wait.\n\n## Other\nSee timeouts.\n"}
    )

    passages = await retriever.search("timeouts")

    assert [p.heading for p in passages] == ["Guide › Timeouts", "Guide › Other"]


async def test_limit_is_capped_at_five() -> None:
    sections = "".join(f"## Part {n}\nThe widget number {n}.\n\n" for n in range(12))
    retriever = retriever_for({"docs/a.md": "# Widgets\n\n" + sections})

    assert len(await retriever.search("widget", limit=50)) == MAX_PASSAGES
    assert len(await retriever.search("widget")) == MAX_PASSAGES
    assert len(await retriever.search("widget", limit=2)) == 2
    assert await retriever.search("widget", limit=0) == []


@pytest.mark.parametrize(
    "query",
    [
        'customerReference:null AND (strip OR "x*")',
        "NOT customerReference",
        "title:customerReference",
        'customerReference) ("',
        "customerReference^3 ~2 [a TO z] {b TO c} *",
    ],
)
async def test_query_syntax_in_user_text_is_plain_text(query: str) -> None:
    retriever = retriever_for(
        {"docs/a.md": "# API\n\n## Body\n`customerReference` may be null.\n\n## Else\nOther.\n"}
    )

    passages = await retriever.search(query)

    # NOT, field prefixes and grouping are words here: the section is still found.
    assert passages[0].heading == "API › Body"


@pytest.mark.parametrize("query", ["*", '"', "AND", "OR NOT", ":", "()", "   ", "\\", "^~"])
async def test_queries_with_nothing_searchable_return_nothing(query: str) -> None:
    retriever = retriever_for({"docs/a.md": "# A\ntext\n"})

    assert await retriever.search(query) == []


async def test_overlapping_windows_of_one_section_give_one_passage() -> None:
    long_section = "# Big\n" + "".join(f"widget line {n}\n" for n in range(2, 101))
    other = "# Small\nanother widget\n"
    retriever = retriever_for({"docs/big.md": long_section, "docs/small.md": other})
    assert len(split_markdown("docs/big.md", long_section, REV)) == 3

    passages = await retriever.search("widget")

    assert sorted(p.path for p in passages) == ["docs/big.md", "docs/small.md"]


async def test_index_in_a_directory_can_be_reopened(tmp_path: Path) -> None:
    chunks = chunk_docs([("docs/a.md", "# A\n## Retries\nRetry three times.\n")], REV)
    DocsIndex.build(chunks, language="en", directory=tmp_path / "ix")

    retriever = DocsRetriever.from_index(DocsIndex.open(tmp_path / "ix"))
    passages = await retriever.search("retrying")

    assert [(p.heading, p.line_start, p.line_end) for p in passages] == [("A › Retries", 2, 3)]


async def test_concurrent_searches_agree() -> None:
    retriever = retriever_for({"docs/a.md": "# A\n## Cache\nThe cache expires.\n## B\nb\n"})

    results = await asyncio.gather(*(retriever.search("cache expiry") for _ in range(20)))

    assert all(r == results[0] for r in results)
    assert results[0][0].heading == "A › Cache"


async def test_unknown_language_falls_back_to_english_stemming() -> None:
    retriever = retriever_for({"docs/a.md": "# A\n## Conn\nConnections are pooled.\n"}, "xx")

    assert [p.heading for p in await retriever.search("connection")] == ["A › Conn"]


def test_retriever_implements_the_port() -> None:
    retriever: Retriever = retriever_for({"docs/a.md": "# A\nx\n"})
    assert asyncio.iscoroutinefunction(retriever.search)
    assert Passage.model_fields.keys() >= {"path", "heading", "line_start", "line_end"}
    assert isinstance(split_markdown("docs/a.md", "# A\nx\n", REV)[0], Chunk)


async def test_indexes_built_at_once_in_ram_leave_each_other_alone() -> None:
    """whoosh's writer put every RAM build's temporary files in one shared folder
    (gettempdir()/MAIN.tmp): two builds at once deleted each other's."""
    chunks = chunk_docs([("docs/a.md", "# A\n## Cache\nThe cache expires.\n" * 20)], REV)

    def builds() -> int:
        return sum(DocsIndex.build(chunks).doc_count > 0 for _ in range(40))

    assert await asyncio.gather(*(asyncio.to_thread(builds) for _ in range(3))) == [40] * 3
