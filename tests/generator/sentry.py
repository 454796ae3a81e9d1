# ruff: noqa: E501 - tables of source lines and SDK messages, kept one per line
"""What each platform's Sentry SDK records: library frames, exception types and messages."""

from __future__ import annotations

from typing import Any

# (filename, absPath, module, function, lineNo) of framework frames before the entry point.
_LIB_BEFORE: dict[tuple[str, str], list[tuple[str, str, str | None, str, int]]] = {
    ("py", "web"): [
        (
            "flask/app.py",
            "/usr/local/lib/python3.12/site-packages/flask/app.py",
            "flask.app",
            "wsgi_app",
            1498,
        ),
        (
            "flask/app.py",
            "/usr/local/lib/python3.12/site-packages/flask/app.py",
            "flask.app",
            "full_dispatch_request",
            917,
        ),
        (
            "flask/app.py",
            "/usr/local/lib/python3.12/site-packages/flask/app.py",
            "flask.app",
            "dispatch_request",
            902,
        ),
    ],
    ("py", "job"): [
        (
            "celery/app/trace.py",
            "/usr/local/lib/python3.12/site-packages/celery/app/trace.py",
            "celery.app.trace",
            "trace_task",
            453,
        ),
        (
            "celery/app/trace.py",
            "/usr/local/lib/python3.12/site-packages/celery/app/trace.py",
            "celery.app.trace",
            "__protected_call__",
            736,
        ),
    ],
    ("py", "cli"): [
        (
            "click/core.py",
            "/usr/local/lib/python3.12/site-packages/click/core.py",
            "click.core",
            "main",
            1078,
        ),
        (
            "click/core.py",
            "/usr/local/lib/python3.12/site-packages/click/core.py",
            "click.core",
            "invoke",
            1434,
        ),
        (
            "click/core.py",
            "/usr/local/lib/python3.12/site-packages/click/core.py",
            "click.core",
            "invoke",
            783,
        ),
    ],
    ("rb", "web"): [
        (
            "action_controller/metal/basic_implicit_render.rb",
            "/usr/local/bundle/gems/actionpack-7.1.3.4/lib/action_controller/metal/basic_implicit_render.rb",
            None,
            "send_action",
            6,
        ),
        (
            "abstract_controller/base.rb",
            "/usr/local/bundle/gems/actionpack-7.1.3.4/lib/abstract_controller/base.rb",
            None,
            "process_action",
            224,
        ),
    ],
    ("rb", "job"): [
        (
            "sidekiq/processor.rb",
            "/usr/local/bundle/gems/sidekiq-7.2.4/lib/sidekiq/processor.rb",
            None,
            "execute_job",
            220,
        ),
        (
            "active_job/execution.rb",
            "/usr/local/bundle/gems/activejob-7.1.3.4/lib/active_job/execution.rb",
            None,
            "perform_now",
            68,
        ),
    ],
    ("rb", "cli"): [
        (
            "thor/command.rb",
            "/usr/local/bundle/gems/thor-1.3.1/lib/thor/command.rb",
            None,
            "run",
            28,
        ),
        (
            "thor/invocation.rb",
            "/usr/local/bundle/gems/thor-1.3.1/lib/thor/invocation.rb",
            None,
            "invoke_command",
            127,
        ),
    ],
    ("php", "web"): [
        (
            "/vendor/laravel/framework/src/Illuminate/Routing/Controller.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Routing/Controller.php",
            None,
            "Illuminate\\Routing\\Controller::callAction",
            54,
        ),
        (
            "/vendor/laravel/framework/src/Illuminate/Routing/ControllerDispatcher.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Routing/ControllerDispatcher.php",
            None,
            "Illuminate\\Routing\\ControllerDispatcher::dispatch",
            43,
        ),
    ],
    ("php", "job"): [
        (
            "/vendor/laravel/framework/src/Illuminate/Queue/CallQueuedHandler.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Queue/CallQueuedHandler.php",
            None,
            "Illuminate\\Queue\\CallQueuedHandler::call",
            70,
        ),
        (
            "/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php",
            None,
            "Illuminate\\Container\\BoundMethod::Illuminate\\Container\\{closure}",
            36,
        ),
    ],
    ("php", "cli"): [
        (
            "/vendor/laravel/framework/src/Illuminate/Console/Command.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Console/Command.php",
            None,
            "Illuminate\\Console\\Command::execute",
            211,
        ),
        (
            "/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php",
            "/var/www/html/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php",
            None,
            "Illuminate\\Container\\BoundMethod::Illuminate\\Container\\{closure}",
            36,
        ),
    ],
    ("js", "web"): [
        (
            "app:///node_modules/express/lib/router/layer.js",
            "app:///node_modules/express/lib/router/layer.js",
            "express.lib.router:layer",
            "Layer.handle [as handle_request]",
            95,
        ),
        (
            "app:///node_modules/express/lib/router/route.js",
            "app:///node_modules/express/lib/router/route.js",
            "express.lib.router:route",
            "next",
            149,
        ),
    ],
    ("js", "job"): [
        (
            "app:///node_modules/bullmq/dist/cjs/classes/worker.js",
            "app:///node_modules/bullmq/dist/cjs/classes/worker.js",
            "bullmq.dist.cjs.classes:worker",
            "Worker.callProcessJob",
            394,
        ),
        (
            "node:internal/process/task_queues",
            "node:internal/process/task_queues",
            "task_queues",
            "process.processTicksAndRejections",
            95,
        ),
    ],
    ("js", "cli"): [
        (
            "app:///node_modules/commander/lib/command.js",
            "app:///node_modules/commander/lib/command.js",
            "commander.lib:command",
            "Command._actionHandler",
            1131,
        ),
        (
            "app:///node_modules/commander/lib/command.js",
            "app:///node_modules/commander/lib/command.js",
            "commander.lib:command",
            "Command._parseCommand",
            1261,
        ),
    ],
    ("ts", "web"): [
        (
            "app:///node_modules/@nestjs/core/router/router-execution-context.js",
            "app:///node_modules/@nestjs/core/router/router-execution-context.js",
            "@nestjs.core.router:router-execution-context",
            "<anonymous>",
            38,
        ),
        (
            "app:///node_modules/@nestjs/core/router/router-proxy.js",
            "app:///node_modules/@nestjs/core/router/router-proxy.js",
            "@nestjs.core.router:router-proxy",
            "<anonymous>",
            9,
        ),
    ],
    ("ts", "job"): [
        (
            "app:///node_modules/@nestjs/bullmq/dist/bull.explorer.js",
            "app:///node_modules/@nestjs/bullmq/dist/bull.explorer.js",
            "@nestjs.bullmq.dist:bull.explorer",
            "Worker.<anonymous>",
            118,
        ),
        (
            "node:internal/process/task_queues",
            "node:internal/process/task_queues",
            "task_queues",
            "process.processTicksAndRejections",
            95,
        ),
    ],
    ("ts", "cli"): [
        (
            "app:///node_modules/nest-commander/src/command-runner.service.js",
            "app:///node_modules/nest-commander/src/command-runner.service.js",
            "nest-commander.src:command-runner.service",
            "CommandRunnerService.run",
            63,
        ),
    ],
    ("java", "web"): [
        (
            "FrameworkServlet.java",
            "FrameworkServlet.java",
            "org.springframework.web.servlet.FrameworkServlet",
            "service",
            885,
        ),
        (
            "DispatcherServlet.java",
            "DispatcherServlet.java",
            "org.springframework.web.servlet.DispatcherServlet",
            "doDispatch",
            1089,
        ),
        (
            "InvocableHandlerMethod.java",
            "InvocableHandlerMethod.java",
            "org.springframework.web.method.support.InvocableHandlerMethod",
            "doInvoke",
            255,
        ),
        ("Method.java", "Method.java", "java.lang.reflect.Method", "invoke", 580),
    ],
    ("java", "job"): [
        (
            "KafkaMessageListenerContainer.java",
            "KafkaMessageListenerContainer.java",
            "org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer",
            "doInvokeRecordListener",
            2871,
        ),
        ("Method.java", "Method.java", "java.lang.reflect.Method", "invoke", 580),
    ],
    ("java", "cli"): [
        ("CommandLine.java", "CommandLine.java", "picocli.CommandLine", "executeUserObject", 2041),
        ("CommandLine.java", "CommandLine.java", "picocli.CommandLine$RunLast", "handle", 2461),
    ],
    ("kt", "web"): [
        (
            "DispatcherServlet.java",
            "DispatcherServlet.java",
            "org.springframework.web.servlet.DispatcherServlet",
            "doDispatch",
            1089,
        ),
        (
            "InvocableHandlerMethod.java",
            "InvocableHandlerMethod.java",
            "org.springframework.web.method.support.InvocableHandlerMethod",
            "doInvoke",
            255,
        ),
        ("Method.java", "Method.java", "java.lang.reflect.Method", "invoke", 580),
    ],
    ("kt", "job"): [
        ("DispatchedTask.kt", "DispatchedTask.kt", "kotlinx.coroutines.DispatchedTask", "run", 108),
        (
            "ContinuationImpl.kt",
            "ContinuationImpl.kt",
            "kotlin.coroutines.jvm.internal.BaseContinuationImpl",
            "resumeWith",
            33,
        ),
    ],
    ("kt", "cli"): [
        (
            "CliktCommand.kt",
            "CliktCommand.kt",
            "com.github.ajalt.clikt.core.CliktCommand",
            "main",
            449,
        ),
        (
            "CliktCommand.kt",
            "CliktCommand.kt",
            "com.github.ajalt.clikt.core.CliktCommand",
            "parse",
            426,
        ),
    ],
    ("go", "web"): [
        (
            "net/http/server.go",
            "/usr/local/go/src/net/http/server.go",
            "net/http",
            "(*conn).serve",
            2092,
        ),
        (
            "net/http/server.go",
            "/usr/local/go/src/net/http/server.go",
            "net/http",
            "serverHandler.ServeHTTP",
            3142,
        ),
        (
            "github.com/getsentry/sentry-go@v0.28.1/http/sentryhttp.go",
            "/go/pkg/mod/github.com/getsentry/sentry-go@v0.28.1/http/sentryhttp.go",
            "github.com/getsentry/sentry-go/http",
            "(*Handler).handle.func1",
            119,
        ),
    ],
    ("go", "job"): [
        (
            "github.com/hibiken/asynq@v0.24.1/processor.go",
            "/go/pkg/mod/github.com/hibiken/asynq@v0.24.1/processor.go",
            "github.com/hibiken/asynq",
            "(*processor).exec.func1",
            226,
        ),
    ],
    ("go", "cli"): [
        (
            "github.com/spf13/cobra@v1.8.0/command.go",
            "/go/pkg/mod/github.com/spf13/cobra@v1.8.0/command.go",
            "github.com/spf13/cobra",
            "(*Command).execute",
            983,
        ),
    ],
}

