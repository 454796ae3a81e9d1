"""Frames out of Sentry events, for any platform.

Pure functions over an event dict in the Sentry REST shape (camelCase:
`lineNo`, `absPath`, `inApp`, `context` as `[[lineNo, "source"], ...]`). They
rely only on the frame fields every SDK fills (filename, absPath, module,
function, lineNo, inApp, context), so java, python, node, go, ruby and php
events read the same way. The store/SDK shape (`lineno`, `abs_path`, `in_app`,
`pre_context`/`context_line`/`post_context`, a top-level `exception`) is
accepted too, because recordings are not always made through the REST API.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "STOPWORDS",
    "ExceptionInfo",
    "Frame",
    "callee",
    "crash_frame",
    "exceptions",
    "file_names",
    "identifiers",
    "is_library",
    "normalize_path",
    "release_sha",
    "resolve_path",
    "stack_paths",
    "unwound",
]


@dataclass(slots=True)
class Frame:
    filename: str | None
    abs_path: str | None
    module: str | None
    function: str | None
    lineno: int | None
    in_app: bool | None
    context_line: str | None
    context: list[tuple[int, str]] = field(default_factory=list)
    platform: str | None = None


@dataclass(slots=True)
class ExceptionInfo:
    """One exception value. `frames` run oldest call first, the crashing frame last."""

    type: str | None
    value: str | None
    module: str | None
    frames: list[Frame] = field(default_factory=list)


# -- reading events ------------------------------------------------------------


def _get(d: Mapping[str, Any], *keys: str) -> Any:
    """The first key present with a non-None value (REST camelCase, then SDK snake_case)."""
    for key in keys:
        value = d.get(key)
        if value is not None:
            return value
    return None


def _str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _context(raw: Mapping[str, Any], lineno: int | None) -> list[tuple[int, str]]:
    pairs: list[tuple[int, str]] = []
    ctx = raw.get("context")
    if isinstance(ctx, list) and ctx:
        for item in ctx:
            if isinstance(item, list | tuple) and len(item) == 2:
                number = _int(item[0])
                if number is not None:
                    pairs.append((number, "" if item[1] is None else str(item[1])))
        return pairs
    # SDK shape: pre_context / context_line / post_context around lineno.
    line = raw.get("context_line")
    if line is not None and lineno is not None:
        pre = [str(x) for x in raw.get("pre_context") or []]
        post = [str(x) for x in raw.get("post_context") or []]
        start = lineno - len(pre)
        for i, text in enumerate([*pre, str(line), *post]):
            pairs.append((start + i, text))
    return pairs


def _frame(raw: Mapping[str, Any], platform: str | None) -> Frame:
    lineno = _int(_get(raw, "lineNo", "lineno"))
    if lineno is not None and lineno < 1:
        # The JVM marks a generated proxy's line -1 and a native method's -2: no line at all.
        lineno = None
    context = _context(raw, lineno)
    context_line = next((text for number, text in context if number == lineno), None)
    if context_line is None:
        context_line = _str(raw.get("context_line"))
    in_app = _get(raw, "inApp", "in_app")
    return Frame(
        filename=_str(raw.get("filename")),
        abs_path=_str(_get(raw, "absPath", "abs_path")),
        module=_str(raw.get("module")),
        function=_str(raw.get("function")),
        lineno=lineno,
        in_app=in_app if isinstance(in_app, bool) else None,
        context_line=context_line,
        context=context,
        platform=_str(raw.get("platform")) or platform,
    )


def _frames(stacktrace: Any, platform: str | None) -> list[Frame]:
    if not isinstance(stacktrace, Mapping):
        return []
    raw_frames = stacktrace.get("frames")
    if not isinstance(raw_frames, list):
        return []
    return unwound([_frame(f, platform) for f in raw_frames if isinstance(f, Mapping)])


# The functions that unwind a panic: Go's runtime (`runtime.gopanic`, `runtime.sigpanic`,
# `runtime.panicmem`, `runtime.goPanicIndex`...), Rust's `core::panicking` / `std::panicking`.
_GO_PANIC = re.compile(r"^(?:runtime\.)?(?:go)?(?:sig)?panic\w*$", re.IGNORECASE)
_RUST_PANIC = re.compile(r"\b(?:core|std)::panicking::|\brust_begin_unwind\b|__rust_start_panic")


def _unwinding(frame: Frame) -> bool:
    function = frame.function or ""
    if _RUST_PANIC.search(function):
        return True
    paths = [_slashed(p) for p in (frame.filename, frame.abs_path) if p]
    in_runtime = frame.module == "runtime" or any(
        p.startswith("runtime/") or "/src/runtime/" in p for p in paths
    )
    return in_runtime and bool(_GO_PANIC.match(function.rsplit(".", 1)[-1]))


def unwound(frames: list[Frame]) -> list[Frame]:
    """The frames up to the panic machinery, without the handler the panic ran into.

    A panic recovered by a deferred handler that reports it (`defer` + `recover()` and
    `hub.Recover`, a Rust panic hook) is captured from inside the handler: its frames run
    caller → crash → the runtime's panic frames → the handler. The crash is the frame the
    panic left, right before the panic machinery; what follows it only reports the panic."""
    first = next((i for i, f in enumerate(frames) if i and _unwinding(f)), None)
    if first is None:
        return frames
    end = first
    while end < len(frames) and _unwinding(frames[end]):
        end += 1
    return frames[:end]


def _entries(event: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    out = []
    for entry in event.get("entries") or []:
        if isinstance(entry, Mapping) and entry.get("type") == kind:
            data = entry.get("data")
            if isinstance(data, Mapping):
                out.append(data)
    # SDK/store shape keeps the interfaces at the top level.
    top = event.get(kind)
    if not out and isinstance(top, Mapping):
        out.append(top)
    return out


def _values(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    values = data.get("values")
    if isinstance(values, list):
        return [v for v in values if isinstance(v, Mapping)]
    if isinstance(values, Mapping):
        return [values]
    return []


def _threads(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    threads: list[Mapping[str, Any]] = []
    for data in _entries(event, "threads"):
        threads.extend(_values(data))
    return threads


def _crashed_thread(threads: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    with_frames = [t for t in threads if isinstance(t.get("stacktrace"), Mapping)]
    for flag in ("crashed", "current"):
        for thread in with_frames:
            if thread.get(flag):
                return thread
    return with_frames[0] if len(with_frames) == 1 else None


def exceptions(event: Mapping[str, Any]) -> list[ExceptionInfo]:
    """Every exception value of the event, in recorded order (cause first, raised last).

    Falls back to the stack held by a `threads` entry (Go, Java with attached
    stacks) or a bare `stacktrace` entry when the exception has none.
    """
    platform = _str(event.get("platform"))
    threads = _threads(event)
    bare_stacks = _entries(event, "stacktrace")
    out: list[ExceptionInfo] = []
    for data in _entries(event, "exception"):
        for value in _values(data):
            frames = _frames(value.get("stacktrace"), platform)
            if not frames:
                frames = _frames(value.get("rawStacktrace"), platform)
            if not frames and threads:
                # The SDK linked the exception to the thread that raised it.
                thread_id = value.get("threadId", value.get("thread_id"))
                owner = next((t for t in threads if t.get("id") == thread_id), None)
                if thread_id is None or owner is None:
                    owner = _crashed_thread(threads)
                if owner is not None:
                    frames = _frames(owner.get("stacktrace"), platform)
            if not frames and len(bare_stacks) == 1:
                frames = _frames(bare_stacks[0], platform)
            exc_type, exc_value = _str(value.get("type")), _str(value.get("value"))
            out.append(ExceptionInfo(exc_type, exc_value, _str(value.get("module")), frames))
    if out:
        return out

    # No exception interface: a crash or message event that carries a stack elsewhere.
    metadata = event.get("metadata") if isinstance(event.get("metadata"), Mapping) else {}
    exc_type = _str(metadata.get("type")) if metadata else None
    exc_value = (_str(metadata.get("value")) if metadata else None) or _str(
        event.get("message") or event.get("title")
    )
    thread = _crashed_thread(threads) if threads else None
    if thread is not None:
        frames = _frames(thread.get("stacktrace"), platform)
        if frames:
            return [ExceptionInfo(exc_type, exc_value, None, frames)]
    for stack in bare_stacks:
        frames = _frames(stack, platform)
        if frames:
            return [ExceptionInfo(exc_type, exc_value, None, frames)]
    return []


# -- library or application ------------------------------------------------------


def _words(*texts: str) -> frozenset[str]:
    return frozenset(word for text in texts for word in text.split())


# Path fragments of third-party and runtime code (compared lowercase, "/" separators).
_LIBRARY_PATH_PARTS = (
    "/site-packages/",
    "/dist-packages/",
    "/node_modules/",
    "/go/pkg/mod/",
    "/pkg/mod/",
    "/vendor/",
    "/gems/",
    "/bundle/ruby/",
    "/rubygems/",
    "/usr/local/go/src/",
    "/usr/lib/go/src/",
    "/libexec/src/",
    "/usr/share/php/",
    "/usr/share/ruby",
    "/lib/ruby/",
)
_LIBRARY_PATH_RE = re.compile(
    r"/lib(?:64)?/python\d(?:\.\d+)?/"  # CPython stdlib and every venv below it
    r"|/usr/lib/go-[\d.]+/"
    r"|/lib/ruby/(?:gems/)?\d"
)
# Relative paths that only runtimes and package managers produce.
_LIBRARY_PREFIXES = (
    "node:",
    "node_modules/",
    "vendor/",
    "gems/",
    "webpack/bootstrap",
    "<frozen ",
    "<anonymous>",
    "[native code]",
    "native ",
)
_NODE_INTERNAL_RE = re.compile(r"^internal/.+\.[cm]?js$")

_JVM_LIBRARY_MODULES = (
    "java.",
    "javax.",
    "jakarta.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "kotlinx.",
    "scala.",
    "akka.",
    "groovy.",
    "clojure.",
    "android.",
    "androidx.",
    "dalvik.",
    "org.springframework.",
    "org.apache.",
    "org.hibernate.",
    "org.jboss.",
    "org.eclipse.",
    "org.glassfish.",
    "org.postgresql.",
    "org.slf4j.",
    "org.aspectj.",
    "org.junit.",
    "org.codehaus.",
    "io.sentry.",
    "io.netty.",
    "io.micrometer.",
    "io.grpc.",
    "io.undertow.",
    "reactor.",
    "com.zaxxer.",
    "com.fasterxml.",
    "com.mysql.",
    "com.google.common.",
    "com.google.protobuf.",
    "ch.qos.logback.",
    "okhttp3.",
    "okio.",
    "retrofit2.",
    "net.bytebuddy.",
)
_JVM_SUFFIXES = (".java", ".kt", ".kts", ".scala", ".groovy", ".clj")
_JVM_PLATFORMS = {"java", "kotlin", "scala", "groovy", "android", "clojure"}
_PYTHON_LIBRARY_MODULES = ("sentry_sdk.", "importlib.", "_pytest.", "pluggy.")

# First path element of Go standard-library packages (module paths of real modules
# contain a dot in their first element, e.g. github.com/...).
_GO_STDLIB_ROOTS = _words(
    """archive bufio builtin bytes cmp compress container context crypto database debug embed
    encoding errors expvar flag fmt go hash html image index internal io iter log maps math mime
    net os path plugin reflect regexp runtime slices sort strconv strings sync syscall testing
    text time unicode unique unsafe weak"""
)
# Relative Go file paths can't be told from an app's own `internal/...` package, so the
# filename check leaves out the roots an application is likely to use as well.
_GO_STDLIB_FILE_ROOTS = _GO_STDLIB_ROOTS - {"internal", "log", "errors", "time", "text", "html"}


def _slashed(path: str) -> str:
    return path.replace("\\", "/")


def _is_go(frame: Frame) -> bool:
    paths = (frame.filename or "", frame.abs_path or "")
    return frame.platform == "go" or any(p.endswith(".go") for p in paths)


def _is_jvm(frame: Frame) -> bool:
    paths = (frame.filename or "", frame.abs_path or "")
    return (frame.platform or "") in _JVM_PLATFORMS or any(p.endswith(_JVM_SUFFIXES) for p in paths)


def _go_stdlib_module(module: str) -> bool:
    if module == "main":
        return False
    first = module.split("/", 1)[0]
    return "." not in first and first in _GO_STDLIB_ROOTS


def is_library(frame: Frame) -> bool:
    """True for third-party, framework and runtime frames.

    The SDK's `inApp` decides when it is recorded; the path and module
    heuristics only fill in when it is missing.
    """
    if frame.in_app is not None:
        return not frame.in_app
    raw_paths = [_slashed(p) for p in (frame.abs_path, frame.filename) if p]
    module = frame.module or ""
    if not raw_paths and not module:
        return True  # nothing that could point at application code
    for raw in raw_paths:
        low = raw.lower()
        probe = "/" + low.lstrip("/")
        if any(part in probe for part in _LIBRARY_PATH_PARTS) or _LIBRARY_PATH_RE.search(probe):
            return True
        if low.startswith(_LIBRARY_PREFIXES) or _NODE_INTERNAL_RE.match(low):
            return True
        if low in ("native", "unknown", "<unknown>"):
            return True  # V8 builtins and frames the SDK could not place
        if low.endswith(".go") and not raw.startswith("/"):
            first = raw.split("/", 1)[0]
            if "/" in raw and first in _GO_STDLIB_FILE_ROOTS:
                return True  # GOROOT file trimmed to "runtime/panic.go"
    if _is_jvm(frame) and module.startswith(_JVM_LIBRARY_MODULES):
        return True
    go_library = _go_stdlib_module(module) or "/vendor/" in module or "third_party" in module
    if _is_go(frame) and module and go_library:
        return True
    return module.startswith(_PYTHON_LIBRARY_MODULES)


# -- releases --------------------------------------------------------------------

_SHA_RE = re.compile(r"^[0-9a-fA-F]{7,40}$")


def _tag(event: Mapping[str, Any], key: str) -> str | None:
    tags = event.get("tags")
    if isinstance(tags, Mapping):
        return _str(tags.get(key))
    for tag in tags or []:
        if isinstance(tag, Mapping) and tag.get("key") == key:
            return _str(tag.get("value"))
        if isinstance(tag, list | tuple) and len(tag) == 2 and tag[0] == key:
            return _str(tag[1])
    return None


def release_sha(event: Mapping[str, Any], release_prefix: str) -> str | None:
    """The commit the event's release names: the version minus the prefix, if it is a SHA."""
    release = event.get("release")
    version: str | None = None
    if isinstance(release, Mapping):
        version = _str(release.get("version"))
    elif isinstance(release, str):
        version = release or None
    if version is None:
        version = _tag(event, "release")
    if version is None:
        return None
    version = version.strip()
    if release_prefix and version.startswith(release_prefix):
        version = version[len(release_prefix) :]
    # A version without the prefix is accepted only when it is a bare SHA.
    return version.lower() if _SHA_RE.match(version) else None


