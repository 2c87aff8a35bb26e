"""web_fetch's render argument through the real tool (the SDK's Client, in memory): when the browser
is used, what it says, how its document is cached and paginated, and every error it can give."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client

from mcp_server_web.server.app import build_server
from tests.render import pages
from tests.server.conftest import error_code, fenced_text, make_settings, text_of
from tests.support.browser import browser_or_skip
from tests.support.netguard import QuickOrigin


@pytest.fixture
def origin() -> Iterator[QuickOrigin]:
    with QuickOrigin() as served:
        yield served


async def connected(**overrides: Any) -> AsyncIterator[Client]:
    settings = make_settings(**{"render": "auto", "render_timeout": 10.0, **overrides})
    async with Client(build_server(settings)) as client:
        yield client


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    choice = browser_or_skip()
    # pytest-asyncio runs a fixture's setup and teardown in different tasks; the Client's task
    # group must be left in the task that entered it (as in tests/server/conftest.py).
    ready, finished = asyncio.Event(), asyncio.Event()
    holder: list[Client] = []

    async def hold() -> None:
        async for each in connected(browser=choice.executable):
            holder.append(each)
            ready.set()
            await finished.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait({task, asyncio.create_task(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()
    yield holder[0]
    finished.set()
    await task


def serve_spa(origin: QuickOrigin) -> str:
    origin.serve("/data.json", pages.spa_data(), content_type="application/json")
    return origin.serve("/", pages.spa_shell())


async def test_auto_renders_a_javascript_shell_and_says_so(client: Client, origin: QuickOrigin) -> None:
    result = await client.call_tool("web_fetch", {"url": serve_spa(origin)})
    assert not result.is_error, text_of(result)
    assert pages.SPA_TEXT in fenced_text(result)
    assert "# Rendered by the browser" in fenced_text(result)
    assert result.structured_content["via"] == "browser"
    assert result.structured_content["status"] == 200


async def test_a_rendered_document_is_cached_and_paginated_like_any_other(
    client: Client, origin: QuickOrigin
) -> None:
    url = serve_spa(origin)
    first = await client.call_tool("web_fetch", {"url": url, "max_length": 400})
    output = first.structured_content
    assert output["via"] == "browser" and output["truncated"]
    pages_seen = origin.hits("/")  # the plain download, then the browser's load
    assert pages_seen == 2
    second = await client.call_tool(
        "web_fetch",
        {
            "url": url,
            "max_length": 400,
            "start_index": output["next_start_index"],
            "snapshot": output["snapshot"],
        },
    )
    assert not second.is_error, text_of(second)
    assert second.structured_content["cached"] is True
    assert second.structured_content["via"] == "browser"
    assert second.structured_content["total_length"] == output["total_length"]
    assert origin.hits("/") == pages_seen and origin.hits("/data.json") == 1


async def test_render_never_keeps_to_the_plain_download(client: Client, origin: QuickOrigin) -> None:
    result = await client.call_tool("web_fetch", {"url": serve_spa(origin), "render": "never"})
    assert error_code(result) == "extraction_failed"
    assert "its scripts were not run" in text_of(result)
    assert origin.hits("/data.json") == 0


async def test_an_ordinary_page_is_not_rendered_under_auto(client: Client, origin: QuickOrigin) -> None:
    from tests.support.samples import article_html

    result = await client.call_tool("web_fetch", {"url": origin.serve("/a", article_html())})
    assert result.structured_content["via"] == "direct"
    assert origin.hits("/a") == 1


async def test_render_always_loads_any_page_in_the_browser(client: Client, origin: QuickOrigin) -> None:
    url = origin.serve("/", pages.shadow_component())
    result = await client.call_tool("web_fetch", {"url": url, "render": "always"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "browser"
    assert "lives in an open shadow root" in fenced_text(result)


async def test_render_always_reads_what_is_not_a_page_directly(client: Client, origin: QuickOrigin) -> None:
    url = origin.serve("/data", '{"answer": 42}', content_type="application/json")
    result = await client.call_tool("web_fetch", {"url": url, "render": "always"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "direct"
    assert '"answer": 42' in fenced_text(result)
    assert "not an HTML page" in text_of(result)


async def test_a_refused_page_is_refused_in_the_browser_as_in_a_plain_fetch(client: Client) -> None:
    result = await client.call_tool("web_fetch", {"url": "http://127.0.0.2:9/", "render": "always"})
    assert error_code(result) == "blocked_address"


async def test_robots_txt_applies_to_a_rendered_page(client: Client, origin: QuickOrigin) -> None:
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /private", content_type="text/plain")
    url = origin.serve("/private", pages.spa_shell())
    result = await client.call_tool("web_fetch", {"url": url, "render": "always"})
    assert error_code(result) == "robots_disallowed"
    assert origin.hits("/private") == 0


async def test_a_page_with_no_text_even_rendered_says_so(client: Client, origin: QuickOrigin) -> None:
    shell = "<html><body><div id=app></div><script>" + "/* code */" * 500 + "</script></body></html>"
    result = await client.call_tool("web_fetch", {"url": origin.serve("/", shell)})
    assert error_code(result) == "extraction_failed"
    assert "even as rendered in a browser" in text_of(result)


async def test_render_always_without_a_browser_says_how_to_get_one(origin: QuickOrigin) -> None:
    async for client in connected(render="off"):
        result = await client.call_tool("web_fetch", {"url": serve_spa(origin), "render": "always"})
        assert error_code(result) == "render_unavailable"
        assert "MCP_WEB_RENDER=off" in text_of(result)
        plain = await client.call_tool("web_fetch", {"url": serve_spa(origin)})
        assert error_code(plain) == "extraction_failed"
    async for client in connected(browser="/nonexistent/chromium"):
        result = await client.call_tool("web_fetch", {"url": serve_spa(origin), "render": "always"})
        assert error_code(result) == "render_unavailable"
        assert "MCP_WEB_BROWSER=/nonexistent/chromium" in text_of(result)


async def test_a_bad_render_value_is_a_clear_error(client: Client, origin: QuickOrigin) -> None:
    result = await client.call_tool("web_fetch", {"url": serve_spa(origin), "render": "sometimes"})
    assert error_code(result) == "invalid_argument"
    assert "auto, always, never" in text_of(result)


async def test_the_fuller_text_wins_when_the_render_reads_less(client: Client, origin: QuickOrigin) -> None:
    # The page's data is embedded, but its script (missing here) never shows it: the text
    # recovered from the download is kept, and the note says the browser read less.
    import json

    prose = " ".join(["The glacier moved slowly down the valley, grinding the rock beneath it."] * 8)
    data = json.dumps({"props": {"article": {"title": "Glaciers", "body": prose}}})
    page = (
        '<!DOCTYPE html><html><head><title>Loading</title><script id="__NEXT_DATA__" type="application/json">'
        f'{data}</script><script src="/main.js"></script></head>'
        '<body><div id="root"><div class="spinner">Loading...</div></div></body></html>'
    )
    result = await client.call_tool("web_fetch", {"url": origin.serve("/shell", page)})
    assert not result.is_error, text_of(result)
    assert "grinding the rock" in fenced_text(result)
    assert result.structured_content["via"] == "direct"
    assert "showed less text" in text_of(result)
    assert origin.hits("/main.js") == 1  # the browser did load the page


async def test_a_page_that_navigates_to_a_refused_address_keeps_its_own_text(
    client: Client, origin: QuickOrigin
) -> None:
    url = origin.serve("/", pages.navigates_away("location", "http://127.0.0.2:9/elsewhere"))
    result = await client.call_tool("web_fetch", {"url": url, "render": "always"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "browser"
    assert result.structured_content["final_url"] == url
    assert pages.AWAY_TEXT in fenced_text(result)
    assert "tried to go to http://127.0.0.2:9/elsewhere, which was refused" in text_of(result)


async def test_a_page_whose_script_never_yields_is_answered_from_its_download(origin: QuickOrigin) -> None:
    choice = browser_or_skip()
    origin.serve("/poll", "{}", content_type="application/json")
    async for client in connected(browser=choice.executable, render_timeout=3.0):
        # The control: a page read at the render's deadline.
        started = time.monotonic()
        control = await client.call_tool(
            "web_fetch", {"url": origin.serve("/live", pages.never_settles()), "render": "always"}
        )
        control_seconds = time.monotonic() - started
        assert not control.is_error, text_of(control)

        url = origin.serve("/busy", pages.never_yields())
        started = time.monotonic()
        result = await client.call_tool("web_fetch", {"url": url})
        elapsed = time.monotonic() - started
        assert not result.is_error, text_of(result)
        assert result.structured_content["via"] == "direct"
        assert pages.NEVER_YIELDS_TEXT in fenced_text(result)
        assert "Rendering this page in a browser failed" in text_of(result)
        assert "never yields" in text_of(result)
        # Plus the download and the conversion, which take a fraction of a second.
        assert elapsed < control_seconds + 1.5, (
            f"{elapsed:.1f} s; a page read at its deadline: {control_seconds:.1f} s"
        )

        always = await client.call_tool("web_fetch", {"url": url, "render": "always"})
        assert error_code(always) == "timeout"
        assert "MCP_WEB_RENDER_TIMEOUT" in text_of(always)
