"""Frames from Sentry events: the recorded scenarios and synthetic events of each platform."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.stacktrace import (
    ExceptionInfo,
    Frame,
    crash_frame,
    exceptions,
    identifiers,
    is_library,
    normalize_path,
    release_sha,
    resolve_path,
    stack_paths,
)

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared" / "scenarios"


def _scenario(name: str) -> Path:
    folder = SCENARIOS / name
    if not (folder / "sentry" / "issues.json").is_file():
        pytest.skip(f"scenario {name} is not available")
    return folder


def _events(name: str, issue_id: str) -> list[dict[str, Any]]:
    path = _scenario(name) / "sentry" / "events" / f"{issue_id}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def repo_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """`git ls-files` of each scenario's repository at main, cloned once per module."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    out: dict[str, list[str]] = {}
    for name in ("orders-npe", "python-keyerror"):
        bundle = SCENARIOS / name / "repo.bundle"
        if not bundle.is_file():
            continue
        target = tmp_path_factory.mktemp(name)
        subprocess.run(
            ["git", "clone", "-q", str(bundle), str(target / "repo"), "-b", "main"], check=True
        )
        listing = subprocess.run(
            ["git", "ls-files"], cwd=target / "repo", check=True, capture_output=True, text=True
        )
        out[name] = listing.stdout.split()
    return out


def _files(repo_files: dict[str, list[str]], name: str) -> list[str]:
    _scenario(name)
    if name not in repo_files:
        pytest.skip(f"{name}/repo.bundle is not available")
    return repo_files[name]


def frame(**fields: Any) -> dict[str, Any]:
    """A REST-shaped frame with the shared fields; omitted ones stay absent."""
    return dict(fields)


def event(values: list[dict[str, Any]], platform: str, **extra: Any) -> dict[str, Any]:
    return {
        "eventID": "e" * 32,
        "platform": platform,
        "entries": [{"type": "exception", "data": {"values": values}}],
        **extra,
    }