# -- mapping frames to repository files ---------------------------------------------

_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:/{0,3}")
_DRIVE_RE = re.compile(r"^[A-Za-z]:/")


def normalize_path(path: str) -> str:
    """A frame path as a relative repository-style path: no scheme, query, `~/`, `./` or `/`."""
    path = _slashed(path.strip())
    path = path.split("?", 1)[0].split("#", 1)[0]
    if _DRIVE_RE.match(path):
        path = path[3:]
    elif _SCHEME_RE.match(path):
        path = _SCHEME_RE.sub("", path, count=1)
    parts = [p for p in path.split("/") if p not in ("", ".", "..", "~")]
    # webpack adds "(app-pages-browser)"-style layer names before the path.
    while parts and parts[0].startswith("(") and parts[0].endswith(")"):
        parts.pop(0)
    return "/".join(parts)


def _jvm_candidates(frame: Frame) -> list[str]:
    module = frame.module or ""
    if not module or "/" in module:
        return []
    package, _, cls = module.rpartition(".")
    base = (frame.filename or "").rsplit("/", 1)[-1]
    names = [base] if base.endswith(_JVM_SUFFIXES) else []
    if not names:
        outer = cls.split("$", 1)[0]
        if outer:
            names = [f"{outer}.java", f"{outer}.kt"]
    prefix = package.replace(".", "/") + "/" if package else ""
    return [prefix + name for name in names]


