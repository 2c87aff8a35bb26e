"""Render slots shared fairly between the clients a server serves.

A render can hold its slot for the whole render limit (a page that never settles), so a plain
first-come queue lets one client that asks for many renders at once keep every other client
waiting until its own renders end. Here a client named by the caller (``on_behalf_of``) holds at
most ``share`` slots at once, one fewer than there are (so a slot stays for the others), and a
slot that frees goes to the waiting client that holds the fewest, the longest waiting first.

Renders asked for on behalf of nobody (a library caller, a server with one client such as stdio)
are one client that no share limits: there is no other client to keep a slot for.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio

_client: ContextVar[str | None] = ContextVar("render_client", default=None)


@contextmanager
def on_behalf_of(client: str) -> Iterator[None]:
    """Count the renders started inside this block as ``client``'s (one name per client the
    server can tell apart)."""
    token = _client.set(client)
    try:
        yield
    finally:
        _client.reset(token)


def current_client() -> str | None:
    """The client the current task renders for, or None (on behalf of nobody)."""
    return _client.get()


@dataclass(eq=False, slots=True)
class _Waiter:
    client: str | None
    order: int
    granted: anyio.Event = field(default_factory=anyio.Event)


class FairSlots:
    """``total`` slots; a named client holds at most ``share`` of them (see the module docstring)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.share = max(total - 1, 1)
        self._held: Counter[str | None] = Counter()
        self._in_use = 0
        self._waiting: list[_Waiter] = []
        self._order = itertools.count()

    def held(self, client: str | None) -> int:
        return self._held[client]

    async def acquire(self, client: str | None) -> None:
        """Wait for a slot for client (cancellable: a slot granted meanwhile is given back)."""
        waiter = _Waiter(client, next(self._order))
        self._waiting.append(waiter)
        self._grant()
        try:
            await waiter.granted.wait()
        except BaseException:
            if waiter.granted.is_set():
                self.release(client)
            else:
                self._waiting.remove(waiter)
            raise

    def release(self, client: str | None) -> None:
        self._in_use -= 1
        self._held[client] -= 1
        if not self._held[client]:
            del self._held[client]
        self._grant()

    def _may_take(self, client: str | None) -> bool:
        return client is None or self._held[client] < self.share

    def _grant(self) -> None:
        while self._in_use < self.total:
            ready = [waiter for waiter in self._waiting if self._may_take(waiter.client)]
            if not ready:
                return
            chosen = min(ready, key=lambda waiter: (self._held[waiter.client], waiter.order))
            self._waiting.remove(chosen)
            self._in_use += 1
            self._held[chosen.client] += 1
            chosen.granted.set()
