"""Split Markdown files into sections, and long sections into overlapping windows. No I/O."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_LINES = 40
OVERLAP = 5
BREADCRUMB_SEPARATOR = " › "

# CommonMark ATX heading: up to 3 spaces of indent, 1-6 '#', then a space or the end of line.
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
# Optional closing sequence: '#'s preceded by a space (or the whole title), e.g. "## Title ##".
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_FRONT_MATTER_TITLE = re.compile(r"""^title:\s*["']?(.*?)["']?\s*$""")


@dataclass(frozen=True, slots=True)
class Chunk:
    """A passage of a doc: `text` is exactly lines `line_start`..`line_end` (1-based) of `path`."""

    path: str
    heading: str
    line_start: int
    line_end: int
    revision: str
    text: str
    # First line of the section the chunk belongs to: windows of one section share it.
    section_start: int


@dataclass(frozen=True, slots=True)
class _Section:
    heading: str
    first: int  # 0-based index of its first line (the heading line itself, if any)
    last: int  # 0-based, inclusive
    has_heading_line: bool


def _split_lines(text: str) -> list[str]:
    # Only "\n" ends a line, as for git and editors; str.splitlines would also split on \x0c etc.
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _clean_heading(raw: str) -> str:
    title = _ATX_CLOSING.sub("", raw).strip()
    # Inline-code backticks are markup, not words: "`POST /orders`" reads as "POST /orders".
    return " ".join(title.replace("`", "").split())


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a YAML front matter block, or 0 when there is none."""
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


def _front_matter_title(lines: list[str], end: int) -> str | None:
    for line in lines[1 : max(end - 1, 1)]:
        m = _FRONT_MATTER_TITLE.match(line)
        if m and m.group(1).strip():
            return m.group(1).strip()
    return None


def _headings(lines: list[str], start: int) -> list[tuple[int, int, str]]:
    """(line index, level, title) of the ATX headings outside fenced code blocks."""
    found = []
    fence: tuple[str, int] | None = None  # (fence char, length) while inside a fenced block
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            char, length = fence
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if indent <= 3 and len(stripped) >= length and stripped == char * len(stripped):
                fence = None
            continue
        m = _FENCE_OPEN.match(line)
        # A backtick fence's info string may not contain backticks (that is inline code).
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            continue
        m = _ATX.match(line)
        if m:
            found.append((i, len(m.group(1)), _clean_heading(m.group(2) or "")))
    return found


def _sections(lines: list[str], path: str) -> list[_Section]:
    body_start = _front_matter_end(lines)
    headings = _headings(lines, body_start)
    title = _front_matter_title(lines, body_start) or next(
        (t for _, level, t in headings if level == 1 and t), path
    )
    sections = []
    first_heading = headings[0][0] if headings else len(lines)
    if first_heading > body_start:
        sections.append(_Section(title, body_start, first_heading - 1, has_heading_line=False))
    stack: list[tuple[int, str]] = []  # (level, title) of the enclosing headings
    for n, (index, level, text) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        breadcrumb = BREADCRUMB_SEPARATOR.join(t for _, t in stack if t) or title
        last = headings[n + 1][0] - 1 if n + 1 < len(headings) else len(lines) - 1
        sections.append(_Section(breadcrumb, index, last, has_heading_line=True))
    return sections


def _trim(lines: list[str], first: int, last: int) -> tuple[int, int] | None:
    """The range without its leading and trailing blank lines, or None if all blank."""
    while first <= last and not lines[first].strip():
        first += 1
    while last >= first and not lines[last].strip():
        last -= 1
    return (first, last) if first <= last else None


def split_markdown(
    path: str,
    text: str,
    revision: str,
    *,
    max_lines: int = MAX_LINES,
    overlap: int = OVERLAP,
) -> list[Chunk]:
    """Chunks of one Markdown file: one per section, long sections as overlapping windows.

    A section runs from its heading to the next heading of any level; its chunk heading is the
    breadcrumb of the enclosing headings ("Componentes › CustomerReference"). Text before the
    first heading gets the file's title (front matter `title:`, else the first `#` heading,
    else `path`). Sections with nothing but a heading are skipped.
    """
    if max_lines < 1 or not 0 <= overlap < max_lines:
        raise ValueError("need max_lines >= 1 and 0 <= overlap < max_lines")
    lines = _split_lines(text)
    step = max_lines - overlap
    chunks = []
    for section in _sections(lines, path):
        body_first = section.first + 1 if section.has_heading_line else section.first
        if _trim(lines, body_first, section.last) is None:
            continue  # a heading alone says nothing its subsections' breadcrumbs don't
        span = _trim(lines, section.first, section.last)
        assert span is not None  # the body is not blank, so neither is the section
        first, last = span
        start = first
        while True:
            end = min(start + max_lines - 1, last)
            window = _trim(lines, start, end)
            if window is not None:
                a, b = window
                chunks.append(
                    Chunk(
                        path=path,
                        heading=section.heading,
                        line_start=a + 1,
                        line_end=b + 1,
                        revision=revision,
                        text="\n".join(lines[a : b + 1]),
                        section_start=first + 1,
                    )
                )
            if end >= last:
                break
            start += step
    return chunks


def chunk_docs(
    docs: Iterable[tuple[str, str]],
    revision: str,
    *,
    max_lines: int = MAX_LINES,
    overlap: int = OVERLAP,
) -> list[Chunk]:
    """Chunks of every (path, text) document, in order."""
    return [
        chunk
        for path, text in docs
        for chunk in split_markdown(path, text, revision, max_lines=max_lines, overlap=overlap)
    ]