def _candidates(frame: Frame) -> list[str]:
    out: list[str] = []
    for raw in (frame.abs_path, frame.filename):
        if raw:
            norm = normalize_path(raw)
            if norm and norm not in out:
                out.append(norm)
    if _is_jvm(frame):
        out.extend(c for c in _jvm_candidates(frame) if c not in out)
    elif _is_go(frame) and frame.module and ("/" in frame.module or "." in frame.module):
        base = normalize_path(frame.filename or frame.abs_path or "").rsplit("/", 1)[-1]
        if base.endswith(".go"):
            joined = f"{frame.module.strip('/')}/{base}"
            if joined not in out:
                out.append(joined)
    elif frame.module and (frame.filename or "").endswith(".py") and "/" not in frame.module:
        dotted = frame.module.replace(".", "/") + ".py"
        if dotted not in out:
            out.append(dotted)
    return out


def _suffix_score(candidate: list[str], repo: list[str]) -> tuple[int, bool]:
    """How many trailing path components agree, and whether the repo path is used up.

    A match of the file name alone where both paths go on with different
    directories (flask/app.py against invoices/app.py) is two different files.
    """
    n = 0
    while n < len(candidate) and n < len(repo) and candidate[-1 - n] == repo[-1 - n]:
        n += 1
    if n == 0 or (n < 2 and n < len(candidate) and n < len(repo)):
        return 0, False
    return n, n == len(repo)


