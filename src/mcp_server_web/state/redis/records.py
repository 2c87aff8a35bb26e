"""Cooldowns, pacing turns and daily counts in Redis, each change atomic across replicas.

Each falls back to this replica's memory while Redis is unavailable (``SharedHealth``): a
provider is then paced and counted per replica until Redis answers again.

Every value read back is checked: a count that is not one, a record that is not one we write, a
turn that is not a time a claim could set. Read, such a value is a miss answered from memory
(``BadValue``); met by a change (a penalty, a claim, a count), it is replaced by the change's own
value, and said (``SharedHealth.distrust``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from redis.asyncio import Redis
from redis.exceptions import WatchError

from mcp_server_web.state.memory import MemoryCooldowns, MemoryCounters, MemoryPacer
from mcp_server_web.state.port import CooldownRecord
from mcp_server_web.state.redis.health import BadValue, SharedHealth
from mcp_server_web.state.redis.store import ADDS, FREES

T = TypeVar("T")

MAX_REASON = 500
"""Characters of a cooldown's reason kept when read back: what another writer stored is bounded."""
MAX_WATCH_ROUNDS = 50
"""Attempts at an optimistic update before giving up (to memory): replicas rarely collide twice."""
COUNT_TTL = 3 * 86_400
"""Seconds a day's count is kept: long after the day is over, then Redis forgets it."""
CLOCK_SLACK = 60.0
"""Seconds the replicas' clocks may differ by: a record written on a clock ahead is still one."""
MAX_TURN_AHEAD = 3600.0
"""Seconds past the latest turn a claim asks for (and one interval) that a stored turn may lie and
still be one a replica wrote: another search's deadline may reach further than this one's, by
far less than this. Further (or not a finite time) is a turn no claim set: taken as none."""


def _count_of(raw: object, what: str) -> int:
    """A count read back (absent: 0); BadValue for anything but the digits of one."""
    if raw is None:
        return 0
    if not (isinstance(raw, bytes) and re.fullmatch(rb"[0-9]{1,15}", raw)):
        raise BadValue(f"{what} is not a count")
    return int(raw)


def _record_text(record: CooldownRecord) -> str:
    return json.dumps(
        {"until": record.until, "strikes": record.strikes, "reason": record.reason, "penalty": record.penalty}
    )


def _record_of(raw: object) -> CooldownRecord | None:
    """A record read back, or None when there is none; BadValue when it is not one we write."""
    if raw is None:
        return None
    bad = BadValue("a cooldown record is not one a replica writes")
    if not isinstance(raw, bytes) or len(raw) > 4 * MAX_REASON:
        raise bad
    try:
        data = json.loads(raw)
        until, strikes, reason, penalty = data["until"], data["strikes"], data["reason"], data["penalty"]
    except (ValueError, TypeError, KeyError, RecursionError):
        raise bad from None
    numbers_ok = isinstance(until, int | float) and not isinstance(until, bool) and math.isfinite(until)
    if not numbers_ok or not isinstance(reason, str):
        raise bad
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (strikes, penalty)):
        raise bad
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
    def __init__(
        self,
        client: Redis,
        health: SharedHealth,
        clock: Callable[[], float],
        *,
        prefix: str,
        longest: float | None,
    ) -> None:
        self._client = client
        self._health = health
        self._clock = clock
        self._longest = longest
        self._records, self._penalties, self._count = (
            f"{prefix}{part}" for part in ("records", "penalties", "count")
        )
        self._clear = client.register_script(_CLEAR)
        self._local = MemoryCooldowns()

    def _record_of(self, raw: object) -> CooldownRecord | None:
        record = _record_of(raw)
        ends_late = (
            record is not None and record.until - self._clock() > (self._longest or math.inf) + CLOCK_SLACK
        )
        if ends_late:
            raise BadValue("a cooldown record ends later than any cooldown given")
        return record

    async def get(self, name: str) -> CooldownRecord | None:
        async def shared() -> CooldownRecord | None:
            return self._record_of(await self._client.hget(self._records, name))

        return await self._health.run(shared, lambda: self._local.get(name))

    async def mark(self) -> int:
        async def shared() -> int:
            return _count_of(await self._client.get(self._count), "the count of penalties")

        return await self._health.run(shared, self._local.mark)

    async def penalize(
        self, name: str, change: Callable[[CooldownRecord | None, int], CooldownRecord]
    ) -> CooldownRecord:
        async def shared() -> CooldownRecord:
            async with self._client.pipeline(transaction=True) as pipe:
                for _ in range(MAX_WATCH_ROUNDS):
                    try:
                        await pipe.watch(self._records, self._count)
                        # What no replica writes is overwritten here, as if it were not there.
                        current = self._or_none(self._record_of, await pipe.hget(self._records, name))
                        count = self._or_none(
                            _count_of, await pipe.get(self._count), "the count of penalties"
                        )
                        penalty = (count or 0) + 1
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

    def _or_none(self, read: Callable[..., T], *args: object) -> T | None:
        try:
            return read(*args)
        except BadValue as exc:
            self._health.distrust(exc)
            return None

    async def clear(self, name: str, *, unless_penalized_after: int | None = None) -> None:
        async def shared() -> None:
            since = "" if unless_penalized_after is None else str(unless_penalized_after)
            await self._clear(keys=[self._records, self._penalties], args=[name, since])

        await self._health.run(
            shared, lambda: self._local.clear(name, unless_penalized_after=unless_penalized_after)
        )


