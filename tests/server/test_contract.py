"""The tools' contract as clients read it (issue 25): one typed model per tool, nullable optional
arguments where null means absent, argument hygiene (unknown names, camelCase aliases, wrong
types named), structured results that stand on their own, icons and the snapshot lifetime.

Everything goes through the real server and the SDK's Client (in memory, and over stdio and
HTTP for the seam that sees raw arguments), against a loopback origin and the providers' fakes.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import unquote
from xml.etree import ElementTree

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from mcp_server_web.server.app import build_server
from mcp_server_web.server.contract import WebSearchInput
from tests.server.conftest import LOOPBACK_ONLY, error_code, fenced, make_settings, text_of
from tests.server.test_http_request import echo
from tests.server.test_search_and_read import ANSWER, page, results_for, search
from tests.server.test_transports import SERVER_ENV, http_server
from tests.support.fakes.base import FakeProvider, sample_results, settings_for
from tests.support.origin import Origin
from tests.support.samples import article_html

__all__ = ["http_server"]  # a fixture, imported for pytest

BEFORE = json.loads((Path(__file__).parent / "data" / "tools_list_before_issue_25.json").read_text())
"""tools/list of main before issue 25 (b841e6b), every tool enabled, captured with the SDK Client."""
ALL_TOOLS = ("web_search", "web_fetch", "http_request")
NEW_ARGUMENTS = {"web_search": {"published_after", "published_before"}}
_FENCE_ID = re.compile(r'untrusted-content id="[0-9a-f]{16}"')


async def listed(**settings: Any) -> dict[str, Any]:
    async with Client(build_server(make_settings(tools=ALL_TOOLS, **settings))) as client:
        tools = (await client.list_tools()).tools
    return {tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools}


def without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """A published property as it was before it was made nullable."""
    if "anyOf" not in prop or {"type": "null"} not in prop["anyOf"]:
        return prop
    (branch,) = [b for b in prop["anyOf"] if b != {"type": "null"}]
    return {**{k: v for k, v in prop.items() if k != "anyOf"}, **branch}


async def test_published_schemas_differ_from_before_only_by_nullability_and_new_arguments() -> None:
    now = await listed()
    before = {tool["name"]: tool for tool in BEFORE}
    assert list(now) == list(before)
    for name, tool in now.items():
        old, new = before[name]["inputSchema"], tool["inputSchema"]
        assert set(new) == set(old) and new["required"] == old["required"], name
        assert set(new["properties"]) - set(old["properties"]) == NEW_ARGUMENTS.get(name, set())
        assert list(new["properties"])[: len(old["properties"])] == list(old["properties"])
        for argument, prop in old["properties"].items():
            assert without_null(new["properties"][argument]) == prop, (name, argument)
        # Outputs only grow: every field published before is there, of the same type.
        old_out, new_out = before[name]["outputSchema"], tool["outputSchema"]
        for field, prop in old_out["properties"].items():
            assert {**new_out["properties"][field], "description": None} == {**prop, "description": None}
        # Everything else a client shows (title, annotations) is unchanged; icons are new.
        assert {
            k: v for k, v in tool.items() if k not in ("inputSchema", "outputSchema", "icons", "description")
        } == {
            k: v for k, v in before[name].items() if k not in ("inputSchema", "outputSchema", "description")
        }


def nullable(tools: dict[str, Any]) -> tuple[int, int]:
    """How many optional arguments of these tools take null, of how many."""
    optional = accepting = 0
    for tool in tools.values():
        schema = tool["inputSchema"]
        for argument, prop in schema["properties"].items():
            if argument in schema["required"] or prop.keys() == {"description"}:  # json: any value
                continue
            optional += 1
            accepting += {"type": "null"} in prop.get("anyOf", [])
    return accepting, optional


async def test_every_optional_argument_is_nullable_with_its_real_default() -> None:
    now = await listed()
    assert nullable({tool["name"]: tool for tool in BEFORE}) == (0, 24)
    assert nullable(now) == (26, 26)
    for name, tool in now.items():
        for argument, prop in tool["inputSchema"]["properties"].items():
            # The default published is the real one (8000), not null.
            assert (prop.get("default") is not None) == (argument in _DEFAULTED), (name, argument)
    assert now["web_fetch"]["inputSchema"]["properties"]["max_length"]["default"] == 8000


_DEFAULTED = {"format", "start_index", "max_length", "main_content", "refresh", "render", "outline"} | {
    "max_results",
    "topic",
    "page",
    "read",
    "method",
}


def _same_answer(result: CallToolResult) -> tuple[str, dict[str, Any] | None]:
    """A result with what differs between two identical calls made equal: fence ids (drawn per
    call), cache and timing fields."""
    text = _FENCE_ID.sub("untrusted-content id=ID", text_of(result))
    data = _without_fence_ids(result.structured_content)
    if data is not None:
        data.pop("cached", None)
        for attempt in data.get("attempts", ()):
            attempt["elapsed_ms"] = 0
    return re.sub(r"\(cached\)", "", text), data


def _without_fence_ids(value: Any) -> Any:
    if isinstance(value, str):
        return _FENCE_ID.sub("untrusted-content id=ID", value)
    if isinstance(value, dict):
        return {key: _without_fence_ids(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_fence_ids(item) for item in value]
    return value


async def test_null_means_what_leaving_an_argument_out_means(
    origin: Origin, fakes: dict[str, FakeProvider]
) -> None:
    """Each optional argument of each tool sent as null gives the answer the call without it gives,
    and sends the provider or the origin exactly the same request."""
    page = origin.serve("/article", article_html())
    origin.route("/echo", echo)
    fakes["tavily"].answer(sample_results(3))
    settings = settings_for(fakes, tools=ALL_TOOLS, search_providers=("tavily",), **_loopback())
    calls = {
        "web_fetch": {"url": page},
        "web_search": {"query": "rivers"},
        "http_request": {"url": origin.url("/echo")},
    }
    async with Client(build_server(settings)) as client:
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        for name, required in calls.items():
            plain = _same_answer(await client.call_tool(name, required))
            assert not plain[0].startswith(("invalid", "internal")), plain[0]
            sent = len(fakes["tavily"].bodies)
            for argument in schemas[name]["properties"]:
                if argument in required:
                    continue
                nulled = await client.call_tool(name, {**required, argument: None})
                assert _same_answer(nulled) == plain, (name, argument)
            if name == "web_search":
                # Every nulled search reached the provider (no cache) with the very same request.
                bodies = fakes["tavily"].bodies
                assert len(bodies) == sent + len(schemas[name]["properties"]) - 1
                assert all(body == bodies[sent - 1] for body in bodies[sent - 1 :])
        # And all of them null at once: what a strict client sends for a call with only the
        # required arguments.
        for name, required in calls.items():
            everything = {
                argument: None for argument in schemas[name]["properties"] if argument not in required
            }
            alone = _same_answer(await client.call_tool(name, required))
            assert _same_answer(await client.call_tool(name, {**required, **everything})) == alone, name


def _loopback() -> dict[str, Any]:
    """make_settings' values, with the search cache off: a repeated search must reach the provider."""
    return {"allow_cidrs": LOOPBACK_ONLY, "timeout": 5.0, "render": "off", "search_cache_ttl": 0.0}