def exc(type_: str, value: str, frames: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": type_, "value": value, "module": None, "stacktrace": {"frames": frames}}


# -- recorded scenarios ------------------------------------------------------------


def test_orders_npe_crash_frame_is_customer_reference_line_14(
    repo_files: dict[str, list[str]],
) -> None:
    files = _files(repo_files, "orders-npe")
    newest = _events("orders-npe", "5755875771")[0]
    excs = exceptions(newest)
    assert [e.type for e in excs] == ["NullPointerException"]

    found = crash_frame(excs, files)
    assert found is not None
    exc_info, crash, path = found
    assert path == "src/main/java/dev/example/orders/CustomerReference.java"
    assert crash.lineno == 14
    assert crash.function == "<init>"
    assert crash.context_line is not None and "value.strip()" in crash.context_line
    assert crash.platform == "java"  # inherited from the event: the frame has none

    stack = stack_paths(exc_info, files)
    assert [(f.function, p.rsplit("/", 1)[-1]) for f, p in stack] == [
        ("<init>", "CustomerReference.java"),
        ("create", "OrderService.java"),
        ("create", "OrdersController.java"),
    ]
    assert release_sha(newest, "orders-demo@") == "835b04b442dc376f38b62e6ada802c1377f20c3b"


def test_orders_chained_exception_follows_the_root_cause(
    repo_files: dict[str, list[str]],
) -> None:
    files = _files(repo_files, "orders-npe")
    newest = _events("orders-npe", "5095199655")[0]
    excs = exceptions(newest)
    # Recorded cause first, the exception finally raised last.
    assert [e.type for e in excs] == ["PSQLException", "QueryTimeoutException"]
    found = crash_frame(excs, files)
    assert found is not None
    exc_info, crash, path = found
    assert exc_info.type == "PSQLException"
    assert path == "src/main/java/dev/example/orders/OrderRepository.java"
    assert crash.lineno == 43


def test_python_keyerror_crash_frame_is_builder_line_53(
    repo_files: dict[str, list[str]],
) -> None:
    files = _files(repo_files, "python-keyerror")
    newest = _events("python-keyerror", "5960459345")[0]
    found = crash_frame(exceptions(newest), files)
    assert found is not None
    exc_info, crash, path = found
    assert (path, crash.lineno, crash.function) == ("invoices/builder.py", 53, "build_invoice")
    assert exc_info.value == "'due_in_days'"
    assert crash.context_line is not None and 'payload["due_in_days"]' in crash.context_line
    assert (53, crash.context_line) in crash.context
    assert release_sha(newest, "invoices@") == "76204af7248e27cfc72a2f1116143910104a874b"
    assert [p for _, p in stack_paths(exc_info, files)] == [
        "invoices/builder.py",
        "invoices/app.py",
    ]


@pytest.mark.parametrize(
    ("scenario", "issue_id"),
    [
        ("orders-npe", "5755875771"),
        ("orders-npe", "5095199655"),
        ("python-keyerror", "5960459345"),
        ("python-keyerror", "5075025249"),
    ],
)
def test_heuristics_agree_with_the_recorded_in_app_flags(scenario: str, issue_id: str) -> None:
    for recorded in _events(scenario, issue_id):
        for exc_info in exceptions(recorded):
            for f in exc_info.frames:
                assert f.in_app is not None
                guessed = is_library(dataclasses.replace(f, in_app=None))
                assert guessed is (not f.in_app), (f.module, f.filename)


# -- node ---------------------------------------------------------------------------

NODE_REPO = [
    "src/index.js",
    "src/orders/routes.js",
    "src/orders/service.js",
    "test/orders/service.js",
]


def node_event() -> dict[str, Any]:
    frames = [
        frame(filename="node:internal/process/task_queues", function="processTicksAndRejections",
              lineNo=95),
        frame(filename="/app/node_modules/express/lib/router/layer.js",
              absPath="/app/node_modules/express/lib/router/layer.js", function="handle",
              lineNo=95),
        frame(filename="app:///src/orders/routes.js", absPath="app:///src/orders/routes.js",
              function="createOrder", lineNo=18, inApp=True),
        frame(filename="app:///src/orders/service.js?v=3", absPath="app:///src/orders/service.js?v=3",
              function="OrderService.save", lineNo=42, colNo=17,
              context=[[41, "  const ref = input.customerReference;"],
                       [42, "  return ref.trim();"], [43, "}"]]),
    ]  # fmt: skip
    return event(
        [exc("TypeError", "Cannot read properties of undefined (reading 'trim')", frames)],
        "node",
    )


def test_node_frames_resolve_and_skip_node_modules() -> None:
    excs = exceptions(node_event())
    frames = excs[0].frames
    assert [is_library(f) for f in frames] == [True, True, False, False]
    found = crash_frame(excs, NODE_REPO)
    assert found is not None
    _, crash, path = found
    assert (path, crash.lineno, crash.context_line) == (
        "src/orders/service.js",
        42,
        "  return ref.trim();",
    )
    assert [p for _, p in stack_paths(excs[0], NODE_REPO)] == [
        "src/orders/service.js",
        "src/orders/routes.js",
    ]


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("app:///src/orders/service.js", "src/orders/service.js"),
        ("webpack:///./src/orders/service.ts?abcd", "src/orders/service.ts"),
        ("webpack-internal:///(app-pages-browser)/./src/app/page.tsx", "src/app/page.tsx"),
        ("file:///home/ci/build/src/x.py#L3", "home/ci/build/src/x.py"),
        ("~/src/orders/service.js", "src/orders/service.js"),
        ("./lib/a.rb", "lib/a.rb"),
        ("C:\\build\\src\\Orders\\Service.cs", "build/src/Orders/Service.cs"),
        ("/srv/invoices/invoices/builder.py", "srv/invoices/invoices/builder.py"),
    ],
)
def test_normalize_path(raw: str, normalized: str) -> None:
    assert normalize_path(raw) == normalized


@pytest.mark.parametrize(
    "path",
    ["node:internal/modules/cjs/loader", "internal/process/task_queues.js", "native"],
)
def test_node_runtime_frames_are_library(path: str) -> None:
    f = Frame(path, None, None, "f", 1, None, None, [], "node")
    assert is_library(f)


# -- go -----------------------------------------------------------------------------

GO_REPO = ["cmd/shop/main.go", "go.mod", "internal/cart/cart.go", "internal/cart/cart_test.go"]


def go_frames() -> list[dict[str, Any]]:
    return [
        frame(absPath="/usr/local/go/src/net/http/server.go", module="net/http",
              function="(*conn).serve", lineNo=2009),
        frame(absPath="/root/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.10/mux.go",
              module="github.com/go-chi/chi/v5", function="(*Mux).ServeHTTP", lineNo=90),
        frame(absPath="/build/cmd/shop/main.go", module="main", function="checkout", lineNo=31),
        frame(absPath="/build/internal/cart/cart.go", filename="cart.go",
              module="github.com/acme/shop/internal/cart", function="(*Cart).Total", lineNo=57,
              context=[[57, "\ttotal += c.items[i].Price"]]),
        frame(filename="runtime/panic.go", module="runtime", function="goPanicIndex", lineNo=114),
    ]  # fmt: skip


