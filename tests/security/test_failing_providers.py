"""Failing providers: many concurrent searches over fakes that fail at random.

Every provider's fake runs a seeded chaos schedule (hangs past the provider timeout, 429 with and
without Retry-After, 500/502/503, truncated and malformed bodies, DuckDuckGo's challenge page)
while 200 searches run, 50 at a time, through the SearchChain and through the MCP tool. For
every call: it answers from a provider whose fake served that very query a 200 with exactly that
fake's canned results, or it fails with all_providers_failed; it returns within the overall
deadline plus a small margin (more on a busy machine: as many times as a burst of ordinary
searches took just before); no exception escapes; each attempt's error is what the provider's
fake actually did. Cooldowns are checked on their own with a hand-moved clock: they engage, keep
requests away from the fake, step up without Retry-After, and recover.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from mcp_server_web.providers.base import COOLDOWN_KINDS, SearchQuery
from mcp_server_web.providers.chain import COOLDOWN_FIRST, Attempt, SearchChain, SearchFailed
from mcp_server_web.providers.registry import provider_classes, provider_config
from mcp_server_web.server.app import build_server
from mcp_server_web.server.compose import providers_config
from mcp_server_web.state import MemoryState
from tests.providers.conftest import Clock
from tests.support.fakes.base import FakeProvider, Mode, Plan, settings_for
from tests.support.timing import PATIENCE, allowance, timed

logger = logging.getLogger(__name__)

ORDER = ("tavily", "exa", "brave", "searxng", "duckduckgo")
PROVIDER_TIMEOUT = 0.5
DEADLINE = 2.0
MARGIN = 0.35
"""What a call may take beyond the deadline: the last attempt's cancellation, the adapter's
parsing and, through MCP, the in-memory round trip, all with 50 calls sharing one event loop. On a
busy machine, LATE_CONTROLS times the control, if that is more: the slowest of CONCURRENCY
ordinary searches made at once just before, the same work slowed the same way."""
LATE_CONTROLS = 2
HANG_SECONDS = 1.5
"""How long a hanging fake holds a request: well past the provider timeout."""
CALLS = 200
CONCURRENCY = 50
MAX_RESULTS = 4
CANNED = 6

# Each fake fails in its own proportions, the way real services differ: Exa is often slow,
# Brave's gateway errors, SearXNG's proxy mangles answers, DuckDuckGo challenges bots.
RATES: dict[str, dict[Mode, float]] = {
    "tavily": {
        "ok": 0.45,
        "hang": 0.10,
        "rate_limit_retry_after": 0.10,
        "rate_limit": 0.04,
        "server": 0.11,
        "truncated": 0.10,
        "malformed": 0.10,
    },
    "exa": {
        "ok": 0.35,
        "hang": 0.30,
        "rate_limit_retry_after": 0.05,
        "server": 0.15,
        "truncated": 0.10,
        "malformed": 0.05,
    },
    "brave": {
        "ok": 0.35,
        "hang": 0.25,
        "rate_limit_retry_after": 0.10,
        "rate_limit": 0.05,
        "server": 0.20,
        "malformed": 0.05,
    },
    "searxng": {
        "ok": 0.40,
        "hang": 0.15,
        "rate_limit": 0.04,
        "server": 0.10,
        "truncated": 0.11,
        "malformed": 0.20,
    },
    "duckduckgo": {
        "ok": 0.45,
        "challenge": 0.15,
        "hang": 0.10,
        "rate_limit_retry_after": 0.05,
        "server": 0.10,
        "truncated": 0.10,
        "malformed": 0.05,
    },
}

EXPECTED_KIND: dict[str, str] = {
    "hang": "timeout",
    "rate_limit_retry_after": "rate_limit",
    "rate_limit": "rate_limit",
    "server": "upstream",
    "truncated": "bad_response",
    "malformed": "bad_response",
    "challenge": "blocked",
}
"""The error kind an adapter must report for what its fake did."""
COOLING_MODES = frozenset({"rate_limit_retry_after", "rate_limit", "challenge"})
DEADLINE_SKIP = "the overall search deadline was reached"


def canned(provider: str, query: str) -> list[dict[str, Any]]:
    """What a fake knows for a query: results no other fake and no other query has."""
    slug = "-".join(query.split())
    return [
        {
            "title": f"{provider} {query} result {i}",
            "url": f"https://{provider}.example.com/{slug}/{i}",
            "snippet": f"Page {i} about {query}, as {provider} has it.",
            "score": round(1 - i / 10, 2),
        }
        for i in range(CANNED)
    ]


@dataclass
class Call:
    """One search as the caller saw it, whichever way it was made."""

    query: str
    started: float
    elapsed: float = 0.0
    provider: str | None = None
    results: list[tuple[str, str]] = field(default_factory=list)
    """(title, url) of each result."""
    attempts: list[tuple[str, str, str | None]] = field(default_factory=list)
    """(provider, outcome, error) of each attempt."""
    failure: str | None = None
    """The error code of a failed call."""
    escaped: BaseException | None = None


def from_attempts(attempts: Sequence[Attempt]) -> list[tuple[str, str, str | None]]:
    return [(a.provider, a.outcome, a.error) for a in attempts]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def chaotic(
    fakes: Mapping[str, FakeProvider],
    seed: int,
    rates: Mapping[str, Mapping[Mode, float]] = RATES,
    retry_after: tuple[int, int] = (1, 5),
) -> None:
    ordinary(fakes)
    for name, fake in fakes.items():
        fake.chaos(seed, rates[name], retry_after=retry_after, hang_seconds=HANG_SECONDS)


def make_chain(
    fakes: Mapping[str, FakeProvider],
    http: httpx.AsyncClient,
    order: Sequence[str],
    clock: Clock,
    *,
    provider_timeout: float = PROVIDER_TIMEOUT,
    deadline: float = DEADLINE,
) -> SearchChain:
    config = providers_config(settings_for(dict(fakes)))
    classes = provider_classes()
    providers = [classes[name](provider_config(classes[name], config), http) for name in order]
    return SearchChain(
        providers,
        provider_timeout=provider_timeout,
        deadline=deadline,
        cache_ttl=600,
        state=MemoryState(clock=clock),
    )


def relaxed_chain(
    fakes: Mapping[str, FakeProvider], http: httpx.AsyncClient, order: Sequence[str], clock: Clock
) -> SearchChain:
    """A chain for the cooldown tests, which are not about time: bursts of answers that a busy
    machine delivers in more than half a second must not turn into timeouts there."""
    return make_chain(fakes, http, order, clock, provider_timeout=10, deadline=20)


async def drive(count: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> None:
    """Run ``one(0..count-1)``, at most ``concurrency`` at a time."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def bounded(index: int) -> None:
        async with limiter:
            await one(index)

    async with anyio.create_task_group() as group:
        for index in range(count):
            group.start_soon(bounded, index)


