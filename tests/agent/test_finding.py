"""agent/trigger.py and agent/finding/ on hand-made events and hunks: the kind of incident,
secrets kept out, the hunk read back in diff order, and a finish whose finding does not
match the evidence refused."""

import json

import pytest

from agent import finding, trigger
from agent.domain import Diagnosis, Investigation, QuotedChange, Scope, default_window, utcnow

SECRET = "s3cr3t-Value-9f8e7d6c5b4a39281706f5e4d3c2b1a0"


def event(**extra) -> dict:
    return {"eventID": "e1", "dateCreated": "2026-11-28T10:00:00Z", "tags": [], **extra}


def request(data=None, headers=None) -> dict:
    entry = {"method": "POST", "url": "https://api.example.com/orders?x=1", "data": data}
    entry["headers"] = headers or []
    return {"type": "request", "data": entry}


def test_the_kind_of_incident_comes_from_the_event():
    assert trigger.kind_of(event(entries=[request({"a": 1})])) == "request"
    job = event(contexts={"celery-job": {"task_name": "shop.tasks.mail", "args": [1]}})
    assert trigger.kind_of(job) == "job"
    tagged = event(tags=[{"key": "sidekiq.queue", "value": "default"}])
    assert trigger.kind_of(tagged) == "job"
    cli = event(extra={"sys.argv": ["manage.py", "import", "--file", "x.csv"]})
    assert trigger.kind_of(cli) == "cli"
    assert trigger.kind_of(event()) == "unknown"
    assert finding.replay_phrase(cli, "en").startswith("Run the failing command")
    assert finding.replay_phrase(job, "es").startswith("Volver a lanzar")


def test_secrets_never_reach_the_trigger():
    headers = [["Authorization", f"Bearer {SECRET}"], ["Cookie", f"session={SECRET}"]]
    body = {
        "customer": {"email": "ana@example.com", "password": "hunter2"},
        "apiKey": SECRET,
        "note": f"token {SECRET}",
        "card_number": "4111111111111111",
        "order_id": "0b7e9f52-4c1d-4a8e-9d3b-2f6a1c0e8d77",
        "city": "Sevilla",
    }
    ev = event(
        entries=[request(body, headers)],
        tags=[{"key": "client", "value": "ios"}, {"key": "auth_token", "value": SECRET}],
    )
    argv = event(extra={"sys.argv": ["sync", "--password", "hunter2", f"--token={SECRET}"]})
    found = trigger.trigger_of([ev], ["ref = body.order_id"], ["E2"])
    cli = trigger.trigger_of([argv], [], ["E3"])
    text = json.dumps([found.model_dump(), cli.model_dump()])
    for secret in (SECRET, "hunter2", "ana@example.com", "4111111111111111"):
        assert secret not in text
    values = {f.name: f.value for f in found.fields}
    assert values["customer.email"] == "[email]"
    assert values["client"] == "ios"
    assert values["order_id"] == body["order_id"]  # read by the code, and not a secret
    assert values["city"] == "text (7 chars)"  # anyone's data: its shape is enough
    assert values["customer.password"] == values["apiKey"] == values["note"] == "[redacted]"
    assert cli.entry == "sync --password [redacted] --token=[redacted]"


def test_fields_the_code_reads_come_first_and_absent_ones_are_named():
    ev = event(entries=[request({"quantity": 1, "coupon": None, "notes": "x"})])
    code = ["ref = new Ref(request.customerReference());", "c = body.coupon.trim()"]
    found = trigger.trigger_of([ev, ev], code, ["E2"])
    assert found.entry == "POST /orders"  # the path, never the query string
    assert found.fields[0].name == "coupon" and found.fields[0].events == 2
    assert found.absent == ["customerReference", "coupon (null)"]
    assert found.events_read == 2


HUNK = {
    # git's order: the removed line of a block, then the added ones; numbers per side.
    "old_start": 10,
    "old_lines": 5,
    "new_start": 10,
    "new_lines": 6,
    "function": "def total(items, rate):",
    "removed": [[12, "    rate = rate or DEFAULT"]],
    "added": [[12, "    # rate comes from the caller"], [13, "    rate = rate"]],
    "context": [[10, "def total(items, rate):"], [11, "    s = sum(items)"],
                [14, "    return s * rate"], [15, ""]],
}  # fmt: skip


def test_a_hunk_is_read_back_in_diff_order_with_both_numbers():
    seq = finding.sequence(HUNK)
    assert [(tag, old, new) for tag, old, new, _ in seq] == [
        (" ", 10, 10),
        (" ", 11, 11),
        ("-", 12, 12),
        ("+", 13, 12),
        ("+", 13, 13),
        (" ", 13, 14),
        (" ", 14, 15),
    ]


