"""The state port's contract, checked through the port's API only.

Every test takes a ``backend`` built by ``make_backend(clock)``; a shared backend added later is
one more entry in BACKENDS, and must pass the same tests.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import anyio
import pytest

from mcp_server_web.server.shared_types import shared_types
from mcp_server_web.state import Codec, CooldownRecord, MemoryState, StateBackend, redis_state
from tests.support.redis_server import RedisServer, running_redis

BackendFactory = Callable[[Callable[[], float], pytest.FixtureRequest], StateBackend]


def _redis(clock: Callable[[], float], request: pytest.FixtureRequest) -> StateBackend:
    server: RedisServer = request.getfixturevalue("shared_redis")
    # A prefix of its own per test: one redis-server serves the module, nothing leaks between tests.
    return redis_state(
        server.url, prefix=f"contract-{uuid.uuid4().hex[:8]}:", codec=Codec(shared_types()), clock=clock
    )


BACKENDS: dict[str, BackendFactory] = {
    "memory": lambda clock, request: MemoryState(clock=clock),
    "redis": _redis,
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def shared_redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@pytest.fixture(params=sorted(BACKENDS))
async def backend(request: pytest.FixtureRequest, clock: Clock) -> AsyncIterator[StateBackend]:
    made = BACKENDS[request.param](clock, request)
    yield made
    await made.aclose()


# Key-value stores ---------------------------------------------------------------------------


async def test_entries_expire_after_the_ttl(backend: StateBackend, clock: Clock) -> None:
    store = backend.store("docs", ttl=60, max_bytes=100_000)
    assert await store.put(("page", "http://a/"), "text of a")
    clock.now += 30
    assert await store.put(("page", "http://b/"), "text of b")
    clock.now += 29
    assert await store.get(("page", "http://a/")) == "text of a"
    clock.now += 2  # a is 61 s old, b 31 s
    assert await store.get(("page", "http://a/")) is None
    assert await store.get(("page", "http://b/")) == "text of b"
    assert (await store.usage()).entries == 1
    clock.now += 30
    assert (await store.usage()).entries == 0


async def test_a_put_replaces_and_a_pop_forgets(backend: StateBackend) -> None:
    store = backend.store("docs", ttl=60, max_bytes=100_000)
    assert await store.get("k") is None
    await store.put("k", "first")
    await store.put("k", "second")
    assert await store.get("k") == "second"
    assert (await store.usage()).entries == 1
    await store.pop("k")
    await store.pop("never stored")
    assert await store.get("k") is None


async def test_the_byte_budget_evicts_the_oldest_and_refuses_what_cannot_fit(backend: StateBackend) -> None:
    store = backend.store("docs", ttl=60, max_bytes=20_000)
    value = "x" * 4000
    size = store.measure(("doc", 0), value)
    assert 4000 < size < 20_000 // 3  # the value's bytes and some bookkeeping
    for n in range(12):
        assert await store.put(("doc", n), value)
        usage = await store.usage()
        assert usage.bytes is not None and usage.bytes <= 20_000 == usage.max_bytes
    kept = [n for n in range(12) if await store.get(("doc", n)) is not None]
    assert kept == list(range(12 - len(kept), 12)) and 3 <= len(kept) < 12  # the newest stay
    assert (await store.usage()).bytes == sum(store.measure(("doc", n), value) for n in kept)

    # Larger than the whole budget: not kept, and an older value under that key goes too.
    assert not await store.put(("doc", 11), "y" * 30_000)
    assert await store.get(("doc", 11)) is None
    assert await store.get(("doc", kept[0])) == value  # nothing else was pushed out for it


async def test_a_measured_size_is_what_counts(backend: StateBackend) -> None:
    store = backend.store("docs", ttl=60, max_bytes=20_000)
    assert await store.put("small", "s", size=15_000)  # e.g. measured off the loop, with more in it
    assert (await store.usage()).bytes == 15_000
    assert not await store.put("big", "b", size=20_001)
    assert await store.put("other", "o", size=10_000)  # 25,000 > budget: the oldest goes
    assert await store.get("small") is None and await store.get("other") == "o"


async def test_a_store_bounded_by_entries(backend: StateBackend) -> None:
    store = backend.store("answers", ttl=60, max_entries=3)
    for n in range(5):
        assert await store.put(("query", n), "x" * 10_000 * (n + 1))  # size does not matter
    assert [n for n in range(5) if await store.get(("query", n)) is not None] == [2, 3, 4]
    usage = await store.usage()
    assert (usage.entries, usage.bytes, usage.max_bytes) == (3, None, None)


async def test_a_namespace_is_one_body_of_state(backend: StateBackend) -> None:
    first = backend.store("docs", ttl=60, max_bytes=10_000)
    await first.put("k", "v")
    assert await backend.store("docs", ttl=60, max_bytes=10_000).get("k") == "v"
    assert await backend.store("other", ttl=60, max_bytes=10_000).get("k") is None
    with pytest.raises(ValueError, match="exactly one"):
        backend.store("neither", ttl=60)
    with pytest.raises(ValueError, match="exactly one"):
        backend.store("both", ttl=60, max_bytes=10, max_entries=10)


# Single-flight ------------------------------------------------------------------------------


async def test_concurrent_callers_share_one_piece_of_work(backend: StateBackend) -> None:
    flight = backend.flight("downloads")
    runs: list[str] = []

    async def work(key: str) -> str:
        runs.append(key)
        await anyio.sleep(0.1)
        return f"result of {key}"

    outcomes: list[tuple[str, bool]] = []

    async def call(key: str) -> None:
        outcomes.append(await flight.run(key, lambda: work(key)))

    async with anyio.create_task_group() as group:
        for key in ("a", "a", "a", "b"):
            group.start_soon(call, key)
    assert sorted(runs) == ["a", "b"]  # one run per key, keys do not share
    assert sorted(outcomes) == [
        ("result of a", False),
        ("result of a", True),
        ("result of a", True),
        ("result of b", False),
    ]
    # Done is done: a later call does the work again (the result is the caller's to cache).
    assert await flight.run("a", lambda: work("a")) == ("result of a", False)
    assert runs.count("a") == 2


async def test_a_failure_reaches_the_waiters_and_is_not_remembered(backend: StateBackend) -> None:
    flight = backend.flight("downloads")
    attempts = 0

    async def fail() -> str:
        nonlocal attempts
        attempts += 1
        await anyio.sleep(0.1)
        raise LookupError("no such page")

    errors: list[str] = []

    async def call() -> None:
        with pytest.raises(LookupError) as raised:
            await flight.run("k", fail)
        errors.append(str(raised.value))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(call)
    assert attempts == 1 and errors == ["no such page"] * 3

    async def succeed() -> str:
        return "found"

    assert await flight.run("k", succeed) == ("found", False)


async def test_a_cancelled_worker_hands_the_work_to_a_waiter(backend: StateBackend) -> None:
    flight = backend.flight("downloads")
    started = anyio.Event()
    runs = 0

    async def slow() -> str:
        nonlocal runs
        runs += 1
        started.set()
        await anyio.sleep(0.2)
        return "done"

    worker_scope = anyio.CancelScope()
    outcomes: list[tuple[str, bool]] = []

    async def worker() -> None:
        with worker_scope:
            await flight.run("k", slow)

    async def waiter() -> None:
        outcomes.append(await flight.run("k", slow))

    async with anyio.create_task_group() as group:
        group.start_soon(worker)
        await started.wait()
        group.start_soon(waiter)
        await anyio.sleep(0.05)
        worker_scope.cancel()
    # The waiter was not failed by the worker's cancellation: it ran the work itself.
    assert outcomes == [("done", False)] and runs == 2


async def test_a_cancelled_waiter_leaves_the_work_running(backend: StateBackend) -> None:
    flight = backend.flight("downloads")
    started = anyio.Event()
    runs = 0

    async def slow() -> str:
        nonlocal runs
        runs += 1
        started.set()
        await anyio.sleep(0.2)
        return "done"

    waiter_scope = anyio.CancelScope()
    outcomes: list[tuple[str, bool]] = []

    async def worker() -> None:
        outcomes.append(await flight.run("k", slow))

    async def waiter() -> None:
        with waiter_scope:
            await flight.run("k", slow)

    async with anyio.create_task_group() as group:
        group.start_soon(worker)
        await started.wait()
        group.start_soon(waiter)
        await anyio.sleep(0.05)
        waiter_scope.cancel()
    assert outcomes == [("done", False)] and runs == 1


# Cooldown records ---------------------------------------------------------------------------


def strike(reason: str, until: float) -> Callable[[CooldownRecord | None, int], CooldownRecord]:
    def change(current: CooldownRecord | None, penalty: int) -> CooldownRecord:
        strikes = (current.strikes if current else 0) + 1
        return CooldownRecord(until=until, strikes=strikes, reason=reason, penalty=penalty)

    return change


async def test_penalties_are_numbered_and_change_records_atomically(backend: StateBackend) -> None:
    book = backend.cooldowns("providers")
    assert await book.get("tavily") is None
    before = await book.mark()
    first = await book.penalize("tavily", strike("rate_limit", backend.now() + 60))
    assert first.penalty == before + 1 == await book.mark() and first.strikes == 1
    second = await book.penalize("tavily", strike("quota", backend.now() + 120))
    assert (second.penalty, second.strikes, second.reason) == (before + 2, 2, "quota")
    assert await book.get("tavily") == second
    await book.penalize("brave", strike("blocked", backend.now() + 60))
    assert await book.mark() == before + 3  # one count for the whole book


async def test_a_record_is_cleared_unless_penalized_after_the_mark(backend: StateBackend) -> None:
    book = backend.cooldowns("providers")
    mark = await book.mark()
    await book.penalize("tavily", strike("rate_limit", backend.now() + 60))
    # An answer to an attempt that started before that penalty does not lift it.
    await book.clear("tavily", unless_penalized_after=mark)
    assert await book.get("tavily") is not None
    # One that started after it does.
    await book.clear("tavily", unless_penalized_after=await book.mark())
    assert await book.get("tavily") is None
    await book.penalize("tavily", strike("rate_limit", backend.now() + 60))
    await book.clear("tavily")  # no mark: cleared
    assert await book.get("tavily") is None
    await book.clear("never penalized", unless_penalized_after=mark)


async def test_the_clock_is_the_backends(backend: StateBackend, clock: Clock) -> None:
    assert backend.now() == clock.now
    clock.now += 5
    assert backend.now() == clock.now


# Pacing and counters ------------------------------------------------------------------------


async def test_slots_are_an_interval_apart_and_none_past_latest(backend: StateBackend, clock: Clock) -> None:
    pacer = backend.pacer("search.pacing")
    assert await pacer.claim("brave", 1.0, latest=clock.now + 10) == clock.now
    assert await pacer.claim("brave", 1.0, latest=clock.now + 10) == clock.now + 1
    # A slot past latest is refused, and not taken: the next claim gets the same one.
    assert await pacer.claim("brave", 1.0, latest=clock.now + 1.5) is None
    assert await pacer.claim("brave", 1.0, latest=clock.now + 10) == clock.now + 2
    assert await pacer.claim("tavily", 1.0, latest=clock.now) == clock.now
    clock.now += 60  # An idle name's next slot is now, not in the past.
    assert await backend.pacer("search.pacing").claim("brave", 1.0, latest=clock.now) == clock.now


async def test_counts_stop_at_the_limit_and_restart_each_period(backend: StateBackend) -> None:
    counters = backend.counters("search.calls")
    assert [await counters.take("brave", "2026-11-24", 2) for _ in range(3)] == [1, 2, None]
    assert await counters.count("brave", "2026-11-24") == 2
    assert await counters.count("brave", "2026-11-25") == 0
    assert await counters.take("brave", "2026-11-25", 2) == 1
    assert await counters.take("exa", "2026-11-25", None) == 1
