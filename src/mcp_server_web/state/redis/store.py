"""A key-value store in Redis, bounded cluster-wide by its bytes (or its entries), with TTLs.

Layout, for one namespace (``<prefix><namespace>:``, keys hashed so no URL appears in Redis):

- ``…e:<hash>``: the encoded value (string), with a Redis TTL a little longer than ours;
- ``…order``: sorted set of hashes, scored by a sequence number (oldest first, for eviction);
- ``…meta``: hash of hash -> "size|stored_at" (the bytes counted and the time it was put);
- ``…bytes``, ``…seq``: the bytes held in all, and the last sequence number.

Every change runs as one Lua script, so replicas never see a budget half-updated: a put expires
what is past its TTL, evicts the oldest until the new entry fits, and stores it, atomically.
Expiry is decided on the backend's clock (passed in), not Redis's own timers, so the TTL means
the same as in memory; Redis's TTL only reclaims what nobody reads again.

Values are read size-checked (STRLEN before GET, in the script) and decoded defensively: an entry
written by anyone else that is too large or does not decode is dropped and reads as a miss. So is
bookkeeping no replica writes (a meta field that is not "size|stored_at", a total or a sequence
that is not a count, a key of another type): each script drops or recounts it, says how many it
met, and the replica logs it and says degraded (``SharedHealth.distrust``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from mcp_server_web.state.codec import Codec, CorruptEntry, Unencodable, encode_key
from mcp_server_web.state.memory import MemoryStore
from mcp_server_web.state.port import Key, StoreUsage
from mcp_server_web.state.redis.health import BadValue, SharedHealth

logger = logging.getLogger(__name__)

ENTRY_OVERHEAD = 256
"""Redis's own bookkeeping per entry (the value's key, its order and meta fields): about this much."""
MAX_SHARED_ENTRY = 32 * 1024 * 1024
"""The largest value shared through Redis (bytes, encoded); a larger one is not kept, and one read
back larger than this (written by someone else) is dropped unread."""
REDIS_TTL_SLACK_MS = 60_000
"""Redis keeps a value this much longer than our TTL: the replicas' clocks may differ a little."""

# Scripts start with a shebang (Redis 7): one that may add data is refused whole when Redis is out
# of memory (without it, a script that already deleted something would be let write past the
# limit); one that only reads or deletes runs anyway, as deleting frees memory.
ADDS = "#!lua\n"
FREES = "#!lua flags=allow-oom\n"

_HELPERS = """
local order, meta, total, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix = ARGV[1]
-- What no replica writes is dropped, and counted here (each script returns the count last): a
-- value it stood for is a miss, and the replica says so.
local bad = 0
local function counted(raw)
  return raw and string.match(raw, '^%d+$') and #raw <= 15 and tonumber(raw)
end
local function info(member)
  local v = redis.call('HGET', meta, member)
  if not v then return nil, nil end
  local sep = string.find(v, '|', 1, true)
  local size = sep and counted(string.sub(v, 1, sep - 1))
  local at = sep and tonumber(string.sub(v, sep + 1))
  if size and at and at == at and at > -1e18 and at < 1e18 then return size, at end
  bad = bad + 1
  redis.call('HDEL', meta, member)
  return false, nil
end
local function drop(member)
  local size = info(member)
  if size then
    redis.call('DECRBY', total, size)
    redis.call('HDEL', meta, member)
  end
  redis.call('ZREM', order, member)
  redis.call('DEL', prefix .. member)
end
local function sweep(now, ttl)
  while true do
    local oldest = redis.call('ZRANGE', order, 0, 0)
    if #oldest == 0 then return end
    local _, at = info(oldest[1])
    if at and at > now - ttl then return end
    drop(oldest[1])
  end
end
local function held()
  return counted(redis.call('GET', total)) or 0
end
-- Run first: keys of another type are let go whole (their entries expire by Redis's TTL), a total
-- or a sequence that is not a count is counted again from what is held.
local function check()
  local kinds = {{order, 'zset'}, {meta, 'hash'}, {total, 'string'}, {seq, 'string'}}
  for _, pair in ipairs(kinds) do
    local kind = redis.call('TYPE', pair[1]).ok
    if kind ~= 'none' and kind ~= pair[2] then
      bad = bad + 1
      redis.call('DEL', order, meta, total, seq)
      return
    end
  end
  local raw = redis.call('GET', total)
  if raw and not counted(raw) then
    bad = bad + 1
    local sum = 0
    local all = redis.call('HGETALL', meta)
    for i = 2, #all, 2 do
      local sep = string.find(all[i], '|', 1, true)
      sum = sum + ((sep and counted(string.sub(all[i], 1, sep - 1))) or 0)
    end
    redis.call('SET', total, sum)
  end
  raw = redis.call('GET', seq)
  if raw and not counted(raw) then
    bad = bad + 1
    local last = redis.call('ZRANGE', order, -1, -1, 'WITHSCORES')
    redis.call('SET', seq, math.floor(tonumber(last[2] or '0') or 0))
  end
end
check()
"""

