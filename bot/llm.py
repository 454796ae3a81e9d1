"""The model side of the configuration, from the environment.

- ``INCIDENT_BOT_EXTRACT_MODEL``: the pass-2 model that turns prose or a stopped run into
  the structured diagnosis (default: the investigating model, ``INCIDENT_BOT_MODEL``).
- ``INCIDENT_BOT_PREFETCH``: ``0``/``false``/``no``/``off`` turns the deterministic
  pre-fetch off (default on; the CLI's ``--no-prefetch`` does the same for one run).
- ``INCIDENT_BOT_MAX_TOKENS``: tokens one investigation may spend (input + output, as the
  API reports them); ``INCIDENT_BOT_TOKENS_PER_DAY``: all investigations of the database
  together in one UTC day (default: no daily limit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agent.budget import Limits
from agent.domain import Investigation
from agent.errors import InputError
from agent.ports import Model

DEFAULT_MODEL = "llama-3.3-70b-versatile"
FALSE = {"0", "false", "no", "off"}


def extract_from_env(environ: Mapping[str, str]) -> Callable[[Investigation], Model] | None:
    """The pass-2 model on the same API as the investigating one; None without a key."""
    key = environ.get("GROQ_API_KEY", "").strip()
    if not key:
        return None
    name = (
        environ.get("INCIDENT_BOT_EXTRACT_MODEL")
        or environ.get("INCIDENT_BOT_MODEL")
        or DEFAULT_MODEL
    )
    base_url = environ.get("GROQ_BASE_URL") or None

    def make(_inv: Investigation) -> Model:
        from agent.models.groq import GroqModel

        return GroqModel(name, api_key=key, base_url=base_url)

    return make


def prefetch_from_env(environ: Mapping[str, str]) -> bool:
    return environ.get("INCIDENT_BOT_PREFETCH", "1").strip().lower() not in FALSE


def repo_map_from_env(environ: Mapping[str, str]) -> bool:
    return environ.get("INCIDENT_BOT_REPO_MAP", "1").strip().lower() not in FALSE


def _count(environ: Mapping[str, str], name: str) -> int | None:
    raw = environ.get(name, "").strip().replace("_", "")
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name} is not a whole number: {raw!r}") from None
    if value < 1_000:
        raise InputError(f"{name} must be at least 1000 tokens")
    return value


def token_limits_from_env(environ: Mapping[str, str]) -> dict[str, int | None]:
    """Limits fields: ``tokens`` and ``tokens_per_day`` (defaults where unset)."""
    per_run = _count(environ, "INCIDENT_BOT_MAX_TOKENS")
    return {
        "tokens": per_run if per_run is not None else Limits().tokens,
        "tokens_per_day": _count(environ, "INCIDENT_BOT_TOKENS_PER_DAY"),
    }


def groq_from_env(environ: Mapping[str, str]) -> Callable[[Investigation], Model]:
    """The configured chat model: Groq by default, or any chat-completions server."""
    key = environ.get("GROQ_API_KEY", "").strip()
    if not key:
        raise InputError("GROQ_API_KEY is not set (or pass --offline for the offline investigator)")
    name = environ.get("INCIDENT_BOT_MODEL", DEFAULT_MODEL)
    base_url = environ.get("GROQ_BASE_URL") or None

    def make(_inv: Investigation) -> Model:
        from agent.models.groq import GroqModel

        return GroqModel(name, api_key=key, base_url=base_url)

    return make
