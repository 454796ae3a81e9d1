"""GitCodeTools on real git: a small repository built here and the orders-npe scenario."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent.ports import RevisionFiles, ToolResult, Toolset
from agent.tools.code import GitCodeTools, check_path, check_revision, git_annotator

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared" / "scenarios"
ORDERS_BUNDLE = SCENARIOS / "orders-npe" / "repo.bundle"
FAULT = "835b04b442dc376f38b62e6ada802c1377f20c3b"
BEFORE = "f1578537bfb4c1f973642f90c106f3465fadc768"
CUSTOMER_REF = "src/main/java/dev/example/orders/CustomerReference.java"
REPO = "acme/orders-incident-demo"

SERVICE_V1 = '''"""Orders."""


class OrderService:
    def create(self, quantity):
        if quantity < 1:
            raise ValueError("quantity")
        return {"quantity": quantity}


MAX_ITEMS = 10
'''
SERVICE_V2 = SERVICE_V1.replace("if quantity < 1:", "if quantity <= 0:").replace(
    '        return {"quantity": quantity}\n',
    '        total = quantity * 2\n        return {"quantity": quantity, "total": total}\n',
)
APP_JS = """function handleSave(order) {
  return fetch("/orders", {method: "POST", body: order});
}

const RETRY_LIMIT = 3;
handleSave(null);
"""
MAIN_GO = """package main

type Server struct{}

func (s *Server) Handle() {}

