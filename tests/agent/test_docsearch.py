"""The documentation that states the broken behaviour: searched by the names on the failing
path, over a real git repository and a real whoosh index, and cited only when its passage
states those names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent import stacktrace
from agent.models import changes, docsearch
from agent.models.offline import (
    DOCS,
    Analysis,
    Result,
    Trail,
    best_line,
    doc_found,
    next_doc_query,
)
from recorded.sources import RECORDED_DOCS
from search.repo import RepoDocs
from tests.gitrepo import git

ARCHITECTURE = """# Architecture

Requests enter through `src/main/java/com/acme/billing/web/InvoiceController.java`, are
built by `src/main/java/com/acme/billing/model/InvoiceBuilder.java` and priced by
`src/main/java/com/acme/billing/service/InvoiceCalculator.java`.
"""
OPERATIONS = """# Operations

Deploys go out from main; the invoice service logs one line per invoice and region.
"""


def make_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    work = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    return work


def frame(function: str, path: str, line: int, code: str, module: str = "") -> stacktrace.Frame:
    return stacktrace.Frame(path, path, module, function, line, True, code)


def names_of_crash(
    code: str, function: str, path: str, exc_value: str = "", above: tuple[str, ...] = ()
) -> docsearch.Names:
    crash = changes.Crash(
        path=path,
        line=10,
        function=function,
        exc_type="TypeError",
        exc_value=exc_value,
        code=code,
        nearby=[*above, code],
    )
    return docsearch.failing_names(
        exc_value=exc_value,
        crash=crash,
        crash_code=code,
        frame=frame(function, path, 10, code),
        path=path,
        change=None,
    )


async def search(repo: Path, names: docsearch.Names) -> list[dict[str, Any]]:
    docs = RepoDocs(repo, "en", paths=RECORDED_DOCS)
    return [p.model_dump() for p in await docs.search(names.query())]


def stated(passage: dict[str, Any], names: docsearch.Names) -> list[str]:
    return docsearch.mentioned(docsearch.passage_text(passage), names)


async def test_a_contract_in_the_readme_is_found_and_stated(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "README.md": "# billing\n\nThe billing service.\n\n## Contract\n\n"
            "The billing region comes from `BILLING_REGION`; `invoice_region_key` needs a "
            "region and the settings must always carry one.\n",
            "docs/architecture.md": ARCHITECTURE,
            "docs/operations.md": OPERATIONS,
        },
    )
    names = names_of_crash(
        "return settings.get('billing_region').upper()",
        "invoice_region_key",
        "billing/regions.py",
        exc_value="'NoneType' object has no attribute 'upper'",
        above=("settings = load_settings()",),
    )
    passages = await search(repo, names)
    assert passages[0]["path"] == "README.md"
    assert "invoice_region_key" in stated(passages[0], names)


async def test_a_doc_under_docs_api_that_names_the_field_is_found(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {
            "README.md": "# orders\n\nThe orders service of Acme.\n",
            "docs/api/orders.md": "# Orders API\n\n## POST /orders\n\n"
            "| Field | Type | |\n|---|---|---|\n| `customer_reference` | text | optional: "
            "absent or null is stored as an empty string |\n",
            "docs/operations.md": OPERATIONS,
        },
    )
    names = names_of_crash(
        "ref = payload['customer_reference'].strip()",
        "OrderService.create",
        "orders/service.py",
        exc_value="'NoneType' object has no attribute 'strip'",
    )
    passages = await search(repo, names)
    assert passages[0]["path"] == "docs/api/orders.md"
    assert stated(passages[0], names) == ["customer_reference"]


async def test_a_section_whose_heading_names_the_field_is_stated_by_its_heading(
    tmp_path: Path,
) -> None:
    repo = make_repo(
        tmp_path,
        {
            "docs/payouts.md": "# Payouts\n\n## Currency\n\nAll amounts are in euros.\n\n"
            "## split_ways\n\nWhen it is not given a payout is split one way, never zero.\n",
            "docs/operations.md": OPERATIONS,
        },
    )
    names = names_of_crash(
        "per_part = total / split_ways", "split_payout_total", "payouts/calc.py", "division by zero"
    )
    passages = await search(repo, names)
    assert (passages[0]["path"], passages[0]["heading"]) == (
        "docs/payouts.md",
        "Payouts › split_ways",
    )
    assert stated(passages[0], names) == ["split_ways"]


async def test_without_a_contract_no_page_states_the_failing_names(tmp_path: Path) -> None:
    """The architecture page names the crashing class only inside a file path, the
    operations page uses the field's word as prose: neither is about the failure."""
    repo = make_repo(
        tmp_path,
        {
            "README.md": "# billing\n\nRun the tests before opening a pull request.\n",
            "docs/architecture.md": ARCHITECTURE,
            "docs/operations.md": OPERATIONS,
        },
    )
    names = names_of_crash(
        "String key = region.toUpperCase();",
        "com.acme.billing.service.InvoiceCalculator.regionKey",
        "src/main/java/com/acme/billing/service/InvoiceCalculator.java",
    )
    assert "InvoiceCalculator" in names.specific and "region" in names.words
    passages = await search(repo, names)
    assert passages and {p["path"] for p in passages} <= {
        "docs/architecture.md",
        "docs/operations.md",
        "README.md",
    }
    assert all(stated(p, names) == [] for p in passages)


