"""Recorded incidents generated from a seed, with the ground truth known by construction.

``generate(seed, out)`` writes a scenario folder of the documented shape
(../shared/scenarios/README.md): ``repo.bundle``, ``scenario.json``, ``sentry/``,
``expected.json``, and ``generated.json`` (what was chosen: language, fault kind and position,
decoys), which no investigation reads. See tests/generator/README.md.
"""

from tests.generator.build import generate, make_plan

__all__ = ["generate", "make_plan"]