_GO_RUNTIME = {
    "null": [("runtime/signal_unix.go", "sigpanic", 917), ("runtime/panic.go", "panicmem", 261)],
    "index": [("runtime/panic.go", "goPanicIndex", 115)],
    "div": [("runtime/panic.go", "panicdivide", 229)],
    "assert": [("runtime/iface.go", "panicdottypeE", 263)],
    "panic": [],
}

_SDK = {
    "py": ("sentry.python", "2.18.0", {"web": "flask", "job": "celery", "cli": "excepthook"}),
    "rb": ("sentry.ruby.rails", "5.17.3", {"web": "rails", "job": "sidekiq", "cli": "excepthook"}),
    "php": ("sentry.php.laravel", "4.10.1", {"web": "generic", "job": "generic", "cli": "generic"}),
    "js": (
        "sentry.javascript.node",
        "8.33.1",
        {"web": "middleware", "job": "onunhandledrejection", "cli": "onuncaughtexception"},
    ),
    "ts": (
        "sentry.javascript.nestjs",
        "8.38.0",
        {
            "web": "auto.function.nestjs.exception_captured",
            "job": "auto.function.nestjs.exception_captured",
            "cli": "onuncaughtexception",
        },
    ),
    "java": (
        "sentry.java.spring-boot.jakarta",
        "7.16.0",
        {
            "web": "HandlerExceptionResolver",
            "job": "UncaughtExceptionHandler",
            "cli": "UncaughtExceptionHandler",
        },
    ),
    "kt": (
        "sentry.java.spring-boot.jakarta",
        "7.16.0",
        {
            "web": "HandlerExceptionResolver",
            "job": "UncaughtExceptionHandler",
            "cli": "UncaughtExceptionHandler",
        },
    ),
    "go": ("sentry.go", "0.28.1", {"web": "generic", "job": "generic", "cli": "generic"}),
}


