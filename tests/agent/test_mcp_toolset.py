"""McpToolset over the real MCP protocol on stdio: mcp-server-git, and a tiny server of our own."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agent.errors import SourceUnavailable
from agent.ports import ToolResult, Toolset
from agent.tools.code import git_annotator
from agent.tools.mcp import McpToolset

# One server process per module (start costs ~1.5 s), so one event loop per module too.
pytestmark = pytest.mark.asyncio(loop_scope="module")

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared" / "scenarios"
ORDERS_BUNDLE = SCENARIOS / "orders-npe" / "repo.bundle"
FAULT = "835b04b442dc376f38b62e6ada802c1377f20c3b"
CUSTOMER_REF = "src/main/java/dev/example/orders/CustomerReference.java"
REPO = "acme/orders-incident-demo"
READ_TOOLS = {"git_log", "git_show", "git_diff", "git_status", "git_branch"}

# A server of our own, for what mcp-server-git cannot show: a slow call, structured
# content, the environment the child sees, big results.
TEST_SERVER = textwrap.dedent(
    """
    import os

    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("test")


    @server.tool(description="Sleep, then answer.")
    async def nap(seconds: float, tenant: str = "") -> str:
        await anyio.sleep(seconds)
        return f"slept {seconds} for {tenant}"


    @server.tool(description="An environment variable, or '<unset>'.")
    def getenv(name: str) -> str:
        return os.environ.get(name, "<unset>")


    @server.tool(description="Structured content.")
    def count(tenant: str, word: str) -> dict[str, int | str]:
        return {"tenant": tenant, "word": word, "length": len(word)}


    @server.tool(description="A long text.")
    def long(n: int) -> str:
        return "x" * n


    server.run()
    """
)


def clone_orders(dest: Path) -> Path:
    if not ORDERS_BUNDLE.exists():
        pytest.skip(f"scenario bundle absent: {ORDERS_BUNDLE}")
    subprocess.run(["git", "clone", "-q", str(ORDERS_BUNDLE), str(dest), "-b", "main"], check=True)
    return dest


def head_of(clone: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def git_toolset(clone: Path) -> McpToolset:
    return McpToolset(
        name="git",
        command=sys.executable,
        args=["-m", "mcp_server_git", "--repository", str(clone)],
        env=None,
        allow=READ_TOOLS,
        pinned={"repo_path": str(clone)},
        source="code",
        annotate=git_annotator(REPO),
    )


def server_pids(marker: str) -> list[int]:
    """Our child processes whose command line mentions `marker` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        # The state and ppid follow the parenthesized command name.
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid() and marker in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="module")
def orders_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_orders(tmp_path_factory.mktemp("mcp") / "orders")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def git_tools(orders_clone: Path) -> AsyncIterator[McpToolset]:
    async with git_toolset(orders_clone) as tools:
        yield tools


@pytest.fixture(scope="module")
def test_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("server") / "incident_test_server.py"
    path.write_text(TEST_SERVER)
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def own_tools(test_server: Path) -> AsyncIterator[McpToolset]:
    os.environ["INCIDENT_BOT_TEST_SECRET"] = "parent-only"
    try:
        tools = McpToolset(
            name="own",
            command=sys.executable,
            args=[str(test_server)],
            env={"SERVER_TOKEN": "given"},
            allow={"nap", "getenv", "count", "long"},
            pinned={"tenant": "acme"},
            source="sentry",
            result_cap=1000,
            call_timeout=0.5,
        )
        # As the worker does: start in the background, let the first use wait for it.
        starting = asyncio.create_task(tools.start())
        yield tools
        await starting
        await tools.aclose()
    finally:
        del os.environ["INCIDENT_BOT_TEST_SECRET"]


# -- mcp-server-git ------------------------------------------------------------------------


