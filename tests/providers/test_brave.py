"""BraveProvider over real HTTP against FakeBrave: what it sends, what it maps, how it fails."""

from __future__ import annotations

import pytest

from mcp_server_web.providers.base import SearchQuery
from mcp_server_web.providers.brave import BraveProvider
from tests.providers.conftest import USER_AGENT, ProviderFactory, Provoke, failure, fake_fixture
from tests.support.fakes.base import assert_samples, sample_results
from tests.support.fakes.brave import API_KEY, NEWS_PATH, WEB_PATH, FakeBrave

fake = fake_fixture(FakeBrave)


async def test_web_results_are_plain_text_with_dates_and_capped(
    fake: FakeBrave, provider: BraveProvider
) -> None:
    fake.answer(sample_results(8))

    results = await provider.search(SearchQuery("python", max_results=5), timeout=5)

    first = assert_samples(results, 5)
    # page_age has no zone; Brave means UTC.
    assert first.published == "2026-11-01T10:00:00+00:00"
    assert first.score is None


async def test_request_carries_key_headers_and_defaults(fake: FakeBrave, provider: BraveProvider) -> None:
    fake.answer(sample_results(1))

    await provider.search(SearchQuery("rust async", max_results=3), timeout=5)

    seen = fake.requests[-1]
    assert seen.method == "GET" and seen.path.startswith(WEB_PATH + "?")
    assert seen.headers["x-subscription-token"] == API_KEY
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["user-agent"] == USER_AGENT
    assert fake.params() == {
        "q": "rust async",
        "count": "3",
        "safesearch": "moderate",
        "text_decorations": "false",
    }


@pytest.mark.parametrize(
    ("time_range", "freshness"), [("day", "pd"), ("week", "pw"), ("month", "pm"), ("year", "py")]
)
async def test_time_range_maps_to_freshness(
    fake: FakeBrave, provider: BraveProvider, time_range: str, freshness: str
) -> None:
    fake.answer(sample_results(1))

    await provider.search(SearchQuery("q", time_range=time_range), timeout=5)  # type: ignore[arg-type]

    assert fake.params()["freshness"] == freshness


async def test_domain_filters_become_site_operators(fake: FakeBrave, provider: BraveProvider) -> None:
    fake.answer(sample_results(1))
    query = SearchQuery(
        "tokio", include_domains=("docs.rs", "https://www.tokio.rs/blog"), exclude_domains=("reddit.com",)
    )

    await provider.search(query, timeout=5)

    assert fake.params()["q"] == "tokio (site:docs.rs OR site:tokio.rs) -site:reddit.com"


async def test_single_include_domain_needs_no_parentheses(fake: FakeBrave, provider: BraveProvider) -> None:
    fake.answer(sample_results(1))

    await provider.search(SearchQuery("tokio", include_domains=("docs.rs",)), timeout=5)

    assert fake.params()["q"] == "tokio site:docs.rs"


async def test_count_is_capped_at_brave_web_maximum(fake: FakeBrave, provider: BraveProvider) -> None:
    fake.answer(sample_results(30))

    results = await provider.search(SearchQuery("q", max_results=50), timeout=5)

    assert fake.params()["count"] == "20"
    assert len(results) == 20


async def test_news_uses_news_endpoint_and_top_level_results(
    fake: FakeBrave, provider: BraveProvider
) -> None:
    fake.answer(sample_results(3))

    results = await provider.search(SearchQuery("election", topic="news", time_range="day"), timeout=5)

    assert fake.requests[-1].path.startswith(NEWS_PATH + "?")
    params = fake.params()
    assert params["freshness"] == "pd" and "text_decorations" not in params
    assert [r.title for r in results] == ["Result r0", "Result r1", "Result r2"]
    assert results[0].published == "2026-11-01T10:00:00+00:00"


async def test_age_is_used_when_page_age_is_missing(fake: FakeBrave, make_provider: ProviderFactory) -> None:
    body = (
        '{"type": "news", "results": [{"type": "news_result", "title": "Fresh &amp; new",'
        ' "url": "https://news.example.com/a", "description": "Just <strong>in</strong>",'
        ' "age": "2 hours ago"}]}'
    )
    answered = "Tue, 24 Nov 2026 12:00:00 GMT"
    fake.origin.serve(NEWS_PATH, body, content_type="application/json", headers={"Date": answered})
    provider = make_provider(BraveProvider, fake.origin.base, API_KEY)

    [result] = await provider.search(SearchQuery("q", topic="news"), timeout=5)

    # A relative age counts back from when Brave answered (its Date header).
    assert (result.title, result.snippet, result.published) == (
        "Fresh & new",
        "Just in",
        "2026-11-24T10:00:00+00:00",
    )


