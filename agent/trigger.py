"""What the failing events carry: the kind of incident and the input that triggers it.

Read from the Sentry events themselves: a request entry (a web request), a job's context,
tags or mechanism (a worker), the command line (a CLI); the request's body and query, the
custom tags, the job's arguments and the crashing frame's local variables. Secrets never
leave this module: keys that name a credential and values shaped like one are replaced,
headers and cookies are never read, and e-mail addresses are masked.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from agent import stacktrace
from agent.domain import IncidentKind, InputField, TriggerInput

MAX_FIELDS = 12
VALUE_CHARS = 120
MAX_DEPTH = 3
REDACTED = "[redacted]"

# A key that names a credential or a personal secret: its value is never shown.
SENSITIVE_KEY = re.compile(
    r"pass(word|wd|phrase)?|secret|token|auth|cookie|session|api[-_.]?key|apikey|credential|"
    r"signature|private|bearer|jwt|otp|pin\b|cvv|cvc|card[-_.]?(number|no)|iban|ssn|"
    r"access[-_.]?key",
    re.IGNORECASE,
)
# Values shaped like a credential, whatever their key says.
SENSITIVE_VALUE = re.compile(
    r"^(bearer|basic|token)\s+\S+|^eyJ[\w-]{8,}\.[\w-]{8,}|\b(sk|pk|rk)_(live|test)_\w+|"
    r"\bxox[abposr]-[\w-]+|\bgh[pousr]_\w{20,}|\bAKIA[0-9A-Z]{16}\b|\bgsk_\w+|"
    r"-----BEGIN [A-Z ]*PRIVATE KEY|://[^/\s:@]+:[^/\s@]+@",
    re.IGNORECASE,
)
# A long run of random-looking characters (a key, a hash of a password): not an id we need.
RANDOM = re.compile(r"^(?=.*\d)(?=.*[a-zA-Z])[A-Za-z0-9+/=_-]{32,}$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
# Tags every event has: they say nothing about the input.
STANDARD_TAGS = re.compile(
    r"^(environment|release|level|handled|mechanism|url|transaction|logger|dist|user|"
    r"server_name|os|os\..*|runtime|runtime\..*|browser|browser\..*|device|device\..*|"
    r"client_os|client_os\..*|sentry:.*|trace|trace\..*|replayId|url\.path|http\..*)$"
)
JOB_WORDS = re.compile(
    r"celery|job|task|sidekiq|\brq\b|queue|worker|cron|bull|resque|dramatiq|huey|delayed|"
    r"consumer|kafka|sqs|pubsub|activejob|hangfire|quartz|scheduled",
    re.IGNORECASE,
)
CLI_MECHANISMS = {"excepthook", "argv", "onuncaughtexception", "cli"}
# Names that conventionally hold incoming data: fields read off them are input fields.
DATA_RECEIVERS = (
    r"(?:request|req|body|payload|params|data|input|dto|args|kwargs|event|message|msg|job|"
    r"cmd|command|form|query|options|opts|pedido|order|item)"
)
# A field read off a data receiver: `req.body.x`, `request.x()`, `dto?.x`; not `order.save(o)`.
_ACCESS = re.compile(
    rf"\b{DATA_RECEIVERS}\w*\s*(?:\.|\?\.|->)\s*([A-Za-z_]\w*)(?!\w|\s*\((?!\s*\)))"
)
_LITERAL_KEY = re.compile(r"""\[\s*['"]([A-Za-z_][\w-]*)['"]\s*\]|\.get\(\s*['"]([A-Za-z_]\w*)""")
_SYMBOL_KEY = re.compile(r"\b(?:params|args|options)\b[^\n]*?:([a-z_]\w*)")
_DESTRUCTURE = re.compile(r"\{\s*([A-Za-z_$][\w$]*(?:\s*,\s*[A-Za-z_$][\w$]*)+)\s*\}")
_GETTER = re.compile(r"\bget([A-Z]\w*)\(\s*\)")


# -- the kind of incident ---------------------------------------------------------------


def _tags(event: Mapping[str, Any]) -> dict[str, str]:
    tags = event.get("tags")
    if isinstance(tags, Mapping):
        return {str(k): str(v) for k, v in tags.items()}
    out: dict[str, str] = {}
    for tag in tags or []:
        if isinstance(tag, Mapping) and tag.get("key") is not None:
            out[str(tag["key"])] = "" if tag.get("value") is None else str(tag["value"])
        elif isinstance(tag, list | tuple) and len(tag) == 2:
            out[str(tag[0])] = str(tag[1])
    return out


def _entry(event: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for entry in event.get("entries") or []:
        if isinstance(entry, Mapping) and entry.get("type") == kind:
            data = entry.get("data")
            return data if isinstance(data, Mapping) else None
    request = event.get("request") if kind == "request" else None  # SDK-shaped events
    return request if isinstance(request, Mapping) else None


def _contexts(event: Mapping[str, Any]) -> dict[str, Any]:
    """Sentry's structured contexts, the legacy `context` and `extra`, by name."""
    out: dict[str, Any] = {}
    for key in ("contexts", "context", "extra"):
        value = event.get(key)
        if isinstance(value, Mapping):
            out.update({str(k): v for k, v in value.items()})
    return out


def _argv(event: Mapping[str, Any]) -> list[str] | None:
    for name, value in _contexts(event).items():
        if name.lower() in ("sys.argv", "argv", "process.argv") and isinstance(value, list):
            return [str(v) for v in value]
        if isinstance(value, Mapping):
            for key in ("argv", "sys.argv", "args") if name.lower() in ("runtime", "cli") else ():
                if isinstance(value.get(key), list):
                    return [str(v) for v in value[key]]
    return None


def _job_context(event: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    for name, value in _contexts(event).items():
        if name in ("trace", "runtime", "os", "device", "app", "browser", "culture"):
            continue
        if isinstance(value, Mapping) and (
            JOB_WORDS.search(name) or {"args", "kwargs", "task_name", "job_class"} & set(value)
        ):
            return name, value
    return None


def kind_of(event: Mapping[str, Any]) -> IncidentKind:
    """A web request, a job of a worker, a command line, or unknown — from the event alone."""
    request = _entry(event, "request")
    if request and (request.get("url") or request.get("method")):
        return "request"
    tags = _tags(event)
    trace = _contexts(event).get("trace")
    op = str(trace.get("op") or "") if isinstance(trace, Mapping) else ""
    if (
        _job_context(event) is not None
        or any(JOB_WORDS.search(k) for k in tags if not STANDARD_TAGS.match(k))
        or JOB_WORDS.search(tags.get("mechanism", ""))
        or JOB_WORDS.search(op)
    ):
        return "job"
    if _argv(event) is not None or tags.get("mechanism", "").lower() in CLI_MECHANISMS:
        return "cli"
    return "unknown"


# -- scrubbing ---------------------------------------------------------------------------


def scrub(key: str, value: Any) -> str:
    """A value as shown: secrets replaced, e-mail addresses masked, long text cut."""
    if value is None:
        return "null"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if key and SENSITIVE_KEY.search(key):
        return REDACTED if text not in ("null", "", "[Filtered]") else text
    bare = text.strip("'\"")
    if SENSITIVE_VALUE.search(text) or (RANDOM.match(bare) and not UUID.match(bare)):
        return REDACTED
    text = EMAIL.sub("[email]", text)
    text = " ".join(text.split())
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


# Sources whose values may be anyone's personal data: shown in full only where the code
# that fails reads them; elsewhere their shape tells enough.
PAYLOAD = ("request.data", "job", "frame")


def shape(shown: str, value: Any) -> str:
    """A value's kind and size instead of its text: `text (12 chars)`; numbers, booleans,
    nulls and redactions stay as they are."""
    if value is None or isinstance(value, bool | int | float) or shown in (REDACTED, "[email]"):
        return shown
    if isinstance(value, str):
        bare = value.strip("'\"")
        if re.fullmatch(r"-?\d+(\.\d+)?", bare) or bare in ("", "[Filtered]"):
            return shown
        return f"text ({len(bare)} chars)"
    if isinstance(value, list | tuple):
        return f"list ({len(value)} items)"
    if isinstance(value, Mapping):
        return f"object ({len(value)} keys)"
    return type(value).__name__


def scrub_argv(argv: Sequence[str]) -> str:
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if flag.startswith("-") and SENSITIVE_KEY.search(flag):
            if eq:
                out.append(f"{flag}={REDACTED}")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(scrub("", arg))
    return " ".join(out)


def _flatten(prefix: str, value: Any, depth: int = 0) -> Iterable[tuple[str, Any]]:
    """Leaves of a payload as dotted names; the first element stands for a list."""
    if isinstance(value, Mapping) and depth < MAX_DEPTH and value:
        for key, item in list(value.items())[:40]:
            name = f"{prefix}.{key}" if prefix else str(key)
            if SENSITIVE_KEY.search(str(key)):
                yield name, REDACTED if item not in (None, "", "[Filtered]") else item
                continue
            yield from _flatten(name, item, depth + 1)
    elif isinstance(value, list) and depth < MAX_DEPTH and value:
        yield from _flatten(f"{prefix}[0]", value[0], depth + 1)
    else:
        yield prefix, value


# -- what the code reads -------------------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def keys_read(code_lines: Iterable[str]) -> list[str]:
    """Names the code reads off incoming data: `req.body.x`, `data["x"]`, `getX()`,
    `params[:x]`, `{ a, b } = …` — the fields an input may lack."""
    found: dict[str, None] = {}
    for line in code_lines:
        for m in _ACCESS.finditer(line):
            if m.group(1).lower() not in _NOT_FIELDS:
                found[m.group(1)] = None
        for m in _LITERAL_KEY.finditer(line):
            found[m.group(1) or m.group(2)] = None
        for m in _SYMBOL_KEY.finditer(line):
            found[m.group(1)] = None
        for m in _DESTRUCTURE.finditer(line):
            for name in m.group(1).split(","):
                found[name.strip()] = None
        for m in _GETTER.finditer(line):
            found[m.group(1)[:1].lower() + m.group(1)[1:]] = None
    return [k for k in found if len(k) >= 2]


# Names after a data receiver that are methods or containers, not fields.
_NOT_FIELDS = {
    "body", "data", "query", "params", "json", "get", "post", "form", "args", "kwargs",
    "headers", "files", "input", "all", "only", "require", "permit", "validated", "copy",
    "items", "keys", "values", "length", "size", "map", "filter", "then", "strip", "trim",
    "split", "len", "getattr", "cookies", "session", "user", "context", "payload", "request",
}  # fmt: skip


# -- the trigger -------------------------------------------------------------------------


def _entry_point(event: Mapping[str, Any], kind: IncidentKind) -> str | None:
    tags = _tags(event)
    if kind == "request":
        request = _entry(event, "request") or {}
        path = urlsplit(str(request.get("url") or "")).path or tags.get("transaction")
        method = str(request.get("method") or "").upper()
        return f"{method} {path}".strip() or None
    if kind == "job":
        job = _job_context(event)
        name = job[1].get("task_name") or job[1].get("job_class") if job else None
        return str(name or tags.get("transaction") or "") or None
    if kind == "cli":
        argv = _argv(event)
        return scrub_argv(argv) if argv else tags.get("transaction")
    return tags.get("transaction")


def _fields_of(event: Mapping[str, Any], kind: IncidentKind) -> list[tuple[str, Any, str]]:
    out: list[tuple[str, Any, str]] = []
    request = _entry(event, "request")
    if request:
        data = request.get("data")
        if isinstance(data, str):
            with contextlib.suppress(ValueError):
                data = json.loads(data)
        if data not in (None, "", {}, []):
            out += [(n, v, "request.data") for n, v in _flatten("", data)]
        query = request.get("query")
        pairs = query.items() if isinstance(query, Mapping) else query or []
        for pair in pairs:
            if isinstance(pair, list | tuple) and len(pair) == 2:
                out.append((str(pair[0]), pair[1], "request.query"))
    for key, value in _tags(event).items():
        if not STANDARD_TAGS.match(key):
            out.append((key, value, "tag"))
    job = _job_context(event)
    if job is not None:
        for key in ("args", "kwargs"):
            if job[1].get(key) not in (None, [], {}):
                out += [(n, v, "job") for n, v in _flatten(key, job[1][key])]
    argv = _argv(event)
    if argv:
        out.append(("argv", scrub_argv(argv), "argv"))
    frame = _crash_vars(event)
    if frame:
        out += [(n, v, "frame") for n, v in _flatten("", frame)]
    return out


def _crash_vars(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Local variables of the innermost application frame that recorded any."""
    for exc in reversed((_entry(event, "exception") or {}).get("values") or []):
        frames = ((exc or {}).get("stacktrace") or {}).get("frames") or []
        for raw in reversed(frames):
            in_app = raw.get("inApp", raw.get("in_app")) if isinstance(raw, Mapping) else None
            if in_app is True and isinstance(raw.get("vars"), Mapping) and raw["vars"]:
                return raw["vars"]
    return None


def _payloads(event: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    request = _entry(event, "request")
    if request:
        data = request.get("data")
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except ValueError:
                data = None
        out.append(data)
    job = _job_context(event)
    if job is not None:
        out += [job[1].get("args"), job[1].get("kwargs")]
    return [x for x in out if x not in (None, "", [], {})]


def _keys_deep(values: list[Any], depth: int = 0) -> set[str]:
    """Every key at any depth of the payloads (normalized), for telling what is absent."""
    out: set[str] = set()
    for value in values:
        if depth > 8:
            break
        if isinstance(value, Mapping):
            out |= {_norm(str(k)) for k in value}
            out |= _keys_deep(list(value.values()), depth + 1)
        elif isinstance(value, list):
            out |= _keys_deep(value[:20], depth + 1)
    return out


def _leaf(name: str) -> str:
    return re.split(r"[.\[]", name.rsplit(".", 1)[-1])[0] if name else name


def trigger_of(
    events: Sequence[Mapping[str, Any]],
    code_lines: Sequence[str],
    evidence: list[str],
) -> TriggerInput | None:
    """The input the failing events carry, most telling fields first: the ones the suspect
    code reads, then nulls, then the rest. None when there are no events."""
    if not events:
        return None
    newest = events[0]
    kind = kind_of(newest)
    wanted = {_norm(k) for k in keys_read(code_lines)}
    words = {_norm(w) for line in code_lines for w in stacktrace.identifiers(line)}
    seen: dict[tuple[str, str, str], int] = {}
    payload_names: set[str] = set()
    has_payload = False
    for event in events:
        payload_names |= _keys_deep(_payloads(event))
        for name, value, source in _fields_of(event, kind):
            if source in ("request.data", "job"):
                has_payload = True
            shown = scrub(name, value) if source != "argv" else str(value)
            if source in PAYLOAD and _norm(_leaf(name)) not in wanted | words:
                shown = shape(shown, value)
            key = (name, shown, source)
            seen[key] = seen.get(key, 0) + 1

    def rank(item: tuple[tuple[str, str, str], int]) -> tuple[int, int]:
        (name, shown, _), count = item
        leaf = _norm(_leaf(name))
        return (
            0 if leaf in wanted else 1 if leaf in words else 2 if shown == "null" else 3,
            -count,
        )

    fields = [
        InputField(name=n, value=v, source=s, events=c)
        for (n, v, s), c in sorted(seen.items(), key=rank)[:MAX_FIELDS]
    ]
    absent: list[str] = []
    if has_payload:
        for key in keys_read(code_lines):
            if _norm(key) not in payload_names:
                absent.append(key)
        for f in fields:
            if f.value == "null" and _norm(_leaf(f.name)) in wanted | words:
                absent.append(f"{f.name} (null)")
    return TriggerInput(
        kind=kind,
        entry=_entry_point(newest, kind),
        fields=fields,
        absent=list(dict.fromkeys(absent))[:8],
        events_read=len(events),
        evidence=evidence,
    )
