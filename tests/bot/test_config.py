from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent.domain import Scope
from agent.errors import InputError
from bot.config import Projects
from bot.serve import served_projects

SCOPE = Scope(
    project_key="orders",
    repository="acme/orders",
    sentry_organization="acme",
    sentry_project="orders",
    since=datetime(2026, 11, 28, tzinfo=UTC),
    until=datetime(2026, 11, 29, tzinfo=UTC),
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "projects.toml"
    path.write_text(text)
    return path


def test_the_projects_file_maps_channels_and_approvers(tmp_path):
    path = write(
        tmp_path,
        """
[projects.orders]
repository = "acme/orders"
sentry_organization = "acme"
sentry_project = "orders"
channels = ["C1"]
approvers = ["U9"]

[projects.billing]
repository = "acme/billing"
sentry_organization = "acme"
sentry_project = "billing"
channels = ["C1", "C2"]
""",
    )
    projects = served_projects(SCOPE, path)
    assert projects.choose("C2", None).key == "billing"
    assert projects.choose("C1", "orders").approvers == ["U9"]
    with pytest.raises(InputError, match="name the project first"):
        projects.choose("C1", None)
    with pytest.raises(InputError, match="may not be investigated"):
        projects.choose("C2", "orders")
    with pytest.raises(InputError, match="unknown project `shop`"):
        projects.choose("C1", "shop")
    with pytest.raises(InputError, match="not authorized"):
        projects.choose("C3", None)


def test_without_a_file_the_recorded_project_is_open_to_any_channel():
    assert served_projects(SCOPE, None).choose("CANY", None).key == "orders"


def test_a_bad_or_unrelated_projects_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        Projects.load(write(tmp_path, "[projects.orders"))
    with pytest.raises(InputError, match="not valid"):
        Projects.load(write(tmp_path, "[projects.orders]\nrepository = 1\n"))
    other = write(
        tmp_path,
        '[projects.shop]\nrepository = "a/b"\nsentry_organization = "a"\nsentry_project = "b"\n',
    )
    with pytest.raises(InputError, match="no project `orders`"):
        served_projects(SCOPE, other)