async def test_no_web_section_means_no_results(fake: FakeBrave, provider: BraveProvider) -> None:
    fake.answer([])

    assert await provider.search(SearchQuery("zxqv nothing"), timeout=5) == []


async def test_invalid_key_is_auth(fake: FakeBrave, make_provider: ProviderFactory) -> None:
    wrong = "brave-wrong-key-123"

    error = await failure(make_provider(BraveProvider, fake.origin.base, wrong))

    assert error.kind == "auth" and error.status == 422
    assert "SUBSCRIPTION_TOKEN_INVALID" in error.message
    assert wrong not in str(error) and API_KEY not in str(error)


async def test_missing_key_is_config_without_a_request(
    fake: FakeBrave, make_provider: ProviderFactory
) -> None:
    error = await failure(make_provider(BraveProvider, fake.origin.base))

    assert error.kind == "config" and "BRAVE_API_KEY" in error.message
    assert fake.requests == []
    assert API_KEY not in error.message and API_KEY not in str(error)


async def test_key_echoed_by_upstream_is_redacted(fake: FakeBrave, provoke: Provoke) -> None:
    fake.error_detail = f"Token {API_KEY} is over its limit."
    error = await provoke("rate_limit")

    assert "[redacted]" in error.message


async def test_rate_limit_honours_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit", retry_after=7)

    assert (error.kind, error.retry_after, error.status) == ("rate_limit", 7.0, 429)
    assert "RATE_LIMITED" in error.message


async def test_rate_limit_without_retry_after_uses_per_second_window(provoke: Provoke) -> None:
    error = await provoke("rate_limit")

    assert (error.kind, error.retry_after) == ("rate_limit", 1.0)


async def test_quota_is_told_apart_from_rate_limit(provoke: Provoke) -> None:
    error = await provoke("quota", retry_after=1419704)

    assert (error.kind, error.retry_after, error.status) == ("quota", 1419704.0, 429)
    assert "QUOTA_LIMITED" in error.message


async def test_quota_without_reset_header_gives_no_retry_after(provoke: Provoke) -> None:
    error = await provoke("quota")

    assert (error.kind, error.retry_after) == ("quota", None)


async def test_quota_waits_for_the_monthly_window_not_retry_after(
    fake: FakeBrave, make_provider: ProviderFactory
) -> None:
    body = (
        '{"type": "ErrorResponse", "error": {"id": "x", "status": 429, "code": "QUOTA_LIMITED",'
        ' "detail": "Request quota limit exceeded for plan.", "meta": {}}, "time": 1}'
    )
    headers = {"Retry-After": "1", "X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "1, 86400"}
    fake.origin.serve(WEB_PATH, body, status=429, headers=headers, content_type="application/json")
    provider = make_provider(BraveProvider, fake.origin.base, API_KEY)

    error = await failure(provider)

    assert (error.kind, error.retry_after) == ("quota", 86400.0)


async def test_bare_429_with_month_used_up_is_quota(fake: FakeBrave, make_provider: ProviderFactory) -> None:
    headers = {"X-RateLimit-Remaining": "1, 0", "X-RateLimit-Reset": "1, 3600"}
    fake.origin.serve(WEB_PATH, "Too Many Requests", status=429, headers=headers, content_type="text/plain")
    provider = make_provider(BraveProvider, fake.origin.base, API_KEY)

    error = await failure(provider)

    assert (error.kind, error.retry_after) == ("quota", 3600.0)


async def test_server_error_is_upstream(provoke: Provoke) -> None:
    error = await provoke("server")

    assert (error.kind, error.status) == ("upstream", 502)


async def test_bare_403_from_a_firewall_is_blocked(provoke: Provoke) -> None:
    assert (await provoke("blocked")).kind == "blocked"


async def test_validation_error_is_bad_response(fake: FakeBrave, make_provider: ProviderFactory) -> None:
    body = (
        '{"type": "ErrorResponse", "error": {"id": "x", "status": 422, "code": "VALIDATION",'
        ' "detail": "Unable to validate request parameter(s)", "meta": {}}, "time": 1}'
    )
    fake.origin.serve(WEB_PATH, body, status=422, content_type="application/json")
    provider = make_provider(BraveProvider, fake.origin.base, API_KEY)

    error = await failure(provider)

    assert error.kind == "bad_response" and "VALIDATION" in error.message


async def test_common_failures(provoke: Provoke, common_failure: tuple[str, str]) -> None:
    situation, kind = common_failure
    assert (await provoke(situation)).kind == kind
