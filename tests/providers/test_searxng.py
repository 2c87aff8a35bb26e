"""SearxngProvider over real HTTP against FakeSearxng: JSON results, its 403, its failed engines."""

from __future__ import annotations

from mcp_server_web.providers.base import SearchQuery
from mcp_server_web.providers.searxng import SearxngProvider
from tests.providers.conftest import USER_AGENT, ProviderFactory, Provoke, failure, fake_fixture
from tests.support.fakes.base import assert_samples, sample_results
from tests.support.fakes.searxng import FakeSearxng

fake = fake_fixture(FakeSearxng)


async def test_results_are_mapped_with_score_and_date(fake: FakeSearxng, provider: SearxngProvider) -> None:
    fake.answer(sample_results(12))

    results = await provider.search(SearchQuery("python", max_results=4), timeout=5)

    # The whole first page: the chain filters and de-duplicates before trimming to max_results.
    first = assert_samples(results, 12)
    assert first.published == "2026-11-01T10:00:00+00:00"
    assert first.score is None  # SearXNG's own score only ranks within one answer


async def test_request_asks_for_json_page_one(fake: FakeSearxng, provider: SearxngProvider) -> None:
    fake.answer(sample_results(1))

    await provider.search(SearchQuery("rust", time_range="month"), timeout=5)

    seen = fake.requests[-1]
    assert seen.method == "GET"
    assert fake.params() == {
        "q": "rust",
        "format": "json",
        "categories": "general",
        "pageno": "1",
        "safesearch": "1",
        "time_range": "month",
    }
    assert seen.headers["user-agent"] == USER_AGENT
    # What SearXNG's limiter looks for before it takes a client for a bot.
    assert "text/html" in seen.headers["accept"] and seen.headers["accept-language"]


async def test_news_topic_and_site_operators(fake: FakeSearxng, provider: SearxngProvider) -> None:
    fake.answer(sample_results(1))
    query = SearchQuery("launch", topic="news", include_domains=("nasa.gov",), exclude_domains=("x.com",))

    await provider.search(query, timeout=5)

    params = fake.params()
    assert params["categories"] == "news"
    assert params["q"] == "launch site:nasa.gov -site:x.com"
    assert "time_range" not in params


async def test_instance_under_a_path_prefix(fake: FakeSearxng, make_provider: ProviderFactory) -> None:
    fake.origin.serve("/searx/search", '{"query": "q", "results": []}', content_type="application/json")
    provider = make_provider(SearxngProvider, fake.origin.url("/searx"))

    assert await provider.search(SearchQuery("q"), timeout=5) == []


async def test_nothing_found_is_an_empty_list(fake: FakeSearxng, provider: SearxngProvider) -> None:
    fake.answer([])

    assert await provider.search(SearchQuery("zxqv"), timeout=5) == []


async def test_empty_results_with_failed_engines_is_upstream(
    fake: FakeSearxng, provider: SearxngProvider
) -> None:
    fake.engines_fail([("google", "timeout"), ("bing", "HTTP error"), ("duckduckgo", "CAPTCHA")])

    error = await failure(provider)

    assert error.kind == "upstream"
    assert "google (timeout)" in error.message and "bing (HTTP error)" in error.message
    assert "duckduckgo (CAPTCHA)" in error.message


async def test_results_despite_some_failed_engines_are_kept(
    fake: FakeSearxng, provider: SearxngProvider
) -> None:
    fake.answer(sample_results(2))
    fake.unresponsive = [["google", "timeout"]]

    assert len(await provider.search(SearchQuery("python"), timeout=5)) == 2


async def test_json_format_disabled_is_config_with_the_fix(
    fake: FakeSearxng, provider: SearxngProvider
) -> None:
    fake.disable_json()

    error = await failure(provider)

    assert (error.kind, error.status) == ("config", 403)
    assert "search.formats" in error.message and "settings.yml" in error.message


async def test_limiter_is_rate_limit_with_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit", retry_after=30)

    assert (error.kind, error.retry_after, error.status) == ("rate_limit", 30.0, 429)


async def test_redirect_points_at_the_setting(fake: FakeSearxng, make_provider: ProviderFactory) -> None:
    fake.origin.redirect("/search", "https://search.example.org/search")
    provider = make_provider(SearxngProvider, fake.origin.base)

    error = await failure(provider)

    assert error.kind == "config" and "SEARXNG_URL" in error.message
    assert "https://search.example.org/search" in error.message


async def test_unset_url_is_config(make_provider: ProviderFactory) -> None:
    provider = make_provider(SearxngProvider, "")

    error = await failure(provider)

    assert error.kind == "config" and "SEARXNG_URL" in error.message


async def test_server_error_is_upstream(provoke: Provoke) -> None:
    error = await provoke("server")

    assert (error.kind, error.status) == ("upstream", 500)


async def test_json_without_result_list_is_bad_response(
    fake: FakeSearxng, make_provider: ProviderFactory
) -> None:
    fake.origin.serve("/search", '{"error": "nope"}', content_type="application/json")
    provider = make_provider(SearxngProvider, fake.origin.base)

    assert (await failure(provider)).kind == "bad_response"


async def test_common_failures(provoke: Provoke, common_failure: tuple[str, str]) -> None:
    situation, kind = common_failure
    assert (await provoke(situation)).kind == kind
