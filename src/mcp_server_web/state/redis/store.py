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
written by anyone else that is too large or does not decode is dropped and reads as a miss.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from mcp_server_web.state.codec import Codec, CorruptEntry, Unencodable, encode_key
from mcp_server_web.state.memory import MemoryStore
from mcp_server_web.state.port import Key, StoreUsage
from mcp_server_web.state.redis.health import SharedHealth

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
local function info(member)
  local v = redis.call('HGET', meta, member)
  if not v then return nil, nil end
  local sep = string.find(v, '|', 1, true)
  return tonumber(string.sub(v, 1, sep - 1)), tonumber(string.sub(v, sep + 1))
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
"""

# ARGV: prefix, now, ttl, bound, hash, size, value, px
_PUT = (
    ADDS
    + _HELPERS
    + """
local now, ttl, bound = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local member, size = ARGV[5], tonumber(ARGV[6])
sweep(now, ttl)
drop(member)
if size > bound then return 0 end
local held = tonumber(redis.call('GET', total) or '0')
while held + size > bound do
  local oldest = redis.call('ZRANGE', order, 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
  held = tonumber(redis.call('GET', total) or '0')
end
redis.call('SET', prefix .. member, ARGV[7], 'PX', ARGV[8])
redis.call('ZADD', order, redis.call('INCR', seq), member)
redis.call('HSET', meta, member, ARGV[6] .. '|' .. ARGV[2])
redis.call('INCRBY', total, size)
return 1
"""
)

# ARGV: prefix, now, ttl, hash, max. A value, nil, or its length when it is over max.
_GET = (
    FREES
    + _HELPERS
    + """
local now, ttl, member, max = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local _, at = info(member)
if not at then return false end
if at <= now - ttl then drop(member) return false end
local length = redis.call('STRLEN', prefix .. member)
if length == 0 then drop(member) return false end
if length > max then drop(member) return length end
return redis.call('GET', prefix .. member)
"""
)

# ARGV: prefix, hash
_POP = FREES + _HELPERS + "drop(ARGV[2]) return 1"

# ARGV: prefix, now, ttl
_USAGE = (
    FREES
    + _HELPERS
    + """
sweep(tonumber(ARGV[2]), tonumber(ARGV[3]))
return {redis.call('ZCARD', order), tonumber(redis.call('GET', total) or '0')}
"""
)


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
            found = await self._get(
                keys=self._keys, args=[self._entry_prefix, self._clock(), self.ttl, member, self._max_entry]
            )
            if found is None:
                return None
            if isinstance(found, int):
                logger.warning(
                    "shared state: dropped an entry of %d bytes, over the %d allowed", found, self._max_entry
                )
                return None
            try:
                return self._codec.decode(found, max_bytes=self._max_entry)
            except CorruptEntry as exc:
                logger.warning("shared state: dropped an entry that does not decode (%s)", exc)
                await self._pop(keys=self._keys, args=[self._entry_prefix, member])
                return None

        return await self._health.run(shared, lambda: self._local.get(key))

    async def put(self, key: Key, value: Any, *, size: int | None = None) -> bool:
        member = encode_key(key)

        async def shared() -> bool:
            data = self._codec.encode(value)
            # A size the caller measured (``measure``, off the event loop) is what counts, as in memory.
            counted = 1 if self.max_bytes is None else size if size is not None else self._size(member, data)
            if len(data) > self._max_entry:
                await self._pop(keys=self._keys, args=[self._entry_prefix, member])
                return False
            px = int(self.ttl * 1000) + REDIS_TTL_SLACK_MS
            stored = await self._put(
                keys=self._keys,
                args=[self._entry_prefix, self._clock(), self.ttl, self._bound, member, counted, data, px],
            )
            return bool(stored)

        try:
            return await self._health.run(shared, lambda: self._local.put(key, value))
        except Unencodable as exc:
            # A type the shared-types registry lacks: a bug to fix, never a failed call. Not kept,
            # as a value too large is not (reads go to Redis, so memory would never be asked).
            logger.error("shared state: cannot store a %s (%s); not kept", type(value).__name__, exc)
            return False

    async def pop(self, key: Key) -> None:
        member = encode_key(key)

        async def shared() -> None:
            await self._pop(keys=self._keys, args=[self._entry_prefix, member])

        await self._health.run(shared, lambda: self._local.pop(key))

    def measure(self, key: Key, value: Any) -> int:
        return self._size(encode_key(key), self._codec.encode(value))

    def _size(self, member: str, data: bytes) -> int:
        return 1 if self.max_bytes is None else len(data) + len(member) + ENTRY_OVERHEAD

    async def usage(self) -> StoreUsage:
        async def shared() -> StoreUsage:
            entries, held = await self._usage(
                keys=self._keys, args=[self._entry_prefix, self._clock(), self.ttl]
            )
            return StoreUsage(
                entries=int(entries),
                bytes=int(held) if self.max_bytes is not None else None,
                max_bytes=self.max_bytes,
            )

        return await self._health.run(shared, self._local.usage)

    @property
    def _entry_prefix(self) -> str:
        return f"{self._prefix}e:"
