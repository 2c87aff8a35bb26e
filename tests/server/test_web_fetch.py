"""web_fetch end to end: a real MCP Client, the real server, a real origin on 127.0.0.1."""

from __future__ import annotations

import itertools
import json
import re

import anyio
import pytest
from mcp import Client

from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, fenced, fenced_text, make_settings, text_of
from tests.support.origin import Origin, RequestContext, trickle
from tests.support.samples import (
    ARTICLE_TITLE,
    article_html,
    deeply_nested_html,
    gzip_bomb,
    json_ld_shell,
    long_markdown_html,
    minimal_pdf,
    next_data_shell,
    png_bytes,
    shift_jis_page,
)
from tests.support.timing import allowance, eventually, slowest, timed


async def test_article_becomes_markdown_with_absolute_links(client: Client, origin: Origin) -> None:
    url = origin.serve("/post/rivers", article_html())
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert re.search(rf"^# {ARTICLE_TITLE}$", text, re.M)
    assert "## Erosion" in text
    assert f"[relative link]({origin.base}/glossary/erosion)" in text
    assert "```python" in text and "return rate * 2" in text
    assert "| Nile | 6650 |" in text
    assert "SECRET_SCRIPT_TEXT" not in text and "color: red" not in text
    data = result.structured_content
    assert data is not None
    assert data["title"] and ARTICLE_TITLE in data["title"]
    assert data["status"] == 200 and data["content_type"] == "text/html"
    assert data["final_url"] == url and data["format"] == "markdown" and data["cached"] is False


async def test_request_is_honest(client: Client, origin: Origin) -> None:
    url = origin.serve("/ua", article_html())
    await client.call_tool("web_fetch", {"url": url})
    seen = next(r for r in origin.requests if r.path == "/ua")
    assert seen.headers["user-agent"].startswith("mcp-server-web/")
    assert seen.headers["accept"].startswith("text/markdown")


async def test_meta_declared_shift_jis_is_decoded(client: Client, origin: Origin) -> None:
    url = origin.serve("/jp", shift_jis_page(), content_type="text/html")
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert "川は長い時間をかけて谷を削ります" in fenced_text(result)


async def test_json_is_pretty_printed_in_a_fence(client: Client, origin: Origin) -> None:
    url = origin.serve("/data.json", json.dumps({"name": "river", "lengths": [1, 2]}), "application/json")
    result = await client.call_tool("web_fetch", {"url": url})
    page = fenced(result)
    assert page.before == "" and page.source == url
    assert page.inside.startswith("```json\n") and '  "name": "river"' in page.inside
    assert result.structured_content["content_type"] == "application/json"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("plain words\nsecond line", "text/plain"), ("# Title\n\nSome *markdown* here.", "text/markdown")],
)
async def test_text_and_markdown_pass_through(
    client: Client, origin: Origin, body: str, content_type: str
) -> None:
    url = origin.serve("/doc", body, f"{content_type}; charset=utf-8")
    result = await client.call_tool("web_fetch", {"url": url})
    page = fenced(result)
    assert page.before == "" and page.after == ""
    assert page.inside.strip() == body
    assert result.structured_content["content_type"] == content_type


async def test_pdf_text_layer_with_page_markers(client: Client, origin: Origin) -> None:
    url = origin.serve(
        "/paper.pdf", minimal_pdf(["First page words", "Second page words"]), "application/pdf"
    )
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert "First page words" in text and "Second page words" in text
    assert text.index("First page words") < text.index("Second page words")
    assert re.search(r"[Pp]age 2", text)
    assert result.structured_content["content_type"] == "application/pdf"


async def test_png_is_unsupported_even_when_labelled_html(client: Client, origin: Origin) -> None:
    for path, label in (("/img.png", "image/png"), ("/liar.html", "text/html")):
        url = origin.serve(path, png_bytes(), label)
        result = await client.call_tool("web_fetch", {"url": url})
        assert error_code(result) == "unsupported_content_type"
        assert "image/png" in text_of(result)


async def test_deeply_nested_html_does_not_crash(client: Client, origin: Origin) -> None:
    url = origin.serve("/deep", deeply_nested_html(50_000))
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert "deep inner text" in text_of(result)


async def test_redirect_chain_is_followed(client: Client, origin: Origin) -> None:
    final = origin.serve("/final", article_html())
    origin.redirect("/r2", "/final", 301)
    origin.redirect("/r1", origin.url("/r2"), 302)
    result = await client.call_tool("web_fetch", {"url": origin.url("/r1")})
    assert result.structured_content["final_url"] == final