def test_go_panic_skips_runtime_frames() -> None:
    excs = exceptions(
        event([exc("runtime.Error", "index out of range [3] with length 3", go_frames())], "go")
    )
    frames = excs[0].frames
    assert [is_library(f) for f in frames] == [True, True, False, False, True]
    found = crash_frame(excs, GO_REPO)
    assert found is not None
    assert (found[2], found[1].lineno) == ("internal/cart/cart.go", 57)
    assert [p for _, p in stack_paths(excs[0], GO_REPO)] == [
        "internal/cart/cart.go",
        "cmd/shop/main.go",
    ]


def test_go_trimpath_and_module_paths_resolve() -> None:
    trimmed = Frame(
        "github.com/acme/shop/internal/cart/cart.go", None,
        "github.com/acme/shop/internal/cart", "Add", 12, None, None, [], "go",
    )  # fmt: skip
    assert not is_library(trimmed)
    assert resolve_path(trimmed, GO_REPO) == "internal/cart/cart.go"
    # Only the module path and the base name: still the same file.
    by_module = dataclasses.replace(trimmed, filename="cart.go")
    assert resolve_path(by_module, GO_REPO) == "internal/cart/cart.go"


def test_go_stack_held_by_the_threads_entry() -> None:
    recorded = {
        "platform": "go",
        "entries": [
            {
                "type": "exception",
                "data": {
                    "values": [
                        {"type": "*errors.errorString", "value": "boom", "threadId": 7,
                         "stacktrace": None}
                    ]
                },
            },
            {
                "type": "threads",
                "data": {
                    "values": [
                        {"id": 1, "crashed": False, "stacktrace": {"frames": go_frames()[:1]}},
                        {"id": 7, "crashed": True, "stacktrace": {"frames": go_frames()}},
                    ]
                },
            },
        ],
    }  # fmt: skip
    excs = exceptions(recorded)
    assert len(excs) == 1 and len(excs[0].frames) == 5
    found = crash_frame(excs, GO_REPO)
    assert found is not None and found[2] == "internal/cart/cart.go"

    # No exception interface at all: the crashed thread's stack is the one to read.
    crash_only = {
        "platform": "go",
        "metadata": {"type": "fatal error", "value": "concurrent map writes"},
        "entries": [recorded["entries"][1]],
    }
    excs = exceptions(crash_only)
    assert [(e.type, e.value, len(e.frames)) for e in excs] == [
        ("fatal error", "concurrent map writes", 5)
    ]


# -- ruby and php -------------------------------------------------------------------


def test_ruby_gems_and_stdlib_are_library() -> None:
    frames = [
        frame(filename="puma/thread_pool.rb",
              absPath="/usr/local/bundle/gems/puma-6.4.0/lib/puma/thread_pool.rb",
              function="block in spawn_thread", lineNo=155),
        frame(filename="monitor.rb", absPath="/usr/local/lib/ruby/3.2.0/monitor.rb",
              function="mon_synchronize", lineNo=202),
        frame(filename="app/controllers/orders_controller.rb",
              absPath="/usr/src/app/app/controllers/orders_controller.rb",
              function="create", lineNo=9),
        frame(filename="app/services/order_service.rb",
              absPath="/usr/src/app/app/services/order_service.rb",
              function="normalize", lineNo=27, context=[[27, "    ref.strip"]]),
    ]  # fmt: skip
    repo = ["Gemfile", "app/controllers/orders_controller.rb", "app/services/order_service.rb"]
    excs = exceptions(
        event([exc("NoMethodError", "undefined method `strip' for nil", frames)], "ruby")
    )
    assert [is_library(f) for f in excs[0].frames] == [True, True, False, False]
    found = crash_frame(excs, repo)
    assert found is not None
    assert (found[2], found[1].lineno, found[1].context_line) == (
        "app/services/order_service.rb",
        27,
        "    ref.strip",
    )