async def test_an_unknown_argument_is_named_with_the_valid_names(client: Client, origin: Origin) -> None:
    """Before: {"max_len": 300} was dropped by the SDK and the call answered 8,000 characters."""
    url = origin.serve("/long", article_html(paragraphs=80))
    result = await client.call_tool("web_fetch", {"url": url, "max_len": 300})
    assert error_code(result) == "invalid_argument"
    assert text_of(result) == (
        "invalid_argument: web_fetch has no argument named 'max_len'; its arguments are: url, format, "
        "start_index, max_length, main_content, refresh, render, query, outline, snapshot."
    )
    assert origin.hits("/long") == 0


async def test_camel_case_spellings_are_the_same_arguments(client: Client, origin: Origin) -> None:
    """Before: maxLength=300 was ignored and the page came back with 8,000 characters; now 300."""
    url = origin.serve("/long", article_html(paragraphs=80))
    camel = await client.call_tool(
        "web_fetch", {"url": url, "maxLength": 300, "startIndex": 100, "mainContent": "false"}
    )
    snake = await client.call_tool(
        "web_fetch", {"url": url, "max_length": 300, "start_index": 100, "main_content": False}
    )
    assert not camel.is_error, text_of(camel)
    assert _same_answer(camel)[1] == _same_answer(snake)[1]
    assert camel.structured_content["start_index"] == 100
    assert len(fenced(camel).inside) <= 300 and camel.structured_content["next_start_index"] <= 400
    both = await client.call_tool("web_fetch", {"url": url, "max_length": 300, "maxLength": 500})
    assert error_code(both) == "invalid_argument"
    assert "max_length and maxLength are the same argument" in text_of(both)
    agreeing = await client.call_tool("web_fetch", {"url": url, "max_length": 300, "maxLength": 300})
    assert not agreeing.is_error


