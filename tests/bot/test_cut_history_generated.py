"""Generated incidents with a cut history whose fault is on the crash line: every line of the
root commit was "added", so none of them is judged by whether its change fits the exception;
the crash function's own lines stay the origin, not a settings line elsewhere that divides."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.bot.test_deep_history import investigate
from tests.generator import generate, make_plan


@pytest.mark.parametrize("seed", [32, 164])
def test_the_crash_line_stays_the_origin_in_a_cut_history(tmp_path, seed):
    plan, _ = make_plan(seed)
    assert plan.truncated and plan.position == "crash"  # the shape this test is about
    folder = generate(seed, tmp_path / "incident")
    truth = json.loads((folder / "expected.json").read_text())
    suspect = asyncio.run(investigate(folder))["diagnosis"]["suspect"]
    first, last = truth["fault"]["lines"]
    assert suspect["path"] == truth["fault"]["file"], suspect
    assert first - 2 <= suspect["line_start"] <= last + 2 and suspect["commit"] is None
