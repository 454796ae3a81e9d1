"""A Toolset over one long-lived MCP stdio session to a server process.

The model sees only the tools configuration allows, without the arguments
configuration pins (organization, project, repository path…) or hides; whatever
the model sends for a pinned argument is overwritten, a hidden one is dropped.
A tool the server itself marks as not read-only is never offered, allowed or not.
One session serves every call; if the server process dies, it is restarted once
and the call retried once (only read tools are ever allowed, so a retry is harmless).

Some servers list a few tools and reach the rest through a search tool and an
execute tool (@sentry/mcp-server's search_sentry_tools + execute_sentry_tool).
With a `CatalogExecute`, allowed tools missing from tools/list are looked up
through the search tool when the session starts, offered under their own names,
and called through the execute tool; the search and execute tools themselves
are never offered (execute would reach every write).

anyio requires a cancel scope to be exited by the task that entered it, and
both `stdio_client` and `ClientSession` hold task groups. So each server
process lives in a dedicated runner task that enters the contexts, reports
ready, and sleeps until its cancel scope is cancelled; callers in any other
task only send requests over the session.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TextIO, get_args

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from agent.errors import SourceUnavailable
from agent.ports import Source, ToolResult, ToolSpec

log = logging.getLogger(__name__)

Annotate = Callable[[str, dict[str, Any], ToolResult], ToolResult]
Rewrite = Callable[[str, dict[str, Any]], dict[str, Any]]
Resolve = Callable[[ClientSession, list[mcp_types.Tool]], Awaitable[list[mcp_types.Tool]]]


@dataclass(frozen=True)
class CatalogExecute:
    """A server's "catalog + execute" pair: `search(query, limit)` returns tool
    descriptions (name, description, inputSchema, annotations); `execute(name,
    arguments)` runs one of them."""

    search: str
    execute: str
    name_argument: str = "name"
    arguments_argument: str = "arguments"
    query_argument: str = "query"
    limit: int = 20


def read_only(tool: mcp_types.Tool) -> bool:
    """False when the server says the tool writes; a tool without annotations is judged
    by the allowlist alone."""
    hints = tool.annotations
    if hints is None:
        return True
    return hints.read_only_hint is not False and hints.destructive_hint is not True


_CLOSED_ERRORS: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
)


class _ConnectionLost(Exception):
    """The server process is gone (or its pipes are); the call may be retried on a new one."""


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _describe(exc: BaseException) -> str:
    """One line for an exception, looking inside single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Connection:
    """One server process and its initialized session, owned by a runner task."""

    def __init__(
        self,
        params: StdioServerParameters,
        errlog: TextIO,
        start_timeout: float,
        resolve: Resolve | None = None,
    ) -> None:
        self._params = params
        self._errlog = errlog
        self._start_timeout = start_timeout
        self._resolve = resolve
        # Created here, entered by the runner: cancelling it (from any task) is how we close.
        self._scope = anyio.CancelScope()
        self._ready: asyncio.Future[list[mcp_types.Tool]] = (
            asyncio.get_running_loop().create_future()
        )
        self.session: ClientSession | None = None
        self.tools: list[mcp_types.Tool] = []
        self._task = asyncio.create_task(self._run(), name=f"mcp:{params.command}")

    async def wait_ready(self) -> list[mcp_types.Tool]:
        try:
            # Shielded: a cancelled waiter must not cancel the future the runner resolves.
            self.tools = await asyncio.shield(self._ready)
        except BaseException:
            await self.close()
            raise
        return self.tools

    @property
    def alive(self) -> bool:
        return self.session is not None and not self._task.done()

    async def close(self) -> None:
        self._scope.cancel()
        # The runner shuts the process down in a shielded scope with bounded waits;
        # asyncio.wait neither raises the runner's outcome nor cancels it if we are cancelled.
        await asyncio.wait({self._task})
        if self._ready.done() and not self._ready.cancelled():
            self._ready.exception()  # mark retrieved: a start error was already reported

    async def _run(self) -> None:
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(
                        stdio_client(self._params, errlog=self._errlog)
                    )
                    session = await stack.enter_async_context(ClientSession(read, write))
                    with anyio.fail_after(self._start_timeout):
                        await session.initialize()
                        tools = await self._list_tools(session)
                        if self._resolve is not None:
                            tools = await self._resolve(session, tools)
                    self.session = session
                    if not self._ready.done():
                        self._ready.set_result(tools)
                    await anyio.sleep_forever()
        except Exception as exc:
            if not self._ready.done():
                reason = (
                    f"no answer within {self._start_timeout:g} s"
                    if isinstance(exc, TimeoutError)
                    else _describe(exc)
                )
                self._ready.set_exception(SourceUnavailable(reason))
            else:
                log.warning("MCP server %s ended: %s", self._params.command, _describe(exc))
        finally:
            self.session = None
            if not self._ready.done():
                self._ready.set_exception(
                    SourceUnavailable("the server closed before it was ready")
                )

    @staticmethod
    async def _list_tools(session: ClientSession) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a bound on pages, against a server that loops its cursor
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools


class McpToolset:
    """The allowed tools of one MCP server, with pinned arguments, over one stdio session."""

    def __init__(
        self,
        name: str,
        command: str,
        args: list[str],
        env: dict[str, str] | None,
        allow: set[str],
        pinned: dict[str, Any],
        source: Source,
        annotate: Annotate | None = None,
        result_cap: int = 12000,
        *,
        call_timeout: float = 30.0,
        start_timeout: float = 60.0,
        cwd: str | None = None,
        errlog: TextIO | None = None,
        catalog: CatalogExecute | None = None,
        hide: Iterable[str] = (),
        rewrite: Rewrite | None = None,
    ) -> None:
        self.name = name
        self.allow = frozenset(allow)
        self.pinned = dict(pinned)
        self.catalog = catalog
        self.hide = frozenset(hide)
        self.rewrite = rewrite
        if catalog is not None and self.allow & {catalog.search, catalog.execute}:
            raise ValueError(
                f"{catalog.search} and {catalog.execute} reach every tool of {name}, "
                "writes included: they cannot be allowed"
            )
        # Tools reached through the catalog's execute tool (filled when a session starts).
        self.routed: frozenset[str] = frozenset()
        self.source: Source = source
        self.annotate = annotate
        self.result_cap = result_cap
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        # The SDK gives the child only HOME, LOGNAME, PATH, SHELL, TERM, USER plus `env`.
        self._params = StdioServerParameters(command=command, args=list(args), env=env, cwd=cwd)
        self._errlog = errlog
        if source not in get_args(Source):
            raise ValueError(f"source must be one of {get_args(Source)}, not {source!r}")
        self._conn: _Connection | None = None
        self._starting: _Connection | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self.restarts = 0

    # -- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        """Launch the server, initialize, list its tools; SourceUnavailable if it cannot.

        May run as a background task (`asyncio.create_task(ts.start())`): the first
        get_tools/call_tool waits for it instead of starting a second process. Whoever
        creates that task should await it (or its exception goes unretrieved).
        """
        await self._connection()

    async def aclose(self) -> None:
        self._closed = True
        if self._starting is not None:
            # Do not wait out a hanging start (up to start_timeout): stop it.
            await self._starting.close()
        async with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _connection(self) -> _Connection:
        """The live connection, starting one if needed. Raises SourceUnavailable."""
        async with self._lock:
            if self._closed:
                raise SourceUnavailable(f"the {self.name} tools are closed")
            if self._conn is None:
                resolve = self._resolve if self.catalog is not None else None
                conn = _Connection(self._params, self._stderr(), self.start_timeout, resolve)
                self._starting = conn
                try:
                    await conn.wait_ready()
                except SourceUnavailable as exc:
                    raise SourceUnavailable(
                        f"the {self.name} MCP server could not start: {exc}"
                    ) from None
                finally:
                    self._starting = None
                if self._closed:  # closed while starting
                    await conn.close()
                    raise SourceUnavailable(f"the {self.name} tools are closed")
                self._conn = conn
            return self._conn

    async def _discard(self, conn: _Connection) -> None:
        """Drop a connection whose process died, unless another caller already did."""
        async with self._lock:
            if self._conn is not conn:
                return
            self._conn = None
            self.restarts += 1
        await conn.close()

    async def _resolve(
        self, session: ClientSession, listed: list[mcp_types.Tool]
    ) -> list[mcp_types.Tool]:
        """The listed tools plus the allowed ones reachable only through the catalog."""
        catalog = self.catalog
        assert catalog is not None
        direct = {tool.name for tool in listed}
        found: list[mcp_types.Tool] = []
        for wanted in sorted(self.allow - direct):
            raw = await session.call_tool(
                catalog.search,
                {catalog.query_argument: wanted, "limit": catalog.limit},
                read_timeout_seconds=self.call_timeout,
            )
            for entry in _catalog_entries(raw):
                if entry.get("name") == wanted:
                    schema = entry.get("inputSchema") or entry.get("input_schema")
                    found.append(
                        mcp_types.Tool(
                            name=wanted,
                            description=str(entry.get("description") or ""),
                            input_schema=schema if isinstance(schema, dict) else {},
                            annotations=_annotations(entry.get("annotations")),
                        )
                    )
                    break
            else:
                log.warning("%s: no tool %r in the %s catalog", self.name, wanted, catalog.search)
        self.routed = frozenset(tool.name for tool in found)
        return [*listed, *found]

    def _stderr(self) -> TextIO:
        # The child's stderr needs a real file descriptor; under capture sys.stderr may lack one.
        if self._errlog is not None:
            return self._errlog
        return sys.stderr if _has_fileno(sys.stderr) else (sys.__stderr__ or sys.stderr)

    # -- Toolset -----------------------------------------------------------------

    def view(self, pinned: dict[str, Any], annotate: Annotate | None = None) -> PinnedView:
        """The same session with other pinned arguments (one repository per investigation)."""
        return PinnedView(self, {**self.pinned, **pinned}, annotate or self.annotate)

    async def get_tools(self) -> list[ToolSpec]:
        return await self.tools_pinned(self.pinned)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return await self.call_pinned(name, arguments, self.pinned, self.annotate)

    async def tools_pinned(self, pinned: dict[str, Any]) -> list[ToolSpec]:
        conn = await self._connection()
        return [self._spec(tool, pinned) for tool in self._offered(conn)]

    def _offered(self, conn: _Connection) -> list[mcp_types.Tool]:
        return [tool for tool in conn.tools if tool.name in self.allow and read_only(tool)]

    def _arguments(
        self, tool: mcp_types.Tool, arguments: dict[str, Any], pinned: dict[str, Any]
    ) -> dict[str, Any]:
        """The model's arguments without hidden ones, and the pinned values the tool takes."""
        if self.rewrite is not None:
            arguments = self.rewrite(tool.name, dict(arguments))
        properties = (tool.input_schema or {}).get("properties")
        declared = set(properties) if isinstance(properties, dict) else None
        merged = {k: v for k, v in arguments.items() if k not in pinned and k not in self.hide}
        # Pinned values win over anything the model sent; None means "never sent".
        merged.update(
            {
                k: v
                for k, v in pinned.items()
                if v is not None and (declared is None or k in declared)
            }
        )
        return merged

    async def call_pinned(
        self,
        name: str,
        arguments: dict[str, Any],
        pinned: dict[str, Any],
        annotate: Annotate | None,
    ) -> ToolResult:
        if name not in self.allow:  # refused without the server
            return self._refusal(name, sorted(self.allow))
        for attempt in (1, 2):
            conn = await self._connection()
            tool = next((t for t in self._offered(conn) if t.name == name), None)
            if tool is None:  # allowed, but the server lacks it or marks it as a write
                return self._refusal(name, sorted(t.name for t in self._offered(conn)))
            merged = self._arguments(tool, arguments or {}, pinned)
            try:
                result = await self._call(conn, name, merged)
                break
            except _ConnectionLost as exc:
                await self._discard(conn)
                if attempt == 2:
                    raise SourceUnavailable(
                        f"the {self.name} MCP server died twice during {name}: {exc}"
                    ) from None
                log.warning("MCP server %s died (%s); restarting it once", self.name, exc)
        return self._annotated(name, merged, result, annotate)

    async def _call(self, conn: _Connection, name: str, arguments: dict[str, Any]) -> ToolResult:
        session = conn.session
        if session is None or not conn.alive:
            raise _ConnectionLost("the session is closed")
        target, payload = name, arguments
        if self.catalog is not None and name in self.routed:
            target = self.catalog.execute
            payload = {
                self.catalog.name_argument: name,
                self.catalog.arguments_argument: arguments,
            }
        try:
            # The SDK's read timeout sends the server a cancel; the outer one is a backstop
            # for a write that never completes (a server that stopped reading its stdin).
            async with asyncio.timeout(self.call_timeout + 5):
                raw = await session.call_tool(
                    target, payload, read_timeout_seconds=self.call_timeout
                )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise _ConnectionLost(exc.message) from None
            if exc.code == REQUEST_TIMEOUT:
                return self._timeout(name)
            return self._result(name, f"{name} failed: {exc.message}", is_error=True)
        except TimeoutError:
            return self._timeout(name)
        except _CLOSED_ERRORS as exc:
            raise _ConnectionLost(_describe(exc)) from None
        except Exception as exc:  # a malformed result, a validation error: the model reads it
            return self._result(name, f"{name} failed: {_describe(exc)}", is_error=True)
        text = self._text(raw)
        data = raw.structured_content
        # Capped after the annotator has read the whole answer (see _annotated).
        return ToolResult(
            text=text, title=name, source=self.source, data=data, is_error=bool(raw.is_error)
        )

    # -- results -------------------------------------------------------------------

    def _spec(self, tool: mcp_types.Tool, pinned: dict[str, Any]) -> ToolSpec:
        schema = copy.deepcopy(tool.input_schema) if tool.input_schema else {}
        schema.setdefault("type", "object")
        schema.pop("$schema", None)
        hidden = set(pinned) | self.hide
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for key in hidden:
                properties.pop(key, None)
        else:
            schema["properties"] = {}
        if isinstance(schema.get("required"), list):
            schema["required"] = [r for r in schema["required"] if r not in hidden]
            if not schema["required"]:
                del schema["required"]
        return ToolSpec(name=tool.name, description=tool.description or "", parameters=schema)

    @staticmethod
    def _text(raw: mcp_types.CallToolResult) -> str:
        parts: list[str] = []
        for block in raw.content:
            text = getattr(block, "text", None)
            if text is None:
                text = getattr(getattr(block, "resource", None), "text", None)
            parts.append(text if isinstance(text, str) else f"[{block.type} content omitted]")
        return "\n".join(parts)

    def _refusal(self, name: str, offered: list[str]) -> ToolResult:
        return self._result(
            name,
            f"tool {name!r} is not available from {self.name}; allowed: {', '.join(offered)}",
            is_error=True,
        )

    def _timeout(self, name: str) -> ToolResult:
        return self._result(name, f"{name} timed out after {self.call_timeout:g} s", is_error=True)

    def _result(
        self, name: str, text: str, *, data: Any = None, is_error: bool = False
    ) -> ToolResult:
        return ToolResult(
            text=self._cap(text), title=name, source=self.source, data=data, is_error=is_error
        )

    def _cap(self, text: str) -> str:
        if len(text) <= self.result_cap:
            return text
        return (
            f"{text[: self.result_cap]}\n"
            f"[truncated: {len(text)} characters, the first {self.result_cap} shown]"
        )

    def _annotated(
        self, name: str, arguments: dict[str, Any], result: ToolResult, annotate: Annotate | None
    ) -> ToolResult:
        """The annotator reads the whole answer (a stack trace ends with the crash); the
        text the model and the evidence keep is capped afterwards."""
        if annotate is not None:
            try:
                result = annotate(name, arguments, result)
            except Exception:  # a broken annotator must not lose the evidence
                log.exception("annotating %s/%s failed", self.name, name)
        return result.model_copy(update={"text": self._cap(result.text)})


