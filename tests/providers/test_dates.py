"""published_after / published_before: each provider's own date parameter on the wire (its fake
honours it as the real API does), and the chain's own filter on every answer, its cache included."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

from mcp_server_web.providers.base import SearchQuery
from mcp_server_web.providers.brave import BraveProvider
from mcp_server_web.providers.exa import ExaProvider
from mcp_server_web.providers.tavily import TavilyProvider
from mcp_server_web.server.shared_types import shared_types
from mcp_server_web.state import Codec, redis_state
from tests.providers.conftest import ChainFactory, ProviderFactory
from tests.support.fakes.base import FakeProvider, sample_results
from tests.support.fakes.brave import FakeBrave
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.tavily import FakeTavily
from tests.support.redis_server import RedisServer

AFTER, BEFORE = date(2026, 11, 1), date(2026, 11, 10)

# (title, published): the instants either side of each bound, and bounds given in another zone.
DATED: list[tuple[str, str | None]] = [
    ("last second before", "2026-10-31T23:59:59Z"),
    ("first second", "2026-11-01T00:00:00Z"),
    ("inside", "2026-11-05T12:00:00Z"),
    ("last second", "2026-11-10T23:59:59Z"),
    ("first second after", "2026-11-11T00:00:00Z"),
    ("undated", None),
]
INSIDE = ["first second", "inside", "last second"]


def dated(rows: list[tuple[str, str | None]] = DATED, prefix: str = "d") -> list[dict[str, Any]]:
    """Generic results with these titles and dates (no "published" key for None)."""
    results = []
    for (title, published), base in zip(rows, sample_results(len(rows), prefix), strict=True):
        result = {**base, "title": title}
        if published is None:
            del result["published"]
        else:
            result["published"] = published
        results.append(result)
    return results


def within(**fields: Any) -> SearchQuery:
    return SearchQuery("dated news", max_results=10, published_after=AFTER, published_before=BEFORE, **fields)


def serve(fakes: dict[str, FakeProvider], name: str, rows: list[dict[str, Any]]) -> FakeProvider:
    fake = fakes[name]
    fake.answer(rows)
    return fake


# Each provider's own parameter --------------------------------------------------------------------


async def test_tavily_is_asked_for_the_days_as_start_date_and_end_date(
    make_provider: ProviderFactory,
) -> None:
    with FakeTavily() as fake:
        provider = make_provider(TavilyProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        results = await provider.search(within(time_range="month"), timeout=5)
        body = fake.bodies[-1]
        # Tavily's bounds are days, both included; time_range still applies beside them.
        assert (body.get("start_date"), body.get("end_date"), body.get("time_range")) == (
            "2026-11-01",
            "2026-11-10",
            "month",
        )
        assert [r.title for r in results] == [*INSIDE, "undated"]
        assert provider.unsupported(within(safesearch="off")) == ()
        # One bound alone goes alone.
        await provider.search(SearchQuery("q", published_before=BEFORE), timeout=5)
        assert "start_date" not in fake.bodies[-1] and fake.bodies[-1]["end_date"] == "2026-11-10"


async def test_exa_is_asked_for_the_instants_from_the_first_day_to_the_last(
    make_provider: ProviderFactory,
) -> None:
    with FakeExa() as fake:
        provider = make_provider(ExaProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        results = await provider.search(within(), timeout=5)
        body = fake.bodies[-1]
        assert (body.get("startPublishedDate"), body.get("endPublishedDate")) == (
            "2026-11-01T00:00:00.000Z",
            "2026-11-10T23:59:59.999Z",
        )
        assert [r.title for r in results] == [*INSIDE, "undated"]
        assert not any("date" in note for note in provider.unsupported(within()))


async def test_exa_takes_the_later_start_of_time_range_and_published_after(
    make_provider: ProviderFactory,
) -> None:
    with FakeExa() as fake:
        provider = make_provider(ExaProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        today = datetime.now(UTC)
        # The week before now starts after AFTER: the week's start is the one that restricts.
        await provider.search(SearchQuery("q", time_range="week", published_after=AFTER), timeout=5)
        start = datetime.fromisoformat(fake.bodies[-1]["startPublishedDate"].replace("Z", "+00:00"))
        assert (
            today - timedelta(days=7, minutes=5) < start <= today - timedelta(days=7) + timedelta(minutes=5)
        )
        # A year back starts before the day asked for: the day restricts.
        recent = today.date() - timedelta(days=3)
        await provider.search(SearchQuery("q", time_range="year", published_after=recent), timeout=5)
        assert fake.bodies[-1]["startPublishedDate"] == f"{recent.isoformat()}T00:00:00.000Z"
        assert "endPublishedDate" not in fake.bodies[-1]


async def test_brave_is_asked_for_a_freshness_range_of_days(make_provider: ProviderFactory) -> None:
    with FakeBrave() as fake:
        provider = make_provider(BraveProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        results = await provider.search(within(), timeout=5)
        assert fake.params()["freshness"] == "2026-11-01to2026-11-10"
        assert [r.title for r in results] == [*INSIDE, "undated"]
        # The news endpoint takes the same range.
        await provider.search(within(topic="news"), timeout=5)
        assert fake.requests[-1].path.startswith("/res/v1/news/search")
        assert fake.params()["freshness"] == "2026-11-01to2026-11-10"


async def test_brave_fills_a_missing_bound_with_the_widest_day(make_provider: ProviderFactory) -> None:
    with FakeBrave() as fake:
        provider = make_provider(BraveProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        tomorrows = {(datetime.now(UTC) + timedelta(days=1)).date().isoformat()}
        await provider.search(SearchQuery("q", published_after=AFTER), timeout=5)
        tomorrows.add((datetime.now(UTC) + timedelta(days=1)).date().isoformat())
        start, end = fake.params()["freshness"].split("to")
        assert start == "2026-11-01" and end in tomorrows
        await provider.search(SearchQuery("q", published_before=BEFORE), timeout=5)
        assert fake.params()["freshness"] == "1970-01-01to2026-11-10"


async def test_brave_applies_time_range_and_the_dates_together(make_provider: ProviderFactory) -> None:
    with FakeBrave() as fake:
        provider = make_provider(BraveProvider, fake.origin.base, fake.api_key)
        fake.answer(dated())
        today = datetime.now(UTC).date()
        await provider.search(SearchQuery("q", time_range="week", published_after=AFTER), timeout=5)
        start, end = fake.params()["freshness"].split("to")
        # The week is the narrower start; both ends are days Brave reads.
        assert date.fromisoformat(start) in (today - timedelta(days=7), today - timedelta(days=6))
        assert date.fromisoformat(end) >= today
        # A week that ends before the dates begin: nothing can match, and Brave is not asked.
        asked = len(fake.requests)
        long_ago = SearchQuery("q", time_range="week", published_before=date(2020, 1, 1))
        assert await provider.search(long_ago, timeout=5) == []
        assert len(fake.requests) == asked


async def test_providers_without_a_date_parameter_say_so_and_send_none(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    for name, title in (("searxng", "SearXNG"), ("duckduckgo", "DuckDuckGo")):
        fake = serve(fakes, name, dated(prefix=name))
        answer = await make_chain((name,)).search(within())
        sent = fake.params() if name == "searxng" else fakes["duckduckgo"].forms[-1]  # type: ignore[attr-defined]
        assert not {"time_range", "df"} & set(sent), sent
        (attempt,) = answer.attempts
        assert any(f"{title} has no date" in note for note in attempt.notes), attempt.notes


# The chain's own filter ---------------------------------------------------------------------------


async def test_the_chain_drops_results_dated_outside_the_days_and_keeps_undated_ones(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    rows = [
        *DATED,
        # Zones are converted to UTC before the day is read.
        ("late evening east of UTC, inside", "2026-11-11T01:00:00+02:00"),
        ("early morning east of UTC, before", "2026-11-01T01:00:00+02:00"),
    ]
    serve(fakes, "searxng", dated(rows))
    answer = await make_chain(("searxng",)).search(within())
    assert [r.title for r in answer.results] == [*INSIDE, "undated", "late evening east of UTC, inside"]
    (attempt,) = answer.attempts
    assert (
        "3 results dated outside 2026-11-01 to 2026-11-10 were dropped; 1 result without a date was kept"
        in attempt.notes
    )


async def test_a_provider_whose_results_are_all_outside_the_days_found_nothing(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    serve(fakes, "searxng", dated([("old", "2025-01-01T00:00:00Z"), ("new", "2026-11-20T00:00:00Z")]))
    serve(fakes, "duckduckgo", dated(prefix="g"))
    answer = await make_chain(("searxng", "duckduckgo")).search(within())
    # Nothing left is "empty", and the chain moves on as it does for any provider that found nothing.
    assert [(a.provider, a.outcome) for a in answer.attempts] == [("searxng", "empty"), ("duckduckgo", "ok")]
    assert answer.provider == "duckduckgo" and [r.title for r in answer.results] == [*INSIDE, "undated"]


async def test_the_filter_applies_before_an_emulated_page_is_cut(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    # DuckDuckGo cannot page: the chain asks for page * max_results and keeps the last of them.
    rows: list[tuple[str, str | None]] = []
    for i in range(6):
        rows += [(f"in {i}", f"2026-11-0{i + 1}T10:00:00Z"), (f"out {i}", "2025-01-01T10:00:00Z")]
    serve(fakes, "duckduckgo", dated(rows))
    query = SearchQuery("q", max_results=2, page=2, published_after=AFTER)
    answer = await make_chain(("duckduckgo",)).search(query)
    assert [r.title for r in answer.results] == ["in 2", "in 3"]


async def test_fanned_out_lists_are_each_filtered_before_they_are_fused(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    serve(fakes, "searxng", dated(prefix="s"))
    serve(fakes, "duckduckgo", dated(prefix="g"))
    chain = make_chain(("searxng", "duckduckgo"), mode="fanout", fanout=2)
    answer = await chain.search(within())
    assert sorted({r.title for r in answer.results}) == sorted([*INSIDE, "undated"])
    assert len(answer.results) == 8 and all(len(a.notes) >= 2 for a in answer.attempts)


async def test_an_answer_cached_without_the_dates_does_not_serve_a_dated_search(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory
) -> None:
    fake = serve(fakes, "searxng", dated())
    chain = make_chain(("searxng",))
    whole = await chain.search(SearchQuery("dated news", max_results=10))
    assert len(whole.results) == len(DATED)
    for query in (within(), SearchQuery("dated news", max_results=10, published_after=AFTER)):
        answer = await chain.search(query)
        assert answer.cached is False and len(answer.results) < len(DATED)
    again = await chain.search(within())
    assert again.cached is True and [r.title for r in again.results] == [*INSIDE, "undated"]
    assert len(fake.requests) == 3


async def test_a_dated_answer_is_shared_through_redis_with_its_dates(
    fakes: dict[str, FakeProvider], make_chain: ChainFactory, redis_server: RedisServer
) -> None:
    fake = serve(fakes, "searxng", dated())
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    states = [redis_state(redis_server.url, prefix=prefix, codec=Codec(shared_types())) for _ in range(2)]
    try:
        first, second = (make_chain(("searxng",), state=state) for state in states)
        answer = await first.search(within())
        shared = await second.search(within())
        assert shared.cached is True and shared.results == answer.results
        assert shared.query.published_after == AFTER and shared.query.published_before == BEFORE
        undated = await second.search(SearchQuery("dated news", max_results=10))
        assert undated.cached is False and len(undated.results) == len(DATED)
        assert len(fake.requests) == 2
    finally:
        for state in states:
            await state.aclose()
