"""Chunking of Markdown into sections and windows: synthetic documents, no I/O."""

from __future__ import annotations

from itertools import pairwise

import pytest

from search.chunks import Chunk, chunk_docs, split_markdown

REV = "0123456789abcdef0123456789abcdef01234567"


def lines_of(text: str, chunk: Chunk) -> str:
    return "\n".join(text.split("\n")[chunk.line_start - 1 : chunk.line_end])


def test_sections_breadcrumbs_and_exact_line_ranges() -> None:
    text = (
        "# Componentes\n"  # 1
        "\n"  # 2
        "## OrderService\n"  # 3
        "Guarda el pedido.\n"  # 4
        "\n"  # 5
        "## CustomerReference\n"  # 6
        "\n"  # 7
        "Una referencia ausente se guarda vacía.\n"  # 8
        "### Longitud\n"  # 9
        "Máximo 64.\n"  # 10
        "## `POST /orders` ##\n"  # 11
        "Crea un pedido.\n"  # 12
    )
    chunks = split_markdown("docs/components.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Componentes › OrderService", 3, 4),
        ("Componentes › CustomerReference", 6, 8),
        ("Componentes › CustomerReference › Longitud", 9, 10),
        ("Componentes › POST /orders", 11, 12),
    ]
    for chunk in chunks:
        assert chunk.path == "docs/components.md"
        assert chunk.revision == REV
        assert chunk.text == lines_of(text, chunk)
        assert chunk.section_start == chunk.line_start


def test_heading_lines_inside_code_fences_are_not_headings() -> None:
    text = "\n".join(
        [
            "# Guide",  # 1
            "Intro.",  # 2
            "```bash",  # 3
            "# install it",  # 4
            "pip install x",  # 5
            "```",  # 6
            "~~~~",  # 7
            "## not a heading either",  # 8
            "~~~",  # 9: shorter than the opening fence, does not close it
            "# still code",  # 10
            "~~~~~",  # 11: closes
            "## Real",  # 12
            "Body.",  # 13
            "````",  # 14: unclosed fence runs to the end of the file
            "# code to the end",  # 15
        ]
    )
    chunks = split_markdown("docs/guide.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Guide", 1, 11),
        ("Guide › Real", 12, 15),
    ]
    assert "# install it" in chunks[0].text


def test_atx_heading_rules() -> None:
    text = "#hashtag is text\n   ## Indented three ###\n    # four spaces is code\nbody\n"
    chunks = split_markdown("docs/a.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("docs/a.md", 1, 1),  # preamble, no title anywhere
        ("Indented three", 2, 4),
    ]


def test_preamble_takes_the_title_of_the_file() -> None:
    text = "Some words before any heading.\n\n# Orders\n\nAbout orders.\n"
    chunks = split_markdown("docs/orders.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Orders", 1, 1),
        ("Orders", 3, 5),
    ]


def test_preamble_without_any_heading_takes_the_path() -> None:
    chunks = split_markdown("docs/notes.md", "\n\nJust notes.\nMore.\n\n", REV)

    assert [(c.heading, c.line_start, c.line_end, c.text) for c in chunks] == [
        ("docs/notes.md", 3, 4, "Just notes.\nMore.")
    ]


def test_front_matter_gives_the_title_and_is_not_indexed() -> None:
    text = "---\ntitle: Runbook\ntags: [ops]\n---\nIntro line.\n## Restart\nDo it.\n"
    chunks = split_markdown("docs/runbook.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Runbook", 5, 5),
        ("Restart", 6, 7),
    ]


def test_long_section_is_windowed_with_overlap_and_exact_lines() -> None:
    text = "# Big\n" + "\n".join(f"line {n}" for n in range(2, 101)) + "\n"
    chunks = split_markdown("docs/big.md", text, REV)

    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 40), (36, 75), (71, 100)]
    for chunk in chunks:
        assert chunk.heading == "Big"
        assert chunk.line_end - chunk.line_start + 1 <= 40
        assert chunk.section_start == 1
        assert chunk.text == lines_of(text, chunk)
    for before, after in pairwise(chunks):
        assert before.line_end - after.line_start + 1 == 5
    assert chunks[1].text.startswith("line 36\n")


def test_window_sizes_are_parameters() -> None:
    text = "\n".join(f"l{n}" for n in range(1, 11))
    chunks = split_markdown("docs/x.md", text, REV, max_lines=4, overlap=1)

    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 4), (4, 7), (7, 10)]
    with pytest.raises(ValueError):
        split_markdown("docs/x.md", text, REV, max_lines=5, overlap=5)


def test_empty_sections_and_documents_are_skipped() -> None:
    text = "# Title\n\n## Empty\n\n\n## Full\ntext\n## Trailing\n"
    chunks = split_markdown("docs/a.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [("Title › Full", 6, 7)]
    assert split_markdown("docs/empty.md", "", REV) == []
    assert split_markdown("docs/blank.md", "\n  \n\n", REV) == []


def test_crlf_line_endings_keep_line_numbers() -> None:
    text = "# A\r\nfirst\r\n## B\r\nsecond\r\n"
    chunks = split_markdown("docs/a.md", text, REV)

    assert [(c.heading, c.line_start, c.line_end, c.text) for c in chunks] == [
        ("A", 1, 2, "# A\nfirst"),
        ("A › B", 3, 4, "## B\nsecond"),
    ]


def test_chunk_docs_keeps_document_order() -> None:
    docs = [("docs/b.md", "# B\nb\n"), ("docs/a.md", "# A\na\n")]

    assert [c.path for c in chunk_docs(docs, REV)] == ["docs/b.md", "docs/a.md"]