def test_php_vendor_is_library() -> None:
    frames = [
        frame(filename="/var/www/html/vendor/laravel/framework/src/Illuminate/Routing/Controller.php",
              absPath="/var/www/html/vendor/laravel/framework/src/Illuminate/Routing/Controller.php",
              function="callAction", lineNo=54),
        frame(filename="/var/www/html/app/Http/Controllers/OrderController.php",
              absPath="/var/www/html/app/Http/Controllers/OrderController.php",
              function="App\\Http\\Controllers\\OrderController::store", lineNo=21),
        frame(filename="/var/www/html/app/Services/OrderService.php",
              absPath="/var/www/html/app/Services/OrderService.php",
              function="App\\Services\\OrderService::create", lineNo=33),
    ]  # fmt: skip
    repo = [
        "app/Http/Controllers/OrderController.php",
        "app/Services/OrderService.php",
        "composer.json",
    ]
    excs = exceptions(
        event([exc("TypeError", "trim(): Argument #1 must be of type string", frames)], "php")
    )
    assert [is_library(f) for f in excs[0].frames] == [True, False, False]
    found = crash_frame(excs, repo)
    assert found is not None and (found[2], found[1].lineno) == (
        "app/Services/OrderService.php",
        33,
    )


# -- python chains --------------------------------------------------------------------

PY_REPO = ["invoices/__init__.py", "invoices/app.py", "invoices/client.py", "invoices/builder.py"]

LIB = "/usr/local/lib/python3.11/site-packages"


def test_chain_with_cause_in_library_code_follows_the_outer_exception() -> None:
    cause = exc("KeyError", "'rate'", [
        frame(filename="requests/models.py", absPath=f"{LIB}/requests/models.py",
              module="requests.models", function="json", lineNo=975),
        frame(filename="json/decoder.py", absPath="/usr/local/lib/python3.11/json/decoder.py",
              module="json.decoder", function="decode", lineNo=337),
    ])  # fmt: skip
    outer = exc("ValueError", "no exchange rate for 'EUR'", [
        frame(filename="flask/app.py", absPath=f"{LIB}/flask/app.py", module="flask.app",
              function="dispatch_request", lineNo=865),
        frame(filename="invoices/app.py", absPath="/srv/invoices/invoices/app.py",
              module="invoices.app", function="create_invoice", lineNo=21),
        frame(filename="invoices/client.py", absPath="/srv/invoices/invoices/client.py",
              module="invoices.client", function="rate", lineNo=40),
    ])  # fmt: skip
    excs = exceptions(event([cause, outer], "python"))
    assert [e.type for e in excs] == ["KeyError", "ValueError"]
    found = crash_frame(excs, PY_REPO)
    assert found is not None
    assert (found[0].type, found[2], found[1].lineno) == ("ValueError", "invoices/client.py", 40)


def test_chain_with_cause_in_app_code_follows_the_cause() -> None:
    cause = exc("KeyError", "'due_in_days'", [
        frame(filename="invoices/app.py", absPath="/srv/invoices/invoices/app.py",
              module="invoices.app", function="create_invoice", lineNo=21, inApp=True),
        frame(filename="invoices/builder.py", absPath="/srv/invoices/invoices/builder.py",
              module="invoices.builder", function="build_invoice", lineNo=53, inApp=True),
    ])  # fmt: skip
    outer = exc("InvoiceError", "could not build the invoice", [
        frame(filename="invoices/app.py", absPath="/srv/invoices/invoices/app.py",
              module="invoices.app", function="create_invoice", lineNo=24, inApp=True),
    ])  # fmt: skip
    excs = exceptions(event([cause, outer], "python"))
    found = crash_frame(excs, PY_REPO)
    assert found is not None
    assert (found[0].type, found[2], found[1].lineno) == ("KeyError", "invoices/builder.py", 53)


def test_no_in_app_frame_falls_back_to_any_frame_that_resolves() -> None:
    frames = [
        frame(filename="invoices/app.py", absPath="/srv/invoices/invoices/app.py",
              function="create_invoice", lineNo=21, inApp=False),
    ]  # fmt: skip
    excs = exceptions(event([exc("KeyError", "'x'", frames)], "python"))
    found = crash_frame(excs, PY_REPO)
    assert found is not None and found[2] == "invoices/app.py"
    assert stack_paths(excs[0], PY_REPO) == []  # only application frames are listed
    assert crash_frame(excs, ["README.md"]) is None
    assert crash_frame([], PY_REPO) is None


