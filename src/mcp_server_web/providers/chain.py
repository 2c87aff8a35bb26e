"""SearchChain: try providers in order, answer from the first that returns results.

Failing over is the point: a key out of quota, a provider rate-limiting or down, a bot wall, a
malformed answer or an empty result set all move on to the next provider. A provider that
rate-limited, ran out of quota or blocked us is skipped until its Retry-After (else a stepped
cooldown), so one bad provider does not cost every call its timeout. Results are never invented:
the answer is exactly what one provider returned, filtered and deduplicated.
"""

from __future__ import annotations

import logging
import math
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import anyio

from mcp_server_web.errors import AllProvidersFailed, InvalidArgument, NoProvider
from mcp_server_web.providers.base import (
    COOLDOWN_KINDS,
    ProviderError,
    SearchProvider,
    SearchQuery,
    SearchResult,
)
from mcp_server_web.providers.dates import published_within
from mcp_server_web.providers.fanout import ask_all, fuse
from mcp_server_web.providers.pacing import Limits
from mcp_server_web.providers.paging import page_of, paged
from mcp_server_web.providers.redact import Redactor
from mcp_server_web.providers.results import refine
from mcp_server_web.state import CooldownRecord, Key, MemoryState, StateBackend

logger = logging.getLogger(__name__)

Outcome = Literal["ok", "empty", "error", "skipped"]
SearchMode = Literal["fallback", "fanout"]

COOLDOWN_FIRST = 60.0
COOLDOWN_MAX = 3600.0
RETRY_AFTER_MAX = 86400.0
"""A provider's own Retry-After is honoured up to a day: Brave's monthly quota reset can be weeks
away, and one probe a day costs nothing while a stale or broken header cannot bench a provider."""
SEARCH_CACHE_ENTRIES = 512
REASON_LIMIT = 500
"""Characters of one attempt's error, as answers and log lines give it."""


@dataclass(frozen=True, slots=True)
class Attempt:
    provider: str
    outcome: Outcome
    error: str | None
    elapsed_ms: int
    notes: tuple[str, ...] = ()
    """What this provider could not do as asked (a country it has no parameter for, paging it
    emulated), one sentence each."""


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    query: SearchQuery
    provider: str | None
    """Who answered; None when every provider came back empty."""
    results: tuple[SearchResult, ...]
    attempts: tuple[Attempt, ...]
    cached: bool = False


class SearchFailed(AllProvidersFailed):
    """Every provider failed; ``attempts`` says how each one did (the message says it too)."""

    def __init__(self, message: str, attempts: tuple[Attempt, ...]) -> None:
        super().__init__(message)
        self.attempts = attempts


class Cooldowns:
    """Per-provider "do not call before" times: Retry-After when given, else 1 min doubling to 1 h.

    Concurrent searches share these, so an answer can belong to a request sent before the
    provider's latest penalty. Such late answers neither add a strike (a burst that meets one
    rate limit is one strike, not one per request) nor lift the cooldown (a request the provider
    accepted before limiting us says nothing about now). ``mark()`` taken when an attempt starts,
    passed to ``penalize`` and ``reset``, is how they tell.

    This is the policy; the records are kept in the state port's cooldown book, on its clock.
    """

    def __init__(
        self, state: StateBackend, *, first: float = COOLDOWN_FIRST, maximum: float = COOLDOWN_MAX
    ) -> None:
        # No cooldown is longer than the longest step or Retry-After honoured: a record read back
        # that ends later (from a shared store) was not written by this policy.
        self._book = state.cooldowns("search.cooldowns", longest=max(maximum, RETRY_AFTER_MAX))
        self._clock = state.now
        self.first = first
        self.maximum = maximum

    async def remaining(self, provider: str) -> float:
        record = await self._book.get(provider)
        return max(0.0, record.until - self._clock()) if record else 0.0

    async def reason(self, provider: str) -> str:
        record = await self._book.get(provider)
        return record.reason if record else ""

    async def mark(self) -> int:
        """A token for an attempt about to start."""
        return await self._book.mark()

    async def penalize(
        self, provider: str, error: ProviderError, *, since: int | None = None, reason: str | None = None
    ) -> float:
        """Start (or extend) a cooldown after error, for an attempt started at ``since`` (a
        ``mark()``; None: a fresh attempt); returns the cooldown's length in seconds from now.
        reason is what skipped attempts will say (default: the error's kind)."""
        now = self._clock()
        lengths: list[float] = []

        def change(current: CooldownRecord | None, penalty: int) -> CooldownRecord:
            # Penalized after the attempt began: the same episode seen again, not a new strike.
            same_episode = current is not None and since is not None and current.penalty > since
            strikes = (current.strikes if current else 0) + (0 if same_episode else 1)
            if error.retry_after is not None:
                length = min(RETRY_AFTER_MAX, max(0.0, error.retry_after))
            else:
                length = min(self.maximum, self.first * 2 ** (strikes - 1))
            if same_episode and current is not None:
                # The same episode seen again: it can only be longer than we thought.
                length = max(length, current.until - now)
            lengths.append(length)
            return CooldownRecord(
                until=now + length, strikes=strikes, reason=reason or error.kind, penalty=penalty
            )

        await self._book.penalize(provider, change)
        return lengths[-1]

    async def reset(self, provider: str, *, since: int | None = None) -> None:
        """Forget the provider's cooldown after it answered an attempt started at ``since``,
        unless it was penalized after that attempt began."""
        await self._book.clear(provider, unless_penalized_after=since)


