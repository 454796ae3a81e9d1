"""AfterAck: the ack goes out in the request; the work waits for a pause in the acks."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from bot.slack.app import AfterAck


def listener(
    after_ack: AfterAck, started: list[tuple[str, float]], expected: int
) -> tuple[Any, asyncio.Event]:
    registered: list[Any] = []
    all_started = asyncio.Event()

    @after_ack(registered.append)
    async def work(body: dict[str, Any]) -> None:
        started.append((body["n"], time.monotonic()))
        if len(started) == expected:
            all_started.set()

    # Bolt reads what to inject from the listener's signature.
    assert list(inspect.signature(registered[0]).parameters) == ["ack", "body"]
    return registered[0], all_started


def args(n: str, acked: list[str]) -> dict[str, Any]:
    """What Bolt injects into a listener that names `ack` and `body`."""

    async def ack() -> None:
        acked.append(n)

    return {"ack": ack, "body": {"n": n}}


async def test_work_waits_until_the_acks_pause():
    after_ack = AfterAck(quiet=0.2, longest_wait=5)
    started: list[tuple[str, float]] = []
    acked: list[str] = []
    ack_then, all_started = listener(after_ack, started, 5)
    for i in range(5):
        await ack_then(**args(str(i), acked))
        assert acked[-1] == str(i)  # acked in the request itself
        await asyncio.sleep(0.05)
    last_ack = time.monotonic()
    assert started == []  # acks kept coming closer than `quiet` apart
    async with asyncio.timeout(5):
        await all_started.wait()
    assert sorted(n for n, _ in started) == ["0", "1", "2", "3", "4"]
    assert min(at for _, at in started) >= last_ack + 0.1


async def test_steady_acks_delay_work_by_at_most_the_longest_wait():
    after_ack = AfterAck(quiet=10, longest_wait=0.1)
    started: list[tuple[str, float]] = []
    ack_then, all_started = listener(after_ack, started, 1)
    acked_at = time.monotonic()
    await ack_then(**args("only", []))
    async with asyncio.timeout(5):  # not the 10 s of `quiet`
        await all_started.wait()
    assert started[0][1] - acked_at < 5


async def test_a_failing_work_is_logged_and_the_next_runs(caplog):
    after_ack = AfterAck(quiet=0, at_once=1)
    registered: list[Any] = []
    done = asyncio.Event()

    @after_ack(registered.append)
    async def work(body: dict[str, Any]) -> None:
        if body["n"] == "bad":
            raise RuntimeError("boom")
        done.set()

    await registered[0](**args("bad", []))
    await registered[0](**args("good", []))
    async with asyncio.timeout(5):
        await done.wait()
    assert "listener work failed" in caplog.text


async def test_finish_runs_what_is_queued_and_waits_for_it():
    after_ack = AfterAck(quiet=60, longest_wait=60)  # nothing would start for a minute
    registered: list[Any] = []
    done: list[str] = []

    @after_ack(registered.append)
    async def work(body: dict[str, Any]) -> None:
        await asyncio.sleep(0.01)
        done.append(body["n"])

    for i in range(12):  # more than run at once
        await registered[0](**args(str(i), []))
    async with asyncio.timeout(5):
        await after_ack.finish()
    assert sorted(done, key=int) == [str(i) for i in range(12)]


async def test_a_failing_work_is_told_with_the_request_body():
    told: list[tuple[str, dict[str, Any]]] = []
    done = asyncio.Event()

    async def failed(error: BaseException, body: dict[str, Any]) -> None:
        told.append((str(error), body))
        done.set()

    after_ack = AfterAck(quiet=0, failed=failed)
    registered: list[Any] = []

    @after_ack(registered.append)
    async def work(event: dict[str, Any]) -> None:  # names no body: it is kept anyway
        raise RuntimeError("boom")

    assert list(inspect.signature(registered[0]).parameters) == ["ack", "event", "body"]

    async def ack() -> None:
        pass

    await registered[0](ack=ack, event={}, body={"user_id": "U1", "channel_id": "C1"})
    async with asyncio.timeout(5):
        await done.wait()
    assert told == [("boom", {"user_id": "U1", "channel_id": "C1"})]