async def test_redirect_to_refused_address_is_blocked(client: Client, origin: Origin) -> None:
    origin.redirect("/to-metadata", "http://169.254.169.254/latest/meta-data/")
    result = await client.call_tool("web_fetch", {"url": origin.url("/to-metadata")})
    assert error_code(result) == "blocked_address"
    assert "MCP_WEB_ALLOW_PRIVATE" in text_of(result)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "data:text/html,hi",
        "javascript:alert(1)",
        "example.com/x",
        "http://" + "a" * 5000 + ".com/",
    ],
)
async def test_invalid_urls(client: Client, url: str) -> None:
    assert error_code(await client.call_tool("web_fetch", {"url": url})) == "invalid_url"


async def test_missing_url_is_a_clear_error(client: Client) -> None:
    result = await client.call_tool("web_fetch", {})
    assert error_code(result) == "invalid_url"
    assert "url is required" in text_of(result)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.2/", "http://10.0.0.1/", "http://[::1]/", "http://2130706434/", "http://0x7f.0.0.2/"],
)
async def test_private_destinations_are_blocked(client: Client, url: str) -> None:
    # 127.0.0.1/32 is allowed for the test origin; every other private form stays refused
    # before any connection is made (the guard refuses literal addresses up front).
    result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "blocked_address"


async def test_robots_disallow(client: Client, origin: Origin) -> None:
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /private/\n", "text/plain")
    url = origin.serve("/private/page", article_html())
    result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "robots_disallowed"
    assert "Disallow: /private/" in text_of(result) and "MCP_WEB_RESPECT_ROBOTS=false" in text_of(result)
    assert origin.hits("/private/page") == 0
    # robots.txt is read once per origin, not once per call.
    await client.call_tool("web_fetch", {"url": origin.serve("/public", article_html())})
    assert origin.hits("/robots.txt") == 1


async def test_robots_can_be_turned_off(origin: Origin) -> None:
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /\n", "text/plain")
    url = origin.serve("/page", article_html())
    async with Client(build_server(make_settings(respect_robots=False))) as client:
        assert not (await client.call_tool("web_fetch", {"url": url})).is_error
    assert origin.hits("/robots.txt") == 0


async def test_http_error_status(client: Client, origin: Origin) -> None:
    result = await client.call_tool("web_fetch", {"url": origin.url("/missing")})
    assert error_code(result) == "http_error"
    assert "404" in text_of(result)


async def test_challenge_page_is_an_error_and_not_cached(client: Client, origin: Origin) -> None:
    challenge = "<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>"
    url = origin.serve("/guarded", challenge, status=403, headers={"cf-mitigated": "challenge"})
    assert error_code(await client.call_tool("web_fetch", {"url": url})) == "challenge_page"
    assert error_code(await client.call_tool("web_fetch", {"url": url})) == "challenge_page"
    assert origin.hits("/guarded") == 2


async def test_slow_server_times_out(origin: Origin) -> None:
    origin.route("/slow", trickle([b"<p>a</p>"] * 100, delay=0.5))  # 50 s
    origin.serve("/ordinary", article_html())
    pages = itertools.count()
    async with Client(build_server(make_settings(timeout=1.0))) as client:
        control = await slowest(
            lambda: client.call_tool("web_fetch", {"url": origin.url(f"/ordinary?n={next(pages)}")})
        )
        result, elapsed = await timed(lambda: client.call_tool("web_fetch", {"url": origin.url("/slow")}))
    late = allowance(4.0, control, 20)
    assert elapsed < 1.0 + late, (elapsed, late)
    assert error_code(result) == "timeout"
    assert "MCP_WEB_TIMEOUT" in text_of(result)


