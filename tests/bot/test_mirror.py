"""Code through a local mirror clone, fetched at start and when a release is missing."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.domain import Investigation, Message, Scope, State, ToolCall
from agent.errors import InputError
from agent.models.scripted import ScriptedModel
from agent.ports import ToolSpec
from bot.config import Projects
from bot.mirror import Mirror, MirrorError, named_commits, sources_for
from bot.runtime import Runtime
from recorded.scenario import Scenario
from search.export import export_corpus
from tests.gitrepo import git

REPOSITORY = "acme/shop"
APP = "src/app.py"


def commit(repo: Path, text: str, message: str) -> str:
    (repo / "src").mkdir(parents=True, exist_ok=True)
    (repo / APP).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def upstream(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    return repo, commit(repo, "def total(order):\n    return order.amount\n", "first")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_named_commits() -> None:
    sha = "a" * 40
    args = {"revision": f"{sha}:src/app.py", "head": "abc1234", "base": "main", "path": sha}
    assert named_commits(args) == [sha, "abc1234"]
    assert named_commits({"revision": "HEAD~1", "target": "-x"}) == []


async def test_start_fetches_an_existing_mirror(tmp_path: Path) -> None:
    up, _ = upstream(tmp_path)
    path = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(up), str(path))
    release = commit(up, "def total(order):\n    return order.amount or 0\n", "release")
    mirror = Mirror(path)
    assert not await mirror.has_commit(release)
    await mirror.start()
    assert await mirror.has_commit(release) and mirror.fetches == 1


async def test_on_demand_fetches_are_bounded_by_the_interval(tmp_path: Path) -> None:
    up, first = upstream(tmp_path)
    clock = Clock()
    mirror = Mirror(tmp_path / "mirror.git", str(up), min_interval=60, clock=clock)
    await mirror.start()  # cloned: that is the first fetch
    assert mirror.fetches == 1 and await mirror.ensure(first)
    unknown = "0123456789abcdef0123456789abcdef01234567"
    assert not await mirror.ensure(unknown)
    assert mirror.fetches == 1  # the clone is younger than the interval
    clock.now += 61
    assert not await mirror.ensure(unknown)
    assert mirror.fetches == 2
    assert not await mirror.ensure(unknown) and mirror.fetches == 2
    release = commit(up, "x = 1\n", "release")
    assert not await mirror.ensure(release)  # found only after the interval
    clock.now += 61
    assert await mirror.ensure(release) and mirror.fetches == 3
    assert await mirror.ensure(release) and mirror.fetches == 3  # present: no fetch


async def test_bad_mirrors(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="no url to clone it from"):
        await Mirror(tmp_path / "absent.git").start()
    up, _ = upstream(tmp_path)
    with pytest.raises(MirrorError, match="not a bare mirror clone"):
        await Mirror(up).start()  # a work tree is not a mirror
    with pytest.raises(MirrorError, match="cannot clone"):
        await Mirror(tmp_path / "m.git", str(tmp_path / "nowhere")).start()
    # An unreachable upstream at start: the bot serves what the mirror holds.
    path = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(up), str(path))
    shutil.rmtree(up)
    mirror = Mirror(path)
    await mirror.start()
    assert mirror.last_error and mirror.fetches == 1


def call(i: int, name: str, **arguments: object) -> Message:
    return Message(
        role="assistant", tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=arguments)]
    )


async def test_a_release_missing_from_the_mirror_is_fetched_and_read(tmp_path: Path) -> None:
    up, first = upstream(tmp_path)
    clock = Clock()
    mirror = Mirror(tmp_path / "mirror.git", str(up), min_interval=60, clock=clock)
    folder = tmp_path / "incident"
    (folder / "sentry").mkdir(parents=True)
    (folder / "sentry" / "issues.json").write_text("[]")
    now = datetime(2026, 11, 28, 18, tzinfo=UTC)
    scope = Scope(
        project_key="shop",
        repository=REPOSITORY,
        sentry_organization="acme",
        sentry_project="shop",
        since=now.replace(hour=0),
        until=now,
    )
    scenario = Scenario(folder=folder, question="why do totals fail?", scope=scope, raw={})

    release = ""
    unknown = "0123456789abcdef0123456789abcdef01234567"

    def deploy(_messages: list[Message], _tools: list[ToolSpec]) -> Message:
        # A release is deployed after the bot started: the mirror has not seen it yet.
        nonlocal release
        release = commit(up, "def total(order):\n    return order.amount or 0\n", "release")
        clock.now += 61
        return call(1, "git__git_show", revision=f"{release}:{APP}")

    steps = [
        deploy,
        lambda m, t: call(
            2, "code__git_blame", revision=release, path=APP, start_line=2, end_line=2
        ),
        call(3, "code__list_directory", revision=unknown),
        lambda m, t: call(4, "git__git_show", revision=f"{release}:{APP}", repo_path=str(up)),
        call(5, "code__list_directory", revision=first, repository="evil/repo"),
        lambda m, t: Message(
            role="assistant",
            tool_calls=[
                ToolCall(
                    id="c6",
                    name="finish_investigation",
                    arguments={
                        "root_cause": "total() returns None amounts as 0 since the release.",
                        "facts": [{"text": "the release changed line 2", "evidence": ["E1"]}],
                        "confidence": "medium",
                        "suspect": {
                            "path": APP,
                            "line_start": 2,
                            "line_end": 2,
                            "revision": release,
                        },
                    },
                )
            ],
        ),
    ]
    model = ScriptedModel(steps)
    runtime = Runtime.recorded(
        scenario, mirror.path, mirror=mirror, model=lambda inv: model, can_ask=False, prefetch=False
    )
    await runtime.start()
    try:
        assert mirror.fetches == 1 and await mirror.has_commit(first)
        inv = Investigation.open(scenario.question, scope)

        async def save(_inv: Investigation) -> None:
            return None

        inv = await (await runtime.loop_for(inv, save)).run(inv)
    finally:
        await runtime.aclose()

    assert inv.state is State.COMPLETED, inv.stop_reason
    replies = {m.tool_call_id: m for m in inv.messages if m.role == "tool"}
    # The release was fetched on demand and read through mcp-server-git, then the code tools.
    shown, blame = inv.evidence[0], inv.evidence[1]
    assert (shown.tool, shown.revision, shown.path) == ("git__git_show", release, APP)
    assert "return order.amount or 0" in shown.content
    assert shown.link == f"https://github.com/{REPOSITORY}/blob/{release}/{APP}"
    assert blame.tool == "code__git_blame" and release[:7] in blame.content
    assert await mirror.has_commit(release)
    # A commit nobody has: one fetch per interval at most, and the model is told.
    assert (
        replies["c3"].content.startswith("ERROR:") and "unknown revision" in replies["c3"].content
    )
    assert mirror.fetches == 2
    # The model cannot read another repository.
    assert "'repo_path' is fixed by configuration" in replies["c4"].content
    assert "'repository' is not an argument" in replies["c5"].content
    assert [ev.tool for ev in inv.evidence] == ["git__git_show", "code__git_blame"]
    assert inv.draft is not None and inv.draft.repository == REPOSITORY


async def test_a_project_names_its_mirror_and_its_exported_docs(tmp_path: Path) -> None:
    up, first = upstream(tmp_path)
    (up / "docs").mkdir()
    (up / "docs" / "orders.md").write_text("# Orders\n\nA total is never negative.\n")
    git(up, "add", "-A")
    git(up, "commit", "-q", "-m", "docs")
    await export_corpus(up, "main", tmp_path / "corpus")
    config = tmp_path / "projects.toml"
    config.write_text(
        "[projects.shop]\n"
        f'repository = "{REPOSITORY}"\n'
        'sentry_organization = "acme"\nsentry_project = "shop"\n'
        f'code_mirror = "{tmp_path / "mirror.git"}"\ncode_url = "{up}"\n'
        f'fetch_interval_seconds = 5\ndocs_corpus = "{tmp_path / "corpus"}"\n'
    )
    project = Projects.load(config).projects["shop"]
    mirror, docs = await sources_for(project)
    assert mirror is not None and mirror.min_interval == 5 and mirror.url == str(up)
    await mirror.start()
    assert await mirror.has_commit(first)
    assert docs is not None
    (passage,) = await docs.search("total negative", limit=1)
    assert passage.path == "docs/orders.md" and passage.revision == git(up, "rev-parse", "HEAD")
    assert await sources_for(None) == (None, None)

    (tmp_path / "corpus" / "docs" / "orders.md").write_text("# Orders\n\nedited by hand\n")
    with pytest.raises(InputError, match=r"project `shop`: .*docs/orders\.md was changed on disk"):
        await sources_for(project)