async def test_every_multi_word_argument_takes_its_camel_case_spelling(
    fakes: dict[str, FakeProvider],
) -> None:
    fakes["tavily"].answer(sample_results(3))
    snake = {
        "query": "rivers",
        "max_results": 3,
        "time_range": "year",
        "include_domains": ["site0.example.com"],
        "exclude_domains": "site9.example.com",
        "published_after": "2024-01-01",
        "published_before": "2024-12-31",
    }
    camel = {
        "query": "rivers",
        "maxResults": 3,
        "timeRange": "year",
        "includeDomains": ["site0.example.com"],
        "excludeDomains": "site9.example.com",
        "publishedAfter": "2024-01-01",
        "publishedBefore": "2024-12-31",
    }
    settings = settings_for(fakes, search_providers=("tavily",), search_cache_ttl=0.0)
    async with Client(build_server(settings)) as client:
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        multi_word = {name for name in schemas["web_search"]["properties"] if "_" in name}
        assert {name for name in snake if "_" in name} == multi_word
        first = await client.call_tool("web_search", snake)
        second = await client.call_tool("web_search", camel)
    assert not second.is_error, text_of(second)
    assert _same_answer(first) == _same_answer(second)
    assert fakes["tavily"].bodies[-1] == fakes["tavily"].bodies[-2]
    assert fakes["tavily"].bodies[-1]["max_results"] == 3
    for model in (WebSearchInput,):
        assert model.aliases() == {
            "maxResults": "max_results",
            "timeRange": "time_range",
            "includeDomains": "include_domains",
            "excludeDomains": "exclude_domains",
            "publishedAfter": "published_after",
            "publishedBefore": "published_before",
        }


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("web_fetch", {"url": 42}, "invalid_url: url must be a string, got a number."),
        ("web_fetch", {"url": ["http://a/"]}, "invalid_url: url must be a string, got an array."),
        ("web_search", {"query": {"q": "x"}}, "invalid_argument: query must be a string, got an object."),
        (
            "web_search",
            {"query": "x", "include_domains": 5},
            "include_domains must be a list of domain names, got a number.",
        ),
        ("http_request", {"url": True}, "invalid_url: url must be a string, got a boolean."),
        (
            "http_request",
            {"url": "http://127.0.0.1/", "headers": 7},
            "headers must be an object of names to values, got a number.",
        ),
    ],
)
async def test_a_wrong_type_is_named_as_such(tool: str, arguments: dict[str, Any], message: str) -> None:
    """Before: url 42 was answered "url is required"."""
    async with Client(build_server(make_settings(tools=ALL_TOOLS))) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error and message in text_of(result)
    assert "validation error" not in text_of(result) and "pydantic" not in text_of(result)


async def test_argument_hygiene_holds_over_stdio_and_http(origin: Origin, http_server: str) -> None:
    """The seam that sees raw arguments is the SDK's, under every transport."""
    url = origin.serve("/long", article_html(paragraphs=80))
    stdio = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_web"], env=SERVER_ENV)
    for target in (stdio, http_server):
        with anyio.fail_after(30):
            async with Client(target) as client:
                unknown = await client.call_tool("web_fetch", {"url": url, "length": 300})
                camel = await client.call_tool("web_fetch", {"url": url, "maxLength": 300})
                typed = await client.call_tool("web_fetch", {"url": 42})
        assert error_code(unknown) == "invalid_argument" and "'length'" in text_of(unknown)
        assert not camel.is_error and len(fenced(camel).inside) <= 300
        assert text_of(typed) == "invalid_url: url must be a string, got a number."


async def test_the_fetch_prompt_names_an_unknown_argument(client: Client, origin: Origin) -> None:
    url = origin.serve("/p", article_html())
    with pytest.raises(MCPError) as refused:
        await client.get_prompt("fetch", {"url": url, "maxLength": "300"})
    assert refused.value.error.code == -32602
    assert "'maxLength'" in refused.value.error.message and "it takes: url" in refused.value.error.message
    assert origin.hits("/p") == 0


async def test_web_fetch_structured_content_holds_the_text_the_model_reads(
    client: Client, origin: Origin
) -> None:
    """Before: structuredContent had no page text at all (a client that passes only it to the
    model, as pydantic-ai does, gave the model 0 characters of the page)."""
    html = (
        "<html><head><title>Rivers</title></head><body><article><h1>Rivers</h1>"
        "<h2>Erosion</h2><p>Rivers cut valleys by erosion over thousands of years.</p>"
        "<h2>Deltas</h2><p>Sediment settles where the river meets the sea and builds a delta.</p>"
        "</article></body></html>"
    )
    url = origin.serve("/rivers", html)
    for arguments in ({}, {"query": "delta sediment"}, {"outline": True}, {"max_length": 40}):
        result = await client.call_tool("web_fetch", {"url": url, **arguments})
        assert not result.is_error, text_of(result)
        data, text = result.structured_content, text_of(result)
        fence = fenced(text)
        # The very fence of the text (same id), whole, and where the text has it.
        assert data["content"] is not None and fence.id in data["content"], arguments
        assert text.startswith(data["content"]), arguments
        assert data["content_note"] is None
    nothing = await client.call_tool("web_fetch", {"url": url, "query": "volcano magma"})
    assert nothing.structured_content["content"] is None
    assert nothing.structured_content["content_note"].startswith("No passage of this document")
    assert nothing.structured_content["content_note"] in text_of(nothing)
    flat = origin.serve(
        "/flat", "<html><body><p>Just one paragraph about rivers and their banks.</p></body></html>"
    )
    no_headings = await client.call_tool("web_fetch", {"url": flat, "outline": True})
    assert no_headings.structured_content["content"] is None
    assert no_headings.structured_content["content_note"] == text_of(no_headings)


