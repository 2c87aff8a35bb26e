"""The Tavily adapter, through the real tavily-python SDK, against a fake Tavily on loopback."""

from __future__ import annotations

import json

import httpx
import pytest

from mcp_server_web.providers.base import ProviderError, SearchQuery
from mcp_server_web.providers.tavily import TavilyProvider
from tests.providers.conftest import ProviderFactory, Provoke, assert_never_shows, failure, fake_fixture
from tests.support.fakes.base import Failure, assert_samples, sample_results
from tests.support.fakes.tavily import FakeTavily
from tests.support.origin import Reply, RequestContext

fake = fake_fixture(FakeTavily)


async def test_results_come_out_as_plain_text_with_date_and_score(
    fake: FakeTavily, provider: TavilyProvider
) -> None:
    fake.answer(sample_results(3))
    results = await provider.search(SearchQuery("python asyncio", max_results=3), timeout=5)
    first = assert_samples(results, 3)
    assert first.published == "2026-11-01T10:00:00+00:00"
    assert first.score is None  # Tavily's own score is not comparable with others'


async def test_news_dates_in_rfc_2822_become_iso_8601(fake: FakeTavily, provider: TavilyProvider) -> None:
    dated, undated = sample_results(2)
    dated["published"] = "Tue, 04 Nov 2025 15:30:00 GMT"
    del undated["published"]
    fake.answer([dated, undated])
    results = await provider.search(SearchQuery("q", topic="news"), timeout=5)
    assert results[0].published == "2025-11-04T15:30:00+00:00"
    assert results[1].published is None


async def test_fields_of_the_wrong_type_are_ignored(fake: FakeTavily, provider: TavilyProvider) -> None:
    answer = {
        "results": [
            {"url": None, "title": "no url"},
            {"url": "https://b.example/", "title": 5, "content": ["x"], "score": "high", "published_date": 3},
        ]
    }
    fake.origin.serve("/search", json.dumps(answer), content_type="application/json")
    (result,) = await provider.search(SearchQuery("q"), timeout=5)
    assert (result.title, result.snippet, result.score, result.published) == (
        "https://b.example/",
        "",
        None,
        None,
    )


async def test_request_maps_the_query_and_asks_for_no_extras(
    fake: FakeTavily, provider: TavilyProvider
) -> None:
    fake.answer(sample_results(2))
    query = SearchQuery(
        "rust borrow checker",
        max_results=7,
        topic="news",
        time_range="week",
        include_domains=("rust-lang.org", "github.com"),
        exclude_domains=("reddit.com",),
    )
    await provider.search(query, timeout=5)
    (body,) = fake.bodies
    assert body == {
        "query": "rust borrow checker",
        "search_depth": "basic",
        "topic": "news",
        "time_range": "week",
        "max_results": 7,
        "include_domains": ["rust-lang.org", "github.com"],
        "exclude_domains": ["reddit.com"],
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }
    (seen,) = fake.requests
    assert seen.method == "POST"
    assert seen.headers["authorization"] == f"Bearer {fake.api_key}"
    assert seen.headers["user-agent"] == provider.config.user_agent
    assert "x-tavily-access-mode" not in seen.headers  # never the SDK's keyless mode


async def test_defaults_leave_out_empty_filters(fake: FakeTavily, provider: TavilyProvider) -> None:
    fake.answer([])
    assert await provider.search(SearchQuery("q"), timeout=5) == []
    (body,) = fake.bodies
    assert body["topic"] == "general"
    assert body["max_results"] == 5
    assert not {"time_range", "include_domains", "exclude_domains"} & body.keys()


async def test_max_results_is_respected_and_capped(fake: FakeTavily, provider: TavilyProvider) -> None:
    fake.honor_max_results = False  # a service that sends more than asked still yields max_results
    fake.answer(sample_results(8))
    assert len(await provider.search(SearchQuery("q", max_results=3), timeout=5)) == 3
    await provider.search(SearchQuery("q", max_results=50), timeout=5)
    assert fake.bodies[-1]["max_results"] == 20  # Tavily refuses more than 20


@pytest.mark.parametrize(
    ("fail", "status", "kind"),
    [
        ("auth", 401, "auth"),
        ("blocked", 403, "auth"),
        ("quota", 432, "quota"),
        ("quota", 433, "quota"),
        ("server", 500, "upstream"),
        ("server", 502, "upstream"),
    ],
)
async def test_http_failures_are_classified(provoke: Provoke, fail: str, status: int, kind: str) -> None:
    error = await provoke(fail, status=status)
    assert (error.kind, error.status) == (kind, status)
    assert error.message.startswith("Tavily")


async def test_rate_limit_carries_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit", retry_after=17)
    assert (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 17.0)


async def test_rate_limit_without_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit")
    assert (error.kind, error.retry_after) == ("rate_limit", None)


async def test_bad_request_is_a_bad_response(fake: FakeTavily, provider: TavilyProvider) -> None:
    def reject(ctx: RequestContext) -> None:
        body = json.dumps({"detail": {"error": "Invalid topic. Must be 'general', 'news' or 'finance'."}})
        ctx.send(Reply(400, body, content_type="application/json"))

    fake.origin.route("/search", reject)
    error = await failure(provider)
    assert (error.kind, error.status) == ("bad_response", 400)
    assert "Invalid topic" in error.message


async def test_wrong_key_is_an_auth_error(provoke: Provoke) -> None:
    error = await provoke("wrong key")
    assert (error.kind, error.status) == ("auth", 401)


@pytest.mark.parametrize("answer", ['{"results": "none"}', "[]", "null", '"text"'])
async def test_json_without_results_is_a_bad_response(
    fake: FakeTavily, provider: TavilyProvider, answer: str
) -> None:
    fake.origin.serve("/search", answer, content_type="application/json")
    assert (await failure(provider)).kind == "bad_response"


@pytest.mark.parametrize("key", [None, ""])
async def test_no_key_is_a_config_error_never_keyless(
    make_provider: ProviderFactory, key: str | None
) -> None:
    with pytest.raises(ProviderError) as caught:
        make_provider(TavilyProvider, "http://127.0.0.1:9", key)
    assert caught.value.kind == "config"
    assert "TAVILY_API_KEY" in caught.value.message


async def test_the_key_never_appears_in_errors(
    fake: FakeTavily, provoke: Provoke, fake_failure: Failure
) -> None:
    assert_never_shows(await provoke(fake_failure), fake.api_key)


async def test_a_key_echoed_by_the_service_is_redacted(fake: FakeTavily, provider: TavilyProvider) -> None:
    def echo(ctx: RequestContext) -> None:
        detail = f"Unauthorized: {ctx.headers['authorization']} is not a valid API key."
        ctx.send(Reply(401, json.dumps({"detail": {"error": detail}}), content_type="application/json"))

    fake.origin.route("/search", echo)
    error = await failure(provider)
    assert error.kind == "auth"
    assert "[redacted]" in error.message
    assert fake.api_key not in str(error)


async def test_aclose_closes_the_sdk_client(provider: TavilyProvider, http: httpx.AsyncClient) -> None:
    await provider.aclose()
    assert provider._client.is_closed
    assert not http.is_closed  # the shared client is not the adapter's to close


async def test_common_failures(provoke: Provoke, common_failure: tuple[str, str]) -> None:
    situation, kind = common_failure
    assert (await provoke(situation)).kind == kind