# ARGV: prefix, now, ttl, bound, hash, size, value, px. {1 if stored else 0, bad}
_PUT = (
    ADDS
    + _HELPERS
    + """
local now, ttl, bound = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local member, size = ARGV[5], tonumber(ARGV[6])
sweep(now, ttl)
drop(member)
if size > bound then return {0, bad} end
while held() + size > bound do
  local oldest = redis.call('ZRANGE', order, 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
end
redis.call('SET', prefix .. member, ARGV[7], 'PX', ARGV[8])
redis.call('ZADD', order, redis.call('INCR', seq), member)
redis.call('HSET', meta, member, ARGV[6] .. '|' .. ARGV[2])
redis.call('INCRBY', total, size)
return {1, bad}
"""
)

# ARGV: prefix, now, ttl, hash, max. {a value, nil, or its length when it is over max; bad}
_GET = (
    FREES
    + _HELPERS
    + """
local now, ttl, member, max = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local size, at = info(member)
if size == false then drop(member) return {false, bad} end
if not at then return {false, bad} end
if at <= now - ttl then drop(member) return {false, bad} end
local kind = redis.call('TYPE', prefix .. member).ok
if kind ~= 'string' then
  if kind ~= 'none' then bad = bad + 1 end
  drop(member)
  return {false, bad}
end
local length = redis.call('STRLEN', prefix .. member)
if length == 0 then drop(member) return {false, bad} end
if length > max then drop(member) return {length, bad} end
return {redis.call('GET', prefix .. member), bad}
"""
)

# ARGV: prefix, hash. {1, bad}
_POP = FREES + _HELPERS + "drop(ARGV[2]) return {1, bad}"

# ARGV: prefix, now, ttl. {entries, bytes, bad}
_USAGE = (
    FREES
    + _HELPERS
    + """
sweep(tonumber(ARGV[2]), tonumber(ARGV[3]))
return {redis.call('ZCARD', order), held(), bad}
"""
)


def _counts(reply: object, length: int, what: str) -> list[Any]:
    """A script's reply: an array of length whose last item is the count of bad values it dropped."""
    if not (isinstance(reply, list) and len(reply) == length and _is_count(reply[-1])):
        raise BadValue(f"{what} answered {_shape(reply)}, not what its script returns")
    return reply


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def _shape(reply: object) -> str:
    return type(reply).__name__ if not isinstance(reply, list) else f"an array of {len(reply)}"