async def test_lists_only_allowed_tools_without_pinned_arguments(git_tools: McpToolset) -> None:
    assert isinstance(git_tools, Toolset)
    specs = {spec.name: spec for spec in await git_tools.get_tools()}
    assert set(specs) == READ_TOOLS
    for hidden in ("git_commit", "git_add", "git_reset", "git_checkout", "git_create_branch"):
        assert hidden not in specs
    for spec in specs.values():
        assert spec.parameters["type"] == "object"
        assert "repo_path" not in spec.parameters["properties"]
        assert "repo_path" not in spec.parameters.get("required", [])
    assert specs["git_show"].parameters["required"] == ["revision"]
    assert "required" not in specs["git_status"].parameters  # only repo_path was required


async def test_write_tool_is_refused(git_tools: McpToolset, orders_clone: Path) -> None:
    before = head_of(orders_clone)
    r = await git_tools.call_tool("git_commit", {"message": "pwned"})
    assert r.is_error
    assert "'git_commit' is not available" in r.text
    r = await git_tools.call_tool("git_reset", {})
    assert r.is_error
    after = head_of(orders_clone)
    assert before == after


async def test_git_show_file_at_revision(git_tools: McpToolset) -> None:
    r = await git_tools.call_tool("git_show", {"revision": f"{FAULT}:{CUSTOMER_REF}"})
    assert not r.is_error, r.text
    assert "public record CustomerReference(String value) {" in r.text
    assert "        value = value.strip();" in r.text.splitlines()
    assert r.source == "code"
    assert r.title == f"{CUSTOMER_REF} @ 835b04b"
    assert r.path == CUSTOMER_REF
    assert r.revision == FAULT
    assert r.link == f"https://github.com/{REPO}/blob/{FAULT}/{CUSTOMER_REF}"


async def test_pinned_argument_overrides_the_model(git_tools: McpToolset) -> None:
    # The server refuses a repo_path outside --repository; the pinned one replaces "/etc".
    r = await git_tools.call_tool(
        "git_show", {"revision": f"{FAULT}:{CUSTOMER_REF}", "repo_path": "/etc"}
    )
    assert not r.is_error, r.text
    assert "CustomerReference" in r.text


async def test_git_show_commit_and_log(git_tools: McpToolset) -> None:
    r = await git_tools.call_tool("git_show", {"revision": FAULT})
    assert r.title == "commit 835b04b: Simplify customer reference normalization"
    assert r.link == f"https://github.com/{REPO}/commit/{FAULT}"
    assert '-        value = value == null ? "" : value.strip();' in r.text
    r = await git_tools.call_tool("git_log", {"max_count": 5})
    assert r.title == "git log"
    assert FAULT in r.text


async def test_concurrent_calls_share_one_session(
    git_tools: McpToolset, orders_clone: Path
) -> None:
    results = await asyncio.gather(
        *(git_tools.call_tool("git_log", {"max_count": n}) for n in range(1, 6))
    )
    assert all(not r.is_error and FAULT in r.text for r in results)
    assert len(server_pids(str(orders_clone))) == 1


async def test_tool_error_is_a_result(git_tools: McpToolset) -> None:
    r = await git_tools.call_tool("git_show", {"revision": "no-such-ref"})
    assert r.is_error
    assert "no-such-ref" in r.text
    r = await git_tools.call_tool("git_show", {"revision": "--output=/tmp/x"})
    assert r.is_error


async def test_dead_server_is_restarted_once(tmp_path: Path) -> None:
    clone = clone_orders(tmp_path / "orders")
    async with git_toolset(clone) as tools:
        (pid,) = server_pids(str(clone))
        os.kill(pid, signal.SIGKILL)
        r = await tools.call_tool("git_log", {"max_count": 1})
        assert not r.is_error, r.text
        assert FAULT in r.text
        assert tools.restarts == 1
        (new_pid,) = server_pids(str(clone))
        assert new_pid != pid
        # And the new session keeps serving.
        r = await tools.call_tool("git_show", {"revision": f"{FAULT}:{CUSTOMER_REF}"})
        assert not r.is_error
    assert server_pids(str(clone)) == []