def sdk(lang: str) -> dict[str, str]:
    name, version, _ = _SDK[lang]
    return {"name": name, "version": version}


def mechanism(lang: str, entry: str) -> dict[str, Any]:
    return {"type": _SDK[lang][2][entry], "handled": False}


def library_before(lang: str, entry: str) -> list[dict[str, Any]]:
    return [lib_frame(*f) for f in _LIB_BEFORE[(lang, entry)]]


def library_after(lang: str, failure: str) -> list[dict[str, Any]]:
    """Frames the SDK records beyond the crashing line: Go's runtime, PHP's error handler."""
    if lang == "go":
        frames = [
            lib_frame(f, "/usr/local/go/src/" + f, "runtime", fn, n)
            for f, fn, n in _GO_RUNTIME[failure]
        ]
        return [
            *frames,
            lib_frame(
                "runtime/panic.go", "/usr/local/go/src/runtime/panic.go", "runtime", "gopanic", 770
            ),
        ]
    if lang == "php" and failure == "warning":
        path = "/vendor/laravel/framework/src/Illuminate/Foundation/Bootstrap/HandleExceptions.php"
        return [
            lib_frame(
                path,
                "/var/www/html" + path,
                None,
                "Illuminate\\Foundation\\Bootstrap\\HandleExceptions::Illuminate\\Foundation\\Bootstrap\\{closure}",
                256,
            )
        ]
    return []