# KEYS: turns; ARGV: name, now, interval, latest, ahead. {the slot taken (as text) or nil, bad}
_CLAIM = (
    ADDS
    + """
local now, interval, latest = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local slot, bad = now, 0
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local taken = tonumber(raw)
  if taken and taken == taken and taken >= 0 and taken <= latest + interval + tonumber(ARGV[5]) then
    if taken > slot then slot = taken end
  else
    bad = 1
  end
end
if slot > latest then return {false, bad} end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.6f', slot + interval))
return {string.format('%.6f', slot), bad}
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
            now = self._clock()
            reply = await self._claim(
                keys=[self._turns], args=[name, repr(now), repr(interval), repr(latest), repr(MAX_TURN_AHEAD)]
            )
            if not (isinstance(reply, list) and len(reply) == 2 and reply[1] in (0, 1)):
                raise BadValue("a claim of a pacing turn was answered with what its script never returns")
            slot, bad = reply
            if bad:
                self._health.distrust(BadValue("a pacing turn is not a time a claim sets; replaced"))
            if slot is None:
                return None
            taken = (
                float(slot)
                if isinstance(slot, bytes) and re.fullmatch(rb"[0-9]{1,12}\.[0-9]{6}", slot)
                else None
            )
            if taken is None or not now - 1 <= taken <= latest:
                raise BadValue("a claim of a pacing turn answered a turn it could not have taken")
            return taken

        return await self._health.run(shared, lambda: self._local.claim(name, interval, latest=latest))


# KEYS: count; ARGV: limit ('' for none), ttl. {the new count or nil at the limit, bad}
_TAKE = (
    ADDS
    + """
local raw, count, bad = redis.call('GET', KEYS[1]), 0, 0
if raw then
  if string.match(raw, '^%d+$') and #raw <= 15 then
    count = tonumber(raw)
  else
    bad = 1
    redis.call('SET', KEYS[1], 0)
  end
end
if ARGV[1] ~= '' and count >= tonumber(ARGV[1]) then return {false, bad} end
count = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {count, bad}
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
            reply = await self._take(keys=[self._key(name, period)], args=[limit_text, COUNT_TTL])
            if not (isinstance(reply, list) and len(reply) == 2 and reply[1] in (0, 1)):
                raise BadValue("a count was answered with what its script never returns")
            count, bad = reply
            if bad:
                self._health.distrust(BadValue("a day's count of calls is not a count; counted from 0"))
            if count is not None and not (type(count) is int and count >= 1):
                raise BadValue("a count was answered with what is not a count")
            return count

        return await self._health.run(shared, lambda: self._local.take(name, period, limit))

    async def count(self, name: str, period: str) -> int:
        async def shared() -> int:
            return _count_of(await self._client.get(self._key(name, period)), "a day's count of calls")

        return await self._health.run(shared, lambda: self._local.count(name, period))
