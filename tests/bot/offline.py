"""One recorded scenario investigated offline through the CLI's path, in this process."""

from pathlib import Path

from agent.budget import Limits
from agent.domain import Investigation
from bot.cli import run
from bot.runtime import git_server
from recorded.scenario import clone, load_scenario


async def investigate(folder: Path) -> dict:
    git = git_server()
    await git.start()
    try:
        scenario = load_scenario(folder)
        inv = Investigation.open(scenario.question, scenario.scope)
        repo = await clone(scenario, folder / "clone")
        url = f"sqlite+aiosqlite:///{folder / 'run.db'}"
        return await run(scenario, repo, inv, url, Limits(), as_json=True, git=git)
    finally:
        await git.aclose()
