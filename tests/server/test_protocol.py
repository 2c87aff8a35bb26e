"""The MCP surface beyond the tools: the capabilities the server declares, the `fetch` prompt, and
the JSON-RPC errors of prompts/get; through the SDK's Client in memory and over HTTP, in both
protocol eras (the legacy initialize handshake and the 2026-07-28 server/discover)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import GetPromptResult, TextContent

from mcp_server_web.server.app import build_server
from tests.server.conftest import fenced, make_settings
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.messages import INITIALIZE
from tests.support.origin import Origin, Reply, RequestContext
from tests.support.samples import ARTICLE_TITLE, article_html

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
MODES = ["legacy", "auto"]
"""How the SDK's Client connects: the initialize handshake, or server/discover (2026-07-28)."""

DECLARED = {"prompts": {"listChanged": False}, "tools": {"listChanged": False}}
"""Exactly what the server has: tools, and the fetch prompt. No resources (it has none), no
logging (it sends no log notifications), no completions; list_changed is false because neither
list ever changes while the server runs."""
BLOCKED_URL = "http://10.1.2.3/internal"
"""A private address: the address policy refuses it before any connection is made."""


def capabilities(client: Client) -> dict[str, Any]:
    return client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")


@asynccontextmanager
async def in_memory(mode: str = "auto", **settings: Any) -> AsyncIterator[Client]:
    async with Client(build_server(make_settings(**settings)), mode=mode) as client:  # type: ignore[arg-type]
        yield client


@pytest.fixture(scope="module")
def served() -> RunningServer:
    with running_http_server() as server:
        yield server


def prompt_text(result: GetPromptResult) -> str:
    assert len(result.messages) == 1, result.messages
    message = result.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, TextContent), message.content
    return message.content.text


# -- capabilities --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_declares_exactly_tools_and_prompts_in_memory(mode: str) -> None:
    async with in_memory(mode) as client:
        assert capabilities(client) == DECLARED


@pytest.mark.parametrize("mode", MODES)
async def test_declares_exactly_tools_and_prompts_over_http(served: RunningServer, mode: str) -> None:
    async with http_client(served.url, mode=mode) as client:
        assert capabilities(client) == DECLARED


def test_initialize_result_over_raw_http(served: RunningServer) -> None:
    """What a client that is not the SDK reads: the initialize answer on the wire."""
    response = httpx.post(
        served.url,
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        timeout=10,
    )
    assert response.status_code == 200
    assert sse_message(response.text)["result"]["capabilities"] == DECLARED


@pytest.mark.parametrize("mode", MODES)
async def test_resource_methods_are_not_served(mode: str) -> None:
    async with in_memory(mode) as client:
        for call in (client.list_resources, client.list_resource_templates):
            with pytest.raises(MCPError) as refused:
                await call()
            assert refused.value.error.code == METHOD_NOT_FOUND


@pytest.mark.parametrize("mode", MODES)
async def test_without_web_fetch_there_is_no_prompt(mode: str) -> None:
    """The fetch prompt takes web_fetch's path; a server that does not expose web_fetch has no
    prompt, so it declares no prompts at all."""
    async with in_memory(mode, tools=("web_search",)) as client:
        assert capabilities(client) == {"tools": {"listChanged": False}}
        with pytest.raises(MCPError) as refused:
            await client.list_prompts()
        assert refused.value.error.code == METHOD_NOT_FOUND


# -- the fetch prompt ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_list_shows_fetch_with_its_url_argument(mode: str) -> None:
    async with in_memory(mode) as client:
        prompts = (await client.list_prompts()).prompts
    assert [prompt.name for prompt in prompts] == ["fetch"]
    (fetch,) = prompts
    assert fetch.description and "URL" in fetch.description
    assert fetch.arguments is not None
    assert [(argument.name, argument.required) for argument in fetch.arguments] == [("url", True)]
    assert fetch.arguments[0].description


