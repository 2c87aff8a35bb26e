"""web_search end to end: the MCP Client, the real server, real adapters, fake providers on 127.0.0.1."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import anyio
from mcp import Client

from mcp_server_web.config import load_settings
from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, fenced, text_of
from tests.support.fakes.base import FakeProvider, sample_results, settings_for
from tests.support.timing import allowance, slowest, timed


async def call(fakes: dict[str, FakeProvider], arguments: dict[str, Any], **settings: Any) -> Any:
    server = build_server(settings_for(fakes, **settings))
    with anyio.fail_after(20):
        async with Client(server) as client:
            return await client.call_tool("web_search", arguments)


async def test_structured_results_and_attempts(fakes: dict[str, FakeProvider]) -> None:
    fakes["tavily"].fail("rate_limit", retry_after=60)
    fakes["brave"].answer(sample_results(4))
    result = await call(
        fakes, {"query": "rivers", "max_results": "3"}, search_providers=("tavily", "brave", "duckduckgo")
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["provider"] == "brave" and data["query"] == "rivers" and data["cached"] is False
    assert [r["title"] for r in data["results"]] == ["Result r0", "Result r1", "Result r2"]
    assert data["results"][0]["snippet"] == "Snippet number 0 about the query & more."
    assert [(a["provider"], a["outcome"]) for a in data["attempts"]] == [("tavily", "error"), ("brave", "ok")]
    assert data["attempts"][0]["error"].startswith("rate_limit")
    listing = fenced(result)
    assert listing.before == 'Results for "rivers" from brave:\n\n' and listing.source == "brave"
    assert listing.inside.startswith("1. [Result r0](https://site0.example.com/r/0)\n")
    assert "3. [Result r2]" in listing.inside and "4. " not in listing.inside
    # Our fallback notes are outside the fence.
    assert "tavily failed: rate_limit" in listing.after


async def test_domains_and_time_range_reach_the_provider(fakes: dict[str, FakeProvider]) -> None:
    fakes["searxng"].answer(sample_results(2))
    result = await call(
        fakes,
        {
            "query": "python",
            "time_range": "week",
            "include_domains": "https://www.site0.example.com/x, site1.example.com",
        },
        search_providers=("searxng",),
    )
    assert not result.is_error, text_of(result)
    sent = fakes["searxng"].requests[-1].path
    assert "time_range=week" in sent and "site%3Asite0.example.com" in sent


async def test_all_providers_failed(fakes: dict[str, FakeProvider]) -> None:
    fakes["exa"].fail("auth")
    fakes["duckduckgo"].fail("blocked")
    result = await call(fakes, {"query": "x"}, search_providers=("exa", "duckduckgo"))
    assert error_code(result) == "all_providers_failed"
    assert "exa: auth" in text_of(result) and "duckduckgo: blocked" in text_of(result)


async def test_no_provider_and_bad_arguments(fakes: dict[str, FakeProvider]) -> None:
    result = await call(fakes, {"query": "x"}, search_providers=("tavily",), tavily_api_key=None)
    assert error_code(result) == "no_provider"
    assert error_code(await call(fakes, {"query": ""})) == "invalid_argument"
    bad = await call(fakes, {"query": "x", "provider": "google"}, search_providers=("brave",))
    assert error_code(bad) == "invalid_argument"
    assert error_code(await call(fakes, {"query": "x", "topic": "sports"})) == "invalid_argument"


async def test_empty_answer_is_not_an_error(fakes: dict[str, FakeProvider]) -> None:
    fakes["brave"].answer([])
    result = await call(fakes, {"query": "zzzz"}, search_providers=("brave",))
    assert not result.is_error
    assert result.structured_content["results"] == [] and result.structured_content["provider"] is None
    assert text_of(result).startswith('No results for "zzzz"')
    assert "untrusted-content" not in text_of(result)  # nothing from a third party to fence


async def test_search_tool_is_listed_with_its_contract(fakes: dict[str, FakeProvider]) -> None:
    async with Client(build_server(settings_for(fakes))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    search = tools["web_search"]
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["max_results"]["anyOf"][0]["maximum"] == 20
    assert {"provider", "results", "attempts", "cached"} <= set(search.output_schema["properties"])
    assert search.annotations.read_only_hint is True


async def test_no_provider_names_the_missing_key_not_the_variable_already_set() -> None:
    """MCP_WEB_SEARCH_PROVIDERS=tavily without TAVILY_API_KEY: the answer asks for the key."""
    for order, keys in (
        ("tavily", ["TAVILY_API_KEY"]),
        ("tavily,brave", ["TAVILY_API_KEY", "BRAVE_API_KEY"]),
    ):
        settings = load_settings({}, {"MCP_WEB_SEARCH_PROVIDERS": order})
        with anyio.fail_after(20):
            async with Client(build_server(settings)) as client:
                result = await client.call_tool("web_search", {"query": "rivers"})
        assert error_code(result) == "no_provider"
        text = text_of(result)
        assert all(key in text for key in keys), text
        assert "EXA_API_KEY" not in text and "set mcp_web_search_providers" not in text.lower(), text
        assert f"MCP_WEB_SEARCH_PROVIDERS lists {order.replace(',', ' and ')}" in text, text


async def test_locale_page_and_safesearch_reach_brave(fakes: dict[str, FakeProvider]) -> None:
    fakes["brave"].answer(sample_results(3))
    arguments = {"query": "rivers", "country": "de", "language": "DE", "page": 2, "max_results": 3}
    result = await call(fakes, arguments, search_providers=("brave",), safesearch="strict")
    assert not result.is_error, text_of(result)
    sent = fakes["brave"].params()
    assert (sent["country"], sent["search_lang"], sent["safesearch"], sent["offset"]) == (
        "DE",
        "de",
        "strict",
        "1",
    )
    assert result.structured_content["attempts"][0]["notes"] == []
    first = await call(fakes, {"query": "rivers"}, search_providers=("brave",))
    assert "offset" not in fakes["brave"].params() and fakes["brave"].params()["safesearch"] == "moderate"
    assert not first.is_error


async def test_locale_page_and_safesearch_reach_searxng(fakes: dict[str, FakeProvider]) -> None:
    fakes["searxng"].answer(sample_results(3))
    arguments = {"query": "rivers", "country": "CH", "language": "fr", "page": 3}
    result = await call(fakes, arguments, search_providers=("searxng",), safesearch="off")
    assert not result.is_error, text_of(result)
    sent = fakes["searxng"].params()
    assert (sent["language"], sent["safesearch"], sent["pageno"]) == ("fr-CH", "0", "3")
    alone = await call(fakes, {"query": "lakes", "country": "CH"}, search_providers=("searxng",))
    assert fakes["searxng"].params()["safesearch"] == "1" and "language" not in fakes["searxng"].params()
    assert "country=CH alone was not applied" in alone.structured_content["attempts"][0]["notes"][0]


async def test_duckduckgo_region_safe_search_news_and_emulated_pages(fakes: dict[str, FakeProvider]) -> None:
    fakes["duckduckgo"].answer(sample_results(10))
    arguments = {
        "query": "rivers",
        "country": "GB",
        "language": "en",
        "topic": "news",
        "page": 2,
        "max_results": 3,
    }
    result = await call(fakes, arguments, search_providers=("duckduckgo",), safesearch="strict")
    assert not result.is_error, text_of(result)
    form = fakes["duckduckgo"].forms[-1]  # type: ignore[attr-defined]
    assert (form["kl"], form["kp"]) == ("uk-en", "1")
    data = result.structured_content
    assert [r["url"] for r in data["results"]] == [f"https://site{i}.example.com/r/{i}" for i in (3, 4, 5)]
    notes = data["attempts"][0]["notes"]
    assert any("no news search" in note for note in notes)
    assert "- duckduckgo: DuckDuckGo's HTML page has no news search" in fenced(result).after
    assert any("cannot page" in note and "results 4 to 6" in note for note in notes)


async def test_tavily_country_name_language_and_what_it_lacks(fakes: dict[str, FakeProvider]) -> None:
    fakes["tavily"].answer(sample_results(6))
    arguments = {"query": "rivers", "country": "DE", "language": "de", "page": 2, "max_results": 3}
    result = await call(fakes, arguments, search_providers=("tavily",))
    assert not result.is_error, text_of(result)
    sent = fakes["tavily"].bodies[-1]  # type: ignore[attr-defined]
    assert (sent["country"], sent["language"], sent["max_results"]) == ("germany", "de", 6)
    data = result.structured_content
    assert [r["title"] for r in data["results"]] == ["Result r3", "Result r4", "Result r5"]
    notes = data["attempts"][0]["notes"]
    assert any("no safe-search" in note for note in notes) and any("cannot page" in note for note in notes)


async def test_exa_location_moderation_and_no_language(fakes: dict[str, FakeProvider]) -> None:
    fakes["exa"].answer(sample_results(2))
    result = await call(
        fakes, {"query": "rivers", "country": "fr", "language": "fr"}, search_providers=("exa",)
    )
    assert not result.is_error, text_of(result)
    sent = fakes["exa"].bodies[-1]  # type: ignore[attr-defined]
    assert (sent["userLocation"], sent["moderation"]) == ("FR", True)
    assert any("no language parameter" in note for note in result.structured_content["attempts"][0]["notes"])


async def test_bad_locale_arguments(fakes: dict[str, FakeProvider]) -> None:
    # page is clamped to 1-5, like max_results; a code is either a code or a mistake.
    for arguments in ({"country": "Germany"}, {"language": "deu"}, {"country": 49}):
        result = await call(fakes, {"query": "x", **arguments}, search_providers=("brave",))
        assert error_code(result) == "invalid_argument", arguments


async def test_published_is_iso_8601_with_a_zone_and_score_is_left_out(
    fakes: dict[str, FakeProvider],
) -> None:
    for name in ("tavily", "exa", "brave", "searxng", "duckduckgo"):
        for topic in ("general", "news"):
            fakes[name].answer(sample_results(2))
            result = await call(fakes, {"query": f"{name} {topic}", "topic": topic}, search_providers=(name,))
            assert not result.is_error, text_of(result)
            for item in result.structured_content["results"]:
                assert item.get("score") is None, (name, topic)
                if item.get("published") is None:
                    continue
                when = datetime.fromisoformat(item["published"])
                assert when.tzinfo is not None, (name, topic, item["published"])


async def test_fanout_fuses_by_reciprocal_rank_with_sources(fakes: dict[str, FakeProvider]) -> None:
    brave = sample_results(3)
    fakes["brave"].answer(brave)
    # Tavily's first result is Brave's second, under another spelling of its URL.
    again = {**brave[1], "url": "https://www.site1.example.com/r/1/", "title": "Result r1 (Tavily)"}
    fakes["tavily"].answer([again, {**sample_results(1, "t")[0], "url": "https://t.example.com/x"}])
    fakes["exa"].answer(sample_results(2, "e"))
    result = await call(
        fakes,
        {"query": "rivers", "max_results": 10},
        search_providers=("brave", "tavily", "exa"),
        search_mode="fanout",
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    # r1: 1/62 + 1/61; r0: 1/61; Tavily's second: 1/62; r2: 1/63. Exa (third) is not asked.
    assert [r["title"] for r in data["results"]] == [
        "Result r1 (Tavily)",
        "Result r0",
        "Result t0",
        "Result r2",
    ]
    assert [r["sources"] for r in data["results"]] == [["brave", "tavily"], ["brave"], ["tavily"], ["brave"]]
    assert [(a["provider"], a["outcome"]) for a in data["attempts"]] == [("brave", "ok"), ("tavily", "ok")]
    assert data["provider"] == "brave,tavily" and fakes["exa"].requests == []
    assert "   Found by: brave, tavily\n" in fenced(result).inside


async def test_fanout_cuts_a_slow_provider_at_the_deadline(fakes: dict[str, FakeProvider]) -> None:
    fakes["brave"].answer(sample_results(2))
    # The control: the same call (a server, a client, a search) answered by Brave alone.
    control = await slowest(lambda: call(fakes, {"query": "control"}, search_providers=("brave",)))
    fakes["exa"].fail("timeout")
    fakes["exa"].hang_seconds = 60  # a deadline not kept would wait for Exa's 10 s timeout
    result, elapsed = await timed(
        lambda: call(
            fakes,
            {"query": "rivers"},
            search_providers=("exa", "brave"),
            search_mode="fanout",
            search_deadline=1.5,
        )
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert [r["sources"] for r in data["results"]] == [["brave"], ["brave"]]
    assert [(a["provider"], a["outcome"]) for a in data["attempts"]] == [("exa", "error"), ("brave", "ok")]
    assert data["attempts"][0]["error"].startswith("timeout")
    late = allowance(1.0, control, 4)
    print(f"fan-out cut at the deadline: {elapsed:.2f} s (one Brave search: {control:.2f} s)")
    assert elapsed < 1.5 + late, (elapsed, late)