def _catalog_entries(raw: mcp_types.CallToolResult) -> list[dict[str, Any]]:
    """The tool descriptions a catalog search returned (structured content, else JSON text)."""
    if raw.is_error:
        return []
    data: Any = raw.structured_content
    if not isinstance(data, dict):
        for block in raw.content:
            try:
                data = json.loads(getattr(block, "text", "") or "")
                break
            except ValueError:
                continue
    results = data.get("results") if isinstance(data, dict) else data
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _annotations(raw: Any) -> mcp_types.ToolAnnotations | None:
    if not isinstance(raw, dict):
        return None
    return mcp_types.ToolAnnotations(
        read_only_hint=raw.get("readOnlyHint"),
        destructive_hint=raw.get("destructiveHint"),
        idempotent_hint=raw.get("idempotentHint"),
        open_world_hint=raw.get("openWorldHint"),
    )


class PinnedView:
    """A Toolset over a shared McpToolset session, with its own pinned arguments."""

    def __init__(self, server: McpToolset, pinned: dict[str, Any], annotate: Annotate | None):
        self.name = server.name
        self.server = server
        self.pinned = pinned
        self.annotate = annotate

    async def get_tools(self) -> list[ToolSpec]:
        return await self.server.tools_pinned(self.pinned)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return await self.server.call_pinned(name, arguments, self.pinned, self.annotate)
