"""The fallback chain over real adapters and fake providers on 127.0.0.1."""

from __future__ import annotations

import itertools
import logging
import time

import anyio
import pytest

from mcp_server_web.errors import AllProvidersFailed, NoProvider
from mcp_server_web.providers.base import SearchQuery
from mcp_server_web.providers.chain import SearchChain
from mcp_server_web.providers.registry import build_chain
from mcp_server_web.server.compose import providers_config
from tests.providers.conftest import ChainFactory, Clock
from tests.support.fakes.base import FakeProvider, sample_results, settings_for
from tests.support.timing import allowance, slowest, timed

QUERY = SearchQuery("rivers and valleys", max_results=5)


def outcomes(answer_or_attempts: object) -> list[tuple[str, str]]:
    attempts = getattr(answer_or_attempts, "attempts", answer_or_attempts)
    return [(a.provider, a.outcome) for a in attempts]  # type: ignore[attr-defined]


async def test_first_provider_that_answers_wins(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["tavily"].answer(sample_results(3, "t"))
    fakes["brave"].answer(sample_results(3, "b"))
    answer = await make_chain(("tavily", "brave")).search(QUERY)
    assert answer.provider == "tavily" and outcomes(answer) == [("tavily", "ok")]
    assert [r.title for r in answer.results] == ["Result t0", "Result t1", "Result t2"]
    assert len(fakes["brave"].requests) == 0


async def answered_by_brave(make_chain: ChainFactory) -> float:
    """The control: the slowest of a few searches Brave answers at once, each a chain of its own."""
    queries = itertools.count()
    return await slowest(lambda: make_chain(("brave",)).search(SearchQuery(f"control {next(queries)}")))


async def test_rate_limited_first_falls_back_to_second(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["tavily"].fail("rate_limit", retry_after=30)
    fakes["brave"].answer(sample_results(2, "b"))
    control = await answered_by_brave(make_chain)
    chain = make_chain(("tavily", "brave"))
    answer, fallback = await timed(lambda: chain.search(QUERY))
    assert answer.provider == "brave"
    assert outcomes(answer) == [("tavily", "error"), ("brave", "ok")]
    assert answer.attempts[0].error.startswith("rate_limit")
    assert all(a.elapsed_ms >= 0 for a in answer.attempts)
    # A rate-limited provider costs one round trip, not a timeout (10 s).
    assert fallback < allowance(2.0, control, 10), (fallback, control)


async def test_cooldown_skips_then_recovers(fakes: dict[str, FakeProvider], make_chain: ChainFactory) -> None:
    clock = Clock()
    fakes["tavily"].fail("rate_limit", retry_after=30)
    fakes["brave"].answer(sample_results(2, "b"))
    chain = make_chain(("tavily", "brave"), clock=clock, cache_ttl=1)
    await chain.search(QUERY)
    clock.advance(5)
    second = await chain.search(SearchQuery("another query"))
    assert outcomes(second) == [("tavily", "skipped"), ("brave", "ok")]
    assert "cooling down" in second.attempts[0].error
    assert len(fakes["tavily"].requests) == 1  # skipped without a request
    clock.advance(30)  # past Retry-After
    fakes["tavily"].answer(sample_results(2, "t"))
    third = await chain.search(SearchQuery("third query"))
    assert third.provider == "tavily"
    assert await chain.cooldowns.remaining("tavily") == 0


async def test_stepped_cooldown_without_retry_after(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    clock = Clock()
    fakes["brave"].fail("quota")
    fakes["duckduckgo"].answer(sample_results(1))
    chain = make_chain(("brave", "duckduckgo"), clock=clock, cache_ttl=1)
    await chain.search(SearchQuery("q1"))
    first = await chain.cooldowns.remaining("brave")
    clock.advance(first + 1)
    await chain.search(SearchQuery("q2"))
    second = await chain.cooldowns.remaining("brave")
    assert first == pytest.approx(60, abs=1) and second == pytest.approx(120, abs=1)


async def test_empty_answer_moves_on_and_all_empty_is_not_an_error(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["exa"].answer([])
    fakes["searxng"].answer(sample_results(2, "s"))
    answer = await make_chain(("exa", "searxng")).search(QUERY)
    assert answer.provider == "searxng" and outcomes(answer) == [("exa", "empty"), ("searxng", "ok")]
    fakes["searxng"].answer([])
    nothing = await make_chain(("exa", "searxng")).search(SearchQuery("nothing at all"))
    assert nothing.provider is None and nothing.results == ()


async def test_all_failures_are_aggregated(fakes: dict[str, FakeProvider], make_chain: ChainFactory) -> None:
    fakes["tavily"].fail("auth")
    fakes["brave"].fail("server")
    fakes["duckduckgo"].fail("blocked")
    with pytest.raises(AllProvidersFailed) as caught:
        await make_chain(("tavily", "brave", "duckduckgo")).search(QUERY)
    message = caught.value.message
    assert "tavily: auth" in message and "brave: upstream" in message and "duckduckgo: blocked" in message


async def test_malformed_answer_fails_over(fakes: dict[str, FakeProvider], make_chain: ChainFactory) -> None:
    fakes["exa"].fail("malformed")
    fakes["brave"].answer(sample_results(1))
    answer = await make_chain(("exa", "brave")).search(QUERY)
    assert answer.provider == "brave" and answer.attempts[0].error.startswith("bad_response")


async def test_overall_deadline_bounds_the_call(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["brave"].answer(sample_results(1))
    control = await answered_by_brave(make_chain)
    fakes["tavily"].fail("timeout")  # held 5 s, as long as its own timeout
    chain = make_chain(("tavily", "brave"), provider_timeout=5, deadline=0.8)
    started = time.monotonic()
    with pytest.raises(AllProvidersFailed) as caught:
        await chain.search(QUERY)
    elapsed = time.monotonic() - started
    assert elapsed < 0.8 + allowance(0.7, control, 10), (elapsed, control)
    assert "tavily: timeout" in caught.value.message and "deadline" in caught.value.message


async def test_slow_provider_gets_only_its_own_timeout(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["brave"].answer(sample_results(1))
    control = await answered_by_brave(make_chain)
    fakes["tavily"].fail("timeout")  # held 5 s
    answer = await make_chain(("tavily", "brave"), provider_timeout=0.5, deadline=5).search(QUERY)
    assert answer.provider == "brave"
    late_ms = 1000 * allowance(1.0, control, 10)
    assert 400 <= answer.attempts[0].elapsed_ms < 500 + late_ms, (answer.attempts[0].elapsed_ms, late_ms)


async def test_pinned_provider_has_no_fallback(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["tavily"].answer(sample_results(2, "t"))
    fakes["exa"].fail("server")
    chain = make_chain(("tavily", "exa"))
    with pytest.raises(AllProvidersFailed):
        await chain.search(QUERY, pin="exa")
    assert len(fakes["tavily"].requests) == 0
    assert (await chain.search(QUERY, pin="tavily")).provider == "tavily"


async def test_unconfigured_providers_are_skipped_not_failed(
    fakes: dict[str, FakeProvider], http: object
) -> None:
    fakes["brave"].answer(sample_results(2))
    settings = settings_for(fakes, tavily_api_key=None, search_providers=("tavily", "brave"))
    chain = build_chain(providers_config(settings), http)  # type: ignore[arg-type]
    answer = await chain.search(QUERY)
    assert chain.order == ("brave",) and outcomes(answer) == [("brave", "ok")]
    with pytest.raises(NoProvider) as caught:
        await chain.search(QUERY, pin="tavily")
    assert "TAVILY_API_KEY" in caught.value.message
    with pytest.raises(NoProvider):
        await SearchChain([]).search(QUERY)


async def test_default_order_is_keyed_providers_then_duckduckgo(
    fakes: dict[str, FakeProvider], http: object
) -> None:
    settings = settings_for(fakes, exa_api_key=None)
    assert build_chain(providers_config(settings), http).order == ("tavily", "brave", "searxng", "duckduckgo")  # type: ignore[arg-type]


async def test_results_are_filtered_deduplicated_and_trimmed(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    base = sample_results(1)[0]
    fakes["searxng"].answer(
        [
            {**base, "title": "A", "url": "https://docs.example.org/page"},
            {**base, "title": "A again", "url": "https://www.docs.example.org/page/?utm_source=x#top"},
            {**base, "title": "Elsewhere", "url": "https://other.example.net/x"},
            {**base, "title": "Sub", "url": "https://api.docs.example.org/ref"},
            {**base, "title": "Blocked", "url": "https://docs.example.org.evil.test/x"},
            {**base, "title": "Also", "url": "https://docs.example.org/other"},
        ]
    )
    query = SearchQuery("docs", max_results=2, include_domains=("docs.example.org",))
    answer = await make_chain(("searxng",)).search(query)
    assert [r.title for r in answer.results] == ["A", "Sub"]
    excluded = await make_chain(("searxng",)).search(SearchQuery("docs", exclude_domains=("example.org",)))
    assert [r.title for r in excluded.results] == ["Elsewhere", "Blocked"]


async def test_answers_are_cached(fakes: dict[str, FakeProvider], make_chain: ChainFactory) -> None:
    fakes["brave"].answer(sample_results(3))
    chain = make_chain(("brave",))
    first = await chain.search(SearchQuery("Cached  Query"))
    second = await chain.search(SearchQuery("cached query"))
    assert first.cached is False and second.cached is True and second.results == first.results
    await chain.search(SearchQuery("cached query", max_results=2))
    assert len(fakes["brave"].requests) == 2


async def test_concurrent_searches_with_failing_providers(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fakes["tavily"].fail("server")
    fakes["brave"].answer(sample_results(2))
    chain = make_chain(("tavily", "brave"))
    answers = []

    async def one(i: int) -> None:
        answers.append(await chain.search(SearchQuery(f"query {i}")))

    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(one, i)
    assert len(answers) == 10 and {a.provider for a in answers} == {"brave"}


async def test_keys_never_leak(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("tavily", "exa", "brave"):
        fakes[name].fail("auth")
    fakes["searxng"].fail("server")
    fakes["duckduckgo"].fail("blocked")
    with pytest.raises(AllProvidersFailed) as caught:
        await make_chain(("tavily", "exa", "brave", "searxng", "duckduckgo")).search(QUERY)
    keys = [
        value for fake in fakes.values() for key, value in fake.settings().items() if key.endswith("api_key")
    ]
    assert keys
    for key in keys:
        assert key not in str(caught.value) and key not in caplog.text