def ordinary(fakes: Mapping[str, FakeProvider]) -> None:
    """Every fake answers every query with its canned results."""
    for name, fake in fakes.items():
        fake.answer_each(lambda query, name=name: canned(name, query))  # type: ignore[misc]


async def burst_control(search: Callable[[str], Awaitable[object]]) -> float:
    """The control: the slowest of CONCURRENCY ordinary searches made at once (the first provider
    answers each), just before the test's own, on a machine as busy as it is now."""
    times: list[float] = []

    async def one(index: int) -> None:
        times.append((await timed(lambda: search(f"control {index}")))[1])

    await drive(CONCURRENCY, CONCURRENCY, one)
    return max(times)


async def settle(fakes: Mapping[str, FakeProvider]) -> None:
    """Wait until every fake has logged what it did with every request it received (a hanging
    request is logged when the fake gives up on it)."""
    with anyio.fail_after(HANG_SECONDS + PATIENCE):
        # Polled: the fakes log from their own threads, which cannot set an anyio.Event.
        while any(len(fake.served) < len(fake.requests) for fake in fakes.values()):  # noqa: ASYNC110
            await anyio.sleep(0.05)


def check(call: Call, fakes: Mapping[str, FakeProvider], order: Sequence[str], late: float) -> list[str]:
    """What is wrong with one call, given what each fake did with its query; it may end
    ``late`` seconds past the deadline."""
    problems: list[str] = []

    def wrong(text: str) -> None:
        problems.append(f"{call.query!r}: {text}")

    if call.escaped is not None:
        wrong(f"raised {type(call.escaped).__name__}: {call.escaped}")
        return problems
    if call.elapsed > DEADLINE + late:
        wrong(f"took {call.elapsed:.3f} s, past the {DEADLINE} s deadline (allowed {late:.2f} s more)")
    served = {name: fakes[name].served_for(call.query) for name in order}
    named = [attempt[0] for attempt in call.attempts]
    if call.failure is None:
        if call.provider is None or not call.attempts or call.attempts[-1][:2] != (call.provider, "ok"):
            wrong(f"answered by {call.provider} after attempts {call.attempts}")
            return problems
        if named != list(order[: order.index(call.provider) + 1]):
            wrong(f"attempts {named} are not the chain's order up to {call.provider}")
        # The answer is exactly what the answering fake served for this query, nothing invented.
        if [(entry.mode, entry.status) for entry in served[call.provider]] != [("ok", 200)]:
            wrong(f"{call.provider} answered, but its fake served {served[call.provider]}")
        expected = [(r["title"], r["url"]) for r in canned(call.provider, call.query)[:MAX_RESULTS]]
        if call.results != expected:
            wrong(f"results {call.results} are not {call.provider}'s canned {expected}")
        for later in order[order.index(call.provider) + 1 :]:
            if served[later]:
                wrong(f"{later} was asked after {call.provider} had answered")
        failing = call.attempts[:-1]
    else:
        if call.failure != "all_providers_failed":
            wrong(f"failed with {call.failure}")
        if named != list(order):
            wrong(f"a failed call's attempts {named} are not every provider in order")
        failing = call.attempts
    for name, outcome, error in failing:
        problems.extend(
            f"{call.query!r}: {p}" for p in explained(name, outcome, error, served[name], fakes, call)
        )
    return problems