async def test_web_search_read_content_is_fenced_in_structured_content(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    """A read page's text in structuredContent is web text a model will read: fenced there too
    (before: bare, outside any fence)."""
    url = origin.serve("/a", page("Harbour history", ANSWER))
    fakes["brave"].answer(results_for(origin, ["/a"]))
    result, _ = await search(fakes, {"query": "when did the lighthouse keeper light the lamp", "read": 1})
    assert not result.is_error, text_of(result)
    content = result.structured_content["results"][0]["content"]
    inner = fenced(content)
    assert inner.before == "" and inner.after == "" and inner.source == url
    assert ANSWER in inner.inside
    # The text block quotes the same passages inside its own fence around the whole listing.
    listing = fenced(result).inside
    assert all(f"   > {line}" in listing for line in inner.inside.splitlines() if line)


async def test_http_request_structured_output_keeps_the_body(origin: Origin) -> None:
    text_url = origin.serve("/t", "plain words from the API", "text/plain")
    json_url = origin.serve("/j", json.dumps({"answer": [1, 2]}), "application/json")
    async with Client(build_server(make_settings(tools=ALL_TOOLS))) as client:
        plain = await client.call_tool("http_request", {"url": text_url})
        parsed = await client.call_tool("http_request", {"url": json_url})
    assert plain.structured_content["body"] == "plain words from the API"
    assert fenced(plain).inside.endswith("\n\nplain words from the API")
    assert parsed.structured_content["body"] == {"answer": [1, 2]}
    assert json.dumps({"answer": [1, 2]}, indent=2) in fenced(parsed).inside


async def test_published_dates_are_checked_dates() -> None:
    """Before: published_after was an unknown name the SDK dropped, so a span that holds no date
    (after 2025, before 2024) searched all dates."""
    async with Client(build_server(make_settings())) as client:
        empty_span = await client.call_tool(
            "web_search", {"query": "x", "published_after": "2025-01-01", "publishedBefore": "2024-01-01"}
        )
        not_a_date = await client.call_tool("web_search", {"query": "x", "published_after": "last week"})
        no_such_day = await client.call_tool("web_search", {"query": "x", "published_before": "2024-02-30"})
    assert error_code(empty_span) == "invalid_argument"
    assert "published_after (2025-01-01) is later than published_before (2024-01-01)" in text_of(empty_span)
    assert text_of(not_a_date) == (
        "invalid_argument: published_after must be a date written YYYY-MM-DD; got 'last week'."
    )
    assert error_code(no_such_day) == "invalid_argument"
    # A full timestamp gives its date as written: providers filter by whole days.
    given = WebSearchInput.from_arguments(
        {"query": "x", "published_after": "2024-03-01T23:30:00-05:00", "published_before": " 2024-03-31 "}
    )
    assert (given.published_after, given.published_before) == (date(2024, 3, 1), date(2024, 3, 31))


async def test_server_and_tools_have_inline_icons() -> None:
    async with Client(build_server(make_settings(tools=ALL_TOOLS))) as client:
        server = client.server_info
        tools = (await client.list_tools()).tools
    assert server is not None and server.icons
    icons = [*server.icons, *(icon for tool in tools for icon in tool.icons or ())]
    assert len(icons) == 4 and len({icon.src for icon in icons}) == 4
    for icon in icons:
        # Inline, never a URL a client would fetch from somewhere.
        assert icon.mime_type == "image/svg+xml" and icon.src.startswith("data:image/svg+xml,")
        drawing = ElementTree.fromstring(unquote(icon.src.removeprefix("data:image/svg+xml,")))
        assert drawing.tag == "{http://www.w3.org/2000/svg}svg"
        assert "http" not in "".join(drawing.itertext()) and len(icon.src) < 1000


@pytest.mark.parametrize(("ttl", "said"), [(900.0, "15 minutes"), (3600.0, "1 hour"), (90.0, "90 seconds")])
async def test_web_fetch_description_states_how_long_a_snapshot_lives(ttl: float, said: str) -> None:
    async with Client(build_server(make_settings(cache_ttl=ttl))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert f"A snapshot lives up to {said} after its download" in (tools["web_fetch"].description or "")
