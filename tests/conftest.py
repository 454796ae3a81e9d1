import json
from pathlib import Path
from typing import Any

import pytest

# `db_url` (SQLite and PostgreSQL) and the throwaway PostgreSQL server it starts on first use.
pytest_plugins = ["tests.postgres"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "scenarios"
RECIPES = ROOT / "tests" / "fixtures" / "scenarios"
DEMO = ROOT / "bot" / "demo" / "orders"


def orders_finish(folder: Path, **changes: Any) -> dict[str, Any]:
    """finish_investigation arguments naming the orders incident's fault at its commit."""
    sha = json.loads((folder / "expected.json").read_text())["commit"]
    return {
        "root_cause": "CustomerReference no longer accepts a missing reference.",
        "facts": [{"text": "The tracker lists the NPE.", "evidence": ["E1"]}],
        "hypotheses": ["the null check was removed"],
        "uncertainties": ["one event read"],
        "recommended_check": "replay a request without customerReference",
        "suspect": {
            "path": "src/main/java/dev/example/orders/CustomerReference.java",
            "line_start": 14,
            "line_end": 14,
            "commit": sha,
            "revision": sha,
        },
        "confidence": "medium",
        **changes,
    }


# Blind fixtures whose fault the offline investigator does not find yet (issue 12), and
# those whose contract document it misses. Strict: a fixture that starts passing must leave
# its list, so the lists only shrink as the investigator gets better at the class.
NOT_YET_FOUND: frozenset[str] = frozenset()
CONTRACT_NOT_YET_FOUND: frozenset[str] = frozenset()


def not_yet(name: str, missed: frozenset[str], what: str) -> object:
    """The name as a parameter, expected to fail while the investigator misses it."""
    if name.removeprefix("fixture:") not in missed:
        return name
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=f"{what} (issue 12)"))


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
        from recorded.build import build_scenario

        self[name] = build_scenario(self.recipes[name], self.out / name)
        return self[name]


@pytest.fixture(scope="session")
def built_scenarios(tmp_path_factory) -> Built:
    return Built(tmp_path_factory.mktemp("scenarios"))
