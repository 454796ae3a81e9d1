"""A crash line rewritten so that it still reads what it read before, on the same values (a
message added to a null check, a call split over lines, a lambda written as a block), did not
make the value it fails on: what makes that value did. Blame naming the rewrite says only
that the line was touched. A rewrite that adds a call, or reads a member the message names
that the old line did not read, may itself be the fault."""

from datetime import UTC, datetime

import pytest

from agent.models import failing
from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


@pytest.mark.parametrize(
    ("code", "removed", "message", "callee"),
    [
        (
            'val window = checkNotNull(stop.window) { "stop ${stop.id} has no window" }',
            ["val window = checkNotNull(stop.window)"],
            "stop 9920417 has no window",
            "",
        ),
        (
            "updated_after: since.toISOString(),",
            ["const url = this.url('/v2/stock', { updated_after: since.toISOString(), page });"],
            "since.toISOString is not a function",
            "",
        ),
        (
            "Price price = cache.get(tenant, Price.class, productId, () -> {",
            ["Price price = cache.get(tenant, Price.class, productId, () -> prices.find(id));"],
            "class java.lang.String cannot be cast to class Price",
            "",
        ),
        (
            "$texto = $this->twig->render($plantilla, ['envio' => $envio]);",
            ["$texto = $this->twig->render('sms/envio.'.$m->idioma.'.twig', ['envio' => $e]);"],
            'Unable to find template "sms/envio.ca.twig".',
            "render",
        ),
    ],
)
def test_a_rewrite_reading_the_same_chain_does_what_it_did(code, removed, message, callee):
    assert failing.same_operand(code, removed, message, callee)


@pytest.mark.parametrize(
    ("code", "removed", "message", "callee"),
    [
        # A new call on the same values: the parse it adds is what fails.
        (
            "doors: event.doors ? new Date(`${event.date} ${event.doors}`).toISOString() : null,",
            ["doors: event.doors ? `${event.date}T${event.doors}` : null,"],
            "Invalid time value",
            "",
        ),
        # It now reads the member the message names through another chain.
        (
            "return user.profile.name;",
            ["return user.name;"],
            "Cannot read properties of undefined (reading 'name')",
            "",
        ),
        # The call that raised was not made before.
        (
            "$texto = $this->twig->display($plantilla);",
            ["$texto = $this->twig->render($plantilla);"],
            'Unable to find template "sms/envio.ca.twig".',
            "display",
        ),
        # Nothing in common.
        ("return total / count;", ["return total / len(items)"], "division by zero", ""),
    ],
)
def test_a_rewrite_that_does_something_new_is_not_the_same(code, removed, message, callee):
    assert not failing.same_operand(code, removed, message, callee)


PLANNER = [
    "package eta.plan",
    "",
    "import eta.data.toStop",
    "",
    "class Planner(private val stops: StopRepository) {",
    "    fun plan(ids: List<Long>): List<Eta> =",
    "        stops.load(ids).map { it.toStop() }.map { eta(it) }",
    "",
    "    private fun eta(stop: Stop): Eta {",
    "        val window = checkNotNull(stop.window) {",
    '            "stop ${stop.id} has no delivery window"',
    "        }",
    "        return Eta(stop.id, window.start)",
    "    }",
    "}",
]


def _crash(blamed: str | None = None):
    return crash(
        path="src/main/kotlin/eta/plan/Planner.kt",
        line=10,
        function="eta.plan.Planner.eta",
        exc_type="IllegalStateException",
        exc_value="stop 9920417 has no delivery window",
        code=PLANNER[9].strip(),
        nearby=PLANNER[8:13],
        source=PLANNER,
        first_seen=datetime(2026, 12, 2, 13, 27, tzinfo=UTC),
        blamed=blamed,
    )


def _history(crash_rewrite: dict) -> list[dict]:
    keys = hunk(
        8,
        [
            (8, "object Keys {"),
            (9, '    const val WINDOW_START = "window_start"'),
            (10, '    const val WINDOW_END = "window_end"'),
            (11, "}"),
        ],
    )
    mapper = hunk(
        20,
        [
            (
                20,
                "        window = window(extras[Keys.WINDOW_START], extras[Keys.WINDOW_END]),",
            )
        ],
        [(16, '        window = window(extras["window_from"], extras["window_to"]),')],
        old_start=16,
    )
    mapper["function"] = "fun StopRecord.toStop(): Stop ="
    return [
        commit("rewrite", "2026-12-02T11:40:00Z", (_crash().path, [crash_rewrite])),
        commit(
            "keys",
            "2026-12-02T10:05:00Z",
            ("src/main/kotlin/eta/data/StopMapper.kt", [keys, mapper]),
        ),
    ]


def test_a_message_added_to_the_null_check_gives_way_to_what_made_the_value_null():
    rewrite = hunk(
        10,
        [
            (10, "        val window = checkNotNull(stop.window) {"),
            (11, '            "stop ${stop.id} has no delivery window"'),
            (12, "        }"),
        ],
        [(10, "        val window = checkNotNull(stop.window)")],
    )
    ranked = rank(_crash(blamed="rewrite"), _history(rewrite))
    by_sha = {c.sha: c for c in ranked}
    assert ranked[0].sha == "keys", [(c.sha, c.score, c.reasons) for c in ranked]
    assert "rewrites the crash line, but reads the same values as before" in (
        by_sha["rewrite"].reasons
    )
    assert not by_sha["rewrite"].blamed


def test_a_null_check_rewritten_on_another_value_is_still_the_crash_lines_change():
    rewrite = hunk(
        10,
        [
            (10, "        val window = checkNotNull(stop.window) {"),
            (11, '            "stop ${stop.id} has no delivery window"'),
            (12, "        }"),
        ],
        [(10, "        val window = stop.window ?: stop.defaultWindow")],
    )
    ranked = rank(_crash(blamed="rewrite"), _history(rewrite))
    top = ranked[0]
    assert top.sha == "rewrite" and top.blamed, [(c.sha, c.score, c.reasons) for c in ranked]
    assert not any("the same values" in r for r in top.reasons)
