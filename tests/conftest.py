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


@pytest.fixture(scope="session")
def built_scenarios(tmp_path_factory) -> dict[str, Path]:
    """Every recipe built once into a scenario folder, by name."""
    from bot.scenarios import build_scenario

    out = tmp_path_factory.mktemp("scenarios")
    return {r.name: build_scenario(r, out / r.name) for r in recipes()}