def test_sdk_shaped_event_is_read_too() -> None:
    raw = {
        "platform": "python",
        "exception": {
            "values": [
                {
                    "type": "KeyError",
                    "value": "'due_in_days'",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "invoices/builder.py",
                                "abs_path": "/srv/invoices/invoices/builder.py",
                                "function": "build_invoice",
                                "lineno": 53,
                                "in_app": True,
                                "pre_context": ["a", "b"],
                                "context_line": "    x = payload['due_in_days']",
                                "post_context": ["c"],
                            }
                        ]
                    },
                }
            ]
        },
    }
    (only,) = exceptions(raw)
    f = only.frames[0]
    assert (f.abs_path, f.lineno, f.in_app) == ("/srv/invoices/invoices/builder.py", 53, True)
    assert f.context == [(51, "a"), (52, "b"), (53, "    x = payload['due_in_days']"), (54, "c")]
    assert f.context_line == "    x = payload['due_in_days']"


def test_bare_stacktrace_entry() -> None:
    recorded = {
        "platform": "python",
        "title": "Something odd",
        "entries": [
            {"type": "message", "data": {"formatted": "Something odd"}},
            {
                "type": "stacktrace",
                "data": {"frames": [frame(filename="invoices/app.py", lineNo=3, inApp=True)]},
            },
        ],
    }
    (only,) = exceptions(recorded)
    assert (only.type, only.value, only.frames[0].lineno) == (None, "Something odd", 3)
    assert exceptions({"entries": []}) == []


# -- resolving paths ------------------------------------------------------------------


def test_jvm_module_maps_to_the_package_path() -> None:
    repo = [
        "src/main/java/dev/example/orders/Order.java",
        "src/main/java/dev/example/billing/Order.java",
        "src/main/kotlin/dev/example/orders/Pricing.kt",
    ]
    inner = Frame(None, None, "dev.example.orders.Order$Line", "total", 8, None, None, [], "java")
    assert resolve_path(inner, repo) == "src/main/java/dev/example/orders/Order.java"
    with_file = dataclasses.replace(inner, filename="Order.java", abs_path="Order.java")
    assert resolve_path(with_file, repo) == "src/main/java/dev/example/orders/Order.java"
    kotlin = Frame("Pricing.kt", "Pricing.kt", "dev.example.orders.PricingKt", "price", 3,
                   None, None, [], "java")  # fmt: skip
    assert resolve_path(kotlin, repo) == "src/main/kotlin/dev/example/orders/Pricing.kt"
    # The file name alone fits two packages: no guess.
    bare = dataclasses.replace(with_file, module=None)
    assert resolve_path(bare, repo) is None


def test_ambiguous_or_foreign_paths_do_not_resolve() -> None:
    utils = Frame("utils.py", None, None, "f", 1, True, None, [], "python")
    assert resolve_path(utils, ["a/utils.py", "b/utils.py"]) is None
    deeper = dataclasses.replace(utils, abs_path="/srv/app/b/utils.py")
    assert resolve_path(deeper, ["a/utils.py", "b/utils.py"]) == "b/utils.py"
    # Same file name in another directory is another file.
    flask = Frame("flask/app.py", f"{LIB}/flask/app.py", "flask.app", "f", 1, None, None, [], None)
    assert is_library(flask)
    assert resolve_path(flask, ["invoices/app.py"]) is None
    # A full match beats a deeper copy of the same path (build output, vendored copy).
    service = Frame("app:///src/orders/service.js", None, None, "f", 1, None, None, [], "node")
    assert (
        resolve_path(service, ["src/orders/service.js", "dist/src/orders/service.js"])
        == "src/orders/service.js"
    )
    assert resolve_path(Frame(None, None, None, None, None, None, None, [], None), ["a.py"]) is None


def test_is_library_trusts_in_app_first() -> None:
    f = Frame("node_modules/x/index.js", None, None, "f", 1, True, None, [], "node")
    assert not is_library(f)
    assert is_library(dataclasses.replace(f, in_app=None))
    assert is_library(dataclasses.replace(f, filename="src/a.js", in_app=False))
    assert is_library(Frame(None, None, None, "f", None, None, None, [], None))
    spring = Frame("DispatcherServlet.java", None, "org.springframework.web.servlet.X", "f", 1,
                   None, None, [], "java")  # fmt: skip
    assert is_library(spring)
    assert not is_library(dataclasses.replace(spring, module="dev.example.orders.X"))


# -- releases and identifiers -----------------------------------------------------------

SHA = "835b04b442dc376f38b62e6ada802c1377f20c3b"


