# ruff: noqa: E501 - tables of source lines and SDK messages, kept one per line
"""Fault kinds: how a value goes wrong, written out for each language.

A kind names the value that goes wrong (``V``), the raw input it is computed from (``S``,
read from a map at the fault's position), the expression computing it before (``good``) and
after (``bad``) the faulty change, and the crash line that uses it (``sink``). Tokens:
``@S@`` the input, ``@V@`` the value (a variable, a parameter or an inline expression),
``@O@`` the crash line's result, ``@K@`` the key read or written, ``@D@`` a default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Where the faulty change is, relative to the crash.
POSITIONS = ("crash", "above", "caller", "callee", "producer", "config", "binding", "schema")


@dataclass(frozen=True)
class Kind:
    name: str
    positions: tuple[str, ...]
    field: str  # record field (or option/env key) S comes from
    src_type: str  # STR LIST MAP NUM DATE: how S is read from a map
    vname: str  # the value's variable name (snake case)
    out: str  # the crash line's result (snake case)
    lang: dict[str, dict[str, str]] = field(default_factory=dict)
    langs: tuple[str, ...] = ("py", "rb", "php", "js", "ts", "java", "kt", "go")


NULL_SINK = {
    "py": "@O@ = @V@.upper()",
    "rb": "@O@ = @V@.upcase",
    "php": "$@O@ = strtoupper(@V@);",
    "js": "const @O@ = @V@.toUpperCase();",
    "ts": "const @O@ = @V@.toUpperCase();",
    "java": "String @O@ = @V@.toUpperCase();",
    "kt": 'val @O@ = requireNotNull(@V@) { "@VN@ is required" }.uppercase()',
    "go": "@O@ := strings.ToUpper(*@V@)",
}
NULL_TYPE = {"java": "String", "kt": "String?", "go": "*string", "ts": "string | undefined"}

DIV_PRELUDE = {
    "py": 'total = sum(line["qty"] for line in lines)',
    "rb": 'total = lines.sum { |line| line["qty"] }',
    "php": "$total = array_sum(array_column($lines, 'qty'));",
    "js": "const total = lines.reduce((sum, line) => sum + line.qty, 0);",
    "ts": "const total = lines.reduce((sum: number, line: Line) => sum + line.qty, 0);",
    "java": 'int total = lines.stream().mapToInt(line -> (Integer) line.get("qty")).sum();',
    "kt": 'val total = lines.sumOf { it["qty"] as Int }',
    "go": "total := sumQty(lines)",
}
DIV_SINK = {
    "py": "@O@ = round(total / @V@, 2)",
    "rb": "@O@ = total / @V@",
    "php": "$@O@ = intdiv($total, @V@);",
    "js": "const @O@ = new Array(Math.ceil(total / @V@));",
    "ts": "const @O@ = new Array(Math.ceil(total / @V@));",
    "java": "int @O@ = total / @V@;",
    "kt": "val @O@ = total / @V@",
    "go": "@O@ := total / @V@",
}
INT_TYPE = {"java": "int", "kt": "Int", "go": "int", "ts": "number"}


def _with(base: dict[str, str], key: str, values: dict[str, str]) -> dict[str, dict[str, str]]:
    return {lang: {key: text} for lang, text in base.items()} | {
        lang: {key: values[lang]} for lang in values
    }


def _merge(*parts: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for part in parts:
        for lang, entries in part.items():
            out.setdefault(lang, {}).update(entries)
    return out


def _table(key: str, values: dict[str, str]) -> dict[str, dict[str, str]]:
    return {lang: {key: text} for lang, text in values.items()}


KINDS: dict[str, Kind] = {}


def _kind(kind: Kind) -> None:
    KINDS[kind.name] = kind


_kind(
    Kind(
        "null_guard",
        ("crash", "above", "caller", "callee", "producer", "binding"),
        "region",
        "NSTR",
        "routing_region",
        "region_key",
        _merge(
            _table("sink", NULL_SINK),
            _table("vtype", NULL_TYPE),
            _table(
                "good",
                {
                    "py": '@S@ or "@D@"',
                    "rb": '@S@ || "@D@"',
                    "php": "@S@ ?? '@D@'",
                    "js": '@S@ ?? "@D@"',
                    "ts": '@S@ ?? "@D@"',
                    "java": 'Objects.requireNonNullElse(@S@, "@D@")',
                    "kt": '@S@ ?: "@D@"',
                    "go": 'firstNonNil(@S@, ptr("@D@"))',
                },
            ),
            _table("bad", {k: "@S@" for k in NULL_SINK}),
        ),
    )
)

_kind(
    Kind(
        "off_by_one",
        ("crash", "above", "caller", "callee", "producer"),
        "lines",
        "LIST",
        "last",
        "last_sku",
        _merge(
            _table("vtype", INT_TYPE),
            _table(
                "good",
                {
                    "py": "len(@S@) - 1",
                    "rb": "@S@.length - 1",
                    "php": "count(@S@) - 1",
                    "js": "@S@.length - 1",
                    "ts": "@S@.length - 1",
                    "java": "@S@.size() - 1",
                    "kt": "@S@.size - 1",
                    "go": "len(@S@) - 1",
                },
            ),
            _table(
                "bad",
                {
                    "py": "len(@S@)",
                    "rb": "@S@.length",
                    "php": "count(@S@)",
                    "js": "@S@.length",
                    "ts": "@S@.length",
                    "java": "@S@.size()",
                    "kt": "@S@.size",
                    "go": "len(@S@)",
                },
            ),
            _table(
                "sink",
                {
                    "py": '@O@ = lines[@V@]["sku"]',
                    "rb": '@O@ = lines[@V@]["sku"]',
                    "php": "$@O@ = $lines[@V@]['sku'];",
                    "js": "const @O@ = lines[@V@].sku;",
                    "ts": "const @O@ = lines[@V@].sku;",
                    "java": 'Object @O@ = lines.get(@V@).get("sku");',
                    "kt": 'val @O@ = lines[@V@]["sku"]',
                    "go": '@O@ := lines[@V@]["sku"]',
                },
            ),
            _table("prelude", {k: "" for k in NULL_SINK}),
        ),
    )
)

_kind(
    Kind(
        "div_zero",
        ("crash", "above", "caller", "callee", "producer"),
        "lines",
        "LIST",
        "parts",
        "per_part",
        _merge(
            _table("vtype", INT_TYPE),
            _table("prelude", DIV_PRELUDE),
            _table("sink", DIV_SINK),
            _table(
                "good",
                {
                    "py": "max(len(@S@), 1)",
                    "rb": "[@S@.length, 1].max",
                    "php": "max(count(@S@), 1)",
                    "js": "Math.max(@S@.length, 1)",
                    "ts": "Math.max(@S@.length, 1)",
                    "java": "Math.max(@S@.size(), 1)",
                    "kt": "maxOf(@S@.size, 1)",
                    "go": "max(len(@S@), 1)",
                },
            ),
            _table(
                "bad",
                {
                    "py": "len(@S@)",
                    "rb": "@S@.length",
                    "php": "count(@S@)",
                    "js": "@S@.length",
                    "ts": "@S@.length",
                    "java": "@S@.size()",
                    "kt": "@S@.size",
                    "go": "len(@S@)",
                },
            ),
        ),
    )
)

_DEFAULT = {
    "py": 'int(@S@.get("@K@", @D@))',
    "rb": 'Integer(@S@.fetch("@K@", @D@))',
    "php": "(int) (@S@['@K@'] ?? @D@)",
    "js": 'Number(@S@["@K@"] ?? @D@)',
    "ts": 'Number(@S@["@K@"] ?? @D@)',
    "java": 'Integer.parseInt(String.valueOf(@S@.getOrDefault("@K@", "@D@")))',
    "kt": '@S@["@K@"]?.toString()?.toInt() ?: @D@',
    "go": 'intOr(@S@, "@K@", @D@)',
}
_kind(
    Kind(
        "default_changed",
        ("config", "producer", "callee"),
        "split_ways",
        "MAP",
        "ways",
        "per_way",
        _merge(
            _table("vtype", INT_TYPE),
            _table("prelude", DIV_PRELUDE),
            _table("sink", DIV_SINK),
            _table("good", {k: v.replace("@D@", "@D1@") for k, v in _DEFAULT.items()}),
            _table("bad", {k: v.replace("@D@", "@D2@") for k, v in _DEFAULT.items()}),
        ),
    )
)

_GET = {
    "py": '@S@.get("@K@")',
    "rb": '@S@["@K@"]',
    "php": "@S@['@K@'] ?? null",
    "js": '@S@["@K@"]',
    "ts": '@S@["@K@"]',
    "java": '(String) @S@.get("@K@")',
    "kt": '@S@["@K@"]?.toString()',
    "go": 'strPtr(@S@, "@K@")',
}
_kind(
    Kind(
        "config_key",
        ("config", "producer"),
        "region",
        "MAP",
        "region",
        "region_key",
        _merge(
            _table("sink", NULL_SINK),
            _table("vtype", NULL_TYPE),
            _table("good", {k: v.replace("@K@", "@K1@") for k, v in _GET.items()}),
            _table("bad", {k: v.replace("@K@", "@K2@") for k, v in _GET.items()}),
        ),
    )
)

_kind(
    Kind(
        "type_changed",
        ("producer", "caller", "callee"),
        "amount",
        "NUM",
        "amount",
        "gross",
        _merge(
            _table("vtype", {"java": "Object", "kt": "Any", "go": "any", "ts": "unknown"}),
            _table(
                "good",
                {
                    "py": "round(float(@S@), 2)",
                    "rb": "@S@.to_f.round(2)",
                    "php": "round((float) @S@, 2)",
                    "js": "Number(@S@)",
                    "ts": "Number(@S@)",
                    "java": "new BigDecimal(String.valueOf(@S@))",
                    "kt": "BigDecimal(@S@.toString())",
                    "go": "toFloat(@S@)",
                },
            ),
            _table(
                "bad",
                {
                    "py": 'f"{float(@S@):.2f}"',
                    "rb": 'format("%.2f", @S@)',
                    "php": "number_format((float) @S@, 2)",
                    "js": "Number(@S@).toFixed(2)",
                    "ts": "Number(@S@).toFixed(2)",
                    "java": 'String.format("%.2f", @S@)',
                    "kt": '"%.2f".format(@S@)',
                    "go": 'fmt.Sprintf("%.2f", toFloat(@S@))',
                },
            ),
            _table(
                "sink",
                {
                    "py": "@O@ = @V@ * 1.21",
                    "rb": "@O@ = (@V@ * 1.21).round(2)",
                    "php": "$@O@ = round(@V@, 2) * 1.21;",
                    "js": "const @O@ = (@V@).toFixed(2);",
                    "ts": "const @O@ = (@V@ as number).toFixed(2);",
                    "java": 'BigDecimal @O@ = ((BigDecimal) @V@).multiply(new BigDecimal("1.21"));',
                    "kt": 'val @O@ = (@V@ as BigDecimal) * BigDecimal("1.21")',
                    "go": "@O@ := @V@.(float64) * 1.21",
                },
            ),
        ),
    )
)

_kind(
    Kind(
        "format_changed",
        ("producer", "caller", "callee", "binding"),
        "issued_at",
        "DATE",
        "due_on",
        "due",
        _merge(
            _table("vtype", {"java": "String", "kt": "String", "go": "string", "ts": "string"}),
            _table(
                "good",
                {
                    "py": 'datetime.fromisoformat(@S@).strftime("%Y-%m-%d")',
                    "rb": 'Time.iso8601(@S@).strftime("%Y-%m-%d")',
                    "php": "(new \\DateTimeImmutable(@S@))->format('Y-m-d')",
                    "js": "new Date(@S@).toISOString().slice(0, 10)",
                    "ts": "new Date(@S@).toISOString().slice(0, 10)",
                    "java": "OffsetDateTime.parse(@S@).toLocalDate().toString()",
                    "kt": "OffsetDateTime.parse(@S@).toLocalDate().toString()",
                    "go": 'toTime(@S@).Format("2006-01-02")',
                },
            ),
            _table(
                "bad",
                {
                    "py": 'datetime.fromisoformat(@S@).strftime("%d/%m/%Y")',
                    "rb": 'Time.iso8601(@S@).strftime("%d/%m/%Y")',
                    "php": "(new \\DateTimeImmutable(@S@))->format('d/m/Y')",
                    "js": 'new Date(@S@).toLocaleDateString("en-GB")',
                    "ts": 'new Date(@S@).toLocaleDateString("en-GB")',
                    "java": 'OffsetDateTime.parse(@S@).format(DateTimeFormatter.ofPattern("dd/MM/yyyy"))',
                    "kt": 'OffsetDateTime.parse(@S@).format(DateTimeFormatter.ofPattern("dd/MM/yyyy"))',
                    "go": 'toTime(@S@).Format("02/01/2006")',
                },
            ),
            _table(
                "sink",
                {
                    "py": "@O@ = date.fromisoformat(@V@)",
                    "rb": "@O@ = Date.iso8601(@V@)",
                    "php": "$@O@ = \\DateTimeImmutable::createFromFormat('!Y-m-d', @V@)->getTimestamp();",
                    "js": "const @O@ = new Date(@V@).toISOString();",
                    "ts": "const @O@ = new Date(@V@).toISOString();",
                    "java": "LocalDate @O@ = LocalDate.parse(@V@);",
                    "kt": "val @O@ = LocalDate.parse(@V@)",
                    "go": '@O@ := mustParseDate("2006-01-02", @V@)',
                },
            ),
        ),
    )
)

_kind(
    Kind(
        "key_renamed",
        ("producer", "caller", "callee"),
        "customer_id",
        "STR",
        "ref",
        "customer",
        _merge(
            _table(
                "vtype",
                {
                    "java": "Map<String, Object>",
                    "kt": "Map<String, Any?>",
                    "go": "map[string]any",
                    "ts": "Record<string, string>",
                },
            ),
            _table(
                "good",
                {
                    "py": '{"@K1@": @S@, "source": "api"}',
                    "rb": '{ "@K1@" => @S@, "source" => "api" }',
                    "php": "['@K1@' => @S@, 'source' => 'api']",
                    "js": '{ @K1@: @S@, source: "api" }',
                    "ts": '{ @K1@: @S@, source: "api" }',
                    "java": 'Map.of("@K1@", @S@, "source", "api")',
                    "kt": 'mapOf("@K1@" to @S@, "source" to "api")',
                    "go": 'map[string]any{"@K1@": @S@, "source": "api"}',
                },
            ),
            _table(
                "bad",
                {
                    "py": '{"@K2@": @S@, "source": "api"}',
                    "rb": '{ "@K2@" => @S@, "source" => "api" }',
                    "php": "['@K2@' => @S@, 'source' => 'api']",
                    "js": '{ @K2@: @S@, source: "api" }',
                    "ts": '{ @K2@: @S@, source: "api" }',
                    "java": 'Map.of("@K2@", @S@, "source", "api")',
                    "kt": 'mapOf("@K2@" to @S@, "source" to "api")',
                    "go": 'map[string]any{"@K2@": @S@, "source": "api"}',
                },
            ),
            _table(
                "sink",
                {
                    "py": '@O@ = @V@["@K1@"].strip()',
                    "rb": '@O@ = @V@.fetch("@K1@").strip',
                    "php": "$@O@ = trim(@V@['@K1@']);",
                    "js": "const @O@ = @V@.@K1@.trim();",
                    "ts": "const @O@ = @V@.@K1@.trim();",
                    "java": 'String @O@ = ((String) @V@.get("@K1@")).trim();',
                    "kt": 'val @O@ = @V@.getValue("@K1@").toString().trim()',
                    "go": '@O@ := strings.TrimSpace(@V@["@K1@"].(string))',
                },
            ),
        ),
    )
)

_kind(
    Kind(
        "filter_changed",
        ("above", "producer", "caller", "callee", "binding"),
        "lines",
        "LIST",
        "open_lines",
        "first_sku",
        _merge(
            _table(
                "vtype",
                {
                    "java": "List<Map<String, Object>>",
                    "kt": "List<Map<String, Any?>>",
                    "go": "[]map[string]any",
                    "ts": "Line[]",
                },
            ),
            _table(
                "good",
                {
                    "py": '[line for line in @S@ if line["status"] != "void"]',
                    "rb": '@S@.reject { |line| line["status"] == "void" }',
                    "php": "array_values(array_filter(@S@, fn ($line) => $line['status'] !== 'void'))",
                    "js": '@S@.filter((line) => line.status !== "void")',
                    "ts": '@S@.filter((line) => line.status !== "void")',
                    "java": '@S@.stream().filter(line -> !"void".equals(line.get("status"))).toList()',
                    "kt": '@S@.filter { it["status"] != "void" }',
                    "go": 'filterLines(@S@, func(l map[string]any) bool { return l["status"] != "void" })',
                },
            ),
            _table(
                "bad",
                {
                    "py": '[line for line in @S@ if line["status"] == "open"]',
                    "rb": '@S@.select { |line| line["status"] == "open" }',
                    "php": "array_values(array_filter(@S@, fn ($line) => $line['status'] === 'open'))",
                    "js": '@S@.filter((line) => line.status === "open")',
                    "ts": '@S@.filter((line) => line.status === "open")',
                    "java": '@S@.stream().filter(line -> "open".equals(line.get("status"))).toList()',
                    "kt": '@S@.filter { it["status"] == "open" }',
                    "go": 'filterLines(@S@, func(l map[string]any) bool { return l["status"] == "open" })',
                },
            ),
            _table(
                "sink",
                {
                    "py": '@O@ = @V@[0]["sku"]',
                    "rb": '@O@ = @V@.first["sku"]',
                    "php": "$@O@ = @V@[0]['sku'];",
                    "js": "const @O@ = @V@[0].sku;",
                    "ts": "const @O@ = @V@[0].sku;",
                    "java": 'Object @O@ = @V@.get(0).get("sku");',
                    "kt": 'val @O@ = @V@.first()["sku"]',
                    "go": '@O@ := @V@[0]["sku"]',
                },
            ),
        ),
    )
)

# A field's serialized name changed in the type the payload is decoded into (a struct tag, an
# annotation, an alias, a decoding map): the field decodes as null and the consumer fails on it.
# ``good``/``bad`` are the wire names; the declaration itself is written by program.schema_file.
_kind(
    Kind(
        "wire_name",
        ("schema",),
        "customer_id",
        "NSTR",
        "customer_ref",
        "customer_key",
        _merge(
            _table("sink", NULL_SINK),
            _table("vtype", NULL_TYPE),
            _table("good", {k: "customer_id" for k in NULL_SINK}),
            _table("bad", {k: "customerId" for k in NULL_SINK}),
        ),
    )
)