@pytest.mark.parametrize("mode", MODES)
async def test_fetch_prompt_returns_the_page_as_a_user_message(mode: str, origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    async with in_memory(mode) as client:
        result = await client.get_prompt("fetch", {"url": url})
    text = prompt_text(result)
    # The same answer as web_fetch's text: the page fenced as untrusted content.
    page = fenced(text)
    assert page.source == url
    assert f"# {ARTICLE_TITLE}" in page.inside.splitlines()
    assert result.description == f"Contents of {url}"
    assert origin.hits("/article") == 1


async def test_fetch_prompt_tells_how_to_read_on(origin: Origin) -> None:
    url = origin.serve("/long", article_html(paragraphs=200))
    async with in_memory() as client:
        text = prompt_text(await client.get_prompt("fetch", {"url": url}))
    assert "Call web_fetch again with start_index=" in fenced(text).after


@pytest.mark.parametrize("mode", MODES)
async def test_fetch_prompt_on_a_blocked_address_returns_the_refusal(mode: str) -> None:
    async with in_memory(mode) as client:
        result = await client.get_prompt("fetch", {"url": BLOCKED_URL})
    text = prompt_text(result)
    assert text.startswith("blocked_address: "), text
    assert "MCP_WEB_ALLOW_PRIVATE" in text  # the operator's way out, as in web_fetch's error
    assert "Traceback" not in text
    assert result.description == f"Failed to fetch {BLOCKED_URL}"


async def test_fetch_prompt_obeys_robots_txt(origin: Origin) -> None:
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /private/\n", "text/plain")
    url = origin.serve("/private/page", article_html())
    async with in_memory() as client:
        text = prompt_text(await client.get_prompt("fetch", {"url": url}))
    assert text.startswith("robots_disallowed: "), text
    assert origin.hits("/private/page") == 0


async def test_fetch_prompt_with_a_url_that_is_not_http_returns_the_refusal() -> None:
    async with in_memory() as client:
        text = prompt_text(await client.get_prompt("fetch", {"url": "file:///etc/passwd"}))
    assert text.startswith("invalid_url: "), text


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("arguments", [None, {}, {"url": ""}, {"url": "   "}, {"other": "x"}])
async def test_fetch_prompt_without_url_is_invalid_params(
    mode: str, arguments: dict[str, str] | None
) -> None:
    async with in_memory(mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("fetch", arguments)
    assert refused.value.error.code == INVALID_PARAMS
    assert "url" in refused.value.error.message


async def test_fetch_prompt_over_http(served: RunningServer, origin: Origin) -> None:
    url = origin.serve("/over-http", article_html())
    async with http_client(served.url) as client:
        text = prompt_text(await client.get_prompt("fetch", {"url": url}))
        refusal = prompt_text(await client.get_prompt("fetch", {"url": BLOCKED_URL}))
    assert f"# {ARTICLE_TITLE}" in fenced(text).inside.splitlines()
    assert refusal.startswith("blocked_address: ")


async def test_tools_query_without_web_fetch_hides_the_prompt(served: RunningServer) -> None:
    """?tools= narrows a connection; a connection without web_fetch cannot fetch through the prompt."""
    async with http_client(served.url + "?tools=web_search") as client:
        assert (await client.list_prompts()).prompts == []
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("fetch", {"url": "http://127.0.0.1/"})
    assert refused.value.error.code == INVALID_PARAMS
    assert "?tools=" in refused.value.error.message
    async with http_client(served.url + "?tools=web_fetch") as client:
        assert [prompt.name for prompt in (await client.list_prompts()).prompts] == ["fetch"]


async def test_a_prompt_fetch_counts_against_the_concurrency_cap(origin: Origin) -> None:
    """MCP_WEB_MAX_CONCURRENCY caps the fetches a prompt makes as it caps tool calls: past it, the
    prompt answers rate_limited at once (as its result, like any failed fetch)."""

    def slow(ctx: RequestContext) -> None:
        time.sleep(1.5)
        ctx.send(Reply(body=article_html()))

    origin.route("/slow", slow)
    with running_http_server(MCP_WEB_MAX_CONCURRENCY="1") as server:
        texts: list[str] = []

        async def occupy() -> None:
            async with http_client(server.url) as client:
                texts.append(prompt_text(await client.get_prompt("fetch", {"url": origin.url("/slow")})))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(occupy)
            for _ in range(400):  # until the first fetch is in flight at the origin (up to 20 s)
                if origin.hits("/slow"):
                    break
                await anyio.sleep(0.05)
            async with http_client(server.url) as client:
                refused = prompt_text(await client.get_prompt("fetch", {"url": origin.url("/slow")}))
    assert refused.startswith("rate_limited: ") and "MCP_WEB_MAX_CONCURRENCY" in refused, refused
    assert f"# {ARTICLE_TITLE}" in fenced(texts[0]).inside.splitlines()


# -- unknown prompts -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_unknown_prompt_is_invalid_params_in_memory(mode: str) -> None:
    async with in_memory(mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("no_such_prompt", {"url": "http://127.0.0.1/"})
    assert refused.value.error.code == INVALID_PARAMS
    assert "no_such_prompt" in refused.value.error.message


def sse_message(body: str) -> dict[str, Any]:
    """The one JSON-RPC message of a streamable HTTP answer (an SSE stream, or plain JSON)."""
    data = [line[len("data:") :].strip() for line in body.splitlines() if line.startswith("data:")]
    messages = [json.loads(item) for item in data if item] if data else [json.loads(body)]
    answers = [message for message in messages if "id" in message]
    assert len(answers) == 1, body
    return answers[0]


@pytest.mark.parametrize("name", ["no_such_prompt", "Fetch", ""])
def test_unknown_prompt_is_invalid_params_on_the_wire(served: RunningServer, name: str) -> None:
    """Raw JSON-RPC over HTTP: the error object has code -32602 (it was 0, not a JSON-RPC code)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "prompts/get",
        "params": {"name": name, "arguments": {"url": "http://127.0.0.1/"}},
    }
    response = httpx.post(served.url, json=request, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    answer = sse_message(response.text)
    assert answer["id"] == 7
    assert answer["error"]["code"] == INVALID_PARAMS, answer
    assert "result" not in answer
