"""The port for state that replicas will share: what the fetch path and the search chain keep
between calls, declared as async protocols so a backend shared across processes (Redis) can sit
behind them as well as today's in-memory one.

Four kinds of state, all reached through one ``StateBackend``:

- ``store(namespace, ...)``: a key-value store whose entries expire after a TTL, bounded by the
  bytes they keep (documents, responses, robots.txt rules) or by their number (search answers);
- ``flight(namespace)``: single-flight, concurrent callers for one key share one piece of work;
- ``cooldowns(namespace)``: per-name cooldown records, changed atomically (provider cooldowns);
- ``pacer(namespace)``: per-name call slots, a given interval apart (provider pacing);
- ``counters(namespace)``: per-name counts in a period (provider calls per UTC day);
- ``now()``: the clock the times in those records are read on.

A namespace names one body of state: two objects built for the same namespace of one backend
see the same entries (two replicas over one Redis share them), different namespaces never do.

What a shared backend must be able to carry (not done here, nothing serialises yet): keys are a
str or a tuple of str, int, float, bool, None and such tuples; values are frozen dataclasses of
plain values (a fetched response, a converted document, a search answer), a snapshot id (str),
or parsed robots.txt rules. Callers never change a value they got or put: a backend may hand out
the same object (memory) or a copy (a shared one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

KeyPart = str | int | float | bool | None | tuple[Any, ...]
Key = str | tuple[KeyPart, ...]
"""A key: a str or a tuple of scalars (and tuples of them), which any backend can encode."""


@dataclass(frozen=True, slots=True)
class StoreUsage:
    """What a store holds now, after expired entries are dropped."""

    entries: int
    bytes: int | None
    """Bytes the entries keep, as the store counts them; None for a store bounded by entries."""
    max_bytes: int | None
    """The store's byte budget; None for a store bounded by entries."""


class KeyValueStore(Protocol):
    """One namespace of entries, each kept for the store's TTL and within its budget.

    An entry larger than the whole budget is not kept; to make room the oldest entries go first.
    """

    async def get(self, key: Key) -> Any | None:
        """The value stored under key, or None when there is none (never stored, expired, evicted)."""

    async def put(self, key: Key, value: Any, *, size: int | None = None) -> bool:
        """Store value under key (replacing what was there); False when it is too large to be kept,
        and then nothing is stored under key any more.

        size is ``measure(key, value)``, when the caller measured it already (off the event loop).
        """

    async def pop(self, key: Key) -> None:
        """Forget key (nothing happens when it is not stored)."""

    def measure(self, key: Key, value: Any) -> int:
        """What this entry counts against a byte budget (1 for a store bounded by entries).

        Pure and thread-safe; it can be slow for a value of many objects (parsed robots.txt rules),
        so a caller may run it in a worker thread and pass the result to ``put``.
        """

    async def usage(self) -> StoreUsage:
        """How much the store holds now."""


class SingleFlight(Protocol):
    """At most one piece of work per key at a time; concurrent callers share its outcome.

    If the caller doing the work is cancelled, the callers waiting on it are not: one of them
    starts the work again. A failure is shared with the callers waiting at that moment and not
    remembered: the next call does the work again.
    """

    async def run(self, key: Key, work: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """(result, joined): joined is True when this caller waited on another caller's work."""


@dataclass(frozen=True, slots=True)
class CooldownRecord:
    """One name's cooldown, as the policy that keeps them (providers/chain.py) decided it."""

    until: float
    """Not to be called before this time (``StateBackend.now``)."""
    strikes: int
    """Penalties in a row without a success in between."""
    reason: str
    penalty: int
    """The number of the penalty that last changed this record (see ``CooldownBook.mark``)."""


class CooldownBook(Protocol):
    """Cooldown records by name, and a count of the penalties recorded in the book so far."""

    async def get(self, name: str) -> CooldownRecord | None: ...

    async def mark(self) -> int:
        """How many penalties have been recorded: a token an attempt takes when it starts, to tell
        later whether its name was penalized meanwhile (``CooldownRecord.penalty`` > mark)."""

    async def penalize(
        self, name: str, change: Callable[[CooldownRecord | None, int], CooldownRecord]
    ) -> CooldownRecord:
        """Atomically count one more penalty (number n) and store ``change(current, n)`` for name.

        change is a pure function: a backend may call it again when another writer came first.
        """

    async def clear(self, name: str, *, unless_penalized_after: int | None = None) -> None:
        """Forget name's record, unless a penalty numbered above unless_penalized_after changed it."""


class Pacer(Protocol):
    """Turns to call a name at most once per interval: each claim takes the next free slot."""

    async def claim(self, name: str, interval: float, *, latest: float) -> float | None:
        """Atomically take name's next slot (a time on ``StateBackend.now``, never before now) and
        move the one after it ``interval`` later; None, taking nothing, when that slot is after
        ``latest``."""


class Counters(Protocol):
    """Counts by name within a period (a UTC day, say), each period counted from zero."""

    async def take(self, name: str, period: str, limit: int | None) -> int | None:
        """Atomically count one more for name in period and return the new count; None, counting
        nothing, when the count has reached limit already (None: no limit)."""

    async def count(self, name: str, period: str) -> int:
        """How many were counted for name in period."""


class StateBackend(Protocol):
    """Where the state lives: the one object a composition root chooses and passes on."""

    def store(
        self, namespace: str, *, ttl: float, max_bytes: int | None = None, max_entries: int | None = None
    ) -> KeyValueStore:
        """The store of namespace, bounded by max_bytes (measured) or by max_entries: exactly one."""

    def flight(self, namespace: str, *, wait: float | None = None) -> SingleFlight:
        """The single-flight of namespace. wait: seconds a call waits on work done by another
        replica at most, all its waits together (its own limit), before doing the work itself;
        None: as long as the work takes."""

    def cooldowns(self, namespace: str, *, longest: float | None = None) -> CooldownBook:
        """The cooldown book of namespace. longest: seconds the longest cooldown its policy gives;
        a record read back that ends further ahead was not written under it, and reads as none
        (None: any)."""

    def pacer(self, namespace: str) -> Pacer: ...

    def counters(self, namespace: str) -> Counters: ...

    def now(self) -> float:
        """Seconds on the clock that cooldown records are written and read on (shared by every
        replica of a shared backend; monotonic in memory)."""

    @property
    def shared_status(self) -> str | None:
        """ "ok" while state is shared with other replicas, "degraded" while this replica answers
        from its own memory because the shared backend failed; None for a backend that shares
        nothing (memory)."""

    async def aclose(self) -> None:
        """Let go of connections (the server calls it once, at shutdown)."""
