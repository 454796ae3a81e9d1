"""A setting is one name however it is spelled: the code reads `volumetricDivisor` or
`retryJitter`, the configuration writes `volumetric_divisor` or `retry-jitter` (Laravel config
arrays, Spring's relaxed binding, YAML bound to a struct). A change to that setting is on the
failing value's data path, ahead of a newer change that only touches the crashing file."""

import pytest

from agent.models.changes import ident, rank
from tests.agent.test_changes import commit, crash, hunk


@pytest.mark.parametrize(
    "spelling",
    ["volumetricDivisor", "volumetric_divisor", "volumetric-divisor", "VOLUMETRIC_DIVISOR"],
)
def test_every_naming_convention_is_one_name(spelling):
    assert ident(spelling) == ident("VolumetricDivisor")


def test_different_words_stay_different_names():
    assert ident("volumetric_divisor") != ident("volumetric_divisors")
    assert ident("_") == "_"


def _builder_crash(code_line: str, function: str, path: str, exc_type: str, exc_value: str):
    source = [
        "<?php",
        "",
        "final class ParcelBuilder",
        "{",
        "    public function chargeableKg(float $actualKg, array $box): float",
        "    {",
        "        $volumeCm3 = $box['length_cm'] * $box['width_cm'] * $box['height_cm'];",
        code_line,
        "",
        "        return max($actualKg, $volumetricKg);",
        "    }",
        "}",
    ]
    return crash(
        path=path,
        line=8,
        function=function,
        exc_type=exc_type,
        exc_value=exc_value,
        code=code_line.strip(),
        nearby=source[4:8],
        source=source,
        stack=[],
    )


def test_a_snake_case_config_key_feeds_the_camel_case_member_that_divided_by_zero():
    path = "app/Services/Shipping/ParcelBuilder.php"
    c = _builder_crash(
        "        $volumetricKg = $volumeCm3 / $this->volumetricDivisor;",
        "App\\Services\\Shipping\\ParcelBuilder::chargeableKg",
        path,
        "DivisionByZeroError",
        "Division by zero",
    )
    config = hunk(
        17,
        [(17, "    'volumetric_divisor' => (int) env('SHIPPING_VOLUMETRIC_DIVISOR'),")],
        [(17, "    'volumetric_divisor' => (int) env('SHIPPING_VOLUMETRIC_DIVISOR', 5000),")],
    )
    # Newer, in the crashing file, but in another function and of no kind that divides.
    label = hunk(30, [(30, "        return sprintf('%s-%s', $prefix, $number);")])
    label["function"] = "public function labelFor(string $prefix, int $number): string"
    history = [
        commit("label", "2026-11-27T16:00:00Z", (path, [label])),
        commit("config", "2026-11-27T11:00:00Z", ("config/shipping.php", [config])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "config", [(x.sha, x.score, x.reasons) for x in ranked]
    assert any("data path" in r for r in ranked[0].reasons)


def test_a_kebab_case_yaml_key_is_the_field_a_kotlin_service_reads():
    path = "src/main/kotlin/shop/retry/Backoff.kt"
    source = [
        "package shop.retry",
        "",
        "class Backoff(private val props: RetryProperties) {",
        "    fun delayFor(attempt: Int): Long {",
        "        val base = props.baseMillis shl (attempt - 1)",
        "        val spread = base / props.jitterDivisor",
        "        return base + Random.nextLong(spread)",
        "    }",
        "}",
    ]
    c = crash(
        path=path,
        line=6,
        function="shop.retry.Backoff.delayFor",
        exc_type="java.lang.ArithmeticException",
        exc_value="/ by zero",
        code=source[5].strip(),
        nearby=source[3:6],
        source=source,
        stack=[],
    )
    yaml = hunk(
        12,
        [(12, "    jitter-divisor: 0")],
        [(12, "    jitter-divisor: 4")],
    )
    log = hunk(8, [(8, '        log.debug("retry {}", attempt)')])
    log["function"] = "fun onRetry(attempt: Int) {"
    history = [
        commit("log", "2026-11-27T16:00:00Z", ("src/main/kotlin/shop/retry/Retrier.kt", [log])),
        commit("yaml", "2026-11-27T11:00:00Z", ("src/main/resources/application.yml", [yaml])),
    ]
    ranked = rank(c, history)
    assert ranked[0].sha == "yaml", [(x.sha, x.score, x.reasons) for x in ranked]