async def test_oversized_body_is_refused(origin: Origin) -> None:
    url = origin.serve("/big", "<p>" + "x" * (2 * 1024 * 1024) + "</p>")
    async with Client(build_server(make_settings(max_response_mb=1.0))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "too_large"


async def test_gzip_bomb_stops_at_the_cap(origin: Origin) -> None:
    url = origin.serve("/bomb", gzip_bomb(64), headers={"Content-Encoding": "gzip"})
    async with Client(build_server(make_settings(max_response_mb=2.0))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "too_large"


async def test_pagination_invariants(client: Client, origin: Origin) -> None:
    url = origin.serve("/long", long_markdown_html())
    pages: list[str] = []
    ids: set[str] = set()
    totals: set[int] = set()
    start: int | None = 0
    while start is not None:
        result = await client.call_tool("web_fetch", {"url": url, "start_index": start, "max_length": 3000})
        data = result.structured_content
        assert data["start_index"] == start
        totals.add(data["total_length"])
        page = fenced(result)
        assert page.before == ""
        ids.add(page.id)
        if data["next_start_index"] is not None:
            assert data["truncated"] is True
            remaining = data["total_length"] - data["next_start_index"]
            footer = (
                f"[{remaining} more characters of {data['total_length']}. "
                f"Call web_fetch again with start_index={data['next_start_index']} "
                f"and snapshot={data['snapshot']} to continue.]"
            )
            # The continuation line is ours: after the fence, never inside it.
            assert page.after == "\n\n" + footer
            assert len(page.inside) <= 3000
            assert data["next_start_index"] - start == len(page.inside)
        else:
            assert page.after == ""
        pages.append(page.inside)
        start = data["next_start_index"]
        assert len(pages) < 100
    # Every page, served from the cache or not, has an id of its own.
    assert len(ids) == len(pages)
    assert len(totals) == 1 and len(pages) > 3
    document = "".join(pages)
    assert len(document) == totals.pop()
    # One download served every page.
    assert origin.hits("/long") == 1
    # The whole document in one call equals the concatenated pages.
    whole = await client.call_tool("web_fetch", {"url": url, "max_length": 100000})
    entire = fenced(whole)
    assert (entire.before, entire.inside, entire.after) == ("", document, "")
    assert entire.id not in ids and whole.structured_content["cached"] is True


async def test_start_index_past_the_end(client: Client, origin: Origin) -> None:
    url = origin.serve("/short", article_html(2))
    result = await client.call_tool("web_fetch", {"url": url, "start_index": 10_000_000})
    assert not result.is_error
    assert "past the end" in text_of(result)
    assert result.structured_content["next_start_index"] is None


async def test_cache_refresh_and_format_keys(client: Client, origin: Origin) -> None:
    url = origin.serve("/c", article_html())
    first = await client.call_tool("web_fetch", {"url": url})
    second = await client.call_tool("web_fetch", {"url": url})
    assert first.structured_content["cached"] is False and second.structured_content["cached"] is True
    assert origin.hits("/c") == 1
    as_text = await client.call_tool("web_fetch", {"url": url, "format": "text"})
    assert "](" not in text_of(as_text) and "# " not in text_of(as_text)
    whole = await client.call_tool("web_fetch", {"url": url, "main_content": False})
    assert "About us" in text_of(whole) and "About us" not in text_of(first)
    assert origin.hits("/c") == 1  # other formats reuse the downloaded response
    refreshed = await client.call_tool("web_fetch", {"url": url, "refresh": True})
    assert refreshed.structured_content["cached"] is False and origin.hits("/c") == 2


async def test_html_format_returns_cleaned_html(client: Client, origin: Origin) -> None:
    url = origin.serve("/h", article_html())
    text = text_of(await client.call_tool("web_fetch", {"url": url, "format": "html"}))
    assert "<h2>" in text and "<script" not in text and "SECRET_SCRIPT_TEXT" not in text


async def test_single_flight_shares_one_download(client: Client, origin: Origin) -> None:
    def slow_article(ctx: RequestContext) -> None:
        import time

        time.sleep(0.4)
        from tests.support.origin import Reply

        ctx.send(Reply(body=article_html()))

    origin.route("/popular", slow_article)
    results = []

    async def call() -> None:
        results.append(await client.call_tool("web_fetch", {"url": origin.url("/popular")}))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(call)
    assert all(not r.is_error for r in results) and len(results) == 5
    assert origin.hits("/popular") == 1
    # The four that joined the download were answered from another call's work, as from a cache.
    assert sorted(r.structured_content["cached"] for r in results) == [False, True, True, True, True]


async def test_lenient_arguments_are_coerced_and_clamped(client: Client, origin: Origin) -> None:
    url = origin.serve("/lenient", long_markdown_html())
    result = await client.call_tool(
        "web_fetch", {"url": url, "max_length": "500", "start_index": "-5", "main_content": "true"}
    )
    assert not result.is_error, text_of(result)
    assert result.structured_content["start_index"] == 0
    assert result.structured_content["next_start_index"] <= 500
    huge = await client.call_tool("web_fetch", {"url": url, "max_length": 10**9})
    assert not huge.is_error
    bad = await client.call_tool("web_fetch", {"url": url, "format": "pdf"})
    assert error_code(bad) == "invalid_argument" and "markdown, text, html" in text_of(bad)


async def test_max_length_zero_or_less_means_the_default_page(client: Client, origin: Origin) -> None:
    """A model that sends 0 means "no limit" or made a mistake; one character would be useless.
    It gets the default page (8000 characters), as when max_length is left out."""
    url = origin.serve("/zero", long_markdown_html())
    default = await client.call_tool("web_fetch", {"url": url})
    assert not default.is_error, text_of(default)
    for value in (0, "0", -3):
        result = await client.call_tool("web_fetch", {"url": url, "max_length": value})
        assert not result.is_error, text_of(result)
        assert result.structured_content["next_start_index"] == default.structured_content["next_start_index"]
        assert result.structured_content["next_start_index"] > 1000


async def test_tool_listing_publishes_contract(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    fetch = tools["web_fetch"]
    props = fetch.input_schema["properties"]
    assert fetch.input_schema["required"] == ["url"]
    # Optional arguments are nullable: their bounds and enum sit on the non-null branch.
    max_length, output_format = props["max_length"]["anyOf"][0], props["format"]["anyOf"][0]
    assert max_length["maximum"] == 100000 and max_length["minimum"] == 0
    assert "0 means the default (8000)" in props["max_length"]["description"]
    assert output_format["enum"] == ["markdown", "text", "html"]
    assert fetch.output_schema is not None
    assert {"final_url", "next_start_index", "total_length", "cached"} <= set(
        fetch.output_schema["properties"]
    )
    assert fetch.annotations.read_only_hint is True and fetch.annotations.open_world_hint is True
    assert "start_index" in fetch.description


async def test_progress_is_reported(client: Client, origin: Origin) -> None:
    url = origin.serve("/progress", article_html())
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool("web_fetch", {"url": url}, progress_callback=on_progress)
    assert not result.is_error
    assert seen and seen[-1][0] == 1.0
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)


async def test_cancellation_stops_the_download(client: Client, origin: Origin) -> None:
    origin.route("/endless", trickle([b"<p>more</p>"] * 1000, delay=0.05))  # 50 s
    with anyio.move_on_after(0.5):
        await client.call_tool("web_fetch", {"url": origin.url("/endless")})
    assert origin.hits("/endless") == 1
    # The origin notices the client went away: the download really stopped.
    assert await eventually(lambda: "/endless" in origin.disconnects), "the download went on"
    # The server is still serving after a cancelled call.
    ok = await client.call_tool("web_fetch", {"url": origin.serve("/after", article_html())})
    assert not ok.is_error


async def test_page_without_text_is_extraction_failed(client: Client, origin: Origin) -> None:
    shell = "<html><head><script src='/app.js'></script></head><body><div id='root'></div></body></html>"
    result = await client.call_tool("web_fetch", {"url": origin.serve("/spa", shell)})
    assert error_code(result) == "extraction_failed"
    assert "JavaScript" in text_of(result)


async def test_javascript_shell_text_is_recovered_from_embedded_data(client: Client, origin: Origin) -> None:
    for path, page, needle, source in (
        ("/next", next_data_shell(), "grinding the rock beneath them", "__NEXT_DATA__"),
        ("/ld", json_ld_shell(), "drops its sediment", "JSON-LD articleBody"),
    ):
        result = await client.call_tool("web_fetch", {"url": origin.serve(path, page)})
        assert not result.is_error, text_of(result)
        text = text_of(result)
        assert needle in text and "Loading..." not in text
        warnings = result.structured_content["warnings"]
        assert len(warnings) == 1 and "rendered by JavaScript" in warnings[0] and source in warnings[0]
        assert "[Note: This page is rendered by JavaScript" in text


async def test_javascript_shell_without_data_gets_a_warning(client: Client, origin: Origin) -> None:
    shell = (
        "<html><head><title>App</title></head><body><div id='root'><p>Please wait, loading the app</p></div>"
        "<script>" + "render();" * 2000 + "</script></body></html>"
    )
    result = await client.call_tool("web_fetch", {"url": origin.serve("/shell", shell)})
    assert not result.is_error
    assert "empty shell rendered by JavaScript" in result.structured_content["warnings"][0]


async def test_short_ordinary_page_gets_no_warning(client: Client, origin: Origin) -> None:
    page = "<html><head><title>Tiny</title></head><body><p>Just one short paragraph.</p></body></html>"
    result = await client.call_tool("web_fetch", {"url": origin.serve("/tiny", page)})
    assert result.structured_content["warnings"] == [] and "Note:" not in text_of(result)
