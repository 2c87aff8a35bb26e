"""Bounded TTL caches of fetched responses, converted documents and robots.txt rules, with single-flight.

A cache is bounded by the bytes its entries keep alive (not by entry count), so a few huge pages
cannot push memory past MCP_WEB_CACHE_MAX_MB. What counts is everything an entry holds, measured
object by object (the key, a response's headers, a document's strings, a parsed robots.txt's rule
objects), not an estimate from its largest part: an origin chooses those sizes, and any part left
uncounted is memory it can pile up past the bound. Concurrent requests for the same key share
one piece of work (one download, one extraction) instead of racing.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType
from typing import Any, Generic, TypeVar

import anyio
from cachetools import TTLCache

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


class ByteBoundedTTLCache:
    """A TTL cache whose capacity is a number of bytes; entries larger than the whole cache are not kept."""

    def __init__(self, max_bytes: int, ttl: float, timer: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self._entries: TTLCache[Hashable, _Entry] = TTLCache(
            maxsize=max_bytes, ttl=ttl, timer=timer, getsizeof=_size_of
        )

    def get(self, key: Hashable) -> Any | None:
        entry = self._entries.get(key)
        return None if entry is None else entry.value

    def put(self, key: Hashable, value: Any, size: int | None = None) -> bool:
        """Store value; False when it is too large to be cached at all.

        size is entry_size(key, value), when the caller measured it already (off the event loop,
        for a value with many objects).
        """
        size = entry_size(key, value) if size is None else size
        if size > self.max_bytes:
            self._entries.pop(key, None)
            return False
        self._entries[key] = _Entry(value, size)
        return True

    def pop(self, key: Hashable) -> None:
        self._entries.pop(key, None)

    @property
    def current_bytes(self) -> int:
        self._entries.expire()
        return int(self._entries.currsize)

    def __len__(self) -> int:
        self._entries.expire()
        return len(self._entries)


@dataclass
class _Flight(Generic[T]):
    done: anyio.Event = field(default_factory=anyio.Event)
    result: T | None = None
    error: Exception | None = None
    finished: bool = False


class SingleFlight(Generic[T]):
    """Runs at most one piece of work per key at a time; concurrent callers share its outcome.

    If the caller doing the work is cancelled, the waiters are not: one of them starts the work
    again, so one client hanging up never fails another client's call.
    """

    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight[T]] = {}

    async def run(self, key: Hashable, work: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """Return (result, joined): joined is True when this caller waited on another's work."""
        while (flight := self._flights.get(key)) is not None:
            await flight.done.wait()
            if flight.finished:
                if flight.error is not None:
                    raise flight.error
                return flight.result, True  # type: ignore[return-value]
        flight = _Flight[T]()
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
        return len(self._flights)
