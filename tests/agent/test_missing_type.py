"""A JVM names the type of the value that was missing (`Cannot invoke "shop.Vat.rate()"`): a
changed function declared to return that type, off the stack, is where the null may now come
from, though nothing on the stack names it (a converter a framework calls)."""

import pytest

from agent.models.changes import missing_type, rank
from tests.agent.test_changes import commit, crash, frame, hunk

MESSAGE = (
    'Cannot invoke "com.shop.domain.Vat.rate()" because the return value of '
    '"com.shop.domain.PriceLine.vat()" is null'
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (MESSAGE, "Vat"),
        ('Cannot invoke "String.trim()" because "<local1>" is null', ""),
        ('Cannot invoke "java.time.ZonedDateTime.format(java.time.format.X)" because', ""),
        ("Cannot read properties of undefined (reading 'rate')", ""),
    ],
)
def test_the_missing_type_is_the_projects_own(message, expected):
    assert missing_type(message) == expected


CONVERTERS = {
    "java": (
        "src/main/java/com/shop/batch/VatConverter.java",
        "    public Vat convert(String code) {",
        [
            "        return switch (code.strip()) {",
            '            case "R" -> Vat.REDUCED;',
            '            default -> throw new IllegalArgumentException("bad VAT " + code);',
            "        };",
        ],
        "        return CODES.get(code.strip());",
    ),
    "kotlin": (
        "src/main/kotlin/com/shop/batch/VatConverter.kt",
        "    override fun convert(code: String): Vat? {",
        ['        return Vat.entries.firstOrNull { it.code == code } ?: error("bad VAT $code")'],
        "        return Vat.entries.firstOrNull { it.code == code.lowercase() }",
    ),
}


@pytest.mark.parametrize("language", sorted(CONVERTERS))
def test_a_function_returning_the_missing_type_is_where_the_null_came_from(language):
    path, header, old, new = CONVERTERS[language]
    crash_path = "src/main/java/com/shop/batch/PriceProcessor.java"
    line = "        BigDecimal rate = line.vat().rate();"
    scheduler = "src/main/java/com/shop/batch/Scheduler.java"
    c = crash(
        path=crash_path,
        line=22,
        function="PriceProcessor.process",
        exc_type="java.lang.NullPointerException",
        exc_value=MESSAGE,
        code=line.strip(),
        nearby=[line],
        source=[""] * 21 + [line],
        stack=[
            (frame(crash_path, 22, "PriceProcessor.process", line), crash_path),
            (
                frame(scheduler, 32, "Scheduler.collect", "        for (String s : SUPPLIERS) {"),
                scheduler,
            ),
        ],
    )
    converter = hunk(
        18,
        [(19, new)],
        [(19 + i, t) for i, t in enumerate(old)],
        context=[(18, header), (20, "    }")],
    )
    loop = hunk(
        32,
        [(32, '        for (String s : List.of("north", "south", "east")) {')],
        [(32, '        for (String s : List.of("north", "south")) {')],
    )
    history = [
        commit("codes", "2026-11-28T08:00:00Z", (path, [converter]), (scheduler, [loop])),
    ]
    ranked = rank(c, history)
    assert ranked and (ranked[0].path, ranked[0].line) == (path, 19), [
        (x.path, x.line, x.reasons) for x in ranked
    ]
    assert ranked[0].producer and any(
        "the type of the missing value" in r for r in ranked[0].reasons
    )
