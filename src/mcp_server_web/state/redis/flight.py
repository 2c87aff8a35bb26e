"""Single-flight across replicas: one piece of work per key in the whole cluster.

Within a replica, callers for one key first meet in memory (``MemoryFlight``), so at most one
caller per replica reaches Redis. There, a lock with a lease (``SET NX PX``, renewed while the
work runs) elects one replica to do the work; it stores the result for a few seconds and
publishes on the key's channel, which wakes the others, who read the result instead of doing
the work. If the worker's replica dies, its lease runs out and a waiter takes the work over.

What cannot cross replicas is an exception: when the work fails, waiters on other replicas are
told so and do the work themselves (the memory flight shares the failure within a replica).
Any Redis trouble makes the caller do the work itself, as a single replica would.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from redis.asyncio import Redis
from redis.exceptions import RedisError

from mcp_server_web.state.codec import Codec, CorruptEntry, encode_key
from mcp_server_web.state.memory import MemoryFlight
from mcp_server_web.state.port import Key
from mcp_server_web.state.redis.health import SharedHealth

logger = logging.getLogger(__name__)

T = TypeVar("T")

LEASE_MS = 10_000
"""How long a lock holds without renewal: a dead worker's key is free again after this."""
RENEW_EVERY = LEASE_MS / 3000
"""Seconds between renewals of a live worker's lease."""
RESULT_TTL_MS = 5_000
"""How long a result stays readable: long enough for every waiter, and for a caller that took
the lock just after the worker let it go (whose caller had not yet cached the result)."""
WAKE_CHECK = 1.0
"""Seconds a waiter listens before looking at the lock again (a publish lost to a reconnect)."""
MAX_ROUNDS = 100
"""Rounds of waiting before doing the work anyway: a bound, never reached in practice."""
MAX_RESULT = 32 * 1024 * 1024

DONE, FAILED, RETRY = b"done", b"failed", b"retry"

# KEYS: lock; ARGV: token. Only the holder lets go.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# KEYS: lock; ARGV: token, lease ms.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


class RedisFlight:
    def __init__(self, client: Redis, health: SharedHealth, codec: Codec, *, prefix: str) -> None:
        self._client = client
        self._health = health
        self._codec = codec
        self._prefix = prefix
        self._local = MemoryFlight()
        self._release = client.register_script(_RELEASE)
        self._renew = client.register_script(_RENEW)

    async def run(self, key: Key, work: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        return await self._local.run(key, lambda: self._across_replicas(key, work))

    async def _across_replicas(self, key: Key, work: Callable[[], Awaitable[T]]) -> T:
        member = encode_key(key)
        lock, result_key, channel = (f"{self._prefix}{part}:{member}" for part in ("lock", "result", "done"))
        token = secrets.token_hex(8)
        for _ in range(MAX_ROUNDS):
            state = await self._health.run(lambda: self._claim(lock, result_key, token), _unavailable)
            if state == "unavailable":
                return await work()
            if isinstance(state, tuple):
                result: T = state[0]
                return result
            if state == "mine":
                return await self._work(work, lock, result_key, channel, token)
            # Another replica works on it: wait to be woken, then look again.
            woken = await self._health.run(lambda: self._wait(channel, lock), _unavailable)
            if woken == "unavailable":
                return await work()
        return await work()

    async def _claim(self, lock: str, result_key: str, token: str) -> tuple[Any] | str:
        """("mine") the lock is ours, (result,) a fresh result is there, ("busy") someone works."""
        if await self._client.set(lock, token, nx=True, px=LEASE_MS):
            found = await self._fresh_result(result_key)
            if found is None:
                return "mine"
            await self._release(keys=[lock], args=[token])
            return found
        found = await self._fresh_result(result_key)
        return "busy" if found is None else found

    async def _fresh_result(self, result_key: str) -> tuple[Any] | None:
        if (length := await self._client.strlen(result_key)) == 0 or length > MAX_RESULT:
            return None
        data = await self._client.get(result_key)
        if not isinstance(data, bytes):
            return None
        try:
            return (self._codec.decode(data, max_bytes=MAX_RESULT),)
        except CorruptEntry as exc:
            logger.warning("shared state: a flight's result does not decode (%s); doing the work", exc)
            return None

    async def _wait(self, channel: str, lock: str) -> str:
        """Listen on channel until woken or WAKE_CHECK passes; "gone" when nobody holds the lock."""
        pubsub = self._client.pubsub()
        try:

            async def subscribe() -> str:
                await pubsub.subscribe(channel)
                # Subscribed first, then looked: a publish in between is not missed.
                return "held" if await self._client.exists(lock) else "gone"

            state = await self._health.run(subscribe, _unavailable)
            if state != "held":
                return state
            with anyio.move_on_after(WAKE_CHECK):
                try:
                    while (
                        await pubsub.get_message(ignore_subscribe_messages=True, timeout=WAKE_CHECK) is None
                    ):
                        pass
                except (RedisError, OSError) as exc:
                    self._health.failed(exc)
                    return "unavailable"
                return "woken"
            return "quiet"
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._health.timeout):
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _work(
        self, work: Callable[[], Awaitable[T]], lock: str, result_key: str, channel: str, token: str
    ) -> T:
        outcome = RETRY
        done: dict[str, Any] = {}
        try:
            async with anyio.create_task_group() as working:

                async def run_work() -> None:
                    # Caught here, not raised through the task group (which would wrap it).
                    try:
                        done["result"] = await work()
                    except Exception as exc:
                        done["error"] = exc
                    finally:
                        working.cancel_scope.cancel()

                working.start_soon(self._keep_lease, lock, token)
                working.start_soon(run_work)
            if "error" in done:
                outcome = FAILED
                raise done["error"]
            result: T = done["result"]
            await self._share(result_key, result)
            outcome = DONE
            return result
        finally:
            with anyio.CancelScope(shield=True):
                await self._health.run(lambda: self._let_go(lock, channel, token, outcome), _nothing)

    async def _share(self, result_key: str, result: object) -> None:
        data = self._codec.encode(result)
        if len(data) > MAX_RESULT:
            return

        async def share() -> None:
            await self._client.set(result_key, data, px=RESULT_TTL_MS)

        await self._health.run(share, _nothing)

    async def _let_go(self, lock: str, channel: str, token: str, outcome: bytes) -> None:
        await self._release(keys=[lock], args=[token])
        await self._client.publish(channel, outcome)

    async def _keep_lease(self, lock: str, token: str) -> None:
        while True:
            await anyio.sleep(RENEW_EVERY)
            await self._health.run(lambda: self._renew(keys=[lock], args=[token, LEASE_MS]), _nothing)


async def _unavailable() -> str:
    return "unavailable"


async def _nothing() -> None:
    return None
