"""Where a null comes from: the call the exception says returned it, and a setter that
writes its argument into another field."""

import pytest

from agent.models.changes import crossed_setter, rank
from tests.agent.test_changes import commit, crash, hunk


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        (["  public Builder end(ZonedDateTime end) {", "    this.start = end;"], "end"),  # Java
        (["    fun withEnd(end: Instant): Builder {", "        this.start = end"], "end"),  # Kotlin
        (["    def set_end(self, end):", "        self.start = end"], "end"),  # Python
        (["  public function setEnd($end) {", "    $this->start = $end;"], "end"),  # PHP
        (["  setEnd(end: Date): this {", "    this.start = end;"], "end"),  # TypeScript
    ],
)
def test_a_setter_that_writes_another_field_leaves_its_own_unset(lines, field):
    why = crossed_setter(lines)
    assert why is not None and f"writes {field} into start" in why


def test_setters_that_write_their_own_field_are_fine():
    assert (
        crossed_setter(["  public Builder start(ZonedDateTime start) {", "    this.start = start;"])
        is None
    )
    assert crossed_setter(["  int total(int x) {", "    this.sum = x;"]) is None  # not a setter


def test_the_builder_the_exception_points_at_beats_the_new_line_that_used_its_null():
    # One commit adds an end time: the message line that formats it (the crash) and the
    # builder's setter, which writes the end into the start. Java says which call was null.
    message = [
        "  public String text(Reminder r) {",
        "    String from = r.start().format(HOUR);",
        "    String to = r.end().format(HOUR);",
    ]
    builder = [
        "    public Builder end(ZonedDateTime end) {",
        "      this.start = end;",
        "      return this;",
        "    }",
    ]
    accessor = ["  public ZonedDateTime end() { return end; }"]
    c = crash(
        path="src/main/java/sms/Template.java",
        line=3,
        function="text",
        exc_type="NullPointerException",
        exc_value='Cannot invoke "java.time.ZonedDateTime.format(DateTimeFormatter)"'
        ' because the return value of "clinic.Reminder.end()" is null',
        code=message[2].strip(),
        nearby=message,
        source=message,
        blamed="end",
    )
    history = [
        commit(
            "end",
            "2026-11-27T10:00:00Z",
            ("src/main/java/sms/Template.java", [hunk(3, [(3, message[2])])]),
            (
                "src/main/java/clinic/Reminder.java",
                [
                    hunk(28, [(28, accessor[0])]),
                    hunk(57, [(57 + i, t) for i, t in enumerate(builder)]),
                ],
            ),
        )
    ]
    top = rank(c, history)[0]
    assert (top.path, top.line) == ("src/main/java/clinic/Reminder.java", 58), top.reasons
    assert any("whose result the exception says was null" in r for r in top.reasons)
    assert top.blamed  # blame names the commit, whichever of its hunks is chosen


def test_a_reflowed_crash_line_points_at_the_line_whose_bound_changed():
    from agent.models.changes import bound_line

    # Go: the loop rewritten; `ids[start:end]` only moved into a struct literal.
    removed = [
        "\tfor start := 0; start < len(ids); start += batchSize {",
        "\t\tend := min(start+batchSize, len(ids))",
        "\t\tout = append(out, Batch{First: ids[start], IDs: ids[start:end]})",
    ]
    added = [
        (15, "\tfor i := 0; i < n; i++ {"),
        (16, "\t\tstart := i * size"),
        (17, "\t\tend := start + size"),
        (18, "\t\tout = append(out, Batch{"),
        (20, "\t\t\tIDs:    ids[start:end],"),
    ]
    assert bound_line(added, removed, "\t\t\tIDs:    ids[start:end],", 20) == (
        17,
        "end := start + size",
    )
    # Python: the index itself is new on the crash line, so the crash line is the change.
    assert (
        bound_line([(9, "    last = rows[n]")], ["    last = rows[-1]"], "last = rows[n]", 9)
        is None
    )


def test_lines_past_the_call_a_caller_frame_was_making_had_not_run():
    # Both frames in one file: `prune` called `stamp` at line 6 and failed there; a newer
    # commit added a counter and a log line after that call, which never ran.
    from tests.agent.test_changes import frame

    source = [
        "def stamp(name):",
        "    return datetime.strptime(name.split('-')[1], STAMP)",
        "",
        "def prune(names):",
        "    removed = 0",
        "    keep = {stamp(n) for n in names}",
        "    for n in names:",
        "        removed += 1",
        "    log.info('removed %d', removed)",
    ]
    path = "src/snap/prune.py"
    c = crash(
        path=path,
        line=2,
        function="stamp",
        exc_type="ValueError",
        exc_value="time data 'eu' does not match format '%Y%m%dT%H%M'",
        code=source[1].strip(),
        nearby=source[:2],
        source=source,
        stack=[(frame(path, 2, "stamp"), path), (frame(path, 6, "prune"), path)],
    )
    later = hunk(7, [(8, "        removed += 1"), (9, "    log.info('removed %d', removed)")])
    later["function"] = "def prune(names):"
    ranked = rank(c, [commit("log", "2026-11-27T10:00:00Z", (path, [later]))])
    assert not any("on the stack" in r for ch in ranked for r in ch.reasons), ranked
