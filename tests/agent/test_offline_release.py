"""The offline investigator and a release that names nothing in the repository: it reads the
default branch the release data names instead of asking which commit ran."""

from __future__ import annotations

from typing import Any

import pytest

from agent.domain import Message, ToolCall
from agent.models.offline import ASK, FIND_FILES, SENTRY_DETAILS, SENTRY_SEARCH, OfflineInvestigator
from agent.models.words import words_for
from tests.agent.test_domain import scope

ISSUE = {"shortId": "ORDERS-1", "id": "1", "title": "KeyError: 'sku'", "count": 3}
EVENT = {
    "release": None,
    "entries": [
        {
            "type": "exception",
            "data": {
                "values": [
                    {
                        "type": "KeyError",
                        "value": "'sku'",
                        "stacktrace": {
                            "frames": [{"filename": "app/orders.py", "lineNo": 12, "inApp": True}]
                        },
                    }
                ]
            },
        }
    ],
}
DEFAULT = "0123456789abcdef0123456789abcdef01234567"


def transcript(details: dict[str, Any]) -> list[Message]:
    def turn(n: int, name: str, data: dict[str, Any]) -> list[Message]:
        return [
            Message(role="assistant", tool_calls=[ToolCall(id=f"c{n}", name=name, arguments={})]),
            Message(role="tool", tool_call_id=f"c{n}", content=f"[E{n}] {name}\n…", data=data),
        ]

    return [
        Message(role="user", content="Question: why do orders fail?\n\nScope: …"),
        *turn(1, SENTRY_SEARCH, {"issues": [ISSUE]}),
        *turn(2, SENTRY_DETAILS, details),
    ]


OFFERED = {SENTRY_SEARCH, SENTRY_DETAILS, FIND_FILES, ASK, "finish_investigation"}


@pytest.mark.parametrize(
    ("release", "revision"),
    [
        ({"version": "orders@9.9.9", "commit": None, "default_branch": DEFAULT}, DEFAULT),
        ({"version": "orders@9.9.9", "commit": None, "default_branch": None}, "HEAD"),
    ],
)
def test_an_unresolved_release_reads_the_default_branch_without_asking(
    release: dict[str, Any], revision: str
) -> None:
    offline = OfflineInvestigator(scope())
    details = {"issue": ISSUE, "event": EVENT, "release": release}
    action = offline.decide(offline_trail(details), OFFERED)
    assert action == (FIND_FILES, {"revision": revision, "names": ["app/orders.py"]})


def test_with_no_release_data_at_all_the_operator_is_still_asked() -> None:
    offline = OfflineInvestigator(scope())
    action = offline.decide(offline_trail({"issue": ISSUE, "event": EVENT}), OFFERED)
    assert action == (ASK, {"question": offline.words.which_revision})


def test_the_uncertainty_is_said_in_the_incidents_language() -> None:
    en = words_for("en").release_unresolved("orders@9.9.9", DEFAULT)
    es = words_for("es").release_unresolved("orders@9.9.9", DEFAULT)
    assert "`orders@9.9.9`" in en and DEFAULT[:12] in en and "may not be" in en
    assert "`orders@9.9.9`" in es and DEFAULT[:12] in es and "rama por defecto" in es
    # The event's release is cleared rather than guessed: its fact says so, not "None".
    event = {"release": None, "title": "KeyError: 'sku'"}
    assert "names no release" in words_for("en").event_fact(event, None, None)
    assert "no indica una versión" in words_for("es").event_fact(event, None, None)


def offline_trail(details: dict[str, Any]) -> Any:
    from agent.models.offline import Trail

    return Trail.read(transcript(details))


def test_a_model_is_told_the_same() -> None:
    from agent import prompt

    system = prompt.system("en")
    assert "names no commit or tag" in system and "read the default branch" in system
    assert "never claim high confidence" in system
