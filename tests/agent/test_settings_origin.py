"""Where a missing setting comes from: read by name with nothing to fall back on, written
into the settings the failing code reads it from."""

import pytest

from agent.models.changes import exception_kinds, fits_kind, origin
from tests.agent.test_changes import commit, crash, hunk

NULL = exception_kinds("TypeError", "Cannot read properties of undefined (reading 'toUpperCase')")


@pytest.mark.parametrize(
    "line",
    [
        '    region: raw["BILLING_REGION_CODE"],',  # TypeScript, a literal's element
        '    rate = os.environ["TAX_RATE"]',  # Python
        '        val url = System.getenv("API_URL")',  # Kotlin/Java
        "    'region' => getenv('BILLING_REGION'),",  # PHP
        '  region = ENV["BILLING_REGION"]',  # Ruby
    ],
)
def test_a_setting_read_by_name_with_no_default_can_be_missing(line):
    assert fits_kind(NULL, [], [line]) is not None


@pytest.mark.parametrize(
    "line",
    [
        '    rate = os.environ.get("TAX_RATE", "0.2")',
        '    url: process.env.API_URL ?? "http://localhost"',
        '    region = ENV.fetch("BILLING_REGION") { "eu" }',
        '    sku = row["sku"]',  # a data key, not a setting
    ],
)
def test_a_setting_with_a_fallback_or_a_data_key_is_not(line):
    assert fits_kind(NULL, [], [line]) is None


def test_a_null_ending_a_line_is_handed_on_but_not_the_nil_beside_an_error():
    assert fits_kind({"null"}, [], ["    'region' => $payload['region'] ?? null,"])
    assert fits_kind({"null"}, [], ["    return nil, err"]) is None


def test_in_a_cut_history_the_settings_loader_beats_a_record_builder_writing_the_same_key():
    calc = [
        "def region_key(rec, settings):",
        "    region = settings['region']",
        "    return region.upper()",
    ]
    loader = [
        "def load_settings():",
        "    return {",
        "        'currency': os.environ.get('CURRENCY', 'EUR'),",
        "        'region': os.environ.get('BILLING_REGION_CODE'),",
        "    }",
    ]
    builder = [
        "def build_order(payload):",
        "    return {",
        "        'id': payload['id'],",
        "        'region': payload.get('region'),",
        "    }",
    ]
    root = commit(
        "root",
        "2026-10-01T10:00:00Z",
        *[
            (path, [hunk(1, list(enumerate(lines, 1)), old_start=0)])
            for path, lines in [
                ("app/calc.py", calc),
                ("app/config/app_settings.py", loader),
                ("app/models/order_builder.py", builder),
            ]
        ],
    )
    root["parents"] = []
    c = crash(
        path="app/calc.py",
        line=3,
        function="region_key",
        exc_type="AttributeError",
        exc_value="'NoneType' object has no attribute 'upper'",
        code="return region.upper()",
        nearby=calc[:2],
        source=calc,
        blamed="root",
    )
    found = origin(c, [root])
    assert found is not None and (found.path, found.line) == ("app/config/app_settings.py", 4)
    assert any("settings" in r for r in found.reasons)