def resolve_path(frame: Frame, repo_files: Sequence[str]) -> str | None:
    """The repository file the frame ran, or None when none or several fit equally well."""
    candidates = [c.split("/") for c in _candidates(frame)]
    if not candidates:
        return None
    best: dict[str, tuple[int, bool]] = {}
    for repo_file in repo_files:
        parts = normalize_path(repo_file).split("/")
        score = max(_suffix_score(c, parts) for c in candidates)
        if score[0]:
            best[repo_file] = score
    if not best:
        return None
    top = max(n for n, _ in best.values())
    tied = [f for f, (n, _) in best.items() if n == top]
    if len(tied) == 1:
        return tied[0]
    # Same depth of agreement: only a file matched in full is a better guess.
    whole = [f for f in tied if best[f][1]]
    return whole[0] if len(whole) == 1 else None


def file_names(excs: Sequence[ExceptionInfo], limit: int = 64) -> list[str]:
    """The paths the frames may run (as the frames give them, with their folders),
    application frames first, each crash end first: what to look up in the repository
    instead of listing all of it."""
    ordered = [f for e in excs for f in reversed(e.frames) if not is_library(f)]
    ordered += [f for e in excs for f in reversed(e.frames) if is_library(f)]
    names: list[str] = []
    for frame in ordered:
        for candidate in _candidates(frame):
            base = candidate.rsplit("/", 1)[-1]
            if base and "." in base and candidate not in names:
                names.append(candidate)
    return names[:limit]