def records(release: str | None) -> list[finding.Record]:
    commit = {
        "sha": "a" * 40,
        "summary": "rate from caller",
        "author": "Dev",
        "date": "2026-11-27T10:00:00Z",
        "files": [{"path": "app/total.py", "old_path": "app/total.py", "hunks": [HUNK]}],
    }
    out = [finding.Record("E1", "code__git_changes", {"commits": [commit]}, "…", None, "b" * 40)]
    if release is not None:
        out.append(finding.Record("E2", "git__git_show", None, release, "app/total.py", "b" * 40))
    return out


def test_the_proposed_change_restores_the_previous_line_at_the_running_revision():
    # The running revision has two more lines above: the diff is numbered there.
    release = "import x\n\ndef total(items, rate):\n    s = sum(items)\n"
    release += "    # rate comes from the caller\n    rate = rate\n    return s * rate\n\n"
    found = finding.compute(records(release), "app/total.py", 6, 6, "a" * 7, language="en")
    p = found.proposed_change
    assert p.status == "hypothesis" and p.strategy == "restore-previous"
    assert p.numbered_at == "b" * 40
    assert p.diff.splitlines()[2] == "@@ -3,6 +3,5 @@"
    assert "-    rate = rate" in p.diff and "+    rate = rate or DEFAULT" in p.diff
    assert found.change.before == ["    rate = rate or DEFAULT"]
    assert found.fix.lines_changed == 3 and found.fix.complexity == "low"


def test_without_the_running_file_the_diff_is_numbered_as_in_the_commit():
    found = finding.compute(records(None), "app/total.py", 13, 13, "a" * 40, language="es")
    p = found.proposed_change
    assert p.numbered_at == "a" * 40
    assert p.diff.splitlines()[2] == "@@ -10,6 +10,5 @@"
    assert "numeran como en el commit" in p.rationale


def test_nothing_is_made_up_when_the_suspect_commit_is_not_in_the_evidence():
    found = finding.compute(records(None), "app/total.py", 13, 13, "c" * 40)
    assert found.change is None and found.proposed_change is None and found.fix is None
    assert [f.factor for f in found.confidence_factors] == ["no-hunk"]


def investigation() -> Investigation:
    since, until = default_window(utcnow())
    scope = Scope(project_key="p", repository="o/r", sentry_organization="o",
                  sentry_project="p", since=since, until=until)  # fmt: skip
    inv = Investigation.open("why?", scope)
    inv.add_evidence(source="code", tool="code__git_changes", title="changes",
                     content="-    rate = rate or DEFAULT\n+    rate = rate")  # fmt: skip
    return inv


@pytest.mark.parametrize(
    ("update", "problem"),
    [
        ({"change": QuotedChange(commit="a", path="p", before=["gone"], evidence=["E1"])},
         "lines not in"),
        ({"change": QuotedChange(commit="a", path="p", before=["x"], evidence=["E9"])},
         "does not exist"),
        ({"change": QuotedChange(commit="a", path="p", before=["x"])}, "must cite"),
        ({"proposed_change": {"path": "p", "diff": "just do it"}}, "not a unified diff"),
    ],
)  # fmt: skip
def test_a_finding_that_does_not_match_the_evidence_is_refused(update, problem):
    inv = investigation()
    d = Diagnosis.model_validate({"root_cause": "r", **{k: v for k, v in update.items()}})
    assert any(problem in p for p in finding.problems(d, inv.evidence_by_id))


def test_a_finding_that_matches_the_evidence_is_accepted():
    inv = investigation()
    change = QuotedChange(
        commit="a", path="p", before=["rate = rate or DEFAULT"], after=["rate = rate"],
        evidence=["E1"],
    )  # fmt: skip
    d = Diagnosis(root_cause="r", change=change)
    assert finding.problems(d, inv.evidence_by_id) == []


def test_a_quoted_change_may_come_from_the_diff_past_the_cut_text():
    inv = investigation()
    hunk = {"removed": [[3, '    rs.getLong("id"),']], "added": [], "context": []}
    data = {"commits": [{"sha": "a" * 40, "files": [{"path": "p", "hunks": [hunk]}]}]}
    inv.add_evidence(source="code", tool="code__git_changes", title="changes",
                     content="1 commit(s)…\n[truncated]", data=data)  # fmt: skip
    change = QuotedChange(commit="a", path="p", before=['    rs.getLong("id"),'], evidence=["E2"])
    assert finding.problems(Diagnosis(root_cause="r", change=change), inv.evidence_by_id) == []
