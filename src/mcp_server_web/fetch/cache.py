"""Bounded TTL cache of fetched responses and converted documents, with single-flight.

The cache is bounded by an estimate of the bytes it holds (not by entry count), so a few huge
pages cannot push memory past MCP_WEB_CACHE_MAX_MB. Concurrent requests for the same key share
one piece of work (one download, one extraction) instead of racing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
from cachetools import TTLCache

from mcp_server_web.fetch.types import Document, FetchResponse

T = TypeVar("T")

_ENTRY_OVERHEAD = 512


def entry_size(value: Any) -> int:
    """Bytes an entry keeps alive, estimated from its large parts."""
    if isinstance(value, Document):
        return sys.getsizeof(value.text) + _ENTRY_OVERHEAD
    if isinstance(value, FetchResponse):
        return len(value.body) + _ENTRY_OVERHEAD
    return sys.getsizeof(value) + _ENTRY_OVERHEAD


class ByteBoundedTTLCache:
    """A TTL cache whose capacity is a number of bytes; entries larger than the whole cache are not kept."""

    def __init__(self, max_bytes: int, ttl: float, timer: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self._entries: TTLCache[Hashable, Any] = TTLCache(
            maxsize=max_bytes, ttl=ttl, timer=timer, getsizeof=entry_size
        )

    def get(self, key: Hashable) -> Any | None:
        return self._entries.get(key)

    def put(self, key: Hashable, value: Any) -> bool:
        """Store value; False when it is too large to be cached at all."""
        if entry_size(value) > self.max_bytes:
            self._entries.pop(key, None)
            return False
        self._entries[key] = value
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
