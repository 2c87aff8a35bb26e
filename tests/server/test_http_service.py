"""The HTTP service as deployed: token, Host/Origin lists, /healthz, ?tools=, concurrency cap, SIGTERM."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import anyio
import httpx
import pytest

from tests.server.conftest import error_code, text_of
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.messages import INITIALIZE
from tests.support.origin import Origin, Reply, RequestContext
from tests.support.samples import article_html

TOKEN = "test-token-8d1f2c"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def secured() -> RunningServer:
    with running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN) as server:
        yield server


def post(server: RunningServer, path: str = "/mcp", **headers: str) -> httpx.Response:
    return httpx.post(server.base + path, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=10)


def test_healthz_needs_no_token_and_says_nothing_secret(secured: RunningServer) -> None:
    response = httpx.get(secured.base + "/healthz", timeout=5)
    assert response.status_code == 200
    body = response.json()
    assert body["ready"] is True and body["status"] == "ok" and body["version"]
    assert TOKEN not in response.text


def test_missing_or_wrong_token_is_401(secured: RunningServer) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
        response = post(secured, **headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert post(secured, Authorization=f"Bearer {TOKEN}").status_code == 200


async def test_client_with_token_lists_and_calls(secured: RunningServer, origin: Origin) -> None:
    async with http_client(secured.url, TOKEN) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"web_search", "web_fetch"}
        result = await client.call_tool("web_fetch", {"url": origin.serve("/a", article_html())})
        assert not result.is_error, text_of(result)


def test_host_and_origin_allow_lists_on_loopback(secured: RunningServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    rebound = post(secured, Host="attacker.example:8000", **auth)
    assert rebound.status_code == 421 and "MCP_WEB_ALLOWED_HOSTS" in rebound.text
    cross_site = post(secured, Origin="https://attacker.example", **auth)
    assert cross_site.status_code == 403 and "MCP_WEB_ALLOWED_ORIGINS" in cross_site.text
    assert (
        post(secured, Host=f"localhost:{secured.port}", Origin="http://localhost:6274", **auth).status_code
        == 200
    )


def test_configured_host_list() -> None:
    with running_http_server(MCP_WEB_ALLOWED_HOSTS="mcp.internal.example") as server:
        assert post(server, Host="mcp.internal.example").status_code == 200
        assert post(server, Host="mcp.internal.example:8443").status_code == 200
        assert post(server, Host=f"127.0.0.1:{server.port}").status_code == 421


async def test_tools_query_narrows_the_connection(secured: RunningServer, origin: Origin) -> None:
    async with http_client(secured.url + "?tools=web_fetch", TOKEN) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["web_fetch"]
        refused = await client.call_tool("web_search", {"query": "x"})
        assert error_code(refused) == "invalid_argument" and "not available on this connection" in text_of(
            refused
        )
        fetched = await client.call_tool("web_fetch", {"url": origin.serve("/b", article_html())})
        assert not fetched.is_error


def test_tools_query_cannot_widen_or_misspell(secured: RunningServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for query in ("?tools=web_fecth", "?tools=http_request", "?tools="):
        response = post(secured, "/mcp" + query, **auth)
        assert response.status_code == 400, query
        assert "tools" in response.json()["error"]


def test_refuses_to_serve_off_loopback_without_a_token() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "MCP_WEB_AUTH_TOKEN" in out.stderr and "MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE" in out.stderr


def _slow_page(seconds: float) -> object:
    def handler(ctx: RequestContext) -> None:
        time.sleep(seconds)
        ctx.send(Reply(body=article_html()))

    return handler


async def test_concurrency_cap_refuses_past_the_limit(origin: Origin) -> None:
    origin.route("/slow", _slow_page(1.0))  # type: ignore[arg-type]
    with running_http_server(MCP_WEB_MAX_CONCURRENCY="2") as server:
        results = []

        async def call(i: int) -> None:
            async with http_client(server.url) as client:
                results.append(await client.call_tool("web_fetch", {"url": origin.url(f"/slow?{i}")}))

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(call, i)
    codes = sorted("ok" if not r.is_error else error_code(r) for r in results)
    assert codes == ["ok", "ok", "rate_limited", "rate_limited"]
    refused = next(r for r in results if r.is_error)
    assert "MCP_WEB_MAX_CONCURRENCY" in text_of(refused)


async def test_sigterm_lets_in_flight_calls_finish(origin: Origin) -> None:
    origin.route("/slow", _slow_page(2.5))  # type: ignore[arg-type]
    with running_http_server() as server:
        outcome: list[object] = []

        async def slow_call() -> None:
            async with http_client(server.url) as client:
                # The client validates structured results against the listed output schema and
                # lists tools on demand; list first, so nothing but the call needs the server.
                await client.list_tools()
                outcome.append(await client.call_tool("web_fetch", {"url": origin.url("/slow")}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_call)
            # Wait (bounded) until the call is in flight at the origin: on a loaded machine the
            # client's start-up alone can take longer than any fixed sleep.
            for _ in range(400):  # up to 20 s
                if origin.hits("/slow"):
                    break
                await anyio.sleep(0.05)
            assert origin.hits("/slow") == 1
            server.process.send_signal(15)
            await anyio.sleep(0.3)
            # New connections are refused while the in-flight call finishes.
            with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
                pass
        exit_code = await anyio.to_thread.run_sync(lambda: server.process.wait(timeout=15))
    # uvicorn re-raises the signal once it has drained, so the exit status says "ended by SIGTERM".
    assert exit_code in (0, -15)
    result = outcome[0]
    assert not result.is_error, text_of(result)  # type: ignore[attr-defined]


def test_healthz_reports_version_as_json(secured: RunningServer) -> None:
    from mcp_server_web import __version__

    assert json.loads(httpx.get(secured.base + "/healthz", timeout=5).text)["version"] == __version__