func main() {}
"""


def git(cwd: Path, *args: str, **env: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    ).stdout.strip()


def commit(repo: Path, author: str, date: str, message: str) -> str:
    email = f"{author.split()[0].lower()}@example.com"
    git(
        repo,
        "-c",
        f"user.name={author}",
        "-c",
        f"user.email={email}",
        "commit",
        "-q",
        "-m",
        message,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
    )
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def small_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = tmp_path / "small"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app").mkdir()
    (repo / "web").mkdir()
    (repo / "go").mkdir()
    (repo / "app" / "service.py").write_text(SERVICE_V1)
    (repo / "web" / "app.js").write_text(APP_JS)
    (repo / "go" / "main.go").write_text(MAIN_GO)
    (repo / "README.md").write_text("# Small\n\nSee app/service.py.\n")
    git(repo, "add", ".")
    c1 = commit(repo, "Alice Able", "2026-01-01T10:00:00+00:00", "Add the order service")
    (repo / "app" / "service.py").write_text(SERVICE_V2)
    git(repo, "add", ".")
    c2 = commit(repo, "Bob Baker", "2026-01-02T11:30:00+01:00", "Accept zero as invalid, add total")
    (repo / "docs").mkdir()
    (repo / "docs" / "release notes.md").write_text("# Notes\n\nquantity must be positive\n")
    (repo / "docs" / 'quote"d.md').write_text("odd name\n")
    (repo / "docs" / "logo.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    git(repo, "add", ".")
    c3 = commit(repo, "Carol Cook", "2026-01-03T09:00:00+00:00", "Write release notes")
    return repo, [c1, c2, c3]


@pytest.fixture
def small(small_repo: tuple[Path, list[str]]) -> GitCodeTools:
    return GitCodeTools(small_repo[0], "acme/small")


@pytest.fixture
def orders(tmp_path: Path) -> GitCodeTools:
    if not ORDERS_BUNDLE.exists():
        pytest.skip(f"scenario bundle absent: {ORDERS_BUNDLE}")
    clone = tmp_path / "orders"
    git(tmp_path, "clone", "-q", str(ORDERS_BUNDLE), str(clone), "-b", "main")
    return GitCodeTools(clone, REPO)


async def call(tools: GitCodeTools, tool: str, /, **arguments: Any) -> ToolResult:
    return await tools.call_tool(tool, arguments)


# -- protocol and plain methods ------------------------------------------------------


async def test_is_a_toolset_with_schemas(small: GitCodeTools) -> None:
    assert isinstance(small, Toolset)
    files: RevisionFiles = small
    assert files is small
    specs = {spec.name: spec for spec in await small.get_tools()}
    assert set(specs) == {
        *("git_blame", "git_grep", "list_directory", "find_files", "find_symbol", "git_changes"),
    }
    for spec in specs.values():
        assert spec.description
        assert spec.parameters["type"] == "object"
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
        for prop in spec.parameters["properties"].values():
            assert prop.get("description")


async def test_plain_methods(small: GitCodeTools, small_repo: tuple[Path, list[str]]) -> None:
    _, (c1, c2, c3) = small_repo
    assert await small.resolve("main") == c3
    assert await small.resolve(c2[:8]) == c2
    assert await small.resolve("main~2") == c1
    assert await small.parent(c3) == c2
    assert await small.parent(c1) is None
    assert await small.is_ancestor(c1, c3)
    assert not await small.is_ancestor(c3, c1)
    assert await small.files(c1) == ["README.md", "app/service.py", "go/main.go", "web/app.js"]
    assert await small.file_exists("app/service.py", c1)
    assert not await small.file_exists("docs/release notes.md", c1)
    assert await small.file_exists("docs/release notes.md", "main")
    assert not await small.file_exists("app", c1)  # a folder is not a file
    assert not await small.file_exists("../etc/passwd", c1)
    assert not await small.file_exists("app/service.py", "-rf")


# -- git_blame -----------------------------------------------------------------------


async def test_blame_attributes_each_line(
    small: GitCodeTools, small_repo: tuple[Path, list[str]]
) -> None:
    _, (c1, c2, c3) = small_repo
    r = await call(
        small, "git_blame", revision="main", path="app/service.py", start_line=5, end_line=7
    )
    assert not r.is_error, r.text
    assert r.source == "code"
    assert r.revision == c3
    assert r.path == "app/service.py"
    assert r.link == f"https://github.com/acme/small/blob/{c3}/app/service.py#L5-L7"
    lines = r.data["lines"]
    assert [ln["line"] for ln in lines] == [5, 6, 7]
    assert [ln["commit"] for ln in lines] == [c1, c2, c1]
    assert lines[1] == {
        "line": 6,
        "commit": c2,
        "author": "Bob Baker",
        "date": "2026-01-02T11:30:00+01:00",
        "summary": "Accept zero as invalid, add total",
        "boundary": False,
        "text": "        if quantity <= 0:",
    }
    assert lines[0]["boundary"] and lines[0]["commit"] == c1  # the root: nothing before it
    assert r.data["revision"] == c3
    assert f"L6 {c2[:7]} (Bob Baker 2026-01-02)         if quantity <= 0:" in r.text
    assert f"{c1[:7]} 2026-01-01 Alice Able: Add the order service" in r.text


async def test_blame_errors(small: GitCodeTools) -> None:
    r = await call(
        small, "git_blame", revision="main", path="app/service.py", start_line=50, end_line=60
    )
    assert r.is_error and "lines" in r.text
    r = await call(
        small, "git_blame", revision="main", path="app/nope.py", start_line=1, end_line=2
    )
    assert r.is_error and "does not exist" in r.text
    r = await call(small, "git_blame", revision="main", path="app", start_line=1, end_line=2)
    assert r.is_error and "folder" in r.text
    r = await call(
        small, "git_blame", revision="main", path="app/service.py", start_line=5, end_line=2
    )
    assert r.is_error and "end_line" in r.text
    r = await call(small, "git_blame", revision="main", path="app/service.py")
    assert r.is_error and r.text.startswith("invalid arguments for git_blame")


async def test_blame_orders_fault_line(orders: GitCodeTools) -> None:
    r = await call(
        orders, "git_blame", revision=FAULT, path=CUSTOMER_REF, start_line=14, end_line=14
    )
    assert not r.is_error, r.text
    (line,) = r.data["lines"]
    assert line["line"] == 14
    assert line["commit"] == FAULT
    assert line["author"] == "Dev Two"
    assert line["date"] == "2026-11-27T16:41:00+00:00"
    assert line["summary"] == "Simplify customer reference normalization"
    assert line["text"].strip() == "value = value.strip();"
    assert r.link == f"https://github.com/{REPO}/blob/{FAULT}/{CUSTOMER_REF}#L14-L14"
    assert (
        r.text.splitlines()[1] == "L14 835b04b (Dev Two 2026-11-27)         value = value.strip();"
    )


# -- git_changes -----------------------------------------------------------------------


async def test_changes_orders_fault(orders: GitCodeTools) -> None:
    r = await call(orders, "git_changes", base=BEFORE, head=FAULT)
    assert not r.is_error, r.text
    assert r.data["base"] == BEFORE and r.data["head"] == FAULT
    (c,) = r.data["commits"]
    assert c["sha"] == FAULT
    assert c["author"] == "Dev Two"
    assert c["date"] == "2026-11-27T16:41:00+00:00"
    assert c["summary"] == "Simplify customer reference normalization"
    (f,) = c["files"]
    assert f["path"] == CUSTOMER_REF
    (h,) = f["hunks"]
    assert h["header"] == "@@ -11,7 +11,7 @@"
    assert h["function"] == "public record CustomerReference(String value) {"
    assert (h["old_start"], h["old_lines"], h["new_start"], h["new_lines"]) == (11, 7, 11, 7)
    assert h["added"] == [[14, "        value = value.strip();"]]
    assert h["removed"] == [[14, '        value = value == null ? "" : value.strip();']]
    assert r.link == f"https://github.com/{REPO}/commit/{FAULT}"
    assert r.revision == FAULT
    assert "   14 +        value = value.strip();" in r.text
    assert '   14 -        value = value == null ? "" : value.strip();' in r.text
    assert "Simplify customer reference normalization" in r.text

    # Without a base: the head's own change, against its parent.
    r2 = await call(orders, "git_changes", head=FAULT, base=None)
    assert r2.data["base"] == BEFORE
    assert r2.data["commits"] == r.data["commits"]
    r3 = await call(orders, "git_changes", head="main", base="", paths=["docs"])
    assert r3.data["commits"] == []
    assert "0 commit(s)" in r3.text


async def test_changes_range_paths_and_root(
    small: GitCodeTools, small_repo: tuple[Path, list[str]]
) -> None:
    _, (c1, c2, c3) = small_repo
    r = await call(small, "git_changes", base=c1, head=c3)
    assert [c["sha"] for c in r.data["commits"]] == [c3, c2]
    assert r.link == f"https://github.com/acme/small/compare/{c1}...{c3}"
    files = {f["path"]: f for f in r.data["commits"][0]["files"]}
    assert set(files) == {"docs/logo.bin", 'docs/quote"d.md', "docs/release notes.md"}
    assert files["docs/logo.bin"]["hunks"] == []  # binary: no text diff
    assert files['docs/quote"d.md']["hunks"][0]["added"] == [[1, "odd name"]]
    notes = files["docs/release notes.md"]
    assert notes["status"] == "added"
    assert notes["hunks"][0]["added"] == [
        [1, "# Notes"],
        [2, ""],
        [3, "quantity must be positive"],
    ]
    service = r.data["commits"][1]["files"][0]
    assert service["path"] == "app/service.py"
    (h,) = service["hunks"]
    assert h["header"] == "@@ -3,9 +3,10 @@"
    assert h["function"] == ""  # nothing before line 3 looks like a function to git
    assert h["removed"] == [
        [6, "        if quantity < 1:"],
        [8, '        return {"quantity": quantity}'],
    ]
    assert h["added"] == [
        [6, "        if quantity <= 0:"],
        [8, "        total = quantity * 2"],
        [9, '        return {"quantity": quantity, "total": total}'],
    ]

    only_app = await call(small, "git_changes", base=c1, head=c3, paths=["app"], context=0)
    assert [c["sha"] for c in only_app.data["commits"]] == [c2]
    assert only_app.path == "app"
    hunks = only_app.data["commits"][0]["files"][0]["hunks"]
    assert [(x["new_start"], x["new_lines"]) for x in hunks] == [(6, 1), (8, 2)]
    assert [x["function"] for x in hunks] == ["class OrderService:", "class OrderService:"]

    root = await call(small, "git_changes", head=c1)
    assert root.data["base"] is None
    (rc,) = root.data["commits"]
    assert rc["sha"] == c1
    assert {f["path"] for f in rc["files"]} == {
        "README.md",
        "app/service.py",
        "go/main.go",
        "web/app.js",
    }
    assert all(f["status"] == "added" for f in rc["files"])


# -- git_grep, list_directory, find_symbol ----------------------------------------------


async def test_grep(small: GitCodeTools, small_repo: tuple[Path, list[str]]) -> None:
    _, (c1, _, c3) = small_repo
    r = await call(small, "git_grep", revision="main", pattern="quantity")
    assert not r.is_error, r.text
    paths = {m["path"] for m in r.data["matches"]}
    assert paths == {"app/service.py", "docs/release notes.md"}
    assert {"path": "app/service.py", "line": 6, "text": "        if quantity <= 0:"} in r.data[
        "matches"
    ]
    assert r.revision == c3

    regex = await call(small, "git_grep", revision=c1, pattern=r"quantity [<=]+ [01]", regex=True)
    assert [(m["path"], m["line"]) for m in regex.data["matches"]] == [("app/service.py", 6)]
    fixed = await call(small, "git_grep", revision=c1, pattern="quantity [<=]+ [01]")
    assert fixed.data["matches"] == []
    assert not fixed.is_error and fixed.text.startswith("no matches")

    scoped = await call(small, "git_grep", revision="main", pattern="quantity", path="docs")
    assert {m["path"] for m in scoped.data["matches"]} == {"docs/release notes.md"}
    assert scoped.link == f"https://github.com/acme/small/tree/{c3}/docs"

    capped = await call(small, "git_grep", revision="main", pattern="quantity", max_results=2)
    assert len(capped.data["matches"]) == 2 and capped.data["truncated"]
    assert "first 2 shown" in capped.text

    dash = await call(small, "git_grep", revision="main", pattern="--output=/tmp/x")
    assert not dash.is_error and dash.data["matches"] == []
    bad = await call(small, "git_grep", revision="main", pattern="(", regex=True)
    assert bad.is_error and bad.text.startswith("git grep failed")


async def test_list_directory(small: GitCodeTools, small_repo: tuple[Path, list[str]]) -> None:
    _, (c1, _, c3) = small_repo
    r = await call(small, "list_directory", revision="main")
    assert r.data == {
        "revision": c3,
        "path": "",
        "entries": ["README.md", "app/", "docs/", "go/", "web/"],
        "truncated": False,
    }
    assert r.link == f"https://github.com/acme/small/tree/{c3}"
    deep = await call(small, "list_directory", revision=c1, path="./app/", recursive=True)
    assert deep.data["entries"] == ["app/service.py"]
    assert deep.data["path"] == "app"
    everything = await call(small, "list_directory", revision=c3, recursive=True)
    assert "docs/release notes.md" in everything.data["entries"]
    assert (await call(small, "list_directory", revision=c1, path="docs")).is_error
    not_dir = await call(small, "list_directory", revision=c1, path="README.md")
    assert not_dir.is_error and "not a folder" in not_dir.text


async def test_find_files_by_name_in_any_folder(
    small: GitCodeTools, small_repo: tuple[Path, list[str]]
) -> None:
    _, (c1, _, c3) = small_repo
    names = ["/srv/deploy/app/service.py", "app.js", "C:\\build\\main.go", "absent.py"]
    r = await call(small, "find_files", revision="main", names=names)
    assert r.data["entries"] == ["app/service.py", "go/main.go", "web/app.js"]
    assert r.data["names"] == ["service.py", "app.js", "main.go", "absent.py"]
    assert r.revision == c3 and r.link == f"https://github.com/acme/small/tree/{c3}"
    # Each name is literal: glob characters match only themselves.
    starred = await call(small, "find_files", revision="main", names=["*.py", "*", "[a]pp.js"])
    assert starred.data["entries"] == []
    spaced = await call(small, "find_files", revision=c3, names=["release notes.md"])
    assert spaced.data["entries"] == ["docs/release notes.md"]
    before = await call(small, "find_files", revision=c1, names=["release notes.md"])
    assert before.data["entries"] == []
    assert (await call(small, "find_files", revision="main", names=[])).is_error
    assert (await call(small, "find_files", revision="main", names=["/"])).is_error


async def test_find_symbol_across_languages(small: GitCodeTools) -> None:
    async def kinds(name: str) -> list[tuple[str, int, str]]:
        r = await call(small, "find_symbol", revision="main", name=name)
        assert not r.is_error, r.text
        return [(m["path"], m["line"], m["kind"]) for m in r.data["matches"]]

    assert await kinds("OrderService") == [("app/service.py", 4, "class")]
    assert await kinds("create") == [("app/service.py", 5, "function")]
    assert await kinds("MAX_ITEMS") == [("app/service.py", 12, "variable")]
    assert await kinds("quantity") == []  # parameters and uses are not declarations
    assert await kinds("Server") == [("go/main.go", 3, "type")]
    assert await kinds("Handle") == [("go/main.go", 5, "method")]
    assert await kinds("main") == [("go/main.go", 7, "function")]
    assert await kinds("handleSave") == [("web/app.js", 1, "function")]  # not the call on line 6
    assert await kinds("RETRY_LIMIT") == [("web/app.js", 5, "const")]
    r = await call(small, "find_symbol", revision="main", name="rm -rf")
    assert r.is_error and "invalid symbol name" in r.text


async def test_find_symbol_orders(orders: GitCodeTools) -> None:
    r = await call(orders, "find_symbol", revision=FAULT, name="CustomerReference")
    assert not r.is_error, r.text
    assert [(m["path"], m["line"], m["kind"]) for m in r.data["matches"]] == [
        (CUSTOMER_REF, 9, "record"),
        (CUSTOMER_REF, 13, "constructor"),
    ]  # OrderService's `new CustomerReference(...)` is a use, not a declaration
    r = await call(orders, "find_symbol", revision=FAULT, name="create")
    assert [(m["path"].rsplit("/", 1)[-1], m["line"], m["kind"]) for m in r.data["matches"]] == [
        ("OrderService.java", 22, "method"),
        ("OrdersController.java", 28, "method"),
    ]
    assert r.link == f"https://github.com/{REPO}/tree/{FAULT}"
    r = await call(orders, "find_symbol", revision=FAULT, name="MAX_LENGTH")
    assert [(m["path"], m["line"], m["kind"]) for m in r.data["matches"]] == [
        (CUSTOMER_REF, 11, "field")
    ]
    assert r.path == CUSTOMER_REF
    assert r.link == f"https://github.com/{REPO}/blob/{FAULT}/{CUSTOMER_REF}#L11-L11"


async def test_orders_grep_and_listing(orders: GitCodeTools) -> None:
    r = await call(orders, "git_grep", revision=FAULT, pattern=".strip()")
    assert [(m["path"].rsplit("/", 1)[-1], m["line"]) for m in r.data["matches"]] == [
        ("CustomerReference.java", 14),
        ("OrderService.java", 32),
    ]
    r = await call(
        orders, "list_directory", revision=FAULT, path="src/main/java/dev/example/orders"
    )
    assert "CustomerReference.java" in r.data["entries"]
    r = await call(orders, "list_directory", revision=BEFORE)
    assert r.data["entries"] == ["README.md", "docs/", "pom.xml", "src/"]


async def test_bare_repository(small_repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    repo, (_, c2, c3) = small_repo
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    tools = GitCodeTools(bare, "acme/small")
    r = await call(
        tools, "git_blame", revision="main", path="app/service.py", start_line=6, end_line=6
    )
    assert r.data["lines"][0]["commit"] == c2
    r = await call(tools, "git_grep", revision="main", pattern="OrderService")
    assert r.data["matches"][0]["path"] == "app/service.py"
    assert await tools.file_exists("app/service.py", c3)


# -- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "fragment"),
    [
        (
            "git_blame",
            {"revision": "nope", "path": "app/service.py", "start_line": 1, "end_line": 1},
            "unknown revision",
        ),
        (
            "git_blame",
            {"revision": "-rf", "path": "app/service.py", "start_line": 1, "end_line": 1},
            "invalid revision",
        ),
        (
            "git_blame",
            {"revision": "--output=/tmp/x", "path": "a", "start_line": 1, "end_line": 1},
            "invalid revision",
        ),
        (
            "git_blame",
            {"revision": "main", "path": "../etc/passwd", "start_line": 1, "end_line": 1},
            "'..'",
        ),
        (
            "git_blame",
            {"revision": "main", "path": "/etc/passwd", "start_line": 1, "end_line": 1},
            "relative",
        ),
        ("git_grep", {"revision": "main..HEAD", "pattern": "x"}, "invalid revision"),
        ("git_grep", {"revision": "main", "pattern": "x", "path": "app/../../etc"}, "'..'"),
        ("list_directory", {"revision": "HEAD:app"}, "invalid revision"),
        ("git_changes", {"base": "-n1", "head": "main"}, "invalid revision"),
        ("git_changes", {"head": "main", "paths": ["../x"]}, "'..'"),
        ("find_symbol", {"revision": "deadbeefdeadbeef", "name": "x"}, "unknown revision"),
        ("git_push", {}, "unknown tool"),
        ("git_grep", {"revision": "main", "pattern": "x", "shell": "rm"}, "invalid arguments"),
    ],
)
async def test_bad_input_is_an_error_result(
    small: GitCodeTools, tool: str, arguments: dict[str, Any], fragment: str
) -> None:
    r = await small.call_tool(tool, arguments)
    assert r.is_error
    assert fragment in r.text
    assert "\n" not in r.text
    assert r.source == "code"


def test_validators() -> None:
    assert check_revision("release/2026.11") == "release/2026.11"
    assert check_revision("HEAD~2^1") == "HEAD~2^1"
    assert check_revision(FAULT) == FAULT
    assert check_path("./src//main/") == "src/main"
    assert check_path("", allow_root=True) == ""
    for bad in ["-rf", "a..b", "@{-1}", ".hidden", "x.lock", "a b", "HEAD:x", "", "a/"]:
        with pytest.raises(Exception, match="revision"):
            check_revision(bad)
    for bad_path in ["../x", "a/../../b", "/abs", "C:\\x", "a\x00b", "..\\x"]:
        with pytest.raises(Exception, match="path"):
            check_path(bad_path)


async def test_result_text_is_capped(small_repo: tuple[Path, list[str]]) -> None:
    tools = GitCodeTools(small_repo[0], "acme/small", result_cap=40)
    r = await call(tools, "list_directory", revision="main", recursive=True)
    assert len(r.text) < 100
    assert r.text.endswith("characters, the first 40 shown]")
    assert "[truncated" in r.text


# -- the annotator for mcp-server-git ----------------------------------------------------


def test_git_annotator() -> None:
    annotate = git_annotator(REPO)
    raw = ToolResult(text="package x;", title="git_show", source="code")
    r = annotate("git_show", {"revision": f"{FAULT}:{CUSTOMER_REF}", "repo_path": "/r"}, raw)
    assert r.title == f"{CUSTOMER_REF} @ 835b04b"
    assert r.path == CUSTOMER_REF and r.revision == FAULT
    assert r.link == f"https://github.com/{REPO}/blob/{FAULT}/{CUSTOMER_REF}"
    r = annotate("git_show", {"revision": f"main:{CUSTOMER_REF}"}, raw)
    assert r.title == f"{CUSTOMER_REF} @ main" and r.link is None and r.revision == "main"

    shown = ToolResult(
        text=f"commit {FAULT}\nAuthor: Dev Two <d@x>\nDate:   2026-11-27\n\n    Simplify it\n",
        title="git_show",
        source="code",
    )
    r = annotate("git_show", {"revision": "835b04b"}, shown)
    assert r.title == "commit 835b04b: Simplify it"
    assert r.link == f"https://github.com/{REPO}/commit/{FAULT}" and r.revision == FAULT
    assert annotate("git_log", {}, raw).title == "git log"
    failed = ToolResult(
        text="Ref 'x' did not resolve", title="git_show", source="code", is_error=True
    )
    assert annotate("git_show", {"revision": "x:y"}, failed) == failed


async def test_find_files_tries_a_frames_path_under_the_source_roots(orders: GitCodeTools) -> None:
    r = await call(
        orders,
        "find_files",
        revision=FAULT,
        names=["dev/example/orders/CustomerReference.java", "Thread.java"],
    )
    assert r.data["entries"] == [CUSTOMER_REF]
