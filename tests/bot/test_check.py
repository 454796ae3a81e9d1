"""The setup doctor's own rules (its runs against the fakes are in test_live_serve.py)."""

from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.check import SCOPES, Doctor, Line, check
from bot.config import Project, Settings
from tests.conftest import ROOT
from tests.fakes.github import FakeGitHub


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


TOKEN = "ghp-MARKER-check-3c1f"


@pytest.mark.parametrize(
    ("token", "ok", "says"),
    [
        ({"scopes": ["repo"]}, True, "the token's scopes and its account may create issues"),
        ({"scopes": ["read:org"]}, False, "not readable with the token (HTTP 404): its scopes"),
        ({"scopes": ["public_repo"]}, False, "(HTTP 404): its scopes (public_repo) lack repo"),
        ({"scopes": ["gist"], "private": False}, False, "the token's scopes (gist) may not"),
        # An empty X-OAuth-Scopes names no kind of token: the dry request decides.
        ({"scopes": [], "private": False}, False, "may not create issues (HTTP 404)"),
        ({"scopes": ["public_repo"], "private": False}, True, "its account may create issues"),
        ({"scopes": ["repo"], "role": "pull"}, False, "account may only read it"),
        ({"grants": "write"}, True, "the token may create issues (a dry request)"),
        ({"grants": "read"}, False, "may not create issues (GitHub wants issues=write)"),
        # A secondary rate limit is a 403 too: not taken for a refusal.
        ({"limit": "get_repo"}, False, "GitHub is rate limiting the token (retry after 60 s)"),
        ({"limit": "create_issue"}, False, "rate limiting the token (retry after 60 s)"),
    ],
)
async def test_github_permission_is_read_from_what_github_says_of_the_token(
    token: dict[str, Any], ok: bool, says: str
) -> None:
    """Classic tokens by their X-OAuth-Scopes and the account's role; fine-grained ones by a
    request GitHub refuses before it creates anything. No issue is ever created."""
    async with FakeGitHub(token=TOKEN, repos=["acme/shop"]) as github:
        github.scopes = token.get("scopes")
        github.private = token.get("private", True)
        github.grants["issues"] = token.get("grants", "write")
        if "limit" in token:
            message = {"message": "You have exceeded a secondary rate limit."}
            github.fail_next(token["limit"], status=403, body=message, retry_after=60)
        if token.get("role") == "pull":
            github.permissions = {"admin": False, "push": False, "triage": False, "pull": True}
        settings = Settings(github_token=TOKEN, github_api_url=github.api_url)
        doctor = Doctor(settings, {})
        project = Project(
            key="shop", repository="acme/shop", sentry_organization="acme", sentry_project="shop"
        )
        await doctor.github(project)
    (line,) = doctor.lines
    assert line.ok is ok and says in line.detail, line.render()
    assert ok or "— fix: " in line.render()
    assert github.issues["acme/shop"] == []
    assert all(c.body == {} for c in github.calls_to("create_issue"))
    assert TOKEN not in line.render()
