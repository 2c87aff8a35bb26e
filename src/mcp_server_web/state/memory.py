"""The in-memory backend: state kept in this process, bounded, with single-flight.

A byte-bounded store is bounded by the bytes its entries keep alive (not by entry count), so a
few huge pages cannot push memory past MCP_WEB_CACHE_MAX_MB. What counts is everything an entry
holds, measured object by object (the key, a response's headers, a document's strings, a parsed
robots.txt's rule objects), not an estimate from its largest part: an origin chooses those sizes,
and any part left uncounted is memory it can pile up past the bound.

Nothing here awaits: each operation runs to its end without letting another task in, as the
synchronous caches it replaces did, so callers see no new interleavings.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field, replace
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, TypeVar

import anyio
from cachetools import TTLCache

from mcp_server_web.state.port import CooldownRecord, Key, StoreUsage

T = TypeVar("T")

ENTRY_OVERHEAD = 512
"""The cache's own bookkeeping per entry (its dict slots, TTL link, size record): about this much."""

# Shared by every instance, not held by any one entry: never counted, never walked.
_SHARED = (type, ModuleType, FunctionType, BuiltinFunctionType, MethodType)
# CPython 3.11+ keeps a plain instance's attributes in a values array beside the object (a
# "managed dict"), which neither sys.getsizeof nor gc.get_referents shows: ~120 bytes for a
# protego rule, so this much is added per such instance.
_MANAGED_DICT = 1 << 4  # Py_TPFLAGS_MANAGED_DICT
_MANAGED_DICT_BYTES = 160


def deep_size(value: object) -> int:
    """Bytes of value and of every object it references, as sys.getsizeof counts them, each object once.

    The walk follows what the garbage collector sees (containers, slots, attributes), level by
    level in C (gc.get_referents): a parsed robots.txt has a few hundred thousand objects.
    Classes, functions and modules are shared and not counted. An object referenced twice (the
    URL in a key and in its document) counts once.
    """
    seen: set[int] = set()
    level: list[object] = [value]
    total = 0
    while level:
        fresh: list[object] = []
        for item in level:
            if id(item) in seen or isinstance(item, _SHARED):
                continue
            seen.add(id(item))
            fresh.append(item)
            total += sys.getsizeof(item)
            if type(item).__flags__ & _MANAGED_DICT:
                total += _MANAGED_DICT_BYTES
        level = gc.get_referents(*fresh)
    return total


def entry_size(key: Hashable, value: Any) -> int:
    """Bytes one cache entry keeps alive: its key, its value and the cache's bookkeeping."""
    return deep_size((key, value)) + ENTRY_OVERHEAD


@dataclass(frozen=True, slots=True)
class _Entry:
    value: Any
    size: int


def _size_of(entry: _Entry) -> int:
    return entry.size