class RedisStore:
    """One namespace of entries shared by every replica, falling back to this replica's memory."""

    def __init__(
        self,
        client: Redis,
        health: SharedHealth,
        codec: Codec,
        local: MemoryStore,
        *,
        prefix: str,
        ttl: float,
        max_bytes: int | None,
        max_entries: int | None,
        clock: Callable[[], float],
    ) -> None:
        if (max_bytes is None) == (max_entries is None):
            raise ValueError("a store is bounded by max_bytes or by max_entries: give exactly one")
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._bound = max_bytes if max_bytes is not None else max_entries or 0
        self._max_entry = min(MAX_SHARED_ENTRY, self._bound) if max_bytes is not None else MAX_SHARED_ENTRY
        self._health = health
        self._codec = codec
        self._local = local
        self._clock = clock
        self._prefix = prefix
        self._keys = [f"{prefix}order", f"{prefix}meta", f"{prefix}bytes", f"{prefix}seq"]
        self._put = client.register_script(_PUT)
        self._get = client.register_script(_GET)
        self._pop = client.register_script(_POP)
        self._usage = client.register_script(_USAGE)

    async def get(self, key: Key) -> Any | None:
        member = encode_key(key)

        async def shared() -> Any | None:
            found, bad = _counts(
                await self._get(
                    keys=self._keys,
                    args=[self._entry_prefix, self._clock(), self.ttl, member, self._max_entry],
                ),
                2,
                "a store's read",
            )
            self._dropped(bad)
            if found is None:
                return None
            if _is_count(found):
                self._health.distrust(
                    BadValue(f"an entry of {found} bytes, over the {self._max_entry} allowed")
                )
                return None
            if not isinstance(found, bytes):
                raise BadValue(f"a store's read answered {_shape(found)} for a value")
            try:
                return self._codec.decode(found, max_bytes=self._max_entry)
            except CorruptEntry as exc:
                await self._pop(keys=self._keys, args=[self._entry_prefix, member])
                raise BadValue(f"an entry that does not decode ({exc})") from None

        return await self._health.run(shared, lambda: self._local.get(key))

    async def put(self, key: Key, value: Any, *, size: int | None = None) -> bool:
        member = encode_key(key)

        async def shared() -> bool:
            try:
                data = self._codec.encode(value)
            except Unencodable as exc:
                # A type the shared-types registry lacks: a bug to fix, never a failed call. Not
                # kept, as a value too large is not (reads go to Redis: memory would never be asked).
                logger.error("shared state: cannot store a %s (%s); not kept", type(value).__name__, exc)
                return False
            # A size the caller measured (``measure``, off the event loop) is what counts, as in memory.
            counted = 1 if self.max_bytes is None else size if size is not None else self._size(member, data)
            if len(data) > self._max_entry:
                await self._pop(keys=self._keys, args=[self._entry_prefix, member])
                return False
            px = int(self.ttl * 1000) + REDIS_TTL_SLACK_MS
            args: list[str | bytes | int | float] = [
                self._entry_prefix,
                self._clock(),
                self.ttl,
                self._bound,
                member,
                counted,
                data,
                px,
            ]
            stored, bad = _counts(await self._put(keys=self._keys, args=args), 2, "a store's write")
            self._dropped(bad)
            return bool(stored == 1)

        return await self._health.run(shared, lambda: self._local.put(key, value))

    async def pop(self, key: Key) -> None:
        member = encode_key(key)

        async def shared() -> None:
            _, bad = _counts(
                await self._pop(keys=self._keys, args=[self._entry_prefix, member]), 2, "a store's pop"
            )
            self._dropped(bad)

        await self._health.run(shared, lambda: self._local.pop(key))

    def measure(self, key: Key, value: Any) -> int:
        return self._size(encode_key(key), self._codec.encode(value))

    def _size(self, member: str, data: bytes) -> int:
        return 1 if self.max_bytes is None else len(data) + len(member) + ENTRY_OVERHEAD

    async def usage(self) -> StoreUsage:
        async def shared() -> StoreUsage:
            entries, held, bad = _counts(
                await self._usage(keys=self._keys, args=[self._entry_prefix, self._clock(), self.ttl]),
                3,
                "a store's usage",
            )
            self._dropped(bad)
            if not (_is_count(entries) and _is_count(held)):
                raise BadValue("a store's usage is not two counts")
            return StoreUsage(
                entries=entries,
                bytes=held if self.max_bytes is not None else None,
                max_bytes=self.max_bytes,
            )

        return await self._health.run(shared, self._local.usage)

    def _dropped(self, bad: int) -> None:
        if bad:
            self._health.distrust(BadValue(f"{bad} entries or counts of a store no replica wrote, dropped"))

    @property
    def _entry_prefix(self) -> str:
        return f"{self._prefix}e:"
