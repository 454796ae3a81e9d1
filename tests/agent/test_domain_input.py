"""Text that reaches Slack or GitHub is checked in the domain, so every surface gets it:
an edit of the draft and a question are refused with a clear reason; a written draft is
fitted to GitHub's limits."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime

import pytest

from agent.domain import (
    GITHUB_BODY_CHARS,
    MARKER_ROOM,
    MAX_BODY_CHARS,
    MAX_TITLE_CHARS,
    Diagnosis,
    Draft,
    Investigation,
    Scope,
)
from agent.errors import InputError
from agent.publish.github import marker

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"


def scope() -> Scope:
    return Scope(
        project_key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        since=datetime(2026, 11, 29, tzinfo=UTC),
        until=datetime(2026, 11, 30, tzinfo=UTC),
    )


def draft() -> Draft:
    return Draft(repository="acme/orders", title="NPE when saving orders", body="The body.")


@pytest.mark.parametrize(
    ("title", "body", "field", "says"),
    [
        ("\u200b", "The body.", "title", "the title is empty"),
        (" \u200b\u2060\ufeff ", "The body.", "title", "the title is empty"),
        ("\u3164", "The body.", "title", "the title is empty"),
        ("x" * 300, "The body.", "title", "300 characters; the limit is 256"),
        ("Title", "\u200b \u200d", "body", "the body is empty"),
        ("Title", "y" * 70_000, "body", f"70000 characters; the limit is {MAX_BODY_CHARS}"),
        (f"Fix {RLO}redro{PDI}", "The body.", "title", "U+202E"),
        ("Title", f"Run {LRI}this{PDI}.", "body", "U+2066"),
    ],
)
def test_an_edit_is_refused_on_the_field_it_is_about(title, body, field, says):
    with pytest.raises(InputError, match=says.replace("+", r"\+")) as refused:
        draft().edited(version=1, title=title, body=body)
    assert refused.value.field == field


def test_the_body_limit_counts_characters_not_bytes():
    body = "é" * MAX_BODY_CHARS  # twice as many bytes in UTF-8 as GitHub's limit in characters
    assert len(body.encode()) > GITHUB_BODY_CHARS
    edited = draft().edited(version=1, title="x" * MAX_TITLE_CHARS, body=body)
    assert len(edited.body) == MAX_BODY_CHARS and edited.version == 2
    with pytest.raises(InputError, match="body has"):
        draft().edited(version=1, title="Title", body=body + "é")


def test_the_body_leaves_room_for_the_publishers_marker():
    inv = uuid.uuid4().hex
    mark = marker(inv, hashlib.sha256(b"draft").hexdigest(), f"slack:{inv}:12:{'f' * 64}:3")
    assert MAX_BODY_CHARS + len("\n\n") + len(mark) <= GITHUB_BODY_CHARS
    assert len(mark) + 2 < MARKER_ROOM


def test_a_question_with_direction_controls_or_nothing_visible_is_refused():
    with pytest.raises(InputError, match=r"U\+202E"):
        Investigation.open(f"why do {RLO}sredro{PDI} fail?", scope())
    with pytest.raises(InputError, match="empty"):
        Investigation.open("\u200b\u200b", scope())
    assert Investigation.open("¿por qué fallan los pedidos?", scope()).question


def test_a_written_draft_is_fitted_to_githubs_limits():
    inv = Investigation.open("why do orders fail?", scope())
    inv.start()
    long = Draft(
        repository="acme/orders", title=f"{RLO}" + "t" * 400, body=f"{LRI}x{PDI}" + "b" * 80_000
    )
    inv.complete(Diagnosis(root_cause="a null customer reference"), long)
    assert inv.draft is not None
    assert len(inv.draft.title) == MAX_TITLE_CHARS and inv.draft.title.endswith("…")
    assert len(inv.draft.body) <= MAX_BODY_CHARS and "size limit" in inv.draft.body
    assert not any(c in inv.draft.title + inv.draft.body for c in (RLO, LRI, PDI))
    assert inv.draft.hash == Draft.compute_hash("acme/orders", inv.draft.title, inv.draft.body)
    fine = draft()
    assert fine.fitted() is fine  # a draft within the limits is kept as it is