# -- a server of our own ------------------------------------------------------------------


async def test_background_start_is_shared(own_tools: McpToolset, test_server: Path) -> None:
    specs = {spec.name: spec for spec in await own_tools.get_tools()}
    assert set(specs) == {"nap", "getenv", "count", "long"}
    assert "tenant" not in specs["count"].parameters["properties"]
    assert specs["count"].parameters["required"] == ["word"]
    assert len(server_pids(str(test_server))) == 1


async def test_structured_content_and_pinning(own_tools: McpToolset) -> None:
    r = await own_tools.call_tool("count", {"word": "orders", "tenant": "evil"})
    assert not r.is_error, r.text
    assert r.data == {"tenant": "acme", "word": "orders", "length": 6}
    assert r.source == "sentry"
    assert r.title == "count"


async def test_child_environment(own_tools: McpToolset) -> None:
    r = await own_tools.call_tool("getenv", {"name": "SERVER_TOKEN"})
    assert r.text == "given"
    r = await own_tools.call_tool("getenv", {"name": "INCIDENT_BOT_TEST_SECRET"})
    assert r.text == "<unset>"
    r = await own_tools.call_tool("getenv", {"name": "PATH"})
    assert r.text == os.environ["PATH"]


async def test_slow_call_times_out(own_tools: McpToolset) -> None:
    r = await own_tools.call_tool("nap", {"seconds": 5})
    assert r.is_error
    assert r.text == "nap timed out after 0.5 s"
    r = await own_tools.call_tool("nap", {"seconds": 0})
    assert not r.is_error
    assert r.text == "slept 0.0 for acme"


async def test_result_is_capped(own_tools: McpToolset) -> None:
    r = await own_tools.call_tool("long", {"n": 5000})
    assert r.text.startswith("x" * 1000 + "\n[truncated")
    assert "5000 characters" in r.text


async def test_bad_arguments_are_a_result(own_tools: McpToolset) -> None:
    r = await own_tools.call_tool("nap", {"seconds": "soon"})
    assert r.is_error
    assert "seconds" in r.text


async def test_annotator_failure_keeps_the_result(own_tools: McpToolset) -> None:
    def broken(name: str, arguments: dict[str, Any], result: ToolResult) -> ToolResult:
        raise RuntimeError("boom")

    own_tools.annotate = broken
    try:
        r = await own_tools.call_tool("long", {"n": 3})
    finally:
        own_tools.annotate = None
    assert r.text == "xxx"
    assert not r.is_error


async def test_server_that_cannot_start(tmp_path: Path) -> None:
    tools = McpToolset("missing", str(tmp_path / "no-such-server"), [], None, {"x"}, {}, "code")
    with pytest.raises(SourceUnavailable, match="could not start"):
        await tools.get_tools()
    # Refusals need no server at all.
    r = await tools.call_tool("y", {})
    assert r.is_error
    await tools.aclose()
    with pytest.raises(SourceUnavailable):
        await tools.call_tool("x", {})


async def test_close_during_a_hanging_start(tmp_path: Path) -> None:
    # A "server" that never answers initialize: aclose must not wait out start_timeout.
    tools = McpToolset(
        "mute",
        sys.executable,
        ["-c", "import time; time.sleep(60)"],
        None,
        {"x"},
        {},
        "code",
        start_timeout=60,
    )
    starting = asyncio.create_task(tools.start())
    await asyncio.sleep(0.3)
    loop = asyncio.get_running_loop()
    began = loop.time()
    await tools.aclose()
    with pytest.raises(SourceUnavailable):
        await starting
    assert loop.time() - began < 10  # the SDK's bounded shutdown, not the 60 s start timeout


async def test_unknown_source_is_refused() -> None:
    with pytest.raises(ValueError, match="source"):
        McpToolset("x", "x", [], None, set(), {}, "github")  # type: ignore[arg-type]
