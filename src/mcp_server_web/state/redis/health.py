"""Whether Redis is answering, and the one rule every shared operation follows: trouble with
Redis never fails a call.

Each operation runs under a short deadline. When Redis errs or is slow, the operation is
answered from this replica's memory instead, the backend is ``degraded``, and from then on
operations go straight to memory (no time lost waiting on a dead server) while a task in the
background asks Redis again every few seconds, calls or none. When its write succeeds,
operations go to Redis again. One warning per interval says it is degraded; one line says it is back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import anyio
from redis.asyncio import Redis
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

T = TypeVar("T")

OPERATION_TIMEOUT = 0.5
"""Seconds one Redis operation may take before the call is answered from memory instead: Redis
answers on a local network in well under a millisecond, and a call must not wait on a sick one."""
PROBE_INTERVAL = 2.0
"""Seconds between background probes while degraded."""
WARNING_INTERVAL = 60.0
"""At most one warning per this many seconds while degraded: a dead Redis must not flood the log."""

SharedStatus = Literal["ok", "degraded"]


class SharedHealth:
    """The state of the link to Redis, shared by every store, flight and book of one backend."""

    def __init__(
        self,
        client: Redis,
        probe_key: str,
        *,
        timeout: float = OPERATION_TIMEOUT,
        probe_interval: float = PROBE_INTERVAL,
        warning_interval: float = WARNING_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._probe_key = probe_key
        self.timeout = timeout
        self._probe_interval = probe_interval
        self._warning_interval = warning_interval
        self._clock = clock
        self._degraded_since: float | None = None
        self._last_warning = -float("inf")
        self._probe: asyncio.Task[None] | None = None
        self.failures = 0
        """Operations answered from memory because Redis failed them, since the start."""

    @property
    def status(self) -> SharedStatus:
        return "ok" if self._degraded_since is None else "degraded"

    async def run(self, operation: Callable[[], Awaitable[T]], fallback: Callable[[], Awaitable[T]]) -> T:
        """operation's result while Redis answers in time; else fallback's (this replica's memory)."""
        if not self._usable():
            return await fallback()
        try:
            with anyio.fail_after(self.timeout):
                result = await operation()
        except (RedisError, OSError, TimeoutError) as exc:
            self.failed(exc)
            return await fallback()
        return result

    def failed(self, exc: BaseException) -> None:
        """Redis failed an operation: go to memory until a probe succeeds."""
        self.failures += 1
        now = self._clock()
        if self._degraded_since is None:
            self._degraded_since = now
            self._recover()
        if now - self._last_warning >= self._warning_interval:
            self._last_warning = now
            logger.warning(
                "shared state: Redis failed (%s: %s); answering from this replica's memory and "
                "trying Redis again every %.0f s",
                type(exc).__name__,
                str(exc)[:200],
                self._probe_interval,
            )

    def _usable(self) -> bool:
        return self._degraded_since is None

    def _recover(self) -> None:
        """Ask Redis again every probe interval, in the background, until it answers: a replica
        that gets no calls meanwhile is back to ``ok`` as soon as Redis is."""
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._until_it_answers())

    async def _until_it_answers(self) -> None:
        while self._degraded_since is not None:
            await asyncio.sleep(self._probe_interval)
            # A write, not a PING: a Redis out of memory still answers PING but refuses every write.
            try:
                with anyio.fail_after(self.timeout):
                    await self._client.set(self._probe_key, b"1", px=60_000)
            except (RedisError, OSError, TimeoutError) as exc:
                logger.debug("shared state: Redis still unavailable (%s)", type(exc).__name__)
                continue
            since = self._degraded_since
            self._degraded_since = None
            if since is not None:
                logger.warning(
                    "shared state: Redis answers again after %.1f s; sharing state again",
                    self._clock() - since,
                )

    async def aclose(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
