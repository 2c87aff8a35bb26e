"""Cooldowns, pacing turns and daily counts in Redis, each change atomic across replicas.

Each falls back to this replica's memory while Redis is unavailable (``SharedHealth``): a
provider is then paced and counted per replica until Redis answers again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace

from redis.asyncio import Redis
from redis.exceptions import WatchError

from mcp_server_web.state.memory import MemoryCooldowns, MemoryCounters, MemoryPacer
from mcp_server_web.state.port import CooldownRecord
from mcp_server_web.state.redis.health import SharedHealth
from mcp_server_web.state.redis.store import ADDS, FREES

MAX_REASON = 500
"""Characters of a cooldown's reason kept when read back: what another writer stored is bounded."""
MAX_WATCH_ROUNDS = 50
"""Attempts at an optimistic update before giving up (to memory): replicas rarely collide twice."""
COUNT_TTL = 3 * 86_400
"""Seconds a day's count is kept: long after the day is over, then Redis forgets it."""


def _record_text(record: CooldownRecord) -> str:
    return json.dumps(
        {"until": record.until, "strikes": record.strikes, "reason": record.reason, "penalty": record.penalty}
    )


def _record_of(raw: bytes | str | None) -> CooldownRecord | None:
    """A record read back, or None when there is none or it is not one we could have written."""
    if raw is None or len(raw) > 4 * MAX_REASON:
        return None
    try:
        data = json.loads(raw)
        until, strikes, reason, penalty = data["until"], data["strikes"], data["reason"], data["penalty"]
    except (ValueError, TypeError, KeyError):
        return None
    numbers_ok = isinstance(until, int | float) and not isinstance(until, bool) and math.isfinite(until)
    if not numbers_ok or not isinstance(reason, str):
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (strikes, penalty)):
        return None
    return CooldownRecord(until=float(until), strikes=strikes, reason=reason[:MAX_REASON], penalty=penalty)


# KEYS: records, penalties; ARGV: name, unless_penalized_after ('' for none)
_CLEAR = (
    FREES
    + """
if ARGV[2] ~= '' then
  local penalty = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
  if penalty and penalty > tonumber(ARGV[2]) then return 0 end
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
"""
)


class RedisCooldowns:
    def __init__(self, client: Redis, health: SharedHealth, *, prefix: str) -> None:
        self._client = client
        self._health = health
        self._records, self._penalties, self._count = (
            f"{prefix}{part}" for part in ("records", "penalties", "count")
        )
        self._clear = client.register_script(_CLEAR)
        self._local = MemoryCooldowns()

    async def get(self, name: str) -> CooldownRecord | None:
        async def shared() -> CooldownRecord | None:
            return _record_of(await self._client.hget(self._records, name))

        return await self._health.run(shared, lambda: self._local.get(name))

    async def mark(self) -> int:
        async def shared() -> int:
            return int(await self._client.get(self._count) or 0)

        return await self._health.run(shared, self._local.mark)

    async def penalize(
        self, name: str, change: Callable[[CooldownRecord | None, int], CooldownRecord]
    ) -> CooldownRecord:
        async def shared() -> CooldownRecord:
            async with self._client.pipeline(transaction=True) as pipe:
                for _ in range(MAX_WATCH_ROUNDS):
                    try:
                        await pipe.watch(self._records, self._count)
                        current = _record_of(await pipe.hget(self._records, name))
                        penalty = int(await pipe.get(self._count) or 0) + 1
                        record = replace(change(current, penalty), penalty=penalty)
                        pipe.multi()  # type: ignore[no-untyped-call]
                        pipe.set(self._count, penalty)
                        pipe.hset(self._records, name, _record_text(record))
                        pipe.hset(self._penalties, name, penalty)
                        await pipe.execute()
                        return record
                    except WatchError:
                        continue
            raise TimeoutError("cooldown update kept colliding with other replicas")

        return await self._health.run(shared, lambda: self._local.penalize(name, change))

    async def clear(self, name: str, *, unless_penalized_after: int | None = None) -> None:
        async def shared() -> None:
            since = "" if unless_penalized_after is None else str(unless_penalized_after)
            await self._clear(keys=[self._records, self._penalties], args=[name, since])

        await self._health.run(
            shared, lambda: self._local.clear(name, unless_penalized_after=unless_penalized_after)
        )


# KEYS: turns; ARGV: name, now, interval, latest. The slot taken (as text), or nil.
_CLAIM = (
    ADDS
    + """
local now, interval, latest = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local slot = now
local taken = redis.call('HGET', KEYS[1], ARGV[1])
if taken and tonumber(taken) and tonumber(taken) > slot then slot = tonumber(taken) end
if slot > latest then return false end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.6f', slot + interval))
return string.format('%.6f', slot)
"""
)


class RedisPacer:
    def __init__(
        self, client: Redis, health: SharedHealth, clock: Callable[[], float], *, prefix: str
    ) -> None:
        self._health = health
        self._clock = clock
        self._turns = f"{prefix}turns"
        self._claim = client.register_script(_CLAIM)
        self._local = MemoryPacer(clock)

    async def claim(self, name: str, interval: float, *, latest: float) -> float | None:
        async def shared() -> float | None:
            slot = await self._claim(
                keys=[self._turns], args=[name, repr(self._clock()), repr(interval), repr(latest)]
            )
            return None if slot is None else float(slot)

        return await self._health.run(shared, lambda: self._local.claim(name, interval, latest=latest))


# KEYS: count; ARGV: limit ('' for none), ttl. The new count, or nil at the limit.
_TAKE = (
    ADDS
    + """
local count = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if ARGV[1] ~= '' and count >= tonumber(ARGV[1]) then return false end
count = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return count
"""
)


class RedisCounters:
    def __init__(self, client: Redis, health: SharedHealth, *, prefix: str) -> None:
        self._client = client
        self._health = health
        self._prefix = prefix
        self._take = client.register_script(_TAKE)
        self._local = MemoryCounters()

    def _key(self, name: str, period: str) -> str:
        return f"{self._prefix}{period}:{name}"

    async def take(self, name: str, period: str, limit: int | None) -> int | None:
        async def shared() -> int | None:
            limit_text = "" if limit is None else str(limit)
            count = await self._take(keys=[self._key(name, period)], args=[limit_text, COUNT_TTL])
            return None if count is None else int(count)

        return await self._health.run(shared, lambda: self._local.take(name, period, limit))

    async def count(self, name: str, period: str) -> int:
        async def shared() -> int:
            raw = await self._client.get(self._key(name, period))
            try:
                return max(0, int(raw or 0))
            except ValueError:
                return 0

        return await self._health.run(shared, lambda: self._local.count(name, period))
