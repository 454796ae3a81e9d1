"""Input that would reach Slack or GitHub, through the real Bolt app: an edit the domain
refuses is shown on its block in the modal and nothing is saved; a question with direction
controls gets an ephemeral and nothing is stored; text the bot renders carries none."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from agent.domain import Investigation, Scope, State
from bot.slack import blocks
from tests.bot.test_authorization import TEAM, click, snapshot, submit_edit
from tests.bot.test_slack import APPROVER, CHANNEL, REQUESTER, Bot, running_bot, wait_until

RLO, PDI = "\u202e", "\u2069"
CONTROLS = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068")


@pytest.fixture
async def served(built_scenarios, tmp_path) -> AsyncIterator[Bot]:
    async with running_bot(built_scenarios["orders"], tmp_path, [APPROVER]) as bot:
        yield bot


async def test_a_refused_edit_says_why_on_its_block_and_saves_nothing(served):
    bot = served
    await bot.command("errores al guardar pedidos")
    inv = await bot.settled(State.COMPLETED)
    await click(bot, blocks.ACTION_DRAFT_EDIT, blocks.draft_ref(inv), REQUESTER, TEAM, CHANNEL)
    await bot.slack.wait_for(lambda s: s.calls_to("views.open"), timeout=5)
    modal = bot.slack.calls_to("views.open")[-1]["view"]
    modal = json.loads(modal) if isinstance(modal, str) else modal
    before = snapshot(await bot.store.load(inv.id))
    for title, body, block, says in (
        ("\u200b", inv.draft.body, "title", "title is empty"),
        ("x" * 300, inv.draft.body, "title", "limit is 256"),
        ("NPE", "y" * 70_000, "body", "70000 characters"),
        ("NPE", f"Run {RLO}this{PDI}", "body", "U+202E"),
    ):
        answer = await submit_edit(bot, modal, title, body, REQUESTER, TEAM)
        assert answer["response_action"] == "errors"
        assert list(answer["errors"]) == [block] and says in answer["errors"][block]
        assert snapshot(await bot.store.load(inv.id)) == before
    # What is within the limits is saved and published as it is.
    answer = await submit_edit(bot, modal, "x" * 256, "é" * 60_000, REQUESTER, TEAM)
    assert answer == {}
    edited = await wait_until(bot, lambda i: i.draft.version == 2, inv.id)
    await click(bot, blocks.ACTION_DRAFT_APPROVE, blocks.draft_ref(edited), APPROVER, TEAM, CHANNEL)
    await bot.settled(State.PUBLISHED)
    (issue,) = bot.github.issues[inv.scope.repository]
    assert issue["title"] == "x" * 256 and issue["body"].startswith("é" * 60_000)


async def test_a_question_with_direction_controls_is_refused(served):
    bot = served
    await bot.command(f"errores al guardar {RLO}sodidep{PDI}")
    await bot.slack.wait_for(lambda s: s.ephemerals, timeout=5)
    assert "U+202E" in json.dumps(bot.slack.ephemerals[-1])
    assert await bot.store.recent(None, 10) == []
    assert bot.posts() == []


def test_rendered_text_carries_no_direction_controls():
    """Stored before the check, or from tools and the model: neutralized when rendered."""
    planted = "".join(CONTROLS) + PDI
    scope = Scope(
        project_key="orders",
        repository="acme/orders",
        sentry_organization="acme",
        sentry_project="orders",
        since=datetime(2026, 11, 29, tzinfo=UTC),
        until=datetime(2026, 11, 30, tzinfo=UTC),
    )
    inv = Investigation(question=f"why {planted}fail?", scope=scope, requester="U0ALICE")
    inv.add_evidence(
        source="sentry",
        tool="get_issue",
        title=f"NPE {planted}",
        content=f"at Orders.save {planted}",
        link=f"https://sentry.example.com/{RLO}x",
    )
    rendered = json.dumps(
        [
            blocks.root_message(inv),
            blocks.evidence_card(inv.id, inv.evidence[0]),
            blocks.investigate_modal(f"alert {planted}", CHANNEL),
        ],
        ensure_ascii=False,
    )
    assert "why fail?" in rendered and "NPE" in rendered
    assert not any(c in rendered for c in (*CONTROLS, PDI))
