"""Log lines: scrubbed of every secret value of the environment, with the job's id."""

from __future__ import annotations

import json
import logging
import sys

from bot.logs import INVESTIGATION, JsonLines, Plain, Scrub, secrets_in

ENV = {
    "SLACK_BOT_TOKEN": "xoxb-MARKER-0001",
    "GITHUB_TOKEN": "ghs-MARKER-0002",
    "ORDERS_GIT_TOKEN": "MARKER-0003-git",
    "SLACK_SIGNING_SECRET": "MARKER-0004-sign",
    "GROQ_API_KEY": "gsk-MARKER-0005",
    "PATH": "/usr/bin",
    "SHORT_TOKEN": "abc",
}


def record(msg: str, *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise RuntimeError(f"auth failed for {ENV['GITHUB_TOKEN']}")
        except RuntimeError:
            exc_info = sys.exc_info()
    return logging.LogRecord("bot.x", logging.WARNING, __file__, 1, msg, args, exc_info)


def test_secret_values_are_found_by_their_variable_names() -> None:
    found = secrets_in(ENV)
    assert found == {v for k, v in ENV.items() if k not in ("PATH", "SHORT_TOKEN")}


def test_a_record_is_scrubbed_in_its_message_its_arguments_and_its_exception() -> None:
    scrub = Scrub(secrets_in(ENV))
    token = INVESTIGATION.set("inv-42")
    try:
        rec = record("posting with %s to %s", ENV["SLACK_BOT_TOKEN"], "C1", exc=True)
        assert scrub.filter(rec)
    finally:
        INVESTIGATION.reset(token)
    line = JsonLines().format(rec)
    doc = json.loads(line)
    assert doc["message"] == "posting with *** to C1"
    assert doc["investigation_id"] == "inv-42"
    assert "auth failed for ***" in doc["exception"]
    assert not any(secret in line for secret in secrets_in(ENV))
    plain = Plain("%(levelname)s:%(name)s:%(message)s").format(rec)
    assert (
        plain.startswith("WARNING:bot.x:posting with *** to C1")
        and "[investigation=inv-42]" in plain
    )
    assert ENV["GITHUB_TOKEN"] not in plain