def crash_frame(
    excs: Sequence[ExceptionInfo], repo_files: Sequence[str]
) -> tuple[ExceptionInfo, Frame, str] | None:
    """The frame to follow: the application frame nearest the crash, starting at the root cause.

    The root cause comes first in a chain, so its application frame is where
    things first went wrong; a cause that never left library code is skipped.
    Without any resolvable application frame, any frame that resolves will do.
    """
    for app_only in (True, False):
        for exc in excs:
            frames = list(reversed(exc.frames))
            for i, frame in enumerate(frames):
                if app_only and is_library(frame):
                    continue
                path = resolve_path(frame, repo_files)
                if path is not None:
                    caller = call_site(exc, frames[i + 1 : i + 2], repo_files)
                    return (exc, *caller) if caller else (exc, frame, path)
    return None


# PHP reports a wrong argument at the callee's declaration, and says where it was called:
# `bultos(): Argument #2 ($maximoKg) must be of type float, null given, called in
# /var/www/.../class-calculadora.php on line 32`.
_CALLED_IN = re.compile(r"\bcalled in (\S+) on line (\d+)")


def call_site(
    exc: ExceptionInfo, outer: Sequence[Frame], repo_files: Sequence[str]
) -> tuple[Frame, str] | None:
    """The caller's frame, when the exception says the failure is the call it made."""
    m = _CALLED_IN.search(exc.value or "")
    if not m or not outer or outer[0].lineno != int(m.group(2)):
        return None
    name = m.group(1).replace("\\", "/").rsplit("/", 1)[-1]
    frame = outer[0]
    path = resolve_path(frame, repo_files)
    where = (frame.abs_path or frame.filename or "").replace("\\", "/")
    return (frame, path) if path is not None and where.endswith(name) else None