@pytest.mark.parametrize(
    ("recorded", "prefix", "expected"),
    [
        ({"release": {"version": f"orders-demo@{SHA}"}}, "orders-demo@", SHA),
        ({"release": None, "tags": [{"key": "release", "value": f"orders-demo@{SHA}"}]},
         "orders-demo@", SHA),
        ({"release": {"version": SHA.upper()}}, "orders-demo@", SHA),
        ({"release": {"version": "orders-demo@835b04b"}}, "orders-demo@", "835b04b"),
        ({"release": {"version": "orders-demo@835b04"}}, "orders-demo@", None),
        ({"release": {"version": f"orders-demo@{SHA}0"}}, "orders-demo@", None),
        ({"release": {"version": "orders-demo@1.4.2"}}, "orders-demo@", None),
        ({"release": {"version": f"billing@{SHA}"}}, "orders-demo@", None),
        ({"release": f"orders-demo@{SHA}"}, "orders-demo@", SHA),
        ({}, "orders-demo@", None),
    ],
)  # fmt: skip
def test_release_sha(recorded: dict[str, Any], prefix: str, expected: str | None) -> None:
    assert release_sha(recorded, prefix) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Cannot invoke "String.strip()" because "value" is null',
         ["String.strip", "strip", "value"]),
        ("'due_in_days'", ["due_in_days"]),
        ('    payment_term_days = int(payload["due_in_days"])',
         ["payment_term_days", "payload", "due_in_days"]),
        ("        value = value.strip();", ["value", "value.strip", "strip"]),
        ("Cannot read properties of undefined (reading 'trim')", ["trim"]),
        ("El campo customerReference no puede ser nulo en el pedido",
         ["campo", "customerReference", "puede", "nulo", "pedido"]),
        ("the orderId of the OrderService is missing", ["orderId", "OrderService", "missing"]),
        ("", []),
    ],
)  # fmt: skip
def test_identifiers(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


def test_identifiers_keep_order_and_uniqueness() -> None:
    assert identifiers("a_b a_b 'a_b' x.y_z x.y_z") == ["a_b", "x.y_z", "y_z"]


def test_exception_info_shape() -> None:
    info = ExceptionInfo("KeyError", "'x'", None, [])
    assert dataclasses.asdict(info) == {
        "type": "KeyError",
        "value": "'x'",
        "module": None,
        "frames": [],
    }


def test_a_php_argument_error_is_followed_to_the_call_that_passed_the_argument() -> None:
    # PHP reports the wrong argument at the callee's declaration and names the call site.
    root = "/var/www/html/wp-content/plugins/tarifas/includes/"
    frames = [
        frame(filename=root + "class-metodo-envio.php", absPath=root + "class-metodo-envio.php",
              function="MetodoEnvio::calcular", lineNo=37, inApp=True),
        frame(filename=root + "class-calculadora.php", absPath=root + "class-calculadora.php",
              function="Calculadora::precio", lineNo=32, inApp=True),
        frame(filename=root + "class-calculadora.php", absPath=root + "class-calculadora.php",
              function="Calculadora::bultos", lineNo=39, inApp=True),
    ]  # fmt: skip
    files = ["includes/class-calculadora.php", "includes/class-metodo-envio.php"]
    message = (
        "Calculadora::bultos(): Argument #2 ($maximoKg) must be of type float, null given, "
        f"called in {root}class-calculadora.php on line 32"
    )
    found = crash_frame(exceptions(event([exc("TypeError", message, frames)], "php")), files)
    assert found is not None and (found[1].lineno, found[2]) == (
        32,
        "includes/class-calculadora.php",
    )
    # Without the call site in the message, the innermost frame stays the crash.
    plain = "Calculadora::bultos(): Argument #2 ($maximoKg) must be of type float, null given"
    found = crash_frame(exceptions(event([exc("TypeError", plain, frames)], "php")), files)
    assert found is not None and found[1].lineno == 39


@pytest.mark.parametrize("lineno", [-1, -2, 0])
def test_a_line_the_sdk_marks_unknown_is_no_line(lineno: int) -> None:
    # The Java SDK sends -1 for a generated proxy's frame and -2 for a native method.
    frame = {"filename": "Proxy.java", "function": "invoke", "lineNo": lineno, "inApp": True}
    excs = exceptions(event([exc("java.lang.NullPointerException", "x", [frame])], "java"))
    assert excs[0].frames[0].lineno is None
