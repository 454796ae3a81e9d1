"""In a function that returns the failing value, the suspect is the line that does what makes
it fail (the `return null` it gained, the filter that gained a condition), not its first
changed line; and a parameter list spread over lines is still that function's header."""

from agent.models.changes import emptied, header_names, rank
from tests.agent.test_changes import commit, crash, hunk


def test_a_filter_that_gained_a_condition_can_now_keep_nothing():
    assert emptied([".filter { !it.cancelled }"], [".filter { !it.cancelled && it.kind in kinds }"])
    assert emptied(["[s for s in slots if s.open]"], ["[s for s in slots if s.open and s.paid]"])
    assert not emptied([".filter { !it.cancelled }"], [".filter { !it.isCancelled }"])


def test_the_line_closing_a_spread_parameter_list_defines_nothing():
    assert header_names("    ): List<Slot> = withContext(Dispatchers.IO) {") == set()
    assert header_names("    suspend fun slotsOfDay(") == {"slotsofday"}


def test_the_line_that_returns_the_null_is_named_not_the_try_above_it():
    from agent.models.changes import telling_line

    inside = [
        (8, "try {"),
        (9, "const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));"),
        (12, "if (err.name === 'NoSuchKey') return null;"),
    ]
    why = "drops the default of what it returns, so it can now return a null"
    assert telling_line(inside, ["const res = await s3.send(cmd);"], why, set()) == inside[2]


def _worker_crash():
    source = [
        "package shop.worker",
        "",
        "class ReminderWorker(private val slots: SlotRepository) {",
        "    private suspend fun remind(store: Store, day: LocalDate) {",
        "        val agenda = slots.slotsOfDay(store.id, day)",
        "        val opening = agenda.first().startsAt",
        '        sms.send(store.phone, "Opening at $opening")',
        "    }",
        "}",
    ]
    return crash(
        path="src/main/kotlin/shop/worker/ReminderWorker.kt",
        line=6,
        function="shop.worker.ReminderWorker.remind",
        exc_type="java.util.NoSuchElementException",
        exc_value="List is empty.",
        code=source[5].strip(),
        nearby=source[3:6],
        source=source,
        stack=[],
    )


def test_the_filter_line_of_a_repository_function_with_a_spread_signature_is_the_suspect():
    repo = hunk(
        8,
        [
            (8, "    suspend fun slotsOfDay("),
            (9, "        storeId: Long,"),
            (10, "        day: LocalDate,"),
            (11, "        kinds: Set<SlotKind> = emptySet(),"),
            (12, "    ): List<Slot> = withContext(Dispatchers.IO) {"),
            (18, "            .filter { !it.cancelled && it.kind in kinds }"),
        ],
        [
            (
                8,
                "    suspend fun slotsOfDay(storeId: Long, day: LocalDate): List<Slot> = "
                "withContext(Dispatchers.IO) {",
            ),
            (14, "            .filter { !it.cancelled }"),
        ],
        context=[
            (13, "        db.query(SLOTS, storeId, day)"),
            (19, "    }"),
        ],
    )
    repo["function"] = "class SlotRepository(private val db: Database) {"
    history = [
        commit(
            "kinds",
            "2026-11-27T11:00:00Z",
            ("src/main/kotlin/shop/slots/SlotRepository.kt", [repo]),
        )
    ]
    ranked = rank(_worker_crash(), history)
    assert ranked, "the repository change explains the empty list"
    top = ranked[0]
    assert top.sha == "kinds"
    assert top.line == 18, (top.line, top.reasons)
    assert any("can now be empty" in r for r in top.reasons), top.reasons