def callee(exc: ExceptionInfo, frame: Frame) -> str:
    """The library function the exception left from, called by `frame` (`new NumberFormat`
    → NumberFormat); '' when the stack shows none."""
    for i, f in enumerate(exc.frames):
        if f is frame:
            after = exc.frames[i + 1 : i + 2]
            if after and is_library(after[0]) and after[0].function:
                pieces = [p for p in re.split(r"[.:#/\\\s()*]+", after[0].function) if p]
                return pieces[-1].strip("<>") if pieces else ""
    return ""


def stack_paths(exc: ExceptionInfo, repo_files: Sequence[str]) -> list[tuple[Frame, str]]:
    """Every application frame of the exception that maps to a repository file, crash end first."""
    out: list[tuple[Frame, str]] = []
    for frame in reversed(exc.frames):
        if is_library(frame):
            continue
        path = resolve_path(frame, repo_files)
        if path is not None:
            out.append((frame, path))
    return out


# -- identifiers -----------------------------------------------------------------

STOPWORDS: frozenset[str] = _words(
    # English
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can cannot could did do does doing done down during
    each else few for from further had has have having here how if in into is it its itself
    just may might more most must no nor not now of off on once only or other our out over own
    same shall should so some such than that the their them then there these they this those
    through to too under until up upon very was we were what when where which while who whom
    why will with within without would yet you your""",
    # Spanish
    """al algo como con cual cuando de del desde donde el ella ellos en entre era es esa ese
    eso esta estaba estas este esto estos está están fue ha han hasta hay la las le les lo los
    mas más me mi muy nada ni no nos o otra otro para pero por porque que qué se ser si sin
    sobre son su sus también tiene todo tras tu un una uno unos unas y ya""",
    # Words of error messages and questions that name no code
    """argument arguments attribute call called calling caused error errors exception
    expected failed failure fatal got invoke invoked issue issues null nil none property
    properties read reading undefined unexpected unable investigate investiga investigar
    errores fallo fallos""",
    # Keywords and builtin type names that every code line is full of
    """async await bool boolean byte catch char class const def double elif end except false
    final finally float fn func function import int integer let list long map new package
    private protected public raise return self static str string super switch this throw
    throws true try var void""",
)

_IDENT_RE = re.compile(
    r"""'(?P<sq>[^'\s]{1,120})'
    |"(?P<dq>[^"\s]{1,120})"
    |`(?P<bq>[^`\s]{1,120})`
    |(?P<dot>[^\W\d][\w$]*(?:\.[^\W\d][\w$]*)+)(?:\(\))?
    |(?P<word>[^\W\d][\w$]*)""",
    re.VERBOSE,
)
_CAMEL_RE = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")


def _technical(word: str) -> bool:
    """snake_case, camelCase, PascalCase with several humps, or words with digits."""
    core = word.strip("_$")
    if "_" in core or "$" in core or any(c.isdigit() for c in core):
        return True
    return bool(_CAMEL_RE.search(core))


def _plain_ok(word: str) -> bool:
    return len(word) >= 3 and word.lower() not in STOPWORDS


def identifiers(text: str) -> list[str]:
    return list(_identifiers(text or ""))


@lru_cache(maxsize=1 << 16)
def _identifiers(text: str) -> tuple[str, ...]:
    """Technical identifiers in a message or a code line, in order of appearance, once each.

    Quoted strings and dotted names are kept as written (a quoted word is a key
    or a name even when it is an ordinary word); plain words are kept unless
    they are stopwords or shorter than three letters.
    """
    found: list[str] = []
    seen: set[str] = set()

    def add(item: str) -> None:
        if item and item not in seen:
            seen.add(item)
            found.append(item)

    def add_dotted(dotted: str) -> None:
        add(dotted)
        for part in dotted.split("."):
            if _technical(part) or _plain_ok(part):
                add(part)

    for match in _IDENT_RE.finditer(text or ""):
        quoted = match.group("sq") or match.group("dq") or match.group("bq")
        if quoted is not None:
            item = quoted.rstrip(",;:.").removesuffix("()")
            if len(item) < 2 or not any(c.isalpha() or c == "_" for c in item):
                continue
            if re.fullmatch(r"[^\W\d][\w$]*(?:\.[^\W\d][\w$]*)+", item):
                add_dotted(item)
            else:
                add(item)
        elif match.group("dot") is not None:
            add_dotted(match.group("dot"))
        else:
            word = match.group("word")
            if (_technical(word) and len(word.strip("_$")) >= 2) or _plain_ok(word):
                add(word)
    return tuple(found)