def explained(
    name: str,
    outcome: str,
    error: str | None,
    served: list[Any],
    fakes: Mapping[str, FakeProvider],
    call: Call,
) -> list[str]:
    """Whether a failed or skipped attempt says what the provider's fake did."""
    if error is None:
        return [f"{name} {outcome} without an error"]
    if (outcome == "skipped") != error.startswith(("cooling down", DEADLINE_SKIP)):
        return [f"{name} has outcome {outcome} with error {error!r}"]
    if error.startswith("cooling down"):
        reason = error.rsplit(" after ", 1)[-1]
        cooled = [
            entry
            for entry in fakes[name].served
            if entry.mode in COOLING_MODES and entry.at < call.started + call.elapsed
        ]
        problems = []
        if reason not in COOLDOWN_KINDS or not cooled:
            problems.append(f"{name} skipped ({error}) though its fake never asked us to back off")
        if served:
            problems.append(f"{name} was skipped but its fake got the query: {served}")
        return problems
    if error == DEADLINE_SKIP:
        problems = [] if not served else [f"{name} was skipped but its fake got the query: {served}"]
        if call.elapsed < DEADLINE - 0.05:
            problems.append(f"{name} skipped for the deadline after only {call.elapsed:.3f} s")
        return problems
    if outcome != "error":
        return [f"{name} has outcome {outcome} with error {error!r}"]
    kind = error.split(":", 1)[0]
    budget = re.search(r"within ([0-9.]+) s", error)
    if kind == "timeout" and budget and float(budget.group(1)) < PROVIDER_TIMEOUT - 0.05:
        # The deadline cut this attempt's budget short: whatever the fake did came too late.
        return []
    if not served:
        # A request the fake had not even read when the budget ran out (a loaded machine starves
        # the fakes' threads) timed out all the same; anything else needs a request to explain.
        return [] if kind == "timeout" else [f"{name} reported {error!r} but its fake got no request"]
    if len(served) != 1:
        return [f"{name} got the query {len(served)} times: {served}"]
    expected = EXPECTED_KIND.get(served[0].mode)
    if kind == "timeout" and expected != kind:
        # An answer that came after the budget ran out (50 searches share one event loop and
        # the fakes share the GIL): a timeout it was. ``figures`` counts these.
        return []
    if kind != expected:
        return [f"{name} reported {error!r} but its fake did {served[0].mode} (expected {expected})"]
    return []