def lib_frame(
    filename: str, abs_path: str, module: str | None, function: str, line: int
) -> dict[str, Any]:
    return frame(filename, abs_path, module, function, line, False, [])


def frame(filename, abs_path, module, function, line, in_app, context) -> dict[str, Any]:
    return {
        "filename": filename,
        "absPath": abs_path,
        "module": module,
        "package": None,
        "platform": None,
        "instructionAddr": None,
        "symbolAddr": None,
        "function": function,
        "rawFunction": None,
        "symbol": None,
        "context": context,
        "lineNo": line,
        "colNo": None,
        "inApp": in_app,
        "trust": None,
        "errors": None,
        "lock": None,
        "sourceLink": None,
        "vars": None,
    }


def failure(kind: str, lang: str, ctx: dict[str, Any]) -> tuple[str, str, str | None, str]:
    """(type, value, module, failure class) of the exception the crash line raises."""
    n = ctx.get("n", 0)
    date = ctx.get("date_text", "")
    v = ctx.get("value_text", "")
    null = {
        "py": ("AttributeError", "'NoneType' object has no attribute 'upper'", None, ""),
        "rb": ("NoMethodError", "undefined method `upcase' for nil", None, ""),
        "php": (
            "TypeError",
            "strtoupper(): Argument #1 ($string) must be of type string, null given",
            None,
            "",
        ),
        "js": (
            "TypeError",
            "Cannot read properties of undefined (reading 'toUpperCase')",
            None,
            "",
        ),
        "java": (
            "NullPointerException",
            f'Cannot invoke "String.toUpperCase()" because {ctx.get("npe_subject", "")} is null',
            "java.lang",
            "",
        ),
        "kt": ("IllegalArgumentException", f"{ctx.get('vname', '')} is required", "java.lang", ""),
        "go": (
            "runtime.errorString",
            "runtime error: invalid memory address or nil pointer dereference",
            None,
            "null",
        ),
    }
    index = {
        "py": ("IndexError", "list index out of range", None, ""),
        "rb": ("NoMethodError", "undefined method `[]' for nil", None, ""),
        "php": ("ErrorException", f"Undefined array key {n}", None, "warning"),
        "js": ("TypeError", "Cannot read properties of undefined (reading 'sku')", None, ""),
        "java": (
            "IndexOutOfBoundsException",
            f"Index {n} out of bounds for length {n}",
            "java.lang",
            "",
        ),
        "kt": (
            "IndexOutOfBoundsException",
            f"Index {n} out of bounds for length {n}",
            "java.lang",
            "",
        ),
        "go": (
            "runtime.boundsError",
            f"runtime error: index out of range [{n}] with length {n}",
            None,
            "index",
        ),
    }
    div = {
        "py": ("ZeroDivisionError", "division by zero", None, ""),
        "rb": ("ZeroDivisionError", "divided by 0", None, ""),
        "php": ("DivisionByZeroError", "Division by zero", None, ""),
        "js": ("RangeError", "Invalid array length", None, ""),
        "java": ("ArithmeticException", "/ by zero", "java.lang", ""),
        "kt": ("ArithmeticException", "/ by zero", "java.lang", ""),
        "go": ("runtime.errorString", "runtime error: integer divide by zero", None, "div"),
    }
    cce = (
        "ClassCastException",
        "class java.lang.String cannot be cast to class java.math.BigDecimal (java.lang.String and "
        "java.math.BigDecimal are in module java.base of loader 'bootstrap')",
        "java.lang",
        "",
    )
    typ = {
        "py": ("TypeError", "can't multiply sequence by non-int of type 'float'", None, ""),
        "rb": ("TypeError", "no implicit conversion of Float into Integer", None, ""),
        "php": (
            "TypeError",
            "round(): Argument #1 ($num) must be of type int|float, string given",
            None,
            "",
        ),
        "js": ("TypeError", f"{v}.toFixed is not a function", None, ""),
        "java": cce,
        "kt": cce,
        "go": (
            "*runtime.TypeAssertionError",
            "interface conversion: interface {} is string, not float64",
            None,
            "assert",
        ),
    }
    dtp = (
        "DateTimeParseException",
        f"Text '{date}' could not be parsed at index 0",
        "java.time.format",
        "",
    )
    fmt = {
        "py": ("ValueError", f"Invalid isoformat string: '{date}'", None, ""),
        "rb": ("Date::Error", "invalid date", None, ""),
        "php": ("Error", "Call to a member function getTimestamp() on bool", None, ""),
        "js": ("RangeError", "Invalid time value", None, ""),
        "java": dtp,
        "kt": dtp,
        "go": (
            "*time.ParseError",
            f'parsing time "{date}" as "2006-01-02": cannot parse "{date}" as "2006"',
            None,
            "panic",
        ),
    }
    key = {
        "py": ("KeyError", "'customer_id'", None, ""),
        "rb": ("KeyError", 'key not found: "customer_id"', None, ""),
        "php": ("ErrorException", 'Undefined array key "customer_id"', None, "warning"),
        "js": ("TypeError", "Cannot read properties of undefined (reading 'trim')", None, ""),
        "java": (
            "NullPointerException",
            'Cannot invoke "String.trim()" because the return value of "java.util.Map.get(Object)" is null',
            "java.lang",
            "",
        ),
        "kt": ("NoSuchElementException", "Key customer_id is missing in the map.", "java.util", ""),
        "go": (
            "*runtime.TypeAssertionError",
            "interface conversion: interface {} is nil, not string",
            None,
            "assert",
        ),
    }
    first = {
        "py": ("IndexError", "list index out of range", None, ""),
        "rb": ("NoMethodError", "undefined method `[]' for nil", None, ""),
        "php": ("ErrorException", "Undefined array key 0", None, "warning"),
        "js": ("TypeError", "Cannot read properties of undefined (reading 'sku')", None, ""),
        "java": (
            "IndexOutOfBoundsException",
            "Index 0 out of bounds for length 0",
            "java.lang",
            "",
        ),
        "kt": ("NoSuchElementException", "List is empty.", "java.util", ""),
        "go": (
            "runtime.boundsError",
            "runtime error: index out of range [0] with length 0",
            None,
            "index",
        ),
    }
    table = {
        "null_guard": null,
        "config_key": null,
        "off_by_one": index,
        "div_zero": div,
        "default_changed": div,
        "type_changed": typ,
        "format_changed": fmt,
        "key_renamed": key,
        "filter_changed": first,
        "wire_name": null,
    }[kind]
    return table.get(lang) or table["js"]


