"""manifest.yml installs the app as it is: what the app listens to, and only the scopes it uses."""

import re
from pathlib import Path

import yaml

from bot.slack import blocks

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_matches_the_app():
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    # The listeners, one module per kind (commands, actions, views, events).
    app = "\n".join(p.read_text() for p in (ROOT / "bot" / "slack").glob("*.py"))
    commands = [c["command"] for c in manifest["features"]["slash_commands"]]
    assert commands == ["/investigate"] and 'app.command("/investigate")' in app
    (shortcut,) = manifest["features"]["shortcuts"]
    assert shortcut["type"] == "message"
    assert "app.shortcut(blocks.SHORTCUT_INVESTIGATE)" in app
    assert shortcut["callback_id"] == blocks.SHORTCUT_INVESTIGATE
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert events == {"app_home_opened", "message.channels", "message.groups"}
    assert 'app.event("app_home_opened")' in app and 'app.event("message")' in app
    assert manifest["settings"]["interactivity"]["is_enabled"] is True


def test_manifest_asks_only_for_the_scopes_the_code_uses():
    scopes = set(manifest_scopes())
    assert scopes == {
        "commands",
        "chat:write",
        "channels:history",
        "groups:history",
        "usergroups:read",
    }
    code = "\n".join(p.read_text() for p in (ROOT / "bot").rglob("*.py"))
    methods = set(re.findall(r"client\.(\w+)\(", code))
    # Every Web API method the bot calls is covered by those scopes (views.* and
    # auth.test need none; chat_getPermalink needs none).
    needs = {
        "chat_postMessage": "chat:write",
        "chat_update": "chat:write",
        "chat_postEphemeral": "chat:write",
        "conversations_history": "channels:history",
        "conversations_replies": "channels:history",
        "usergroups_users_list": "usergroups:read",
    }
    assert {m for m in methods if m in needs} <= set(needs)
    assert {needs[m] for m in methods if m in needs} <= scopes
    unknown = (
        methods - set(needs) - {"views_open", "views_publish", "auth_test", "chat_getPermalink"}
    )
    assert not unknown, f"scopes not reviewed for {unknown}"


def manifest_scopes() -> list[str]:
    manifest = yaml.safe_load((ROOT / "manifest.yml").read_text())
    return manifest["oauth_config"]["scopes"]["bot"]