def test_a_plain_word_is_stated_only_where_the_page_writes_it_as_code() -> None:
    names = docsearch.Names()
    names.add("region", specific=False)
    names.add("invoiceRegionKey", specific=True)
    assert docsearch.mentioned("Every invoice has a region.", names) == []
    assert docsearch.mentioned("`region` may be absent.", names) == ["region"]
    # or as a part of an identifier it writes as code: the code names the part, the page the key
    assert docsearch.mentioned("It comes from `BILLING_REGION`.", names) == ["region"]
    assert docsearch.mentioned("It comes from `REG`.", names) == []
    # an identifier counts anywhere, in any spelling; a file path does not
    assert docsearch.mentioned("the invoice_region_key helper", names) == ["invoiceRegionKey"]
    assert docsearch.mentioned("see `src/InvoiceRegionKey.java`", names) == []


def test_the_query_names_the_failing_code_not_its_logging_paths_or_receivers() -> None:
    names = names_of_crash(
        "limit = @today + ReminderSettings.days_before_due",
        "due_invoices",
        "app/services/reminder_planner.rb",
        exc_value="expected numeric",
        above=('Rails.logger.info("reminders: planning account #{@account.id}")',),
    )
    query = names.query().split()
    assert "ReminderSettings.days_before_due" in query and "due_invoices" in query
    assert not {"Rails", "logger", "info", "planning", "expected", "numeric"} & set(query)
    quoted = names_of_crash(
        'int size = Integer.parseInt(props.getProperty("export.batch-size"));',
        "load",
        "src/main/java/ExportSettings.java",
    )
    assert "export.batch-size" in quoted.specific
    assert not any("/" in t for t in quoted.query().split())
    dotted = docsearch.Names()
    dotted.add("req.body.clienteId", specific=True)
    assert dotted.query() == "clienteId"


# -- the investigator's steps: a second search only when needed, no unrelated citation -----


def analysis(names: docsearch.Names) -> Analysis:
    exc = stacktrace.ExceptionInfo(type="TypeError", value="", module=None, frames=[])
    a = Analysis(issue={}, event={}, exc=exc, frame=frame("f", "a.py", 1, ""), path="a.py")
    a.doc_names = names
    a.doc_query = names.query()
    return a


def docs_result(query: str, passages: list[dict[str, Any]], evidence: str) -> Result:
    return Result(DOCS, {"query": query}, "", {"passages": passages}, evidence, False)


def passage(path: str, heading: str, text: str) -> dict[str, Any]:
    return {"path": path, "heading": heading, "text": text, "line_start": 1, "line_end": 3}


@pytest.fixture
def names() -> docsearch.Names:
    n = docsearch.Names()
    n.add("splitPayoutTotal", specific=True)
    n.add("lines", specific=False)
    n.add("PayoutService", specific=True)
    return n


def test_the_first_search_is_by_the_failing_names(names) -> None:
    a = analysis(names)
    assert next_doc_query(Trail(question=""), a) == "splitPayoutTotal lines PayoutService"


def test_a_top_passage_that_states_the_names_is_cited_and_ends_the_search(names) -> None:
    a = analysis(names)
    trail = Trail(question="")
    contract = passage("docs/payouts.md", "Payouts", "`splitPayoutTotal` never splits by 0.")
    trail.results[DOCS] = [docs_result(a.doc_query, [contract], "E7")]
    assert next_doc_query(trail, a) is None
    result, top = doc_found(trail, a)  # type: ignore[misc]
    assert (result.evidence_id, top["path"]) == ("E7", "docs/payouts.md")


def test_when_a_lower_passage_states_the_names_the_search_is_narrowed_to_them(names) -> None:
    a = analysis(names)
    trail = Trail(question="")
    general = passage("docs/architecture.md", "Architecture", "Requests enter through `x.kt`.")
    contract = passage("docs/payouts.md", "Payouts", "`splitPayoutTotal` keeps `lines` whole.")
    trail.results[DOCS] = [docs_result(a.doc_query, [general, contract], "E7")]
    assert next_doc_query(trail, a) == "splitPayoutTotal lines"
    assert doc_found(trail, a) is None  # the general page is the evidence's: not cited
    trail.results[DOCS].append(docs_result("splitPayoutTotal lines", [contract], "E8"))
    assert next_doc_query(trail, a) is None  # two searches at most
    assert doc_found(trail, a)[0].evidence_id == "E8"  # type: ignore[index]


def test_with_no_page_about_the_failure_nothing_is_cited(names) -> None:
    a = analysis(names)
    trail = Trail(question="")
    general = passage("docs/operations.md", "Operations", "Deploys go out from main.")
    trail.results[DOCS] = [docs_result(a.doc_query, [general], "E7")]
    assert next_doc_query(trail, a) is None  # every name was searched already
    assert doc_found(trail, a) is None


def test_the_quote_is_a_prose_statement_never_sample_data_of_a_person() -> None:
    text = (
        "Each message is one JSON argument; `lineas` lists the order lines.\n\n"
        "```json\n"
        '{"cliente": {"email": "ana@example.com"}, "lineas": [{"sku": "CAF-1"}]}\n'
        '{"lineas": []}\n'
        "```\n"
    )
    assert best_line(text, ["lineas"]) == (
        "Each message is one JSON argument; `lineas` lists the order lines."
    )
    code_only = "# Example\n\n```json\n" + text.split("```json\n", 1)[1]
    assert best_line(code_only, ["lineas"]) == '{"lineas": []}'