def _cache_key(query: SearchQuery, pinned: str | None) -> Key:
    text = " ".join(query.query.lower().split())
    return (
        text,
        query.max_results,
        query.topic,
        query.time_range,
        tuple(sorted(query.include_domains)),
        tuple(sorted(query.exclude_domains)),
        query.country,
        query.language,
        query.page,
        query.safesearch,
        # An answer filtered to some days must not serve a search without them, nor the reverse.
        query.published_after.isoformat() if query.published_after else None,
        query.published_before.isoformat() if query.published_before else None,
        pinned,
    )


class SearchChain:
    """An ordered chain of configured providers with cooldowns, deadlines and a result cache."""

    def __init__(
        self,
        providers: Sequence[SearchProvider],
        *,
        unconfigured: Mapping[str, str] | None = None,
        no_provider: str = "no search provider is configured.",
        provider_timeout: float = 10.0,
        deadline: float = 25.0,
        cache_ttl: float = 600.0,
        state: StateBackend | None = None,
        mode: SearchMode = "fallback",
        fanout: int = 2,
        rps: Mapping[str, float] | None = None,
        daily_limits: Mapping[str, int] | None = None,
        auth_cooldown: float = 3600.0,
    ) -> None:
        """state keeps the answers and the cooldowns (this process's memory unless the composition
        root passes another backend); its clock is the one cooldowns and the cache's TTL run on."""
        state = MemoryState() if state is None else state
        self._providers = {provider.name: provider for provider in providers}
        # The adapters quote provider text through their redactors already; the chain applies the
        # union again to everything it passes on (errors, log lines, results), whichever adapter
        # built it and however.
        self._redactor = Redactor.union(provider.redactor for provider in providers)
        self._unconfigured = dict(unconfigured or {})
        self._no_provider = no_provider
        self._provider_timeout = provider_timeout
        self._deadline = deadline
        self._mode = mode
        self._fanout = fanout
        self.cooldowns = Cooldowns(state)
        self._cache = state.store("search.answers", ttl=cache_ttl, max_entries=SEARCH_CACHE_ENTRIES)
        # Another replica's round is waited on for a search's own deadline at most.
        self._flight = state.flight("search.answers", wait=deadline)
        self.limits = Limits(state, rps=rps or {}, daily_limits=daily_limits or {})
        self._auth_cooldown = auth_cooldown

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(self._providers)

    async def status(self) -> dict[str, dict[str, object]]:
        """Each provider's use today, limits and cooldown (a benched key's included), for /healthz."""
        return await _status(self.limits, self.cooldowns, self.order)

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()

    async def search(self, query: SearchQuery, *, pin: str | None = None) -> SearchAnswer:
        names = self._names_for(pin)
        key = _cache_key(query, pin)
        cached: SearchAnswer | None = await self._cache.get(key)
        if cached is not None:
            return replace(cached, cached=True)
        # Identical searches running at once share one round of provider calls; those that
        # joined it were answered from another's work, as a cache hit is.
        answer, joined = await self._flight.run(
            key, lambda: self._search(query, names, key, pinned=pin is not None)
        )
        return replace(answer, cached=True) if joined else answer

    async def _search(
        self, query: SearchQuery, names: tuple[str, ...], key: Key, *, pinned: bool
    ) -> SearchAnswer:
        attempts: list[Attempt] = []
        deadline = anyio.current_time() + self._deadline
        if self._mode == "fanout" and not pinned:
            fused = await self._fan_out(names, query, deadline, attempts)
            if fused:
                answered = ",".join(dict.fromkeys(s for r in fused for s in r.sources))
                answer = SearchAnswer(query, answered, tuple(fused), tuple(attempts))
                await self._cache.put(key, answer)
                return answer
            names = ()  # every provider asked; what follows reports how they did
        for name in names:
            results = await self._attempt(self._providers[name], query, deadline, attempts)
            if results:
                answer = SearchAnswer(query, name, tuple(results), tuple(attempts))
                await self._cache.put(key, answer)
                return answer
        if any(attempt.outcome == "empty" for attempt in attempts):
            # At least one provider answered, with nothing: that is an answer, not a failure.
            return SearchAnswer(query, None, (), tuple(attempts))
        reasons = "; ".join(f"{a.provider}: {a.error}" for a in attempts)
        raise SearchFailed(f"every search provider failed ({reasons}).", tuple(attempts))

    async def _fan_out(
        self, names: Sequence[str], query: SearchQuery, deadline: float, attempts: list[Attempt]
    ) -> list[SearchResult]:
        """The first ``fanout`` providers not cooling down, asked at once, their lists fused; the
        attempts of every provider passed over or asked, in chain order."""
        asked: list[str] = []
        for name in names:
            if len(asked) == self._fanout:
                break
            if await self.cooldowns.remaining(name) > 0:
                await self._attempt(self._providers[name], query, deadline, attempts)  # notes the skip
            else:
                asked.append(name)
        own: dict[str, list[Attempt]] = {name: [] for name in asked}

        async def ask(name: str) -> list[SearchResult]:
            return await self._attempt(self._providers[name], query, deadline, own[name])

        lists = await ask_all(asked, ask)
        for name in asked:
            attempts.extend(own[name])
        return fuse(list(zip(asked, lists, strict=True)), query.max_results)

    def _names_for(self, pin: str | None) -> tuple[str, ...]:
        if pin is None:
            if not self._providers:
                raise NoProvider(self._no_provider)
            return tuple(self._providers)
        if pin in self._providers:
            return (pin,)
        if pin in self._unconfigured:
            raise NoProvider(f"provider {pin!r} is not available: {self._unconfigured[pin]}")
        available = ", ".join(self._providers) or "none"
        raise InvalidArgument(f"provider must be one of the configured providers ({available}); got {pin!r}.")

    async def _attempt(
        self, provider: SearchProvider, query: SearchQuery, deadline: float, attempts: list[Attempt]
    ) -> list[SearchResult]:
        name = provider.name
        cooling = await self.cooldowns.remaining(name)
        if cooling > 0:
            reason = await self.cooldowns.reason(name)
            # Rounded up: "0 s" would read as if the cooldown were over.
            wait = math.ceil(cooling)
            attempts.append(Attempt(name, "skipped", f"cooling down for {wait} s after {reason}", 0))
            return []
        if anyio.current_time() >= deadline:
            attempts.append(Attempt(name, "skipped", "the overall search deadline was reached", 0))
            return []
        refused = await self.limits.admit(name, deadline, self._provider_timeout)
        if refused is not None:
            attempts.append(Attempt(name, "skipped", refused, 0))
            return []
        budget = min(self._provider_timeout, deadline - anyio.current_time())
        if budget <= 0:
            attempts.append(Attempt(name, "skipped", "the overall search deadline was reached", 0))
            return []
        started = time.perf_counter()
        mark = await self.cooldowns.mark()
        asked, notes = paged(provider, query)
        try:
            with anyio.fail_after(budget):
                raw = await provider.search(asked, timeout=budget)
        except TimeoutError:
            error: ProviderError | None = ProviderError("timeout", f"no answer within {budget:.1f} s")
        except ProviderError as exc:
            error = exc
        except Exception as exc:
            # An adapter bug must not take the chain down: log it, fail over like any failure.
            logger.error("search provider %s crashed:\n%s", name, self._crash_report(exc))
            error = ProviderError("bad_response", "the adapter failed unexpectedly (see the server log)")
        else:
            error = None
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        if error is not None:
            reason = self._redactor.quote(str(error), REASON_LIMIT)
            if error.kind == "auth":
                length = await self._bench(provider, error, mark)
                logger.info("%s: %s; benched for %.0f s", name, reason, length)
            elif error.kind in COOLDOWN_KINDS:
                length = await self.cooldowns.penalize(name, error, since=mark)
                logger.info("%s: %s; cooling down for %.0f s", name, reason, length)
            else:
                logger.info("%s: %s", name, reason)
            attempts.append(Attempt(name, "error", reason, elapsed_ms))
            return []
        await self.cooldowns.reset(name, since=mark)
        # Dates first: a page cut from the provider's list must be cut from what is kept.
        dated, dropped = published_within(raw, asked)
        kept = page_of(refine(dated, asked), query, asked)
        results = [self._without_secrets(result) for result in kept]
        said = tuple(self._redactor.quote(note, REASON_LIMIT) for note in (*notes, *dropped))
        attempts.append(Attempt(name, "ok" if results else "empty", None, elapsed_ms, said))
        return results

    async def _bench(self, provider: SearchProvider, error: ProviderError, mark: int) -> float:
        """Leave a provider whose key was rejected out for the auth cooldown: asking again on
        every search would cost each one a round trip, and a key is rarely fixed within the hour."""
        benched = ProviderError("auth", str(error), retry_after=self._auth_cooldown)
        who = provider.config.key_name if provider.config.api_key else f"{provider.name}'s access"
        return await self.cooldowns.penalize(
            provider.name, benched, since=mark, reason=f"auth: {who} was rejected"
        )

    def _without_secrets(self, result: SearchResult) -> SearchResult:
        """A result as the provider gave it, but for any configured secret it echoed."""
        hide = self._redactor.hide
        published = hide(result.published) if result.published is not None else None
        return replace(
            result,
            title=hide(result.title),
            url=hide(result.url),
            snippet=hide(result.snippet),
            published=published,
        )

    def _crash_report(self, exc: Exception) -> str:
        """Where an adapter crashed: the stack as it is (our code), the exception's text (which
        may quote a provider) redacted and bounded."""
        stack = "".join(traceback.format_tb(exc.__traceback__))
        return f"{stack}{type(exc).__name__}: {self._redactor.quote(str(exc), REASON_LIMIT)}"


async def _status(
    limits: Limits, cooldowns: Cooldowns, names: tuple[str, ...]
) -> dict[str, dict[str, object]]:
    usage = await limits.usage(names)
    status: dict[str, dict[str, object]] = {}
    for name, used in usage.items():
        entry: dict[str, object] = {"calls_today": used.calls_today, "daily_limit": used.daily_limit}
        entry["rps"] = used.rps
        if (cooling := await cooldowns.remaining(name)) > 0:
            entry["cooling_down"] = {"seconds": math.ceil(cooling), "reason": await cooldowns.reason(name)}
        status[name] = entry
    return status


async def search_status(
    state: StateBackend,
    names: tuple[str, ...],
    *,
    rps: Mapping[str, float] | None = None,
    daily_limits: Mapping[str, int] | None = None,
) -> dict[str, dict[str, object]]:
    """What a chain over state would report in ``SearchChain.status``, read without a chain: for
    a process of its own (doctor) looking at the state that servers share."""
    return await _status(
        Limits(state, rps=rps or {}, daily_limits=daily_limits or {}), Cooldowns(state), names
    )
