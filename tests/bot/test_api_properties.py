"""Property-based tests of the HTTP API: schemathesis reads /openapi.json from the running
app (FastAPI in the aiohttp app, port 0) and sends generated requests to every operation.
No answer may be a 5xx, and every answer must be documented: its status, content type
and body as the OpenAPI document says."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis import checks as sc

from agent.domain import State
from tests.bot.test_api import TOKENS, Api, running_api

CHECKS = [
    sc.not_a_server_error,
    sc.status_code_conformance,
    sc.content_type_conformance,
    sc.response_schema_conformance,
]
# The event stream's body is text/event-stream frames, which the document does not (and
# OpenAPI cannot) describe with a schema: its status and content type are checked, not
# its body. Only a stream that ends is opened (an investigation that is superseded): a
# live one never ends, and its handler would outlive the test.
STREAM = "/investigations/{investigation_id}/events"
STREAM_CHECKS = [c for c in CHECKS if c is not sc.response_schema_conformance]
EXAMPLES = 15


def fuzz(base: str, token: str | None, known: list[str], project: str) -> list[str]:
    """Every operation, EXAMPLES cases that fit the document and EXAMPLES that do not; the
    failures, as text. Ids and the project are often real ones, so calls get past 404."""
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    failures: list[str] = []
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in GenerationMode:
            label = f"{operation.method.upper()} {operation.path} ({mode.value})"
            test = one_operation(operation, mode, base, headers, known, project, session)
            try:
                test()
            except Unsatisfiable:
                pass  # nothing to get wrong: the operation takes no parameters and no body
            except (Exception, BaseExceptionGroup) as exc:  # reported below, every operation's
                failures.append(f"{label}: {exc}")
    return failures


def one_operation(
    operation: Any,
    mode: GenerationMode,
    base: str,
    headers: dict[str, str],
    known: list[str],
    project: str,
    session: requests.Session,
) -> Callable[[], None]:
    streams = operation.path == STREAM
    usable = known[1:] if streams else known
    ids = st.sampled_from(usable) if usable else st.nothing()
    with_ids = "{investigation_id}" in operation.path

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(mode), known_id=st.none() | ids)
    def test(case: Any, known_id: str | None) -> None:
        if known_id is not None:
            if with_ids:
                case.path_parameters = {**case.path_parameters, "investigation_id": known_id}
            if isinstance(case.body, dict) and isinstance(case.body.get("project"), str):
                case.body = {**case.body, "project": project}
        checks = STREAM_CHECKS if streams else CHECKS
        case.call_and_validate(
            base_url=base, session=session, headers=headers, checks=checks, timeout=20
        )

    return test


async def seeded(api: Api) -> list[str]:
    """A finished investigation with a draft, then one it superseded (whose stream ends)."""
    old = await api.start()
    await api.settled(old, State.COMPLETED, State.STOPPED)
    status, _, body = await api.call("POST", f"/investigations/{old}/rerun")
    assert status == 202, body
    await api.settled(body["id"], State.COMPLETED, State.STOPPED)
    return [body["id"], old]


async def test_generated_requests_with_a_token_get_documented_answers(built_scenarios, tmp_path):
    secret = {"SENTRY_CLIENT_SECRET": "sentry-secret"}
    async with running_api(built_scenarios["orders"], tmp_path, secret) as api:
        known = await seeded(api)
        failures = await asyncio.to_thread(fuzz, api.base, TOKENS["bob"], known, api.project)
    assert not failures, "\n\n".join(failures)


async def test_generated_requests_without_a_token_get_documented_answers(built_scenarios, tmp_path):
    async with running_api(built_scenarios["orders"], tmp_path) as api:
        failures = await asyncio.to_thread(fuzz, api.base, None, [], api.project)
    assert not failures, "\n\n".join(failures)