def figures(
    calls: Sequence[Call], fakes: Mapping[str, FakeProvider], label: str, control: float
) -> dict[str, Any]:
    latencies = sorted(call.elapsed for call in calls)
    p99 = latencies[min(len(latencies) - 1, math.ceil(0.99 * len(latencies)) - 1)]
    skips = Counter(
        (name, "cooldown" if (error or "").startswith("cooling") else "deadline")
        for call in calls
        for name, outcome, error in call.attempts
        if outcome == "skipped"
    )
    summary = {
        "calls": len(calls),
        "answered": sum(call.failure is None and call.escaped is None for call in calls),
        "all_providers_failed": sum(call.failure == "all_providers_failed" for call in calls),
        "by_provider": dict(Counter(call.provider for call in calls if call.provider)),
        "max_s": round(latencies[-1], 3),
        "p99_s": round(p99, 3),
        "deadline_s": DEADLINE,
        "ordinary_burst_s": round(control, 3),
        "cooldown_skips": sum(n for (_, why), n in skips.items() if why == "cooldown"),
        "deadline_skips": sum(n for (_, why), n in skips.items() if why == "deadline"),
        "errors": dict(
            Counter(
                (error or "").split(":", 1)[0]
                for call in calls
                for _, o, error in call.attempts
                if o == "error" and error
            )
        ),
        "late_answers": sum(
            1
            for call in calls
            for name, _, error in call.attempts
            if (error or "").startswith("timeout")
            and any(entry.mode != "hang" for entry in fakes[name].served_for(call.query))
        ),
        "timeouts_unseen_by_fake": sum(
            1
            for call in calls
            for name, _, error in call.attempts
            if (error or "").startswith("timeout") and not fakes[name].served_for(call.query)
        ),
    }
    logger.info("%s: %s", label, summary)
    return summary


def assert_sound(
    calls: Sequence[Call], fakes: Mapping[str, FakeProvider], order: Sequence[str], late: float
) -> None:
    problems = [problem for call in calls for problem in check(call, fakes, order, late)]
    assert not problems, f"{len(problems)} problems, first ones:\n" + "\n".join(problems[:15])


def recoveries(calls: Sequence[Call]) -> set[str]:
    """Providers that were skipped for a cooldown and later asked again."""
    recovered: set[str] = set()
    by_start = sorted(calls, key=lambda call: call.started)
    for index, call in enumerate(by_start):
        for name, _, error in call.attempts:
            if not (error or "").startswith("cooling down"):
                continue
            ended = call.started + call.elapsed
            if any(
                later.started > ended and any(n == name and o != "skipped" for n, o, _ in later.attempts)
                for later in by_start[index + 1 :]
            ):
                recovered.add(name)
    return recovered


async def test_chain_under_chaos(fakes: dict[str, FakeProvider], http: httpx.AsyncClient) -> None:
    clock = Clock()
    chain = make_chain(fakes, http, ORDER, clock)
    ordinary(fakes)
    control = await burst_control(lambda query: chain.search(SearchQuery(query, max_results=MAX_RESULTS)))
    chaotic(fakes, seed=20261107)
    calls: list[Call] = []

    async def one(index: int) -> None:
        # Each search starts a virtual second after the one before: Retry-After (1-5 s) passes
        # within a few searches, the 60 s stepped cooldown within a third of the run.
        clock.advance(1)
        call = Call(f"chaos chain {index}", time.monotonic())
        calls.append(call)
        try:
            answer = await chain.search(SearchQuery(call.query, max_results=MAX_RESULTS))
        except SearchFailed as failed:
            call.failure = failed.code
            call.attempts = from_attempts(failed.attempts)
        except Exception as exc:
            call.escaped = exc
        else:
            call.provider = answer.provider
            call.results = [(r.title, r.url) for r in answer.results]
            call.attempts = from_attempts(answer.attempts)
        call.elapsed = time.monotonic() - call.started

    try:
        await drive(CALLS, CONCURRENCY, one)
        await settle(fakes)
    finally:
        await chain.aclose()

    summary = figures(calls, fakes, "chain under chaos", control)
    assert summary["calls"] == CALLS
    assert_sound(calls, fakes, ORDER, allowance(MARGIN, control, LATE_CONTROLS))
    assert summary["answered"] + summary["all_providers_failed"] == CALLS
    # The mix is what makes the run mean something: answers from several providers, failures too.
    assert len(summary["by_provider"]) >= 3 and summary["all_providers_failed"] > 0
    assert summary["cooldown_skips"] > 0, "no cooldown engaged"
    assert recoveries(calls), "no provider came back after a cooldown"


