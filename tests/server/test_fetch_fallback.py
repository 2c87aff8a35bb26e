"""web_fetch's read-through (MCP_WEB_FETCH_FALLBACK): a page we cannot read is asked of Tavily's
extract, then Exa's contents, through the real tool and the real SDKs, against fakes on 127.0.0.1
that speak each endpoint's wire format; origins serving bot walls on 127.0.0.1 too."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_server_web.errors import ConfigError
from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, fenced_text, make_settings, text_of
from tests.server.test_transports import SERVER_ENV
from tests.support.fakes.base import sample_results
from tests.support.fakes.exa import API_KEY as EXA_KEY
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.tavily import API_KEY as TAVILY_KEY
from tests.support.fakes.tavily import FakeTavily
from tests.support.http_server import http_client, running_http_server
from tests.support.origin import Origin
from tests.support.samples import article_html

WALL = "<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"
SHELL = "<html><head><script src='/app.js'></script></head><body><div id='root'></div></body></html>"
PAGE_TEXT = "# The Valley\n\n" + "\n\n".join(f"Paragraph {i} about rivers and valleys." for i in range(200))


def settings_with(*fakes: FakeTavily | FakeExa, fallback: tuple[str, ...], **more: Any) -> Any:
    values: dict[str, Any] = {}
    for fake in fakes:
        values.update(fake.settings())
    values.update(more)
    return make_settings(**values, fetch_fallback=fallback)


def wall(origin: Origin, path: str = "/guarded") -> str:
    return origin.serve(path, WALL, status=403, headers={"cf-mitigated": "challenge"})


async def test_bot_wall_is_read_through_tavily_cached_and_paginated(
    origin: Origin, tavily: FakeTavily
) -> None:
    url = wall(origin)
    tavily.pages[url] = PAGE_TEXT
    async with Client(build_server(settings_with(tavily, fallback=("tavily",)))) as client:
        first = await client.call_tool("web_fetch", {"url": url, "max_length": 1000})
        assert not first.is_error, text_of(first)
        data = first.structured_content
        assert data["via"] == "tavily" and data["cached"] is False
        assert data["total_length"] == len(PAGE_TEXT) and data["next_start_index"] is not None
        assert fenced_text(first).startswith("# The Valley")
        assert any("Tavily, a third party, fetched this page" in note for note in data["warnings"])
        assert "bot-detection page" in data["warnings"][0]
        assert tavily.extracts == [
            {"urls": [url], "extract_depth": "basic", "format": "markdown", "timeout": 5.0}
        ]
        assert tavily.requests[0].headers["authorization"] == f"Bearer {TAVILY_KEY}"
        # The next page comes from the cached document: no second download, no second extract.
        second = await client.call_tool(
            "web_fetch",
            {
                "url": url,
                "start_index": data["next_start_index"],
                "snapshot": data["snapshot"],
                "max_length": 1000,
            },
        )
        assert not second.is_error, text_of(second)
        assert second.structured_content["cached"] is True and second.structured_content["via"] == "tavily"
        assert len(tavily.extracts) == 1 and origin.hits("/guarded") == 1


async def test_providers_are_asked_in_order_and_per_url_failures_fall_through(
    origin: Origin, tavily: FakeTavily, exa: FakeExa
) -> None:
    url = wall(origin)
    tavily.unreadable[url] = "Failed to fetch url"
    exa.pages[url] = ("The Valley", PAGE_TEXT)
    settings = settings_with(tavily, exa, fallback=("tavily", "exa"))
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("web_fetch", {"url": url, "format": "text"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "exa" and result.structured_content["title"] == "The Valley"
    assert any("Exa, a third party" in note for note in result.structured_content["warnings"])
    assert tavily.extracts[0]["format"] == "text"
    assert exa.contents[0]["urls"] == [url] and exa.contents[0]["text"] is True
    assert exa.requests[0].headers["x-api-key"] == EXA_KEY


async def test_every_provider_failing_keeps_the_code_and_names_each_reason(
    origin: Origin, tavily: FakeTavily, exa: FakeExa
) -> None:
    url = wall(origin)
    # Tavily's per-URL error echoing the key: never quoted back.
    tavily.unreadable[url] = f"could not fetch with key {TAVILY_KEY}"
    settings = settings_with(tavily, exa, fallback=("exa", "tavily"))
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "challenge_page"
    text = text_of(result)
    assert "bot-detection page (Cloudflare challenge)" in text
    assert "failed too" in text and text.index("exa:") < text.index("tavily:")
    assert "CRAWL_NOT_FOUND" in text and "could not fetch with key" in text
    assert TAVILY_KEY not in text and "[redacted]" in text


async def test_rejected_key_is_an_auth_reason(origin: Origin, tavily: FakeTavily) -> None:
    url = wall(origin)
    tavily.pages[url] = PAGE_TEXT
    wrong = "another-key-0123456789"
    settings = settings_with(tavily, fallback=("tavily",), tavily_api_key=wrong)
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "challenge_page"
    assert "tavily: auth: Tavily rejected the API key (HTTP 401)" in text_of(result)
    assert wrong not in text_of(result)


@pytest.mark.parametrize(("status", "words"), [(432, "plan's usage limit"), (433, "pay-as-you-go limit")])
async def test_tavily_quota_codes(origin: Origin, tavily: FakeTavily, status: int, words: str) -> None:
    url = wall(origin)
    tavily.statuses["quota"] = status
    tavily.fail("quota")
    async with Client(build_server(settings_with(tavily, fallback=("tavily",)))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
        again = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "challenge_page"
    assert f"tavily: quota: Tavily says the {words} is reached (HTTP {status})" in text_of(result)
    # Out of quota: benched, not asked again at once.
    assert "tavily: cooling down for" in text_of(again) and len(tavily.extracts) == 1


async def test_a_429_on_extract_benches_tavily_for_search_too(origin: Origin, tavily: FakeTavily) -> None:
    url = wall(origin)
    tavily.fail("rate_limit", retry_after=120)
    settings = settings_with(tavily, fallback=("tavily",), search_providers=("tavily",))
    async with Client(build_server(settings)) as client:
        fetched = await client.call_tool("web_fetch", {"url": url})
        assert error_code(fetched) == "challenge_page"
        assert "tavily: rate_limit: Tavily is rate-limiting requests (HTTP 429)" in text_of(fetched)
        tavily.answer(sample_results(3))
        searched = await client.call_tool("web_search", {"query": "rivers"})
    assert error_code(searched) == "all_providers_failed"
    attempts = searched.structured_content["attempts"] if searched.structured_content else None
    assert "cooling down for 120 s after rate_limit" in text_of(searched), attempts
    assert [r.path for r in tavily.requests] == ["/extract"]


async def test_a_429_on_search_benches_tavily_for_extract_too(origin: Origin, tavily: FakeTavily) -> None:
    url = wall(origin)
    tavily.pages[url] = PAGE_TEXT
    tavily.fail("rate_limit", retry_after=90)
    settings = settings_with(tavily, fallback=("tavily",), search_providers=("tavily",))
    async with Client(build_server(settings)) as client:
        searched = await client.call_tool("web_search", {"query": "rivers"})
        assert error_code(searched) == "all_providers_failed"
        tavily.answer([])
        fetched = await client.call_tool("web_fetch", {"url": url})
    assert error_code(fetched) == "challenge_page"
    assert "tavily: cooling down for 90 s after rate_limit" in text_of(fetched)
    assert [r.path for r in tavily.requests] == ["/search"]


async def test_bot_protection_refusal_is_read_through(origin: Origin, exa: FakeExa) -> None:
    url = origin.serve("/akamai", "<html><body><h1>Access Denied</h1>Reference #18.1</body></html>",
                       status=403, headers={"Server": "AkamaiGHost"})  # fmt: skip
    exa.pages[url] = ("Akamai-guarded", PAGE_TEXT)
    async with Client(build_server(settings_with(exa, fallback=("exa",)))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "exa"
    assert "bot protection, Akamai, refused" in result.structured_content["warnings"][0]


async def test_ordinary_errors_and_fine_pages_never_reach_a_provider(
    origin: Origin, tavily: FakeTavily, exa: FakeExa
) -> None:
    missing = origin.serve("/missing", "<html><body>Not here</body></html>", status=404)
    # An application's own 403 behind Cloudflare: cf-ray, but none of Cloudflare's refusal marks.
    forbidden = origin.serve("/private", "<html><body>Log in first</body></html>", status=403,
                             headers={"cf-ray": "8c1f2e3d4b5a6978-AMS", "Server": "cloudflare"})  # fmt: skip
    fine = origin.serve("/fine", article_html())
    for url in (missing, forbidden, fine):
        tavily.pages[url] = PAGE_TEXT
        exa.pages[url] = ("x", PAGE_TEXT)
    settings = settings_with(tavily, exa, fallback=("tavily", "exa"))
    async with Client(build_server(settings)) as client:
        assert error_code(await client.call_tool("web_fetch", {"url": missing})) == "http_error"
        refused = await client.call_tool("web_fetch", {"url": forbidden})
        ok = await client.call_tool("web_fetch", {"url": fine})
    assert error_code(refused) == "http_error" and "bot protection" not in text_of(refused)
    assert not ok.is_error and ok.structured_content["via"] == "direct"
    assert tavily.requests == [] and exa.requests == []


async def test_without_the_setting_nothing_is_ever_sent(
    origin: Origin, tavily: FakeTavily, exa: FakeExa
) -> None:
    url = wall(origin)
    shell = origin.serve("/spa", SHELL)
    tavily.pages[url] = tavily.pages[shell] = PAGE_TEXT
    async with Client(build_server(settings_with(tavily, exa, fallback=()))) as client:
        assert error_code(await client.call_tool("web_fetch", {"url": url})) == "challenge_page"
        assert error_code(await client.call_tool("web_fetch", {"url": shell})) == "extraction_failed"
    assert tavily.requests == [] and exa.requests == []


async def test_javascript_shell_without_a_browser_is_read_through(origin: Origin, tavily: FakeTavily) -> None:
    shell = origin.serve("/spa", SHELL)
    tavily.pages[shell] = PAGE_TEXT
    async with Client(build_server(settings_with(tavily, fallback=("tavily",)))) as client:
        result = await client.call_tool("web_fetch", {"url": shell})
        kept = await client.call_tool("web_fetch", {"url": shell, "render": "never"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "tavily"
    assert "its scripts build it" in result.structured_content["warnings"][0]
    # render="never" keeps to the plain download.
    assert error_code(kept) == "extraction_failed" and len(tavily.extracts) == 1


def test_a_listed_provider_without_its_key_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match=r"MCP_WEB_FETCH_FALLBACK lists exa.*EXA_API_KEY"):
        build_server(make_settings(fetch_fallback=("exa",)))


def _env(*fakes: FakeTavily | FakeExa) -> dict[str, str]:
    env: dict[str, str] = {"MCP_WEB_RENDER": "off"}
    for fake in fakes:
        name = fake.name.upper()
        env[f"{name}_API_KEY"] = fake.api_key
        env[f"MCP_WEB_{name}_URL"] = fake.origin.base
    return env


async def test_read_through_over_stdio(origin: Origin, tavily: FakeTavily, exa: FakeExa) -> None:
    url = wall(origin)
    exa.pages[url] = ("Over stdio", PAGE_TEXT)
    env = {**SERVER_ENV, **_env(tavily, exa), "MCP_WEB_FETCH_FALLBACK": "tavily,exa"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_web"], env=env)
    with anyio.fail_after(40):
        async with Client(params) as client:
            result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "exa"
    assert len(tavily.extracts) == 1 and len(exa.contents) == 1


async def test_read_through_over_http(origin: Origin, tavily: FakeTavily) -> None:
    url = wall(origin)
    tavily.pages[url] = PAGE_TEXT
    with running_http_server(**_env(tavily), MCP_WEB_FETCH_FALLBACK="tavily") as server:
        async with http_client(server.url) as client:
            result = await client.call_tool("web_fetch", {"url": url})
            tavily.fail("rate_limit", retry_after=30)
            other = await client.call_tool("web_fetch", {"url": wall(origin, "/other")})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "tavily"
    assert error_code(other) == "challenge_page" and "rate_limit" in text_of(other)


async def test_a_shell_with_a_little_text_takes_the_fuller_third_party_text(
    origin: Origin, tavily: FakeTavily
) -> None:
    page = (
        "<html><head><title>App</title></head><body><div id='root'><p>Please wait, loading the app</p></div>"
        "<script>" + "render();" * 2000 + "</script></body></html>"
    )
    url, unread = origin.serve("/app", page), origin.serve("/other-app", page)
    tavily.pages[url] = PAGE_TEXT
    async with Client(build_server(settings_with(tavily, fallback=("tavily",)))) as client:
        read = await client.call_tool("web_fetch", {"url": url})
        kept = await client.call_tool("web_fetch", {"url": unread})
    assert read.structured_content["via"] == "tavily" and fenced_text(read).startswith("# The Valley")
    # Tavily could not read the other one: the download's text stands, with both notes.
    assert kept.structured_content["via"] == "direct" and "Please wait" in fenced_text(kept)
    notes = kept.structured_content["warnings"]
    assert "empty shell rendered by JavaScript" in notes[0]
    assert "Asking third parties for its text failed (tavily: upstream: Tavily could not read" in notes[-1]
