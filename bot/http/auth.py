"""Operator tokens: who an HTTP caller is, and what they may do.

The secrets come from the environment only, `INCIDENT_BOT_API_TOKENS`, as comma-separated
`name=token` pairs (or `name=sha256:<hex>` to give only the token's hash). They are held
as SHA-256 hashes and compared in constant time; the plaintext is not kept.

What each name may do comes from the projects file (INCIDENT_BOT_CONFIG):

    [operators.alice]
    role = "approver"          # viewer | operator | approver
    projects = ["orders"]      # "*" for every project

- viewer: reads investigations of its projects (GET, the event stream).
- operator: also starts investigations there, and acts as the requester on the ones it
  started (answers, edits the draft, re-runs), as a Slack requester may.
- approver: also approves (publishes) drafts of its projects and acts on any of their
  investigations, as a project approver in Slack; `require_other_approver` still holds.

A name with a token but no [operators] entry is a viewer of every project.
"""

from __future__ import annotations

import hashlib
import hmac
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from agent.errors import InputError

ENV = "INCIDENT_BOT_API_TOKENS"
Role = Literal["viewer", "operator", "approver"]
RANK = {"viewer": 0, "operator": 1, "approver": 2}


class OperatorConfig(BaseModel):
    role: Role = "viewer"
    projects: list[str] = Field(default_factory=lambda: ["*"])


@dataclass(frozen=True)
class Operator:
    name: str
    role: Role
    projects: frozenset[str]

    @property
    def identity(self) -> str:
        """The requester recorded for what this operator starts (never a Slack user id)."""
        return f"api:{self.name}"

    def sees(self, project: str) -> bool:
        return "*" in self.projects or project in self.projects

    def may(self, role: Role, project: str) -> bool:
        return RANK[self.role] >= RANK[role] and self.sees(project)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class Tokens:
    def __init__(self, hashes: Mapping[str, bytes], operators: Mapping[str, OperatorConfig]):
        self._hashes = dict(hashes)
        self._operators = dict(operators)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], config: Path | None = None) -> Tokens:
        hashes: dict[str, bytes] = {}
        for item in (environ.get(ENV) or "").split(","):
            if not item.strip():
                continue
            name, sep, secret = item.strip().partition("=")
            if not sep or not name or not secret:
                raise InputError(f"{ENV}: each item is name=token (an item has no name or token)")
            if secret.startswith("sha256:"):
                try:
                    hashes[name] = bytes.fromhex(secret.removeprefix("sha256:"))
                except ValueError:
                    raise InputError(f"{ENV}: the sha256 of {name} is not hex") from None
            else:
                hashes[name] = digest(secret)
        return cls(hashes, load_operators(config))

    def __bool__(self) -> bool:
        return bool(self._hashes)

    def operator(self, token: str) -> Operator | None:
        """The operator a bearer token names; every hash is compared, in constant time."""
        given = digest(token)
        found = None
        for name, expected in self._hashes.items():
            if hmac.compare_digest(given, expected):
                found = name
        if found is None:
            return None
        cfg = self._operators.get(found, OperatorConfig())
        return Operator(found, cfg.role, frozenset(cfg.projects))


def load_operators(config: Path | None) -> dict[str, OperatorConfig]:
    if config is None:
        return {}
    try:
        raw = tomllib.loads(config.read_text(encoding="utf-8")).get("operators") or {}
        return {name: OperatorConfig.model_validate(value) for name, value in raw.items()}
    except (OSError, tomllib.TOMLDecodeError, ValidationError, AttributeError) as exc:
        raise InputError(f"the [operators] of {config} are not valid: {exc}") from None
