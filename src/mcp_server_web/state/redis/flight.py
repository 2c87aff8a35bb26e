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
from functools import partial
from typing import Any, TypeVar

import anyio
from redis.asyncio import Redis
from redis.exceptions import RedisError

from mcp_server_web.state.codec import Codec, CorruptEntry, Unencodable, encode_key
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
"""How long a result stays readable by the waiters it was published to: they read it at once."""
WAKE_CHECK = 1.0
"""Seconds a waiter listens before looking at the lock again (a publish lost to a reconnect)."""
MAX_ROUNDS = 100
"""Rounds of waiting before doing the work anyway: a bound, never reached in practice."""
MAX_RESULT = 32 * 1024 * 1024

DONE, FAILED, RETRY = b"done", b"failed", b"retry"
"""What a worker publishes when it lets go (followed by ":" and its token)."""
QUIET, UNAVAILABLE = b"quiet", b"unavailable"

# KEYS: lock; ARGV: token. Only the holder lets go.
_RELEASE = """#!lua flags=allow-oom
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# KEYS: lock; ARGV: token, lease ms.
_RENEW = """#!lua flags=allow-oom
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
        (result, from_another_replica), joined = await self._local.run(
            key, lambda: self._across_replicas(key, work)
        )
        return result, joined or from_another_replica

    async def _across_replicas(self, key: Key, work: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """(result, True when another replica did the work)."""
        member = encode_key(key)
        lock, result_key, channel = (f"{self._prefix}{part}:{member}" for part in ("lock", "result", "done"))
        token = secrets.token_hex(8).encode()
        for _ in range(MAX_ROUNDS):
            holder = await self._health.run(lambda: self._claim(lock, token), _unavailable)
            if holder == UNAVAILABLE:
                return await work(), False
            if holder == token:
                return await self._work(work, lock, result_key, channel, token), False
            if not holder:
                continue  # let go between our two looks: claim again
            # Another replica works on it: wait until it is done, then take its result.
            if await self._wait(channel, lock, holder) == DONE:
                found = await self._health.run(partial(self._result_of, result_key, holder), _nothing)
                if found is not None:
                    result: T = found[0]
                    return result, True
            # It failed, was cancelled, died, or Redis failed: claim again (or work, without Redis).
        return await work(), False

    async def _claim(self, lock: str, token: bytes) -> bytes:
        """Our token when the lock is now ours, else its holder's (b"" when it was let go)."""
        if await self._client.set(lock, token, nx=True, px=LEASE_MS):
            return token
        holder = await self._client.get(lock)
        return holder if isinstance(holder, bytes) else b""

    async def _result_of(self, result_key: str, holder: bytes) -> tuple[Any] | None:
        """The result holder left, or None (none, another worker's, too large, or corrupt)."""
        length = await self._client.strlen(result_key)
        if not len(holder) < length <= len(holder) + MAX_RESULT:
            return None
        data = await self._client.get(result_key)
        if not isinstance(data, bytes) or not data.startswith(holder):
            return None
        try:
            return (self._codec.decode(data[len(holder) :], max_bytes=MAX_RESULT),)
        except CorruptEntry as exc:
            logger.warning("shared state: a flight's result does not decode (%s); doing the work", exc)
            return None

    async def _wait(self, channel: str, lock: str, holder: bytes) -> bytes:
        """Wait (up to WAKE_CHECK) for holder's word on channel: DONE, or another outcome."""
        pubsub = self._client.pubsub()
        try:

            async def subscribe() -> bytes:
                await pubsub.subscribe(channel)
                # Subscribed first, then looked: a word sent in between is not missed.
                return b"" if await self._client.get(lock) == holder else DONE

            early = await self._health.run(subscribe, _unavailable)
            if early != b"":
                return early  # holder let go already (or Redis failed): look for its result
            with anyio.move_on_after(WAKE_CHECK):
                try:
                    while True:
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=WAKE_CHECK)
                        if message is None:
                            continue
                        outcome, _, sender = bytes(message.get("data", b"")).partition(b":")
                        if sender == holder:
                            return outcome
                except (RedisError, OSError) as exc:
                    self._health.failed(exc)
                    return UNAVAILABLE
            return QUIET
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._health.timeout):
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _work(
        self, work: Callable[[], Awaitable[T]], lock: str, result_key: str, channel: str, token: bytes
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
            await self._share(result_key, channel, result, token)
            outcome = DONE
            return result
        finally:
            with anyio.CancelScope(shield=True):
                await self._health.run(lambda: self._let_go(lock, channel, token, outcome), _nothing)

    async def _share(self, result_key: str, channel: str, result: object, token: bytes) -> None:
        async def share() -> None:
            # Written only when another replica waits (subscribed to the channel): most work has
            # no waiter, and its result goes to the cache anyway; writing it twice doubled the
            # bytes sent to Redis per download (bench/replicas.py).
            ((_, waiting),) = await self._client.pubsub_numsub(channel)
            if not waiting:
                return
            try:
                data = self._codec.encode(result)
            except Unencodable as exc:
                logger.error(
                    "shared state: cannot pass a %s to other replicas (%s)", type(result).__name__, exc
                )
                return
            if len(data) <= MAX_RESULT:
                await self._client.set(result_key, token + data, px=RESULT_TTL_MS)

        await self._health.run(share, _nothing)

    async def _let_go(self, lock: str, channel: str, token: bytes, outcome: bytes) -> None:
        await self._release(keys=[lock], args=[token])
        await self._client.publish(channel, outcome + b":" + token)

    async def _keep_lease(self, lock: str, token: bytes) -> None:
        while True:
            await anyio.sleep(RENEW_EVERY)
            await self._health.run(lambda: self._renew(keys=[lock], args=[token, LEASE_MS]), _nothing)


async def _unavailable() -> bytes:
    return UNAVAILABLE


async def _nothing() -> None:
    return None
