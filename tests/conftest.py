from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "scenarios"
RECIPES = ROOT / "tests" / "fixtures" / "scenarios"
DEMO = ROOT / "bot" / "demo" / "orders"


def shared_scenarios() -> list[Path]:
    if not SHARED.is_dir():
        return []
    return sorted(p for p in SHARED.iterdir() if (p / "scenario.json").is_file())


def recipes() -> list[Path]:
    return [DEMO, *sorted(p for p in RECIPES.iterdir() if (p / "recipe.json").is_file())]


class Built(dict):
    """Recipes built into scenario folders on first use, by name, once per session."""

    def __init__(self, out: Path) -> None:
        super().__init__()
        self.out = out
        self.recipes = {r.name: r for r in recipes()}

    def __missing__(self, name: str) -> Path:
        from bot.scenarios import build_scenario

        self[name] = build_scenario(self.recipes[name], self.out / name)
        return self[name]


@pytest.fixture(scope="session")
def built_scenarios(tmp_path_factory) -> Built:
    return Built(tmp_path_factory.mktemp("scenarios"))
