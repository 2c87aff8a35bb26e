"""What a provider's plan allows: a pace (requests per second) and a budget (calls per UTC day).

A call to a paced provider waits for its turn instead of drawing a 429 (Brave's free plan allows
one request a second); a turn that cannot come before the caller's deadline is not waited for,
and the caller moves on with that reason. A provider past its daily budget is skipped with the
reason ``budget`` until the next UTC day. The plan is the provider's, not one feature's: every
request to it, a search (chain.py) or a page read through it (extract.py), takes a turn and
counts. The turns and the counts live behind the state port, so replicas sharing a backend, and
the search chain and the read-through in one server, share them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio

from mcp_server_web.state import StateBackend

MIN_CALL_WINDOW = 1.0
"""Seconds a turn must leave before the deadline for the call itself: a turn at the deadline
would be a call cut off as soon as it starts."""


PACE_SLACK = 1.05
"""Turns are 5 % further apart than the rate says: two requests sent exactly 1 s apart can
reach the provider less than 1 s apart (connection set-up, scheduling), and draw a 429."""


def utc_day() -> str:
    return datetime.now(UTC).date().isoformat()


@dataclass(frozen=True, slots=True)
class Usage:
    """One provider's use today, as this server's state backend counts it."""

    calls_today: int
    daily_limit: int | None
    rps: float | None


class Limits:
    """The pace and daily budget of each provider, kept on the state port."""

    def __init__(
        self,
        state: StateBackend,
        *,
        rps: Mapping[str, float],
        daily_limits: Mapping[str, int],
        day: Callable[[], str] = utc_day,
    ) -> None:
        self._state = state
        self._pacer = state.pacer("search.pacing")
        self._counters = state.counters("search.calls")
        self._rps = dict(rps)
        self._limits = dict(daily_limits)
        self._day = day

    async def admit(self, name: str, deadline: float, provider_timeout: float) -> str | None:
        """Wait for name's turn and count the call; or the reason it may not be made now.

        deadline is on anyio's clock (the caller's); the turns are on the state backend's.
        """
        limit = self._limits.get(name)
        if limit is not None and await self._counters.count(name, self._day()) >= limit:
            return _over_budget(limit)
        rps = self._rps.get(name)
        if rps:
            left = deadline - anyio.current_time() - min(MIN_CALL_WINDOW, provider_timeout)
            now = self._state.now()
            slot = await self._pacer.claim(name, PACE_SLACK / rps, latest=now + left)
            if slot is None:
                return (
                    f"paced at {rps:g} request(s) per second and every turn before the deadline is "
                    "taken by other calls"
                )
            if slot > now:
                await anyio.sleep(slot - now)
        # Counted when made, so concurrent calls cannot all slip under the limit.
        if await self._counters.take(name, self._day(), limit) is None:
            return _over_budget(limit)
        return None

    async def usage(self, names: tuple[str, ...]) -> dict[str, Usage]:
        day = self._day()
        return {
            name: Usage(await self._counters.count(name, day), self._limits.get(name), self._rps.get(name))
            for name in names
        }


def _over_budget(limit: int | None) -> str:
    return f"budget: the {limit} calls a day allowed are used up (the count restarts at 00:00 UTC)"
