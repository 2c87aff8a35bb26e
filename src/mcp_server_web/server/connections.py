"""The HTTP front door below the ASGI app: connection caps, the request read timeout, accept errors.

uvicorn (h11) puts no time limit on a request head: a socket that sends half a head and stops is
held forever, and enough of them take every descriptor of the process. accept() then fails with
EMFILE and asyncio logs each failure with a traceback, once per pending connection and loop turn:
gigabytes of log, and a server that answers nobody, not even /healthz. So, for each connection:

- Caps on open connections, for the whole server and per client address, applied the moment a
  connection is accepted. When a cap is full, the newcomer takes the place of the connection that
  has waited longest without a request being served (half a head sent, or idle between requests):
  a flood of idle sockets then cannot lock real clients out, even from the flood's own address
  (a reverse proxy). Only when every connection counted by the full cap is serving a request is
  the newcomer refused, by closing it at once.
- A read timeout: a connection that is not serving a request must deliver a whole request, head
  and body, within `request_read_timeout` seconds of the start of its wait, or it is closed.
  Arriving bytes do not restart the clock, so trickling a head byte by byte does not help.
- The server-wide cap is derived from the open-file limit with headroom, so accept() itself does
  not run out; an explicit larger setting is honoured with a warning, and accept errors are then
  logged once per interval with a count.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcp_server_web.config import Settings

try:
    import resource
except ImportError:  # Windows: no RLIMIT_NOFILE to derive the cap from
    resource = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

LOG_INTERVAL_S = 10.0
"""Seconds between two log lines about refused, evicted or timed-out connections or failed accepts."""
MAX_CONNECTIONS_DEFAULT_CAP = 4096
"""The derived server-wide cap never exceeds this, however high the open-file limit: past it,
run replicas."""
FD_HEADROOM_MIN = 128
"""Descriptors kept free of client connections at least (and a quarter of the limit when that is
more): outbound fetches and provider calls, the cache, logs, a browser's pipes."""
MIN_ACCEPT_BATCH, MAX_ACCEPT_BATCH = 16, 2048
LISTEN_BACKLOG = 2048
"""The kernel's queue of connections not yet accepted (capped by net.core.somaxconn). Kept long
whatever the accept batch: a short queue drops new clients' SYNs under a flood (a 1 s retransmit
for them), where a long one only makes them wait their turn."""
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


