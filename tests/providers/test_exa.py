"""The Exa adapter, through the real exa-py SDK, against a fake Exa on loopback."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from mcp_server_web.providers.base import ProviderError, SearchQuery
from mcp_server_web.providers.exa import SNIPPET_CHARACTERS, ExaProvider
from tests.providers.conftest import ProviderFactory, Provoke, assert_never_shows, failure, fake_fixture
from tests.support.fakes.base import Failure, assert_samples, sample_results
from tests.support.fakes.exa import FakeExa
from tests.support.origin import Reply, RequestContext

fake = fake_fixture(FakeExa)


def serve_json(fake: FakeExa, answer: object, status: int = 200) -> None:
    fake.origin.serve("/search", json.dumps(answer), content_type="application/json", status=status)


async def test_results_come_out_as_plain_text_with_date_and_score(
    fake: FakeExa, provider: ExaProvider
) -> None:
    fake.answer(sample_results(3))
    results = await provider.search(SearchQuery("python asyncio", max_results=3), timeout=5)
    first = assert_samples(results, 3)
    assert first.published == "2026-11-01T10:00:00+00:00"
    # Exa's own score is not comparable with other providers': left out.
    assert first.score is None


async def test_highlights_are_joined_into_one_snippet(fake: FakeExa, provider: ExaProvider) -> None:
    (item,) = sample_results(1)
    item["highlights"] = ["First <em>bit</em> here.", "Second&nbsp;bit\n\nwith  space."]
    fake.answer([item])
    (result,) = await provider.search(SearchQuery("q"), timeout=5)
    assert result.snippet == "First bit here. … Second bit with space."


async def test_summary_stands_in_when_there_are_no_highlights(fake: FakeExa, provider: ExaProvider) -> None:
    serve_json(
        fake,
        {
            "requestId": "abc",
            "results": [
                {
                    "id": "1",
                    "url": "https://a.example/",
                    "title": "A",
                    "highlights": [],
                    "summary": "A <i>sum</i>",
                },
                {"id": "2", "url": "https://b.example/", "title": None, "publishedDate": None, "score": None},
            ],
        },
    )
    first, second = await provider.search(SearchQuery("q"), timeout=5)
    assert first.snippet == "A sum"
    assert (second.title, second.snippet, second.published, second.score) == (
        "https://b.example/",
        "",
        None,
        None,
    )


async def test_fields_of_the_wrong_type_are_ignored(fake: FakeExa, provider: ExaProvider) -> None:
    serve_json(
        fake,
        {
            "results": [
                {"id": "1", "url": 7, "title": "no url"},
                {"id": "2", "url": "https://b.example/", "title": 5, "highlights": "x", "score": "high"},
            ]
        },
    )
    (result,) = await provider.search(SearchQuery("q"), timeout=5)
    assert (result.url, result.title, result.snippet, result.score) == (
        "https://b.example/",
        "https://b.example/",
        "",
        None,
    )


async def test_request_maps_the_query_and_asks_for_highlights_only(
    fake: FakeExa, provider: ExaProvider
) -> None:
    fake.answer(sample_results(2))
    query = SearchQuery(
        "rust borrow checker",
        max_results=7,
        topic="news",
        time_range="week",
        include_domains=("rust-lang.org", "github.com"),
    )
    await provider.search(query, timeout=5)
    (body,) = fake.bodies
    start = datetime.fromisoformat(body.pop("startPublishedDate"))
    assert body == {
        "query": "rust borrow checker",
        "type": "auto",
        "numResults": 7,
        "includeDomains": ["rust-lang.org", "github.com"],
        "category": "news",
        "moderation": True,  # MCP_WEB_SAFESEARCH's default, moderate
        "contents": {"highlights": {"maxCharacters": SNIPPET_CHARACTERS}},
    }
    assert start.tzinfo is not None
    assert abs(start - (datetime.now(UTC) - timedelta(days=7))) < timedelta(minutes=1)
    (seen,) = fake.requests
    assert seen.method == "POST"
    assert seen.headers["x-api-key"] == fake.api_key
    assert seen.headers["user-agent"] == provider.config.user_agent


async def test_defaults_leave_out_filters(fake: FakeExa, provider: ExaProvider) -> None:
    fake.answer([])
    assert await provider.search(SearchQuery("q", exclude_domains=("pinterest.com",)), timeout=5) == []
    (body,) = fake.bodies
    assert body["excludeDomains"] == ["pinterest.com"]
    assert body["numResults"] == 5
    assert "text" not in body["contents"]
    assert not {"category", "startPublishedDate", "includeDomains"} & body.keys()


async def test_include_and_exclude_become_one_include_list(fake: FakeExa, provider: ExaProvider) -> None:
    fake.answer([])
    both = SearchQuery("q", include_domains=("a.com", "b.com"), exclude_domains=("b.com", "c.com"))
    await provider.search(both, timeout=5)
    assert fake.bodies[-1]["includeDomains"] == ["a.com"]
    assert "excludeDomains" not in fake.bodies[-1]
    # Nothing left to search in: no request at all.
    assert (
        await provider.search(
            SearchQuery("q", include_domains=("b.com",), exclude_domains=("b.com",)), timeout=5
        )
        == []
    )
    assert len(fake.bodies) == 1


async def test_max_results_is_respected(fake: FakeExa, provider: ExaProvider) -> None:
    fake.honor_num_results = False  # a service that sends more than asked still yields max_results
    fake.answer(sample_results(8))
    assert len(await provider.search(SearchQuery("q", max_results=3), timeout=5)) == 3


@pytest.mark.parametrize(
    ("fail", "status", "kind"),
    [
        ("auth", 401, "auth"),
        ("blocked", 403, "auth"),
        ("quota", 402, "quota"),
        ("server", 500, "upstream"),
        ("server", 503, "upstream"),
    ],
)
async def test_http_failures_are_classified(provoke: Provoke, fail: str, status: int, kind: str) -> None:
    error = await provoke(fail, status=status)
    assert (error.kind, error.status) == (kind, status)
    assert error.message.startswith("Exa")


async def test_rate_limit_carries_retry_after(provoke: Provoke) -> None:
    error = await provoke("rate_limit", retry_after=23)
    assert (error.kind, error.status, error.retry_after) == ("rate_limit", 429, 23.0)


@pytest.mark.parametrize("status", [400, 422])
async def test_refused_requests_are_bad_responses(fake: FakeExa, provider: ExaProvider, status: int) -> None:
    serve_json(
        fake,
        {"requestId": "r", "error": "numResults must be at most 100", "tag": "INVALID_REQUEST_BODY"},
        status,
    )
    error = await failure(provider)
    assert (error.kind, error.status) == ("bad_response", status)
    assert "numResults must be at most 100" in error.message


async def test_an_html_error_page_is_not_quoted(fake: FakeExa, provider: ExaProvider) -> None:
    fake.origin.serve("/search", "<html><h1>502 Bad Gateway</h1></html>", status=502)
    error = await failure(provider)
    assert (error.kind, error.status) == ("upstream", 502)
    assert "<" not in error.message


async def test_wrong_key_is_an_auth_error(provoke: Provoke) -> None:
    error = await provoke("wrong key")
    assert (error.kind, error.status) == ("auth", 401)


@pytest.mark.parametrize("answer", ["", "[]", '{"requestId": "r"}', '{"results": [42]}'])
async def test_empty_or_misshapen_json_is_a_bad_response(
    fake: FakeExa, provider: ExaProvider, answer: str
) -> None:
    fake.origin.serve("/search", answer, content_type="application/json")
    assert (await failure(provider)).kind == "bad_response"


@pytest.mark.parametrize("key", [None, ""])
async def test_no_key_is_a_config_error(
    make_provider: ProviderFactory, key: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXA_API_KEY", "from-the-environment")  # never picked up behind our back
    with pytest.raises(ProviderError) as caught:
        make_provider(ExaProvider, "http://127.0.0.1:9", key)
    assert caught.value.kind == "config"
    assert "EXA_API_KEY" in caught.value.message


async def test_the_key_never_appears_in_errors(
    fake: FakeExa, provoke: Provoke, fake_failure: Failure
) -> None:
    assert_never_shows(await provoke(fake_failure), fake.api_key)


async def test_a_key_echoed_by_the_service_is_redacted(fake: FakeExa, provider: ExaProvider) -> None:
    def echo(ctx: RequestContext) -> None:
        body = {
            "requestId": "r",
            "error": f"API key {ctx.headers['x-api-key']} is revoked",
            "tag": "INVALID_API_KEY",
        }
        ctx.send(Reply(401, json.dumps(body), content_type="application/json"))

    fake.origin.route("/search", echo)
    error = await failure(provider)
    assert error.kind == "auth"
    assert "[redacted]" in error.message
    assert fake.api_key not in str(error)


async def test_aclose_closes_the_sdk_client(
    fake: FakeExa, provider: ExaProvider, http: httpx.AsyncClient
) -> None:
    fake.answer(sample_results(1))
    await provider.search(SearchQuery("q"), timeout=5)
    client = provider._sdk._client
    assert client is not None
    await provider.aclose()
    assert client.is_closed
    assert not http.is_closed  # the shared client is not the adapter's to close


async def test_common_failures(provoke: Provoke, common_failure: tuple[str, str]) -> None:
    situation, kind = common_failure
    assert (await provoke(situation)).kind == kind