async def test_every_provider_hanging_fails_within_the_deadline(
    fakes: dict[str, FakeProvider], http: httpx.AsyncClient
) -> None:
    # A second per provider: two timeouts use up the deadline, and a chain that ignored it would
    # take five (5 s), far past what a busy machine adds to the 2 s.
    chain = make_chain(fakes, http, ORDER, Clock(), provider_timeout=1.0)
    ordinary(fakes)
    control = await burst_control(lambda query: chain.search(SearchQuery(query)))
    for fake in fakes.values():
        fake.chaos(1, {"hang": 1.0}, hang_seconds=HANG_SECONDS)
    elapsed: list[float] = []
    messages: list[str] = []

    async def one(index: int) -> None:
        started = time.monotonic()
        with pytest.raises(SearchFailed) as caught:
            await chain.search(SearchQuery(f"hanging {index}"))
        elapsed.append(time.monotonic() - started)
        attempts = caught.value.attempts
        messages.append(caught.value.message)
        assert [a.provider for a in attempts] == list(ORDER)
        # Two 1 s timeouts use up the 2 s: the others are not even asked (or, the second ending
        # a hair early, the third is given what is left of the deadline).
        assert all(a.error.startswith("timeout") for a in attempts[:2]), attempts
        assert all(a.error == DEADLINE_SKIP or a.error.startswith("timeout") for a in attempts[2:]), attempts
        assert attempts[4].error == DEADLINE_SKIP, attempts

    try:
        await drive(CONCURRENCY, CONCURRENCY, one)
    finally:
        await chain.aclose()
    assert len(elapsed) == CONCURRENCY
    late = allowance(MARGIN, control, LATE_CONTROLS)
    logger.info(
        "all hanging: %d calls, %.3f-%.3f s (ordinary: %.3f s, allowed %.3f s past the deadline)",
        len(elapsed),
        min(elapsed),
        max(elapsed),
        control,
        late,
    )
    assert min(elapsed) >= DEADLINE - 0.05, sorted(elapsed)
    assert max(elapsed) <= DEADLINE + late, (sorted(elapsed), control)
    assert all(f"{name}: " in message for message in messages for name in ORDER)