class ThrottledLog:
    """Counts events by kind and logs at most one line per interval, with the counts since the last.

    The first event is logged at once; the ones after it within the interval are summed up when
    the interval ends (a timer on the running event loop), so a burst is reported whole.
    """

    def __init__(
        self,
        message: str,
        level: int = logging.WARNING,
        interval: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._message = message
        self._level = level
        self._interval = interval
        self._clock = clock
        self._next = -float("inf")
        self._counts: Counter[str] = Counter()
        self._flush_pending = False

    def note(self, kind: str) -> None:
        self._counts[kind] += 1
        now = self._clock()
        if now >= self._next:
            self._emit(now)
        elif not self._flush_pending:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop: the counts wait for the next event after the interval
                return
            loop.call_later(self._next - now, self._flush)
            self._flush_pending = True

    def _flush(self) -> None:
        self._flush_pending = False
        if self._counts:
            self._emit(self._clock())

    def _emit(self, now: float) -> None:
        self._next = now + self._interval
        counts, self._counts = self._counts, Counter()
        logger.log(
            self._level,
            "%s: %s (counted since the last such line; one line per %.0f s at most)",
            self._message,
            ", ".join(f"{count} {kind}" for kind, count in counts.items()),
            self._interval,
        )


def open_file_limit() -> int | None:
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


@dataclass(frozen=True)
class FrontDoorLimits:
    total: int
    """Connections open at once, server-wide."""
    per_client: int
    """Connections open at once from one client address."""
    accept_batch: int
    """Connections taken from the listen queue per event-loop turn (uvicorn's backlog).

    asyncio accepts up to `backlog` connections in one go, each holding a descriptor until its
    protocol runs a turn later: under a flood that burst, not the counted connections, is what
    would exhaust the descriptors. So it is kept to a share of the headroom, and FrontDoorServer
    widens the kernel's queue again, which asyncio sizes with the same number.
    """


def front_door_limits(settings: Settings, fd_limit: int | None) -> FrontDoorLimits:
    """The caps for these settings under an open-file limit (None: unlimited or unknown)."""
    if fd_limit is None:
        total = settings.max_connections or MAX_CONNECTIONS_DEFAULT_CAP
        accept_batch = MAX_ACCEPT_BATCH
    else:
        ceiling = max(8, fd_limit - max(FD_HEADROOM_MIN, fd_limit // 4))
        total = settings.max_connections or min(ceiling, MAX_CONNECTIONS_DEFAULT_CAP)
        if total > ceiling:
            logger.warning(
                "MCP_WEB_MAX_CONNECTIONS=%d leaves too few of the %d open files this process may have "
                "for anything else: past about %d connections, accept() and outbound fetches can fail. "
                "Raise the limit (ulimit -n) or lower the setting.",
                total,
                fd_limit,
                ceiling,
            )
        accept_batch = min(MAX_ACCEPT_BATCH, max(MIN_ACCEPT_BATCH, (fd_limit - total) // 4))
    return FrontDoorLimits(
        total=total,
        per_client=min(settings.max_connections_per_client, total),
        accept_batch=accept_batch,
    )


class ConnectionGate:
    """Counts open connections, server-wide and per client address, and makes room under the caps.

    A connection is either serving (its whole request read, its response not finished) or
    waiting (for the rest of a request, or idle between requests). Only waiting connections are
    ever evicted, the longest-waiting first.
    """

    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self._address: dict[GuardedH11Protocol, str] = {}
        self._per_address: Counter[str] = Counter()
        # Insertion-ordered: the first key is the connection that has waited longest.
        self._waiting: dict[GuardedH11Protocol, None] = {}
        self._waiting_by_address: dict[str, dict[GuardedH11Protocol, None]] = {}
        self._log = ThrottledLog("HTTP connections closed before a request was served")

    @property
    def open(self) -> int:
        return len(self._address)

    def admit(self, connection: GuardedH11Protocol, address: str) -> bool:
        """Count a new connection in; False when it must be closed at once (everything is serving)."""
        if self._per_address[address] >= self.per_client:
            setting = f"MCP_WEB_MAX_CONNECTIONS_PER_CLIENT={self.per_client}"
            if not self._evict(self._waiting_by_address.get(address, {}), setting):
                self._log.note(f"refused: {setting} all serving")
                return False
        if self.open >= self.total:
            setting = f"MCP_WEB_MAX_CONNECTIONS={self.total}"
            if not self._evict(self._waiting, setting):
                self._log.note(f"refused: {setting} all serving")
                return False
        self._address[connection] = address
        self._per_address[address] += 1
        self.waiting(connection)
        return True

    def serving(self, connection: GuardedH11Protocol) -> None:
        address = self._address.get(connection)
        if address is None:
            return
        self._waiting.pop(connection, None)
        by_address = self._waiting_by_address.get(address)
        if by_address is not None:
            by_address.pop(connection, None)
            if not by_address:
                del self._waiting_by_address[address]

    def waiting(self, connection: GuardedH11Protocol) -> None:
        address = self._address.get(connection)
        if address is None or connection in self._waiting:
            return  # not counted, or already waiting: it keeps its place in the queue
        self._waiting[connection] = None
        self._waiting_by_address.setdefault(address, {})[connection] = None

    def release(self, connection: GuardedH11Protocol) -> None:
        self.serving(connection)
        address = self._address.pop(connection, None)
        if address is not None:
            self._per_address[address] -= 1
            if not self._per_address[address]:
                del self._per_address[address]

    def note_timeout(self) -> None:
        self._log.note("sent no whole request within MCP_WEB_REQUEST_READ_TIMEOUT")

    def _evict(self, candidates: dict[GuardedH11Protocol, None], setting: str) -> bool:
        """Close the longest-waiting of `candidates` to make room; False when there is none."""
        if not candidates:
            return False
        victim = next(iter(candidates))
        self.release(victim)
        victim.transport.abort()
        self._log.note(f"waiting, closed to make room under {setting}")
        return True


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, counted by a ConnectionGate and held to a request read timeout.

    Use `guarded_protocol` to get a subclass bound to one gate and timeout (uvicorn builds the
    protocol itself, with its own arguments).
    """

    gate: ClassVar[ConnectionGate]
    read_timeout: ClassVar[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_deadline: asyncio.TimerHandle | None = None
        self._counted = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        address = self.client[0] if self.client else ""
        if not self.gate.admit(self, address):
            transport.abort()
            return
        self._counted = True
        self._sync()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._cancel_deadline()
        self.gate.release(self)

    def handle_events(self) -> None:
        super().handle_events()
        self._sync()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._sync()

    def _serving(self) -> bool:
        cycle = self.cycle
        return cycle is not None and not cycle.response_complete and not cycle.more_body

    def _sync(self) -> None:
        """Serving: no deadline, not evictable. Waiting: the deadline of this wait, evictable."""
        if not self._counted or self.transport.is_closing():
            return
        if self._serving():
            self._cancel_deadline()
            self.gate.serving(self)
            return
        if self._read_deadline is None:
            self._read_deadline = self.loop.call_later(self.read_timeout, self._read_timed_out)
        self.gate.waiting(self)

    def _cancel_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_timed_out(self) -> None:
        self._read_deadline = None
        if self._serving() or self.transport.is_closing():
            return
        self.gate.note_timeout()
        self.transport.abort()


def guarded_protocol(gate: ConnectionGate, read_timeout: float) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn should build for each connection (its `http` setting)."""

    class BoundGuardedH11Protocol(GuardedH11Protocol):
        pass

    BoundGuardedH11Protocol.gate = gate
    BoundGuardedH11Protocol.read_timeout = read_timeout
    return BoundGuardedH11Protocol


class FrontDoorServer(uvicorn.Server):
    """uvicorn's server with a listen queue of LISTEN_BACKLOG, whatever its accept batch."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for server in self.servers:
            for listener in server.sockets:
                # listen() again on the same socket only resizes its queue; asyncio hands out a
                # wrapper without listen(), hence the duplicate descriptor.
                try:
                    with socket.socket(fileno=os.dup(listener.fileno())) as duplicate:
                        duplicate.listen(LISTEN_BACKLOG)
                except OSError as exc:  # the queue stays as asyncio made it; nothing else changes
                    logger.debug("could not widen the listen queue: %s", exc)


@contextmanager
def throttled_accept_errors(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Log accept() failures for lack of descriptors or memory once per interval, without traceback.

    asyncio reports each one through the loop's exception handler, and retries the whole backlog
    in the same turn, so a full descriptor table is otherwise thousands of tracebacks a second.
    """
    previous = loop.get_exception_handler()
    log = ThrottledLog("cannot accept HTTP connections", level=logging.ERROR)

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES and "socket" in context:
            log.note(f"accept() failures ({exc.strerror})")
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
    try:
        yield
    finally:
        loop.set_exception_handler(previous)
