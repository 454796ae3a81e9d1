"""The setup doctor's own rules (its runs against the fakes are in test_live_serve.py)."""

from pathlib import Path

import yaml

from bot.check import SCOPES, Line, check
from bot.config import Settings
from tests.conftest import ROOT


def test_the_scopes_checked_are_those_manifest_yml_asks_for() -> None:
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    assert set(SCOPES) == set(manifest["oauth_config"]["scopes"]["bot"])


def test_a_line_is_one_line_with_its_fix() -> None:
    line = Line(False, "orders: Sentry", "refused:\n**Authorization**\n  expired", "a token")
    assert line.render() == "✗ orders: Sentry: refused: **Authorization** expired — fix: a token"
    assert Line(True, "Slack", "ok", "never shown").render() == "✓ Slack: ok"


async def test_without_a_projects_file_check_says_how_to_give_one(capsys, tmp_path: Path) -> None:
    assert await check(Settings(incident_bot_config=None), {}) == 1
    assert "INCIDENT_BOT_CONFIG" in capsys.readouterr().out
