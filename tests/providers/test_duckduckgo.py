"""DuckDuckGoProvider over real HTTP against FakeDuckDuckGo: the HTML page, its ads, its bot wall."""

from __future__ import annotations

import pytest

from mcp_server_web.providers.base import SearchQuery
from mcp_server_web.providers.duckduckgo import DuckDuckGoProvider, real_url
from tests.providers.conftest import USER_AGENT, ProviderFactory, Provoke, failure, fake_fixture
from tests.support.fakes.base import assert_samples, sample_results
from tests.support.fakes.duckduckgo import FakeDuckDuckGo, challenge_page, redirect_link, results_page

fake = fake_fixture(FakeDuckDuckGo)


async def test_results_are_unwrapped_and_the_ad_skipped(
    fake: FakeDuckDuckGo, provider: DuckDuckGoProvider
) -> None:
    fake.answer(sample_results(10))

    results = await provider.search(SearchQuery("python", max_results=6), timeout=5)

    # The whole page, ad left out: the chain filters and de-duplicates, then trims.
    first = assert_samples(results, 10)
    assert all("duckduckgo.com" not in r.url and "ads.example.net" not in r.url for r in results)
    assert first.published == "2026-11-01T10:00:00+00:00"
    assert first.score is None


async def test_awkward_urls_and_titles_survive(fake: FakeDuckDuckGo, provider: DuckDuckGoProvider) -> None:
    target = "https://example.org/a path/?q=1&lang=fr#section"
    fake.answer([{"title": 'Q&A: "quotes" <tags>', "url": target, "snippet": "caf&eacute; &lt;b&gt;"}])

    [result] = await provider.search(SearchQuery("q"), timeout=5)

    assert result.url == target
    assert result.title == 'Q&A: "quotes" <tags>'
    assert result.snippet == "café <b>"
    assert result.published is None


async def test_form_post_carries_query_filters_and_region(
    fake: FakeDuckDuckGo, provider: DuckDuckGoProvider
) -> None:
    fake.answer(sample_results(1))
    query = SearchQuery("tokio", time_range="week", include_domains=("docs.rs", "tokio.rs"))

    await provider.search(query, timeout=5)

    seen = fake.requests[-1]
    assert (seen.method, seen.path) == ("POST", "/html/")
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    assert seen.headers["user-agent"] == USER_AGENT
    assert fake.forms[-1] == {
        "q": "tokio (site:docs.rs OR site:tokio.rs)",
        "b": "",
        "kl": "wt-wt",
        "kp": "-1",
        "df": "w",
    }


@pytest.mark.parametrize(("time_range", "df"), [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")])
async def test_time_range_maps_to_df(
    fake: FakeDuckDuckGo, provider: DuckDuckGoProvider, time_range: str, df: str
) -> None:
    fake.answer(sample_results(1))

    await provider.search(SearchQuery("q", time_range=time_range), timeout=5)  # type: ignore[arg-type]

    assert fake.forms[-1]["df"] == df


async def test_news_runs_the_web_search(fake: FakeDuckDuckGo, provider: DuckDuckGoProvider) -> None:
    fake.answer(sample_results(2))

    results = await provider.search(SearchQuery("q", topic="news", exclude_domains=("x.com",)), timeout=5)

    assert len(results) == 2 and fake.forms[-1]["q"] == "q -site:x.com" and "df" not in fake.forms[-1]


async def test_no_results_page_is_an_empty_list(fake: FakeDuckDuckGo, provider: DuckDuckGoProvider) -> None:
    fake.answer([])

    assert await provider.search(SearchQuery("zxqv qqq"), timeout=5) == []


async def test_challenge_with_202_is_blocked(provoke: Provoke) -> None:
    error = await provoke("blocked")

    assert (error.kind, error.status) == ("blocked", 202)


async def test_challenge_page_with_200_is_blocked_not_empty(
    fake: FakeDuckDuckGo, provider: DuckDuckGoProvider
) -> None:
    fake.origin.serve("/html/", challenge_page("python"))

    assert (await failure(provider)).kind == "blocked"


async def test_page_of_ads_only_is_an_empty_list(fake: FakeDuckDuckGo, provider: DuckDuckGoProvider) -> None:
    page = results_page("q", sample_results(1)).replace(
        redirect_link("https://site0.example.com/r/0").replace("&", "&amp;"),
        "https://duckduckgo.com/y.js?ad_domain=x.example&amp;ad_provider=bingv7aa",
    )
    page = page.replace('web-result "', 'web-result result--ad "')
    fake.origin.serve("/html/", page)

    assert await provider.search(SearchQuery("q"), timeout=5) == []


async def test_forbidden_is_blocked(provoke: Provoke) -> None:
    assert (await provoke("auth")).kind == "blocked"


async def test_rate_limit_honours_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit", retry_after=120)

    assert (error.kind, error.retry_after) == ("rate_limit", 120.0)


async def test_server_error_is_upstream(provoke: Provoke) -> None:
    error = await provoke("server")

    assert (error.kind, error.status) == ("upstream", 502)


async def test_empty_body_is_bad_response(fake: FakeDuckDuckGo, make_provider: ProviderFactory) -> None:
    fake.origin.serve("/html/", b"")
    provider = make_provider(DuckDuckGoProvider, fake.origin.base)

    assert (await failure(provider)).kind == "bad_response"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (
            "//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fx%3Fa%3D1%26b%3D2&rut=abc",
            "https://example.com/x?a=1&b=2",
        ),
        ("/l/?uddg=http%3A%2F%2Fexample.com%2F&rut=abc", "http://example.com/"),
        ("https://example.com/direct", "https://example.com/direct"),
        ("https://duckduckgo.com/y.js?ad_domain=a.example&u3=https%3A%2F%2Fwww.bing.com%2Faclick", None),
        ("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)&rut=abc", None),
        ("//duckduckgo.com/l/?rut=abc", None),
        ("//duckduckgo.com/?q=more", None),
        ("", None),
        (None, None),
    ],
)
def test_real_url(href: str | None, expected: str | None) -> None:
    assert real_url(href) == expected


async def test_common_failures(provoke: Provoke, common_failure: tuple[str, str]) -> None:
    situation, kind = common_failure
    assert (await provoke(situation)).kind == kind
