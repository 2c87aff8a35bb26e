"""Single-flight across replicas: one piece of work per key in the whole cluster.

Within a replica, callers for one key first meet in memory (``MemoryFlight``), so at most one
caller per replica reaches Redis. There, a lock with a lease (``SET NX PX``, renewed while the
work runs) elects one replica to do the work; it stores the result for a few seconds and
publishes on the key's channel, which wakes the others, who read the result instead of doing
the work. If the worker's replica dies, its lease runs out and a waiter takes the work over.

What cannot cross replicas is an exception: when the work fails, waiters on other replicas are
told so and do the work themselves (the memory flight shares the failure within a replica).
Any Redis trouble makes the caller do the work itself, as a single replica would.

A lock is trusted only when it is one a replica takes: a token of ours (16 hex digits) with a lease
no longer than ``LEASE_MS``. Anything else in its place (no expiry, another value, another type)
is replaced by the claim, atomically, and said. And a lock that looks alive is waited on for the
caller's own limit at most (``wait``, all the waits of one call together, nested flights
included): past it the caller does the work itself, as it would without Redis.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import partial
from typing import Any, TypeVar

import anyio
from redis.asyncio import Redis
from redis.exceptions import RedisError

from mcp_server_web.state.codec import Codec, CorruptEntry, Unencodable, encode_key
from mcp_server_web.state.memory import MemoryFlight
from mcp_server_web.state.port import Key
from mcp_server_web.state.redis.health import BadValue, SharedHealth
from mcp_server_web.state.redis.store import MAX_SHARED_ENTRY

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
"""Rounds of waiting before doing the work anyway, when no wait limit was given."""
MAX_RESULT = MAX_SHARED_ENTRY
TOKEN = re.compile(rb"[0-9a-f]{16}")
"""What a replica's lock holds (``secrets.token_hex(8)``)."""

_waits_end: ContextVar[float | None] = ContextVar("waits_end", default=None)
"""When the current call stops waiting on other replicas (anyio's clock), once a flight set it: a
flight within the work of another (a download within a document's conversion) spends the same
budget, so the waits of one call never add up past its limit."""

DONE, FAILED, RETRY = b"done", b"failed", b"retry"
"""What a worker publishes when it lets go (followed by ":" and its token)."""
QUIET, UNAVAILABLE = b"quiet", b"unavailable"

# KEYS: lock; ARGV: token, lease ms. {the holder's token after the claim, 1 if what was there was
# no lock a replica takes and was replaced}. '' when the lock was let go between two looks.
_CLAIM = """#!lua
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {ARGV[1], 0} end
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then return {'', 0} end
if kind == 'string' then
  local holder, ttl = redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])
  if #holder == 16 and not string.find(holder, '[^0-9a-f]') and ttl > 0 and ttl <= tonumber(ARGV[2]) then
    return {holder, 0}
  end
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {ARGV[1], 1}
"""
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
    def __init__(
        self, client: Redis, health: SharedHealth, codec: Codec, *, prefix: str, wait: float | None
    ) -> None:
        self._client = client
        self._health = health
        self._codec = codec
        self._prefix = prefix
        self._wait = wait
        self._local = MemoryFlight()
        self._claim_script = client.register_script(_CLAIM)
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
        ends = _waits_end.get()
        if ends is None and self._wait is not None:
            ends = anyio.current_time() + self._wait
        budget = _waits_end.set(ends)
        try:
            for _ in range(MAX_ROUNDS):
                if ends is not None and anyio.current_time() >= ends:
                    break
                holder = await self._health.run(lambda: self._claim(lock, token), _unavailable)
                if holder == UNAVAILABLE:
                    return await work(), False
                if holder == token:
                    return await self._work(work, lock, result_key, channel, token), False
                if not holder:
                    continue  # let go between our two looks: claim again
                # Another replica works on it: wait until it is done, then take its result.
                if await self._wait_for(channel, lock, holder, ends) == DONE:
                    found = await self._health.run(partial(self._result_of, result_key, holder), _nothing)
                    if found is not None:
                        result: T = found[0]
                        return result, True
                # It failed, was cancelled, died, or Redis failed: claim again (or work, without Redis).
            logger.info(
                "shared state: waited on another replica's work as long as this call may; doing it here"
            )
            return await work(), False
        finally:
            _waits_end.reset(budget)

    async def _claim(self, lock: str, token: bytes) -> bytes:
        """Our token when the lock is now ours, else its holder's (b"" when it was let go)."""
        reply = await self._claim_script(keys=[lock], args=[token, LEASE_MS])
        if not (isinstance(reply, list) and len(reply) == 2 and isinstance(reply[0], bytes)):
            raise BadValue("a lock's claim was answered with what its script never returns")
        holder, replaced = reply
        if holder not in (token, b"") and not TOKEN.fullmatch(holder):
            raise BadValue("a lock's claim answered a holder no replica could be")
        if replaced == 1:
            self._health.distrust(BadValue("a lock no replica takes (no lease, or not a token); replaced"))
        return bytes(holder)

    async def _result_of(self, result_key: str, holder: bytes) -> tuple[Any] | None:
        """The result holder left, or None (none, another worker's, too large, or corrupt)."""
        length = await self._client.strlen(result_key)
        if type(length) is not int:
            raise BadValue("the length of a flight's result is not a number")
        if not len(holder) < length <= len(holder) + MAX_RESULT:
            return None
        data = await self._client.get(result_key)
        if not isinstance(data, bytes) or not data.startswith(holder):
            return None
        try:
            return (self._codec.decode(data[len(holder) :], max_bytes=MAX_RESULT),)
        except CorruptEntry as exc:
            raise BadValue(f"a flight's result does not decode ({exc}); doing the work") from None

    async def _wait_for(self, channel: str, lock: str, holder: bytes, ends: float | None) -> bytes:
        """Wait (up to WAKE_CHECK, and not past ends) for holder's word on channel: DONE, or
        another outcome."""
        pubsub = self._client.pubsub()
        try:

            async def subscribe() -> bytes:
                await pubsub.subscribe(channel)
                # Subscribed first, then looked: a word sent in between is not missed.
                return b"" if await self._client.get(lock) == holder else DONE

            early = await self._health.run(subscribe, _unavailable)
            if early != b"":
                return early  # holder let go already (or Redis failed): look for its result
            listen = WAKE_CHECK if ends is None else max(0.0, min(WAKE_CHECK, ends - anyio.current_time()))
            with anyio.move_on_after(listen):
                try:
                    while True:
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=listen)
                        # Only a message as Redis sends it counts (bytes(n) of an int would be n bytes).
                        data = message.get("data") if isinstance(message, dict) else None
                        if not isinstance(data, bytes):
                            continue
                        outcome, _, sender = data.partition(b":")
                        if sender == holder:
                            return outcome
                except (RedisError, OSError) as exc:
                    self._health.failed(exc)
                    return UNAVAILABLE
                except Exception as exc:  # a message no Redis sends
                    self._health.distrust(exc)
                    return UNAVAILABLE
            return QUIET
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(self._health.timeout):
                # (typed in the newest redis-py releases, 8.2 among them; untyped in older ones)
                await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]

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
            answer = await self._client.pubsub_numsub(channel)
            pair = answer[0] if isinstance(answer, list) and len(answer) == 1 else None
            waiting = pair[1] if isinstance(pair, tuple | list) and len(pair) == 2 else None
            if type(waiting) is not int:
                raise BadValue("the count of replicas waiting on a flight is not a number")
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
