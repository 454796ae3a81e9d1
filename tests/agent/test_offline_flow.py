"""Values that come from a caller or from a type's declaration (issue 12).

Three classes, each built here in several languages:
- a panic recovered by a deferred handler: the crash is the frame the panic left, not the
  handler that reported it;
- a field's name on the wire changed where its type is declared: the decoder leaves it
  empty and the failure shows where the empty value is used, in another file;
- the crash line rewritten around the failing call, handing it the same arguments: the
  caller's change to the expression bound to them is the fault, though blame names the
  rewrite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent import stacktrace

FIRST_ERROR = datetime(2026, 11, 28, 9, tzinfo=UTC)


def frame(
    path: str, line: int, function: str, context: str | None = None, **kw: Any
) -> stacktrace.Frame:
    return stacktrace.Frame(
        filename=path,
        abs_path=path,
        module=kw.get("module"),
        function=function,
        lineno=line,
        in_app=kw.get("in_app", True),
        context_line=context,
        context=kw.get("around", []),
    )


def commit(sha: str, date: str, *files: tuple[str, list[dict]]) -> dict:
    return {
        "sha": sha,
        "author": "Dev",
        "date": date,
        "summary": f"commit {sha}",
        "parents": ["p"],
        "files": [{"path": p, "hunks": h} for p, h in files],
    }


def hunk(
    start: int,
    added: list[tuple[int, str]],
    removed: list[tuple[int, str]] = (),
    context: list[tuple[int, str]] = (),
    function: str = "",
) -> dict:
    return {
        "header": "@@",
        "function": function,
        "old_start": start,
        "old_lines": len(removed) + len(context),
        "new_start": start,
        "new_lines": len(added) + len(context),
        "added": [list(a) for a in added],
        "removed": [list(r) for r in removed],
        "context": [list(c) for c in context],
    }


# -- a panic recovered by a deferred handler ------------------------------------------


def raw(filename: str, function: str, line: int, in_app: bool, module: str | None = None) -> dict:
    return {
        "filename": filename,
        "absPath": filename,
        "module": module,
        "function": function,
        "lineNo": line,
        "inApp": in_app,
    }


def event(frames: list[dict], platform: str) -> dict:
    value = {"type": "panic", "value": "boom", "stacktrace": {"frames": frames}}
    return {"platform": platform, "entries": [{"type": "exception", "data": {"values": [value]}}]}


GO_RECOVERED = [
    raw("internal/worker/consumer.go", "(*Consumer).handle", 29, True),
    raw("internal/worker/reservations.go", "(*Reservations).Apply", 24, True),
    raw("runtime/signal_unix.go", "sigpanic", 917, False, "runtime"),
    raw("runtime/panic.go", "panicmem", 261, False, "runtime"),
    raw("runtime/panic.go", "gopanic", 770, False, "runtime"),
    raw("internal/worker/consumer.go", "(*Consumer).recoverPanic", 37, True),
]
# An explicit panic(): the runtime's gopanic alone, then the deferred handler.
GO_EXPLICIT = [
    raw("cmd/api/main.go", "serve", 40, True),
    raw("internal/cart/cart.go", "(*Cart).Total", 57, True),
    raw("/usr/local/go/src/runtime/panic.go", "runtime.gopanic", 770, False),
    raw("internal/httpx/recover.go", "Recoverer.func1", 18, True),
]
# Rust: the panic hook that reports it runs inside the panic machinery.
RUST_HOOK = [
    raw("src/main.rs", "app::main", 12, True),
    raw("src/ledger.rs", "app::ledger::post", 88, True),
    raw("library/core/src/panicking.rs", "core::panicking::panic_fmt", 72, False),
    raw("library/std/src/panicking.rs", "std::panicking::rust_panic_with_hook", 770, False),
    raw("src/telemetry.rs", "app::telemetry::install::{{closure}}", 30, True),
]


@pytest.mark.parametrize(
    ("frames", "platform", "files", "crash"),
    [
        (
            GO_RECOVERED,
            "go",
            ["internal/worker/consumer.go", "internal/worker/reservations.go"],
            ("internal/worker/reservations.go", 24),
        ),
        (
            GO_EXPLICIT,
            "go",
            ["cmd/api/main.go", "internal/cart/cart.go", "internal/httpx/recover.go"],
            ("internal/cart/cart.go", 57),
        ),
        (
            RUST_HOOK,
            "rust",
            ["src/main.rs", "src/ledger.rs", "src/telemetry.rs"],
            ("src/ledger.rs", 88),
        ),
    ],
)
def test_a_recovered_panic_crashed_where_it_left_the_code_not_in_its_handler(
    frames: list[dict], platform: str, files: list[str], crash: tuple[str, int]
) -> None:
    excs = stacktrace.exceptions(event(frames, platform))
    found = stacktrace.crash_frame(excs, files)
    assert found is not None
    assert (found[2], found[1].lineno) == crash
    # The handler is no frame of the failing path.
    paths = [(p, f.lineno) for f, p in stacktrace.stack_paths(excs[0], files)]
    assert paths[0] == crash and len(paths) == 2


def test_a_panic_with_nothing_after_the_runtime_keeps_every_frame() -> None:
    frames = GO_RECOVERED[:5]
    excs = stacktrace.exceptions(event(frames, "go"))
    assert len(excs[0].frames) == 5
