"""The Redis backend: state every replica shares, with this replica's memory as the fallback.

Every key starts with the configured prefix and the namespace's name; what follows is a hash
(store keys, flight keys) or a provider's name and a day: no URL, query, key, token or request
header is ever written. Times are read on the wall clock (``time.time``), the one clock the
replicas share.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redis.asyncio import Redis

from mcp_server_web.state.codec import Codec
from mcp_server_web.state.memory import MemoryState
from mcp_server_web.state.port import KeyValueStore, SingleFlight
from mcp_server_web.state.redis.connect import connection_pool
from mcp_server_web.state.redis.flight import RedisFlight
from mcp_server_web.state.redis.health import OPERATION_TIMEOUT, SharedHealth, SharedStatus
from mcp_server_web.state.redis.records import RedisCooldowns, RedisCounters, RedisPacer
from mcp_server_web.state.redis.store import RedisStore

LOCAL_NAMESPACES = frozenset({"robots"})
"""Kept in each replica's memory even with Redis: parsed robots.txt rules are a third-party
parser's objects, which no codec of ours can carry safely, and one small download per origin and
replica costs less than re-parsing a shared copy on every read."""


class RedisState:
    """State shared through the Redis at url; see the package's modules for each kind."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        codec: Codec,
        clock: Callable[[], float] = time.time,
        timeout: float = OPERATION_TIMEOUT,
    ) -> None:
        self._client = Redis(connection_pool=connection_pool(url, timeout=timeout))
        self._prefix = prefix
        self._codec = codec
        self._clock = clock
        self._local = MemoryState(clock=clock)
        self.health = SharedHealth(self._client, f"{prefix}health", timeout=timeout)
        self._stores: dict[str, RedisStore] = {}
        self._flights: dict[str, RedisFlight] = {}
        self._cooldowns: dict[str, RedisCooldowns] = {}
        self._pacers: dict[str, RedisPacer] = {}
        self._counters: dict[str, RedisCounters] = {}

    @property
    def shared_status(self) -> SharedStatus:
        return self.health.status

    def _space(self, namespace: str) -> str:
        return f"{self._prefix}{namespace}:"

    def _values(self, namespace: str) -> str:
        # Values carry the codec's fingerprint: after an upgrade that changes a stored type, old
        # and new replicas keep apart instead of reading each other's entries as corrupt.
        return f"{self._space(namespace)}{self._codec.fingerprint}:"

    def store(
        self, namespace: str, *, ttl: float, max_bytes: int | None = None, max_entries: int | None = None
    ) -> KeyValueStore:
        local = self._local.store(namespace, ttl=ttl, max_bytes=max_bytes, max_entries=max_entries)
        if namespace in LOCAL_NAMESPACES:
            return local
        existing = self._stores.get(namespace)
        if existing is None:
            existing = RedisStore(
                self._client,
                self.health,
                self._codec,
                local,
                prefix=self._values(namespace),
                ttl=ttl,
                max_bytes=max_bytes,
                max_entries=max_entries,
                clock=self._clock,
            )
            self._stores[namespace] = existing
        return existing

    def flight(self, namespace: str, *, wait: float | None = None) -> SingleFlight:
        if namespace in LOCAL_NAMESPACES:
            return self._local.flight(namespace)
        if namespace not in self._flights:
            self._flights[namespace] = RedisFlight(
                self._client, self.health, self._codec, prefix=self._values(namespace), wait=wait
            )
        return self._flights[namespace]

    def cooldowns(self, namespace: str, *, longest: float | None = None) -> RedisCooldowns:
        if namespace not in self._cooldowns:
            self._cooldowns[namespace] = RedisCooldowns(
                self._client, self.health, self._clock, prefix=self._space(namespace), longest=longest
            )
        return self._cooldowns[namespace]

    def pacer(self, namespace: str) -> RedisPacer:
        if namespace not in self._pacers:
            self._pacers[namespace] = RedisPacer(
                self._client, self.health, self._clock, prefix=self._space(namespace)
            )
        return self._pacers[namespace]

    def counters(self, namespace: str) -> RedisCounters:
        if namespace not in self._counters:
            self._counters[namespace] = RedisCounters(
                self._client, self.health, prefix=self._space(namespace)
            )
        return self._counters[namespace]

    def now(self) -> float:
        return self._clock()

    async def aclose(self) -> None:
        await self.health.aclose()
        await self._client.aclose()
