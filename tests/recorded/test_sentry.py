"""RecordedSentry: the Sentry MCP read tools over a recorded export, bounded by a window."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.ports import Toolset
from recorded.sentry import MAX_TEXT_CHARS, RecordedSentry

SCENARIOS = Path(__file__).resolve().parents[2].parent / "shared" / "scenarios"

SINCE = datetime(2026, 11, 28, tzinfo=UTC)
UNTIL = datetime(2026, 11, 29, tzinfo=UTC)
ORG, PROJECT = "acme", "shop"


def recorded(name: str) -> RecordedSentry:
    folder = SCENARIOS / name
    if not (folder / "scenario.json").is_file():
        pytest.skip(f"scenario {name} is not available")
    scenario = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    return RecordedSentry(
        folder / "sentry",
        scenario["sentry"]["organization"],
        scenario["sentry"]["project"],
        datetime.fromisoformat(scenario["since"]),
        datetime.fromisoformat(scenario["until"]),
    )


# -- a synthetic export ---------------------------------------------------------------


def ts(hours: float) -> str:
    """A Sentry timestamp `hours` after SINCE."""
    return (SINCE + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def issue(
    issue_id: str, short: str, title: str, first: float, last: float, count: int, **extra: Any
) -> dict[str, Any]:
    return {
        "id": issue_id,
        "shortId": short,
        "title": title,
        "culprit": extra.pop("culprit", "POST /checkout"),
        "permalink": f"https://acme.sentry.io/issues/{issue_id}/",
        "level": extra.pop("level", "error"),
        "status": extra.pop("status", "unresolved"),
        "platform": "python",
        "project": {"id": "42", "name": PROJECT, "slug": PROJECT},
        "metadata": {"type": title.split(":")[0], "value": title, "filename": "shop/cart.py"},
        "count": str(count),
        "userCount": extra.pop("users", 1),
        "firstSeen": ts(first),
        "lastSeen": ts(last),
        **extra,
    }


def sentry_event(event_id: str, hours: float, release: str, **tags: str) -> dict[str, Any]:
    frames = [
        {"filename": "flask/app.py", "absPath": "/venv/lib/python3.11/site-packages/flask/app.py",
         "module": "flask.app", "function": "dispatch_request", "lineNo": 865, "inApp": False,
         "context": []},
        {"filename": "shop/cart.py", "absPath": "/srv/shop/shop/cart.py", "module": "shop.cart",
         "function": "total", "lineNo": 12, "inApp": True,
         "context": [[n, f"line {n} of cart.py"] for n in range(7, 18)]},
    ]  # fmt: skip
    return {
        "eventID": event_id,
        "groupID": "1",
        "title": "KeyError: 'price'",
        "message": "",
        "culprit": "POST /checkout",
        "platform": "python",
        "dateCreated": ts(hours),
        "release": {"version": release},
        "tags": [{"key": k, "value": v} for k, v in {"release": release, **tags}.items()],
        "entries": [
            {"type": "exception", "data": {"values": [
                {"type": "KeyError", "value": "'price'", "module": None,
                 "stacktrace": {"frames": frames}}]}},
            {"type": "request", "data": {"method": "POST", "url": "https://shop.example.com/checkout",
                                         "data": {"items": []}}},
        ],
        "contexts": {"runtime": {"name": "CPython", "version": "3.11.9", "type": "runtime"}},
    }  # fmt: skip


@pytest.fixture
def export(tmp_path: Path) -> Path:
    folder = tmp_path / "sentry"
    (folder / "events").mkdir(parents=True)
    issues = [
        issue("1", "SHOP-1", "KeyError: 'price'", 2, 20, 5, culprit="POST /checkout", users=3),
        issue("2", "SHOP-2", "TimeoutError: payment gateway", 10, 12, 50, culprit="POST /pay"),
        issue("3", "SHOP-3", "ValueError: old problem", -300, -10, 500),  # ended before the window
        issue("4", "SHOP-4", "OSError: after", 30, 40, 1),  # starts after the window
        issue("5", "SHOP-5", "ZeroDivisionError: ratio", -48, 1, 2, level="warning",
              status="resolved"),
    ]  # fmt: skip
    (folder / "issues.json").write_text(json.dumps(issues), encoding="utf-8")
    events = [
        sentry_event("a" * 32, 30, "shop@" + "9" * 40, environment="production"),  # after until
        sentry_event("b" * 32, 20, "shop@" + "1" * 40, environment="production"),
        sentry_event("c" * 32, 9, "shop@" + "1" * 40, environment="staging"),
        sentry_event("d" * 32, -5, "shop@" + "0" * 40, environment="production"),  # before since
    ]
    (folder / "events" / "1.json").write_text(json.dumps(events), encoding="utf-8")
    (folder / "events" / "2.json").write_text(
        json.dumps([sentry_event("e" * 32, 11, "shop@" + "1" * 40, environment="production")]),
        encoding="utf-8",
    )
    return folder


@pytest.fixture
def sentry(export: Path) -> RecordedSentry:
    return RecordedSentry(export, ORG, PROJECT, SINCE, UNTIL)


async def search(sentry: RecordedSentry, **args: Any) -> list[str]:
    result = await sentry.call_tool("search_issues", {"organizationSlug": ORG, **args})
    assert not result.is_error, result.text
    return [i["shortId"] for i in result.data["issues"]]


# -- the toolset ---------------------------------------------------------------------


async def test_tools_mirror_the_sentry_mcp_server(sentry: RecordedSentry) -> None:
    assert isinstance(sentry, Toolset) and sentry.name == "sentry"
    specs = {spec.name: spec for spec in await sentry.get_tools()}
    assert set(specs) == {
        "search_issues",
        "get_issue_details",
        "search_issue_events",
        "search_events",
        "find_releases",
    }
    props = specs["search_issues"].parameters["properties"]
    assert set(props) == {
        "organizationSlug", "query", "sort", "projectSlugOrId", "regionUrl", "limit", "period",
        "includeExplanation",
    }  # fmt: skip
    assert props["sort"]["enum"] == ["date", "freq", "new", "user", "recommended"]
    assert (props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 100)
    assert specs["search_issues"].parameters["required"] == ["organizationSlug"]
    assert set(specs["get_issue_details"].parameters["properties"]) == {
        "organizationSlug", "regionUrl", "issueId", "eventId", "issueUrl",
    }  # fmt: skip
    assert set(specs["search_issue_events"].parameters["properties"]) >= {
        "organizationSlug", "issueId", "issueUrl", "query", "sort", "period", "projectSlug",
        "regionUrl", "limit", "includeExplanation",
    }  # fmt: skip


async def test_search_issues_keeps_to_the_window_and_sorts(sentry: RecordedSentry) -> None:
    # Default query is:unresolved: SHOP-5 is resolved, SHOP-3 and SHOP-4 fall outside.
    assert await search(sentry) == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, query="") == ["SHOP-1", "SHOP-2", "SHOP-5"]
    assert await search(sentry, sort="freq") == ["SHOP-2", "SHOP-1"]
    assert await search(sentry, sort="new") == ["SHOP-2", "SHOP-1"]
    assert await search(sentry, sort="user") == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, limit=1) == ["SHOP-1"]
    # period counts back from `until`: the last 6 hours hold only SHOP-1 (last seen at +20 h).
    assert await search(sentry, period="6h") == ["SHOP-1"]
    # A period larger than the window does not widen it.
    assert await search(sentry, period="90d") == ["SHOP-1", "SHOP-2"]


async def test_search_issues_query_syntax(sentry: RecordedSentry) -> None:
    assert await search(sentry, query="payment") == ["SHOP-2"]
    assert await search(sentry, query="errors in the Payment gateway") == ["SHOP-2"]
    # Any word matches; a query without is: does not filter by status (as in Sentry).
    assert await search(sentry, query="checkout timeout") == ["SHOP-1", "SHOP-2", "SHOP-5"]
    assert await search(sentry, query="nothing-like-this") == []
    assert await search(sentry, query="is:resolved") == ["SHOP-5"]
    assert await search(sentry, query="level:warning") == ["SHOP-5"]
    assert await search(sentry, query="level:warning is:unresolved") == []
    assert await search(sentry, query="!level:warning") == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, query="level:[warning,error]") == ["SHOP-1", "SHOP-2", "SHOP-5"]
    assert await search(sentry, query="release:shop@" + "1" * 40) == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, query="release:1111111") == ["SHOP-1", "SHOP-2"]
    # Only the out-of-window events of SHOP-1 carry these releases.
    assert await search(sentry, query="release:shop@" + "9" * 40) == []
    assert await search(sentry, query="environment:staging") == ["SHOP-1"]
    assert await search(sentry, query="firstSeen:-16h") == ["SHOP-2"]
    assert await search(sentry, query="issue:shop-2") == ["SHOP-2"]
    # Unknown syntax is ignored, not an error.
    assert await search(sentry, query="is:unresolved foo:bar has:user") == ["SHOP-1", "SHOP-2"]
    explained = await sentry.call_tool(
        "search_issues",
        {"organizationSlug": ORG, "query": "foo:bar payment", "includeExplanation": True},
    )
    assert "foo:bar" in explained.text and "'payment'" in explained.text


async def test_search_issues_output(sentry: RecordedSentry, export: Path) -> None:
    result = await sentry.call_tool("search_issues", {"organizationSlug": ORG})
    recorded = json.loads((export / "issues.json").read_text(encoding="utf-8"))
    assert result.source == "sentry"
    assert result.data == {"issues": [recorded[0], recorded[1]]}  # exactly as recorded
    assert "[SHOP-1](https://acme.sentry.io/issues/1/)" in result.text
    assert "KeyError: 'price'" in result.text
    assert result.link is not None and result.link.startswith("https://acme.sentry.io/issues/")

    empty = await sentry.call_tool("search_issues", {"organizationSlug": ORG, "query": "zzz"})
    assert not empty.is_error and empty.data == {"issues": []}
    assert "No issues found" in empty.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"organizationSlug": "other"}, "Organization 'other' not found"),
        ({}, "`organizationSlug` is required"),
        (
            {"organizationSlug": ORG, "projectSlugOrId": "elsewhere"},
            "Project 'elsewhere' not found",
        ),
        ({"organizationSlug": ORG, "limit": 0}, "between 1 and 100"),
        ({"organizationSlug": ORG, "limit": "ten"}, "must be a number"),
        ({"organizationSlug": ORG, "sort": "random"}, "must be one of"),
        ({"organizationSlug": ORG, "period": "yesterday"}, "Invalid period"),
    ],
)
async def test_search_issues_errors_are_results(
    sentry: RecordedSentry, args: dict[str, Any], message: str
) -> None:
    result = await sentry.call_tool("search_issues", args)
    assert result.is_error and message in result.text


async def test_project_by_slug_or_id(sentry: RecordedSentry) -> None:
    assert await search(sentry, projectSlugOrId="shop") == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, projectSlugOrId="42") == ["SHOP-1", "SHOP-2"]
    assert await search(sentry, organizationSlug="ACME", regionUrl=None) == ["SHOP-1", "SHOP-2"]


async def test_unknown_tool(sentry: RecordedSentry) -> None:
    result = await sentry.call_tool("update_issue", {"organizationSlug": ORG})
    assert result.is_error and "Unknown tool 'update_issue'" in result.text


# -- get_issue_details -------------------------------------------------------------------


async def test_issue_details_show_the_latest_event_in_the_window(sentry: RecordedSentry) -> None:
    result = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "SHOP-1"}
    )
    assert not result.is_error
    # Event "a" happened after `until`: the latest event as of then is "b".
    assert result.data["event"]["eventID"] == "b" * 32
    assert result.data["issue"]["shortId"] == "SHOP-1"
    assert result.link == "https://acme.sentry.io/issues/1/"
    text = result.text
    assert "# Issue SHOP-1 in **acme**" in text
    assert "**Release**: shop@" + "1" * 40 in text
    assert "shop/cart.py:12 in total" in text
    assert "  >    12 | line 12 of cart.py" in text and "line 10 of cart.py" in text
    assert "line 9 of cart.py" not in text  # only a couple of lines around the crash
    assert "… 1 library frame (flask.app.dispatch_request)" in text
    assert "**Method:** POST" in text and "https://shop.example.com/checkout" in text
    assert "environment: production" in text

    by_number = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "1"}
    )
    assert by_number.data == result.data


async def test_issue_details_by_event_id_and_url(sentry: RecordedSentry) -> None:
    result = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "eventId": "c" * 32}
    )
    assert result.data["event"]["eventID"] == "c" * 32
    assert result.link == f"https://acme.sentry.io/issues/1/events/{'c' * 32}/"

    by_url = await sentry.call_tool(
        "get_issue_details", {"issueUrl": "https://acme.sentry.io/issues/SHOP-2/"}
    )
    assert not by_url.is_error and by_url.data["issue"]["id"] == "2"
    old_style = await sentry.call_tool(
        "get_issue_details",
        {"issueUrl": f"https://sentry.io/organizations/acme/issues/1/events/{'c' * 32}/"},
    )
    assert old_style.data["event"]["eventID"] == "c" * 32

    # An event outside the window is not served.
    late = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "eventId": "a" * 32}
    )
    assert late.is_error and "not found" in late.text
    mismatch = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "SHOP-2", "eventId": "b" * 32}
    )
    assert mismatch.is_error and "does not belong" in mismatch.text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"organizationSlug": ORG, "issueId": "SHOP-99"}, "Issue 'SHOP-99' not found"),
        ({"organizationSlug": ORG, "issueId": "SHOP-3"}, "Issue 'SHOP-3' not found"),  # outside
        ({"organizationSlug": "globex", "issueId": "SHOP-1"}, "Organization 'globex' not found"),
        ({"issueUrl": "https://globex.sentry.io/issues/1/"}, "Organization 'globex' not found"),
        ({"organizationSlug": ORG}, "either `issueId` or `issueUrl`"),
    ],
)
async def test_issue_details_errors(
    sentry: RecordedSentry, args: dict[str, Any], message: str
) -> None:
    result = await sentry.call_tool("get_issue_details", args)
    assert result.is_error and message in result.text


async def test_issue_without_recorded_events(tmp_path: Path) -> None:
    (tmp_path / "issues.json").write_text(
        json.dumps([issue("7", "SHOP-7", "KeyError: 'x'", 1, 2, 1)]), encoding="utf-8"
    )
    sentry = RecordedSentry(tmp_path, ORG, PROJECT, SINCE, UNTIL)
    result = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "SHOP-7"}
    )
    assert not result.is_error and result.data == {"issue": result.data["issue"], "event": None}
    assert "No events recorded" in result.text


# -- events ------------------------------------------------------------------------------


async def test_search_issue_events_newest_first_within_the_window(sentry: RecordedSentry) -> None:
    result = await sentry.call_tool(
        "search_issue_events", {"organizationSlug": ORG, "issueId": "SHOP-1"}
    )
    assert not result.is_error
    assert result.data == {
        "issue_id": "1",
        "events": [
            {"eventID": "b" * 32, "dateCreated": ts(20), "release": "shop@" + "1" * 40,
             "title": "KeyError: 'price'", "culprit": "POST /checkout"},
            {"eventID": "c" * 32, "dateCreated": ts(9), "release": "shop@" + "1" * 40,
             "title": "KeyError: 'price'", "culprit": "POST /checkout"},
        ],
    }  # fmt: skip
    assert "Event `" + "b" * 32 + "`" in result.text
    assert result.link == "https://acme.sentry.io/issues/1/"

    async def ids(**args: Any) -> list[str]:
        res = await sentry.call_tool(
            "search_issue_events", {"organizationSlug": ORG, "issueId": "1", **args}
        )
        assert not res.is_error, res.text
        return [e["eventID"][0] for e in res.data["events"]]

    assert await ids(query="environment:staging") == ["c"]
    assert await ids(query="!environment:staging") == ["b"]
    assert await ids(query="release:1111111 unknown:thing") == ["b", "c"]
    assert await ids(sort="timestamp") == ["c", "b"]
    assert await ids(limit=1) == ["b"]
    assert await ids(period="6h") == ["b"]
    assert await ids(query="price") == ["b", "c"]
    assert await ids(query="nomatch") == []


async def test_search_events_across_issues(sentry: RecordedSentry) -> None:
    result = await sentry.call_tool("search_events", {"organizationSlug": ORG, "limit": 50})
    assert [(e["eventID"][0], e["issue_id"]) for e in result.data["events"]] == [
        ("b", "1"),
        ("e", "2"),
        ("c", "1"),
    ]
    typed = await sentry.call_tool(
        "search_events",
        {"organizationSlug": ORG, "query": "error.type:KeyError environment:staging"},
    )
    assert [e["eventID"][0] for e in typed.data["events"]] == ["c"]
    spans = await sentry.call_tool("search_events", {"organizationSlug": ORG, "dataset": "spans"})
    assert not spans.is_error and spans.data == {"events": []}
    unknown = await sentry.call_tool("search_events", {"organizationSlug": "globex"})
    assert unknown.is_error


# -- size, loading errors ---------------------------------------------------------------------


async def test_find_releases_lists_what_the_events_name_up_to_the_windows_end(
    sentry: RecordedSentry,
) -> None:
    result = await sentry.call_tool("find_releases", {"organizationSlug": ORG})
    assert not result.is_error, result.text
    rows = result.data["releases"]
    # Newest first; one before the window is listed (releases are not windowed), one first
    # seen after its end is not (Sentry did not know it yet).
    assert [r["version"] for r in rows] == ["shop@" + "1" * 40, "shop@" + "0" * 40]
    assert (rows[0]["firstEvent"], rows[0]["lastEvent"]) == (ts(9)[:19] + "Z", ts(20)[:19] + "Z")
    assert "shop@" + "1" * 40 in result.text
    found = await sentry.call_tool("find_releases", {"organizationSlug": ORG, "query": "000"})
    assert [r["version"] for r in found.data["releases"]] == ["shop@" + "0" * 40]
    other = await sentry.call_tool("find_releases", {"organizationSlug": "elsewhere"})
    assert other.is_error and "not found" in other.text


async def test_text_is_capped(tmp_path: Path) -> None:
    big = sentry_event("f" * 32, 5, "shop@" + "1" * 40)
    frames = big["entries"][0]["data"]["values"][0]["stacktrace"]["frames"]
    for n in range(400):
        frames.append(
            {"filename": f"shop/mod{n}.py", "absPath": f"/srv/shop/shop/mod{n}.py",
             "function": f"step_{n}", "lineNo": 10, "inApp": True,
             "context": [[m, f"    call_{n}_{m}()  # " + "x" * 40] for m in range(5, 16)]}
        )  # fmt: skip
    (tmp_path / "events").mkdir()
    (tmp_path / "issues.json").write_text(
        json.dumps([issue("9", "SHOP-9", "KeyError: 'price'", 1, 6, 1)]), encoding="utf-8"
    )
    (tmp_path / "events" / "9.json").write_text(json.dumps([big]), encoding="utf-8")
    sentry = RecordedSentry(tmp_path, ORG, PROJECT, SINCE, UNTIL)
    result = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "SHOP-9"}
    )
    assert not result.is_error
    assert len(result.text) <= MAX_TEXT_CHARS
    assert "Output truncated" in result.text
    assert result.text.count("```") % 2 == 0  # no code fence left open
    assert result.data["event"] == big  # the structured content is never cut


def test_missing_or_broken_issues_json(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"issues\.json"):
        RecordedSentry(tmp_path, ORG, PROJECT, SINCE, UNTIL)
    (tmp_path / "issues.json").write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"issues\.json is not valid JSON"):
        RecordedSentry(tmp_path, ORG, PROJECT, SINCE, UNTIL)
    (tmp_path / "issues.json").write_text('{"id": 1}', encoding="utf-8")
    with pytest.raises(ValueError, match="list of Sentry issues"):
        RecordedSentry(tmp_path, ORG, PROJECT, SINCE, UNTIL)


async def test_broken_events_file_is_an_error_result(export: Path) -> None:
    (export / "events" / "2.json").write_text("not json", encoding="utf-8")
    sentry = RecordedSentry(export, ORG, PROJECT, SINCE, UNTIL)
    result = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": ORG, "issueId": "SHOP-2"}
    )
    assert result.is_error and "2.json" in result.text


# -- the recorded scenarios ---------------------------------------------------------------------


async def test_orders_npe_scenario() -> None:
    sentry = recorded("orders-npe")
    found = await sentry.call_tool(
        "search_issues", {"organizationSlug": "acme", "projectSlugOrId": "orders-incident-demo"}
    )
    assert [i["id"] for i in found.data["issues"]] == ["5755875771", "5095199655"]

    details = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": "acme", "issueId": "ORDERS-INCIDENT-DEMO-2K"}
    )
    assert not details.is_error
    text = details.text
    assert "CustomerReference.java:14 in dev.example.orders.CustomerReference.<init>" in text
    assert "value = value.strip();" in text
    assert 'NullPointerException: Cannot invoke "String.strip()" because "value" is null' in text
    assert "… 43 library frames (java.lang.Thread.run … " in text
    assert "org.apache.catalina" not in text  # framework frames are collapsed, not listed
    assert '**Body:** `{"quantity": 1}`' in text
    recorded_events = json.loads(
        (SCENARIOS / "orders-npe/sentry/events/5755875771.json").read_text(encoding="utf-8")
    )
    assert details.data["event"] == recorded_events[0]

    events = await sentry.call_tool(
        "search_issue_events", {"organizationSlug": "acme", "issueId": "5755875771"}
    )
    assert [e["eventID"] for e in events.data["events"]] == [e["eventID"] for e in recorded_events]


async def test_python_keyerror_scenario() -> None:
    sentry = recorded("python-keyerror")
    found = await sentry.call_tool(
        "search_issues", {"organizationSlug": "acme", "query": "KeyError"}
    )
    assert [i["shortId"] for i in found.data["issues"]] == ["INVOICES-SERVICE-7"]
    details = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": "acme", "issueId": "INVOICES-SERVICE-7"}
    )
    assert "invoices/builder.py:53 in build_invoice" in details.text
    assert 'payment_term_days = int(payload["due_in_days"])' in details.text
    assert details.data["event"]["eventID"] == "dc148da782eaef8f9bab716c8bad39b5"
    wrong = await sentry.call_tool(
        "get_issue_details", {"organizationSlug": "globex", "issueId": "1"}
    )
    assert wrong.is_error
