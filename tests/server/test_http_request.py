"""http_request through the real server and the SDK's in-memory Client, against a loopback origin."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from mcp import Client

from mcp_server_web.config import Settings
from mcp_server_web.fetch.net.decode import ACCEPT_ENCODING
from mcp_server_web.server.app import build_server
from mcp_server_web.server.http_request import DEFAULT_ACCEPT, TEXT_LIMIT, HttpRequestOutput
from tests.server.conftest import error_code, fenced, make_settings, text_of
from tests.support.netguard import GuardBackend
from tests.support.origin import Origin, Reply, RequestContext
from tests.support.samples import png_bytes
from tests.support.timing import allowance, slowest, timed

TOOLS = ("web_fetch", "http_request")
Connect = Callable[..., AbstractAsyncContextManager[Client]]


def read_body(ctx: RequestContext) -> bytes:
    """The request body; the test origin leaves it unread on the socket."""
    length = int(ctx.headers.get("content-length") or 0)
    return ctx._handler.rfile.read(length) if length else b""


def echo(ctx: RequestContext) -> None:
    """Answer with what arrived: method, path, headers and body, as JSON."""
    body = read_body(ctx)
    seen = {
        "method": ctx.method,
        "path": ctx.path,
        "headers": ctx.headers,
        "body": body.decode("utf-8", "replace"),
    }
    ctx.send(Reply(200, json.dumps(seen), content_type="application/json"))


@pytest.fixture
def guard() -> GuardBackend:
    return GuardBackend()


@pytest.fixture
def connect(guard: GuardBackend) -> Connect:
    """Connects a Client to a fresh server; every connection the server opens goes through guard."""

    @asynccontextmanager
    async def connected(**overrides: Any) -> AsyncIterator[Client]:
        settings: Settings = make_settings(**{"tools": TOOLS, **overrides})
        async with Client(build_server(settings, network_backend=guard)) as client:
            yield client

    return connected


@pytest.fixture
async def client(connect: Connect) -> AsyncIterator[Client]:
    # The Client's task group must be exited by the task that entered it, and pytest-asyncio
    # runs fixture setup and teardown in different tasks: a task of its own holds it.
    ready, finished = asyncio.Event(), asyncio.Event()
    holder: list[Client] = []

    async def hold() -> None:
        async with connect() as connected:
            holder.append(connected)
            ready.set()
            await finished.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait({task, asyncio.create_task(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()
    yield holder[0]
    finished.set()
    await task


async def call(client: Client, **arguments: Any) -> tuple[dict[str, Any], str]:
    """Call http_request expecting success; the structured content (validated) and the text."""
    result = await client.call_tool("http_request", arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    HttpRequestOutput.model_validate(result.structured_content)
    return result.structured_content, text_of(result)


async def test_get_json_is_parsed(client: Client, origin: Origin) -> None:
    url = origin.serve("/api/items", json.dumps({"items": [1, 2], "name": "café"}), "application/json")
    out, text = await call(client, url=url)
    assert out["status"] == 200
    assert out["body"] == {"items": [1, 2], "name": "café"}
    assert out["content_type"] == "application/json"
    assert out["final_url"] == url
    assert out["truncated"] is False
    assert out["headers"]["content-type"] == "application/json"
    assert text.startswith("HTTP 200 OK\n")
    answer = fenced(text)
    assert answer.before == "HTTP 200 OK\n\n" and answer.after == "" and answer.source == url
    # The server's headers are its words too: inside the fence, with the body.
    assert answer.inside.startswith("content-type: application/json\n")
    assert answer.inside.endswith(
        '\n\n```json\n{\n  "items": [\n    1,\n    2\n  ],\n  "name": "café"\n}\n```'
    )
    seen = origin.requests[-1]
    assert seen.method == "GET"
    assert seen.headers["accept"] == DEFAULT_ACCEPT


async def test_post_json_is_sent_as_application_json(client: Client, origin: Origin) -> None:
    origin.route("/echo", echo)
    out, _ = await call(client, url=origin.url("/echo"), method="post", json={"a": [1, None], "b": "é"})
    echoed = out["body"]
    assert echoed["method"] == "POST"
    assert echoed["headers"]["content-type"] == "application/json"
    assert json.loads(echoed["body"]) == {"a": [1, None], "b": "é"}


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
async def test_other_methods_send_their_body(client: Client, origin: Origin, method: str) -> None:
    origin.route("/echo", echo)
    out, text = await call(
        client,
        url=origin.url("/echo"),
        method=method,
        body="name=value",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    echoed = out["body"]
    assert echoed["method"] == method
    assert echoed["body"] == "name=value"
    assert echoed["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert text.startswith("HTTP 200 OK")


async def test_text_body_defaults_to_text_plain_and_json_text_to_json(client: Client, origin: Origin) -> None:
    origin.route("/echo", echo)
    plain, _ = await call(client, url=origin.url("/echo"), method="POST", body="hello")
    assert plain["body"]["headers"]["content-type"] == "text/plain; charset=utf-8"
    # The SDK hands a JSON-looking string over already parsed; it must still go out as that JSON.
    as_json, _ = await call(client, url=origin.url("/echo"), method="POST", body='{"k": [1, 2]}')
    assert as_json["body"]["headers"]["content-type"] == "application/json"
    assert json.loads(as_json["body"]["body"]) == {"k": [1, 2]}


async def test_head_returns_headers_and_no_body(client: Client, origin: Origin) -> None:
    url = origin.serve("/thing", json.dumps({"x": 1}), "application/json", headers={"ETag": '"v1"'})
    out, text = await call(client, url=url, method="HEAD")
    assert origin.requests[-1].method == "HEAD"
    assert out["status"] == 200
    assert out["body"] is None
    assert out["headers"]["etag"] == '"v1"'
    answer = fenced(text)
    assert 'etag: "v1"' in answer.inside
    assert "no body" in answer.after and "no body" not in answer.inside


async def test_params_are_appended_to_the_query(client: Client, origin: Origin) -> None:
    origin.route("/echo", echo)
    out, _ = await call(
        client,
        url=origin.url("/echo?page=1"),
        params={"q": "rivers & valleys", "n": 5, "tag": ["a", "b"], "exact": True, "skip": None},
    )
    query = parse_qsl(urlsplit(out["body"]["path"]).query)
    assert query == [
        ("page", "1"),
        ("q", "rivers & valleys"),
        ("n", "5"),
        ("tag", "a"),
        ("tag", "b"),
        ("exact", "true"),
    ]
    assert "page=1&q=rivers" in out["final_url"]


async def test_custom_headers_are_sent_but_not_host_or_accept_encoding(
    client: Client, origin: Origin
) -> None:
    origin.route("/echo", echo)
    out, text = await call(
        client,
        url=origin.url("/echo"),
        headers={
            "Authorization": "Bearer t0ken",
            "X-Trace": "abc",
            "Accept": "application/vnd.api+json",
            "Host": "evil.example",
            "Accept-Encoding": "identity",
        },
    )
    sent = out["body"]["headers"]
    assert sent["authorization"] == "Bearer t0ken"
    assert sent["x-trace"] == "abc"
    assert sent["accept"] == "application/vnd.api+json"
    assert sent["host"] == f"127.0.0.1:{origin.port}"
    assert sent["accept-encoding"] == ACCEPT_ENCODING
    assert "Not sent (set by the client itself): Host, Accept-Encoding." in text


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"Bad Name": "x"}, "not a valid header name"),
        ({"X-A": "one\r\nX-Injected: two"}, "line break"),
        ({"X-A": "café"}, "non-ASCII"),
        ({"X-A": {"nested": 1}}, "must be a string"),
        ("not an object", "must be an object"),
    ],
)
async def test_bad_headers_are_invalid_arguments(
    client: Client, origin: Origin, headers: Any, message: str
) -> None:
    result = await client.call_tool("http_request", {"url": origin.url("/x"), "headers": headers})
    assert error_code(result) == "invalid_argument"
    assert message in text_of(result)
    assert origin.requests == []


async def test_text_response_is_decoded_with_its_charset(client: Client, origin: Origin) -> None:
    url = origin.serve("/t", "Grüße aus Köln".encode("iso-8859-1"), "text/plain; charset=iso-8859-1")
    out, text = await call(client, url=url)
    assert out["body"] == "Grüße aus Köln"
    assert out["content_type"] == "text/plain"
    answer = fenced(text)
    assert answer.inside.endswith("\n\nGrüße aus Köln") and answer.after == ""
    assert "```" not in text


async def test_binary_response_is_described_not_shown(client: Client, origin: Origin) -> None:
    image = png_bytes()
    url = origin.serve("/img", image, "image/png")
    out, text = await call(client, url=url)
    assert out["body"] is None
    assert out["content_type"] == "image/png"
    assert f"(binary body, {len(image)} bytes, image/png, not shown)" in fenced(text).after
    assert "PNG" not in text


async def test_error_status_is_a_result_not_an_error(client: Client, origin: Origin) -> None:
    url = origin.serve("/missing", json.dumps({"error": "no such item"}), "application/json", status=404)
    result = await client.call_tool("http_request", {"url": url, "method": "DELETE"})
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["status"] == 404
    assert result.structured_content["body"] == {"error": "no such item"}
    assert text_of(result).startswith("HTTP 404 Not Found")


async def test_redirect_after_post_is_followed_as_get(client: Client, origin: Origin) -> None:
    origin.route("/echo", echo)
    start = origin.redirect("/create", origin.url("/echo"), status=303)
    out, text = await call(client, url=start, method="POST", json={"a": 1})
    assert out["final_url"] == origin.url("/echo")
    assert out["body"]["method"] == "GET"
    assert out["body"]["body"] == ""
    assert "after 1 redirect(s)" in text


async def test_large_body_is_cut_and_reported(connect: Connect, origin: Origin) -> None:
    url = origin.serve("/big", "x" * 5000, "text/plain")
    # 0.002 MB = 2097 bytes: well under the 1 MiB tool cap, so the operator's limit decides.
    async with connect(max_response_mb=0.002) as client:
        out, text = await call(client, url=url)
    assert out["truncated"] is True
    assert out["body"] == "x" * 2097
    assert "cut at the" in text


async def test_long_text_is_cut_in_the_text_content_only(client: Client, origin: Origin) -> None:
    url = origin.serve("/long", "y" * (TEXT_LIMIT + 500), "text/plain")
    out, text = await call(client, url=url)
    assert out["truncated"] is False
    assert len(out["body"]) == TEXT_LIMIT + 500
    answer = fenced(text)
    assert f"Showing the first {TEXT_LIMIT:,} of {TEXT_LIMIT + 500:,} characters" in answer.before
    assert answer.inside.endswith("\n\n" + "y" * TEXT_LIMIT) and answer.after == ""
    assert "y" * (TEXT_LIMIT + 1) not in text


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])
async def test_private_address_is_refused_before_connecting(
    client: Client, guard: GuardBackend, method: str
) -> None:
    result = await client.call_tool("http_request", {"url": "http://10.0.0.1/admin", "method": method})
    assert error_code(result) == "blocked_address"
    assert guard.connects == []


async def test_redirect_to_private_address_is_refused(
    client: Client, origin: Origin, guard: GuardBackend
) -> None:
    start = origin.redirect("/hop", "http://169.254.169.254/latest/meta-data/")
    result = await client.call_tool("http_request", {"url": start, "method": "POST", "body": "x"})
    assert error_code(result) == "blocked_address"
    assert [host for host, _ in guard.connects] == ["127.0.0.1"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"body": "a", "json": {"b": 1}}, "not both"),
        ({"method": "TRACE"}, "method must be one of"),
        ({"method": "HEAD", "json": {"a": 1}}, "HEAD request has no body"),
        ({"timeout": "soon"}, "timeout must be a number"),
        ({"params": {"a": {"b": 1}}}, "params: the value of a"),
    ],
)
async def test_invalid_arguments(
    client: Client, origin: Origin, arguments: dict[str, Any], message: str
) -> None:
    result = await client.call_tool("http_request", {"url": origin.url("/x"), **arguments})
    assert error_code(result) == "invalid_argument"
    assert message in text_of(result)
    assert origin.requests == []


async def test_missing_or_bad_url(client: Client) -> None:
    assert error_code(await client.call_tool("http_request", {})) == "invalid_url"
    assert error_code(await client.call_tool("http_request", {"url": "ftp://x/"})) == "invalid_url"


async def test_timeout_argument_limits_the_request(connect: Connect, origin: Origin) -> None:
    released = threading.Event()
    origin.route("/slow", lambda ctx: released.wait(60))  # the client gives up first
    ordinary = origin.serve("/ordinary", "An ordinary answer.", "text/plain")
    try:
        async with connect(timeout=10.0) as client:
            control = await slowest(lambda: client.call_tool("http_request", {"url": ordinary}))
            # 0.2 s is clamped up to the 1 s floor: the call still fails well before 10 s.
            result, elapsed = await timed(
                lambda: client.call_tool("http_request", {"url": origin.url("/slow"), "timeout": 0.2})
            )
    finally:
        released.set()
    assert error_code(result) == "timeout"
    late = allowance(1.5, control, 10)
    assert 0.9 <= elapsed < 1.0 + late, (elapsed, late)


async def test_not_listed_unless_enabled(connect: Connect) -> None:
    async with connect(tools=("web_search", "web_fetch")) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "http_request" not in names
        result = await client.call_tool("http_request", {"url": "http://127.0.0.1/"})
        assert result.is_error


async def test_listed_with_its_contract_when_enabled(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"web_fetch", "http_request"}
    tool = tools["http_request"]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is False
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.idempotent_hint is False
    assert tool.annotations.open_world_hint is True
    assert tool.input_schema["required"] == ["url"]
    assert (
        " ".join(tool.input_schema["properties"]["method"]["anyOf"][0]["enum"])
        == "GET HEAD POST PUT PATCH DELETE"
    )
    assert tool.output_schema is not None
    assert set(tool.output_schema["properties"]) == {
        "status",
        "headers",
        "body",
        "final_url",
        "content_type",
        "truncated",
    }
    assert tool.description is not None
    assert "robots.txt is not consulted" in tool.description
    assert "untrusted" in tool.description
    assert '</untrusted-content id="...">' in tool.description


def test_defaults_leave_http_request_off() -> None:
    assert "http_request" not in Settings().tools