def parse_failure(text: str, order: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """The per-provider reasons of an all_providers_failed message, in chain order."""
    attempts: list[tuple[str, str, str | None]] = []
    for index, name in enumerate(order):
        marker = f"{'(' if index == 0 else '; '}{name}: "
        start = text.find(marker)
        if start < 0:
            return attempts
        start += len(marker)
        end = text.find(f"; {order[index + 1]}: ", start) if index + 1 < len(order) else text.rfind(").")
        reason = text[start:end]
        skipped = reason.startswith(("cooling down", DEADLINE_SKIP))
        attempts.append((name, "skipped" if skipped else "error", reason))
    return attempts


async def test_web_search_tool_under_chaos(fakes: dict[str, FakeProvider]) -> None:
    # Real time here, so only cooldowns short enough to pass within the run: Retry-After of a
    # second, no 429 without one (60 s stepped), few DuckDuckGo challenges (60 s as well).
    gentle = {
        name: {
            mode: 0.02 if mode == "challenge" else rate
            for mode, rate in rates.items()
            if mode != "rate_limit"
        }
        for name, rates in RATES.items()
    }
    settings = settings_for(
        fakes,
        search_providers=ORDER,
        search_timeout=PROVIDER_TIMEOUT,
        search_deadline=DEADLINE,
        max_concurrency=CONCURRENCY,
        # Brave's default pace (1/s) is the real service's; this fake takes any rate, and the
        # test is about failures (pacing: tests/server/test_web_search_limits.py).
        brave_rps=1000.0,
    )
    calls: list[Call] = []
    # The server imports the provider SDKs on its first search (~0.3 s, before the deadline's
    # clock starts); done here, so latencies measure searches, not one import.
    provider_classes()

    async def one(client: Client, index: int) -> None:
        call = Call(f"chaos tool {index}", time.monotonic())
        calls.append(call)
        try:
            result = await client.call_tool("web_search", {"query": call.query, "max_results": MAX_RESULTS})
        except Exception as exc:
            call.escaped = exc
            return
        finally:
            call.elapsed = time.monotonic() - call.started
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            call.failure = text.split(":", 1)[0]
            call.attempts = parse_failure(text, ORDER)
            return
        data = result.structured_content or {}
        call.provider = data.get("provider")
        call.results = [(r["title"], r["url"]) for r in data.get("results", [])]
        call.attempts = [(a["provider"], a["outcome"], a["error"]) for a in data.get("attempts", [])]

    with anyio.fail_after(PATIENCE * 2):
        async with Client(build_server(settings)) as client:
            ordinary(fakes)

            async def search(query: str) -> None:
                result = await client.call_tool("web_search", {"query": query, "max_results": MAX_RESULTS})
                assert not result.is_error, result

            control = await burst_control(search)
            chaotic(fakes, seed=7, rates=gentle, retry_after=(1, 1))
            await drive(CALLS, CONCURRENCY, lambda index: one(client, index))
            await settle(fakes)

    summary = figures(calls, fakes, "web_search under chaos", control)
    assert summary["calls"] == CALLS
    assert_sound(calls, fakes, ORDER, allowance(MARGIN, control, LATE_CONTROLS))
    assert summary["answered"] > 0 and summary["answered"] + summary["all_providers_failed"] == CALLS


# Cooldowns, step by step, each step a burst of concurrent searches.


async def burst(chain: SearchChain, label: str, count: int = 30) -> list[Any]:
    answers: list[Any] = []

    async def one(index: int) -> None:
        answers.append(await chain.search(SearchQuery(f"{label} {index}", max_results=MAX_RESULTS)))

    await drive(count, count, one)
    return answers


def scripted(fakes: Mapping[str, FakeProvider], name: str, plan_for: Callable[[str], Plan]) -> None:
    fakes[name].answer_each(lambda query: canned(name, query))
    fakes[name].schedule(lambda query, _: plan_for(query))


async def test_retry_after_keeps_requests_away_then_recovers(
    fakes: dict[str, FakeProvider], http: httpx.AsyncClient
) -> None:
    clock = Clock()
    tavily, brave = fakes["tavily"], fakes["brave"]
    brave.answer_each(lambda query: canned("brave", query))
    scripted(fakes, "tavily", lambda _: Plan("rate_limit_retry_after", retry_after=30))
    chain = relaxed_chain(fakes, http, ("tavily", "brave"), clock)
    try:
        first = await chain.search(SearchQuery("limited", max_results=MAX_RESULTS))
        assert first.provider == "brave" and first.attempts[0].error.startswith("rate_limit")
        assert await chain.cooldowns.remaining("tavily") == pytest.approx(30)

        for step in (0, 20, 9.5):  # still inside the 30 s
            clock.advance(step)
            answers = await burst(chain, f"cooling {step}")
            assert len(tavily.requests) == 1, "a request reached a provider that asked us to wait"
            for answer in answers:
                assert answer.provider == "brave"
                assert answer.attempts[0].outcome == "skipped"
                assert "after rate_limit" in answer.attempts[0].error

        clock.advance(1)  # past the Retry-After; the provider has recovered
        scripted(fakes, "tavily", lambda _: Plan("ok"))
        answers = await burst(chain, "recovered")
        assert {answer.provider for answer in answers} == {"tavily"}
        assert len(tavily.requests) == 1 + len(answers)
        assert await chain.cooldowns.remaining("tavily") == 0
    finally:
        await chain.aclose()


async def test_stepped_cooldown_without_retry_after(
    fakes: dict[str, FakeProvider], http: httpx.AsyncClient
) -> None:
    clock = Clock()
    tavily = fakes["tavily"]
    fakes["exa"].answer_each(lambda query: canned("exa", query))
    scripted(fakes, "tavily", lambda _: Plan("rate_limit"))
    chain = relaxed_chain(fakes, http, ("tavily", "exa"), clock)
    try:
        # A burst meets the 429s together: that is one rate limit, not one strike per request.
        answers = await burst(chain, "burst")
        assert {answer.provider for answer in answers} == {"exa"}
        assert len(tavily.requests) >= 1
        assert await chain.cooldowns.remaining("tavily") == pytest.approx(COOLDOWN_FIRST)

        clock.advance(COOLDOWN_FIRST - 1)
        await burst(chain, "still cooling")
        asked = len(tavily.requests)
        clock.advance(2)  # the first step is over: one probe, still limited, doubles the wait
        await chain.search(SearchQuery("probe 1"))
        assert len(tavily.requests) == asked + 1
        assert await chain.cooldowns.remaining("tavily") == pytest.approx(2 * COOLDOWN_FIRST)
        await burst(chain, "second step")
        assert len(tavily.requests) == asked + 1

        clock.advance(2 * COOLDOWN_FIRST + 1)
        scripted(fakes, "tavily", lambda _: Plan("ok"))
        assert (await chain.search(SearchQuery("probe 2"))).provider == "tavily"
        assert await chain.cooldowns.remaining("tavily") == 0

        # Recovered means forgiven: the next rate limit starts again at the first step.
        scripted(fakes, "tavily", lambda _: Plan("rate_limit"))
        await chain.search(SearchQuery("limited again"))
        assert await chain.cooldowns.remaining("tavily") == pytest.approx(COOLDOWN_FIRST)
    finally:
        await chain.aclose()


async def test_late_success_does_not_lift_a_newer_cooldown(
    fakes: dict[str, FakeProvider], http: httpx.AsyncClient
) -> None:
    """An answer to a request sent before the provider asked us to wait says nothing about now."""
    clock = Clock()
    fakes["brave"].answer_each(lambda query: canned("brave", query))
    scripted(
        fakes,
        "tavily",
        lambda query: (
            Plan("slow", delay=0.3) if query == "slow" else Plan("rate_limit_retry_after", retry_after=30)
        ),
    )
    chain = relaxed_chain(fakes, http, ("tavily", "brave"), clock)
    try:
        answers: dict[str, Any] = {}

        async def search(query: str, after: float) -> None:
            await anyio.sleep(after)
            answers[query] = await chain.search(SearchQuery(query, max_results=MAX_RESULTS))

        async with anyio.create_task_group() as group:
            group.start_soon(search, "slow", 0)
            group.start_soon(search, "limited", 0.1)
        assert answers["slow"].provider == "tavily" and answers["limited"].provider == "brave"
        assert await chain.cooldowns.remaining("tavily") == pytest.approx(30)
        asked = len(fakes["tavily"].requests)
        assert {a.provider for a in await burst(chain, "after")} == {"brave"}
        assert len(fakes["tavily"].requests) == asked
    finally:
        await chain.aclose()


async def test_challenge_cools_duckduckgo_down(
    fakes: dict[str, FakeProvider], http: httpx.AsyncClient
) -> None:
    """DuckDuckGo's challenge, as a 202 or as a 200 page, is a block to wait out, not an answer."""
    clock = Clock()
    ddg = fakes["duckduckgo"]
    fakes["searxng"].answer_each(lambda query: canned("searxng", query))
    chain = relaxed_chain(fakes, http, ("duckduckgo", "searxng"), clock)
    try:
        for status in (202, 200):
            scripted(fakes, "duckduckgo", lambda _, status=status: Plan("challenge", status=status))
            answer = await chain.search(SearchQuery(f"challenged {status}", max_results=MAX_RESULTS))
            assert answer.provider == "searxng", answer
            assert answer.attempts[0].error.startswith("blocked")
            assert [entry.status for entry in ddg.served[-1:]] == [status]
            asked = len(ddg.requests)
            answers = await burst(chain, f"blocked {status}")
            assert {a.provider for a in answers} == {"searxng"} and len(ddg.requests) == asked
            clock.advance(await chain.cooldowns.remaining("duckduckgo") + 1)
            scripted(fakes, "duckduckgo", lambda _: Plan("ok"))
            recovered = await chain.search(SearchQuery(f"recovered {status}", max_results=MAX_RESULTS))
            assert recovered.provider == "duckduckgo"
            assert [(r.title, r.url) for r in recovered.results] == [
                (r["title"], r["url"]) for r in canned("duckduckgo", f"recovered {status}")[:MAX_RESULTS]
            ]
    finally:
        await chain.aclose()
