"""Logging for serve and worker: plain or JSON lines, each carrying the investigation id
of the job it was written for, and no secret value in any of them.

`INVESTIGATION` is set by the worker for the job it runs (a context variable: each
worker task has its own). Every record is scrubbed of the values of the environment's
secrets (variables named like tokens, secrets, keys and passwords) before it is written,
whoever wrote it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

INVESTIGATION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "investigation_id", default=None
)
_SECRET_NAME = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY)")
MIN_SECRET = 6  # shorter values would scrub ordinary words


def secrets_in(environ: Mapping[str, str]) -> set[str]:
    return {
        v for k, v in environ.items() if _SECRET_NAME.search(k.upper()) and len(v) >= MIN_SECRET
    }


class Scrub(logging.Filter):
    """Renders the message once, with every secret value replaced, and stamps the id."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted(set(secrets), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.scrub(record.getMessage())
        record.args = ()
        if record.exc_info:
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)
        if not hasattr(record, "investigation_id"):
            record.investigation_id = INVESTIGATION.get()
        return True


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "investigation_id": getattr(record, "investigation_id", None),
        }
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


class Plain(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        inv = getattr(record, "investigation_id", None)
        return f"{text} [investigation={inv}]" if inv else text


def configure(level: str, fmt: str, environ: Mapping[str, str]) -> None:
    """One stderr handler for the whole process, scrubbed, plain or JSON."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(Scrub(secrets_in(environ)))
    handler.setFormatter(
        JsonLines() if fmt == "json" else Plain("%(levelname)s:%(name)s:%(message)s")
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
