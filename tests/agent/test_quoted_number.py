"""The message quotes the value the failing call got (`maximum 20 is less than minimum 500`):
a change that now sets a name the call reads to that number made it, not a change beside the
crash whose number sits inside another call."""

import pytest

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk

CASES = [
    (  # Kotlin: a setting now read in seconds, its fallback with it
        "libs/retry/RetryPolicy.kt",
        '    maxDelayMillis = c.propertyOrNull("maxDelayMillis")?.getString()?.toLong() ?: 20_000,',
        '    maxDelayMillis = c.propertyOrNull("maxDelaySeconds")?.getString()?.toLong() ?: 20,',
        "        return (exp + jitter).coerceIn(policy.baseDelayMillis, policy.maxDelayMillis)",
        "val exp = policy.baseDelayMillis * (1L shl (attempt - 1).coerceAtMost(20))",
    ),
    (  # Python: a default that is the number the message quotes
        "app/settings.py",
        "    max_delay_ms = int(os.environ.get('MAX_DELAY_MS', 20000))",
        "    max_delay_ms = int(os.environ.get('MAX_DELAY_S', 20))",
        "    return clamp(exp + jitter, settings.base_delay_ms, settings.max_delay_ms)",
        "    exp = settings.base_delay_ms * 2 ** min(attempt - 1, 20)",
    ),
]


@pytest.mark.parametrize(("path", "old", "new", "code", "beside"), CASES)
def test_the_change_that_sets_the_quoted_value_wins(path, old, new, code, beside):
    source = ["fun delayFor(attempt: Int): Long {", "    " + beside.strip(), code]
    c = crash(
        path="libs/retry/Backoff.kt",
        line=3,
        function="delayFor",
        exc_type="IllegalArgumentException",
        exc_value="Cannot coerce value to an empty range: maximum 20 is less than minimum 500.",
        code=code.strip(),
        nearby=source,
        source=source,
    )
    setting = hunk(15, [(15, new)], [(15, old)])
    near = hunk(
        2, [(2, source[1])], [(2, "    val exp = policy.baseDelayMillis * (1L shl (attempt - 1))")]
    )
    history = [
        commit("cap", "2026-11-26T09:05:00Z", ("libs/retry/Backoff.kt", [near])),
        commit("units", "2026-11-24T16:30:00Z", (path, [setting])),
    ]
    ranked = rank(c, history)
    assert ranked and ranked[0].sha == "units", [(x.sha, x.score, x.reasons) for x in ranked]
    assert any("the value the exception quotes" in r for r in ranked[0].reasons)
    assert all("the value the exception quotes" not in r for x in ranked[1:] for r in x.reasons)
