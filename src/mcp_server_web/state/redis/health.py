"""Whether Redis is answering, and the one rule every shared operation follows: trouble with
Redis never fails a call.

Each operation runs under a short deadline. When Redis errs or is slow, the operation is
answered from this replica's memory instead, the backend is ``degraded``, and from then on
operations go straight to memory (no time lost waiting on a dead server) while a task in the
background asks Redis again every few seconds, calls or none. When its write succeeds,
operations go to Redis again. One warning per interval says it is degraded; one line says it is back.

What Redis holds or answers is not trusted either: a value no replica writes (a word where a
count is kept, an array where a string is), found by the checks of each kind (``BadValue``) or
by an exception no check foresaw, makes that one operation a miss answered from memory. It is
logged once per interval for each kind of value, and the backend says ``degraded`` while such
values keep coming (``DISTRUST_WINDOW``); operations keep going to Redis, which answers the rest.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import anyio
from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

logger = logging.getLogger(__name__)

T = TypeVar("T")

OPERATION_TIMEOUT = 0.5
"""Seconds one Redis operation may take before the call is answered from memory instead: Redis
answers on a local network in well under a millisecond, and a call must not wait on a sick one."""
PROBE_INTERVAL = 2.0
"""Seconds between background probes while degraded."""
WARNING_INTERVAL = 60.0
"""At most one warning per this many seconds while degraded: a dead Redis must not flood the log."""
DISTRUST_WINDOW = 60.0
"""Seconds the backend says degraded after the last value it could not trust."""
MAX_KINDS_LOGGED = 64
"""Kinds of bad value remembered for the once-per-interval rule: what a hostile Redis varies
cannot grow this table."""


class BadValue(ValueError):
    """A value Redis held or answered that no replica writes: the operation is a miss."""


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
        self._distrusted_at = -float("inf")
        self._logged: dict[str, float] = {}
        self.failures = 0
        """Operations answered from memory because Redis failed them, since the start."""
        self.bad_values = 0
        """Values read back that no replica writes (each a miss), since the start."""

    @property
    def status(self) -> SharedStatus:
        distrusted = self._clock() - self._distrusted_at < DISTRUST_WINDOW
        return "ok" if self._degraded_since is None and not distrusted else "degraded"

    async def run(self, operation: Callable[[], Awaitable[T]], fallback: Callable[[], Awaitable[T]]) -> T:
        """operation's result while Redis answers in time; else fallback's (this replica's memory)."""
        if not self._usable():
            return await fallback()
        try:
            with anyio.fail_after(self.timeout):
                result = await operation()
        except (RedisError, OSError, TimeoutError) as exc:
            if isinstance(exc, ResponseError) and "WRONGTYPE" in str(exc)[:200]:
                # Redis works; a key holds what no replica writes there.
                self.distrust(BadValue("a key holds another type than a replica writes there"))
            else:
                self.failed(exc)
            return await fallback()
        except Exception as exc:  # a reply no check foresaw (BadValue's are foreseen) is one too
            self.distrust(exc)
            return await fallback()
        return result

    def distrust(self, exc: Exception) -> None:
        """Redis held or answered a value no replica writes (``BadValue``, or a reply whose shape
        made an operation fail): count it, say degraded for a while, log it once per interval."""
        self.bad_values += 1
        now = self._clock()
        self._distrusted_at = now
        what = f"{type(exc).__name__}: {str(exc)[:200]}"
        if now - self._logged.get(what, -float("inf")) < self._warning_interval:
            return
        if len(self._logged) >= MAX_KINDS_LOGGED:
            self._logged.clear()
        self._logged[what] = now
        logger.warning(
            "shared state: a value in Redis is not one a replica writes (%s); read as a miss",
            what,
            # A value a check refused needs no traceback; a reply no check foresaw shows where.
            exc_info=None if isinstance(exc, BadValue) else exc,
        )

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
                    answered = await self._client.set(self._probe_key, b"1", px=60_000)
            except (RedisError, OSError, TimeoutError) as exc:
                logger.debug("shared state: Redis still unavailable (%s)", type(exc).__name__)
                continue
            if answered is not True:  # not Redis's OK: whatever answers, it is not a Redis that works
                logger.debug("shared state: Redis answered the probe's write with %.40r", answered)
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