class MemoryStore:
    """A TTL cache whose capacity is a number of bytes (measured) or of entries; entries larger
    than the whole cache are not kept."""

    def __init__(
        self,
        *,
        ttl: float,
        max_bytes: int | None = None,
        max_entries: int | None = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        if (max_bytes is None) == (max_entries is None):
            raise ValueError("a store is bounded by max_bytes or by max_entries: give exactly one")
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        bound = max_bytes if max_bytes is not None else max_entries
        assert bound is not None
        self._bound = bound
        self._entries: TTLCache[Hashable, _Entry] = TTLCache(
            maxsize=bound, ttl=ttl, timer=timer, getsizeof=_size_of
        )

    async def get(self, key: Key) -> Any | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.value

    async def put(self, key: Key, value: Any, *, size: int | None = None) -> bool:
        size = self.measure(key, value) if size is None else size
        if size > self._bound:
            self._entries.pop(key, None)
            return False
        self._entries[key] = _Entry(value, size)
        return True

    async def pop(self, key: Key) -> None:
        self._entries.pop(key, None)

    def measure(self, key: Key, value: Any) -> int:
        return 1 if self.max_bytes is None else entry_size(key, value)

    async def usage(self) -> StoreUsage:
        self._entries.expire()
        held = int(self._entries.currsize) if self.max_bytes is not None else None
        return StoreUsage(entries=len(self._entries), bytes=held, max_bytes=self.max_bytes)


@dataclass
class _Flight:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: Exception | None = None
    finished: bool = False


class MemoryFlight:
    """Single-flight among the tasks of this process."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight] = {}

    async def run(self, key: Key, work: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        while (flight := self._flights.get(key)) is not None:
            await flight.done.wait()
            if flight.finished:
                if flight.error is not None:
                    raise flight.error
                result: T = flight.result
                return result, True
            # The worker was cancelled (not failed): this caller takes the work over.
        flight = _Flight()
        self._flights[key] = flight
        try:
            flight.result = await work()
            flight.finished = True
            return flight.result, False
        except Exception as exc:
            flight.error = exc
            flight.finished = True
            raise
        finally:
            del self._flights[key]
            flight.done.set()

    def __len__(self) -> int:
        """Pieces of work running now."""
        return len(self._flights)


class MemoryCooldowns:
    """Cooldown records kept in a dict."""

    def __init__(self) -> None:
        self._records: dict[str, CooldownRecord] = {}
        self._penalties = 0

    async def get(self, name: str) -> CooldownRecord | None:
        return self._records.get(name)

    async def mark(self) -> int:
        return self._penalties

    async def penalize(
        self, name: str, change: Callable[[CooldownRecord | None, int], CooldownRecord]
    ) -> CooldownRecord:
        self._penalties += 1
        record = replace(change(self._records.get(name), self._penalties), penalty=self._penalties)
        self._records[name] = record
        return record

    async def clear(self, name: str, *, unless_penalized_after: int | None = None) -> None:
        record = self._records.get(name)
        if record is None:
            return
        if unless_penalized_after is not None and record.penalty > unless_penalized_after:
            return
        del self._records[name]


class MemoryPacer:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._next: dict[str, float] = {}

    async def claim(self, name: str, interval: float, *, latest: float) -> float | None:
        slot = max(self._clock(), self._next.get(name, -math.inf))
        if slot > latest:
            return None
        self._next[name] = slot + interval
        return slot


class MemoryCounters:
    def __init__(self) -> None:
        # Only the latest period of each name is kept: earlier ones are never asked for again.
        self._counts: dict[str, tuple[str, int]] = {}

    async def take(self, name: str, period: str, limit: int | None) -> int | None:
        count = await self.count(name, period)
        if limit is not None and count >= limit:
            return None
        self._counts[name] = (period, count + 1)
        return count + 1

    async def count(self, name: str, period: str) -> int:
        kept, count = self._counts.get(name, (period, 0))
        return count if kept == period else 0


class MemoryState:
    """State in this process: the default backend, and the one a single replica needs.

    clock is what TTLs and cooldowns are measured on (a test passes one it moves by hand).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._stores: dict[str, MemoryStore] = {}
        self._flights: dict[str, MemoryFlight] = {}
        self._cooldowns: dict[str, MemoryCooldowns] = {}
        self._pacers: dict[str, MemoryPacer] = {}
        self._counters: dict[str, MemoryCounters] = {}

    def store(
        self, namespace: str, *, ttl: float, max_bytes: int | None = None, max_entries: int | None = None
    ) -> MemoryStore:
        existing = self._stores.get(namespace)
        if existing is None:
            existing = MemoryStore(ttl=ttl, max_bytes=max_bytes, max_entries=max_entries, timer=self._clock)
            self._stores[namespace] = existing
        elif (existing.ttl, existing.max_bytes, existing.max_entries) != (ttl, max_bytes, max_entries):
            raise ValueError(f"the store {namespace!r} exists already with other bounds")
        return existing

    def flight(self, namespace: str, *, wait: float | None = None) -> MemoryFlight:
        # wait bounds waits on other replicas' work: here every piece of work is this process's,
        # bounded by its own limits.
        return self._flights.setdefault(namespace, MemoryFlight())

    def cooldowns(self, namespace: str, *, longest: float | None = None) -> MemoryCooldowns:
        # longest checks records written elsewhere: every record here is this process's own.
        return self._cooldowns.setdefault(namespace, MemoryCooldowns())

    def pacer(self, namespace: str) -> MemoryPacer:
        return self._pacers.setdefault(namespace, MemoryPacer(self._clock))

    def counters(self, namespace: str) -> MemoryCounters:
        return self._counters.setdefault(namespace, MemoryCounters())

    def now(self) -> float:
        return self._clock()

    @property
    def shared_status(self) -> str | None:
        return None

    async def aclose(self) -> None:
        return None