def noise_failure(
    role: str, lang: str
) -> tuple[str, str, str | None, list[tuple[str, str, str | None, str, int]]]:
    """An unrelated error in the archive / notify call: type, value, module, library frames."""
    if role == "archive":
        table = {
            "py": (
                "ReadTimeout",
                "HTTPSConnectionPool(host='archive.internal', port=443): Read timed out. (read timeout=5)",
                "requests.exceptions",
                [
                    (
                        "requests/adapters.py",
                        "/usr/local/lib/python3.12/site-packages/requests/adapters.py",
                        "requests.adapters",
                        "send",
                        713,
                    )
                ],
            ),
            "rb": (
                "Net::ReadTimeout",
                "Net::ReadTimeout with #<TCPSocket:(closed)>",
                None,
                [
                    (
                        "net/protocol.rb",
                        "/usr/local/lib/ruby/3.3.0/net/protocol.rb",
                        None,
                        "rbuf_fill",
                        229,
                    )
                ],
            ),
            "php": (
                "Illuminate\\Http\\Client\\ConnectionException",
                "cURL error 28: Operation timed out after 5001 milliseconds with 0 bytes received",
                None,
                [
                    (
                        "/vendor/laravel/framework/src/Illuminate/Http/Client/PendingRequest.php",
                        "/var/www/html/vendor/laravel/framework/src/Illuminate/Http/Client/PendingRequest.php",
                        None,
                        "Illuminate\\Http\\Client\\PendingRequest::send",
                        907,
                    )
                ],
            ),
            "js": (
                "AxiosError",
                "timeout of 5000ms exceeded",
                None,
                [
                    (
                        "app:///node_modules/axios/lib/adapters/http.js",
                        "app:///node_modules/axios/lib/adapters/http.js",
                        "axios.lib.adapters:http",
                        "RedirectableRequest.handleRequestTimeout",
                        644,
                    )
                ],
            ),
            "java": (
                "ResourceAccessException",
                'I/O error on POST request for "https://archive.internal/v1/objects": Read timed out',
                "org.springframework.web.client",
                [
                    (
                        "RestTemplate.java",
                        "RestTemplate.java",
                        "org.springframework.web.client.RestTemplate",
                        "doExecute",
                        905,
                    )
                ],
            ),
            "go": (
                "*url.Error",
                'Post "https://archive.internal/v1/objects": context deadline exceeded',
                None,
                [
                    (
                        "net/http/client.go",
                        "/usr/local/go/src/net/http/client.go",
                        "net/http",
                        "(*Client).do",
                        724,
                    )
                ],
            ),
        }
    else:
        table = {
            "py": (
                "SMTPServerDisconnected",
                "Connection unexpectedly closed",
                "smtplib",
                [
                    (
                        "smtplib.py",
                        "/usr/local/lib/python3.12/smtplib.py",
                        "smtplib",
                        "getreply",
                        405,
                    )
                ],
            ),
            "rb": (
                "Net::SMTPAuthenticationError",
                "535 5.7.8 Authentication credentials invalid",
                None,
                [
                    (
                        "net/smtp.rb",
                        "/usr/local/bundle/gems/net-smtp-0.5.0/lib/net/smtp.rb",
                        None,
                        "check_auth_response",
                        1002,
                    )
                ],
            ),
            "php": (
                "Symfony\\Component\\Mailer\\Exception\\TransportException",
                'Connection could not be established with host "smtp.internal:587"',
                None,
                [
                    (
                        "/vendor/symfony/mailer/Transport/Smtp/Stream/SocketStream.php",
                        "/var/www/html/vendor/symfony/mailer/Transport/Smtp/Stream/SocketStream.php",
                        None,
                        "Symfony\\Component\\Mailer\\Transport\\Smtp\\Stream\\SocketStream::initialize",
                        154,
                    )
                ],
            ),
            "js": (
                "Error",
                "connect ECONNREFUSED 10.0.3.7:587",
                None,
                [
                    (
                        "node:net",
                        "node:net",
                        "net",
                        "TCPConnectWrap.afterConnect [as oncomplete]",
                        1607,
                    )
                ],
            ),
            "java": (
                "MailSendException",
                "Mail server connection failed",
                "org.springframework.mail",
                [
                    (
                        "JavaMailSenderImpl.java",
                        "JavaMailSenderImpl.java",
                        "org.springframework.mail.javamail.JavaMailSenderImpl",
                        "doSend",
                        440,
                    )
                ],
            ),
            "go": (
                "*net.OpError",
                "dial tcp 10.0.3.7:587: connect: connection refused",
                None,
                [
                    (
                        "net/dial.go",
                        "/usr/local/go/src/net/dial.go",
                        "net",
                        "(*Dialer).DialContext",
                        589,
                    )
                ],
            ),
        }
    alias = {"ts": "js", "kt": "java"}
    return table.get(lang) or table[alias[lang]]
