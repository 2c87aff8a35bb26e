from __future__ import annotations

import anyio

from mcp_server_web.fetch.types import Document
from mcp_server_web.state import MemoryState


def doc(text: str) -> Document:
    return Document("u", "u", 200, "text/html", None, "markdown", True, text)


async def test_bounded_by_bytes_and_ttl() -> None:
    now = [0.0]
    cache = MemoryState(clock=lambda: now[0]).store("docs", max_bytes=10_000, ttl=60)
    for i in range(10):
        assert await cache.put(i, doc("x" * 2000))
    usage = await cache.usage()
    assert usage.bytes is not None and usage.bytes <= 10_000 and usage.entries < 10
    assert await cache.get(9) is not None  # the newest stays
    assert not await cache.put("huge", doc("x" * 20_000))  # larger than the whole cache: not kept
    assert await cache.get("huge") is None
    now[0] = 61
    assert await cache.get(9) is None


async def test_single_flight_shares_work_and_errors() -> None:
    flight = MemoryState().flight("work")
    calls = 0

    async def work() -> int:
        nonlocal calls
        calls += 1
        await anyio.sleep(0.1)
        return 42

    results: list[tuple[int, bool]] = []

    async def call() -> None:
        results.append(await flight.run("k", work))

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(call)
    assert calls == 1 and sorted(r[1] for r in results) == [False, True, True, True]
    assert len(flight) == 0

    async def fail() -> int:
        await anyio.sleep(0.05)
        raise ValueError("boom")

    errors: list[Exception] = []

    async def failing_call() -> None:
        try:
            await flight.run("e", fail)
        except ValueError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(failing_call)
        tg.start_soon(failing_call)
    assert len(errors) == 2
    # Errors are not remembered: the next call does the work again.
    assert (await flight.run("e", work))[0] == 42
