"""The real command-line server over stdio and streamable HTTP, driven by the SDK's Client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.server.conftest import error_code, fenced_text, text_of
from tests.server.test_protocol import DECLARED, capabilities, prompt_text
from tests.support.origin import Origin
from tests.support.samples import ARTICLE_TITLE, article_html
from tests.support.timing import child_cpu_time

SERVER_ENV = {**os.environ, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--port", str(port)],
        env=SERVER_ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read().decode()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    else:
        process.kill()
        raise AssertionError("HTTP server did not start listening")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


async def _exercise(client: Client, origin: Origin) -> None:
    tools = [tool.name for tool in (await client.list_tools()).tools]
    assert "web_fetch" in tools
    result = await client.call_tool("web_fetch", {"url": origin.serve("/a", article_html())})
    assert not result.is_error, text_of(result)
    assert f"# {ARTICLE_TITLE}" in fenced_text(result)
    assert result.structured_content["status"] == 200
    refused = await client.call_tool("web_fetch", {"url": "http://192.168.1.1/"})
    assert error_code(refused) == "blocked_address"
    assert capabilities(client) == DECLARED
    prompted = await client.get_prompt("fetch", {"url": origin.serve("/b", article_html())})
    assert f"# {ARTICLE_TITLE}" in fenced_text(prompt_text(prompted))


async def test_stdio_transport(origin: Origin) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_web"], env=SERVER_ENV)
    with anyio.fail_after(30):
        async with Client(params) as client:
            await _exercise(client, origin)


async def test_http_transport_with_progress(http_server: str, origin: Origin) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    with anyio.fail_after(30):
        async with Client(http_server) as client:
            await _exercise(client, origin)
            url = origin.serve("/p", article_html())
            result = await client.call_tool("web_fetch", {"url": url}, progress_callback=on_progress)
            assert not result.is_error
    assert seen and seen[-1] == 1.0


def test_help_is_fast_and_lists_settings() -> None:
    out, cpu = child_cpu_time(
        lambda: subprocess.run(
            [sys.executable, "-m", "mcp_server_web", "--help"], capture_output=True, text=True, check=True
        )
    )
    assert "--transport" in out.stdout and "MCP_WEB_TIMEOUT" in out.stdout
    assert cpu < 10, f"{cpu:.1f} s of CPU"


def test_bad_setting_is_a_clear_startup_error() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcp_server_web"],
        env={**os.environ, "MCP_WEB_TIMEOUT": "soon"},
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "MCP_WEB_TIMEOUT" in out.stderr and "expected a number" in out.stderr


def test_a_busy_port_is_one_error_line_and_exit_status_3() -> None:
    """Nothing claims to serve on a port another process holds: one line says why, at once."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--port", str(port)],
            env={**SERVER_ENV, "MCP_WEB_LOG_LEVEL": "info"},  # info: any "starting" line would show
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 3, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert f"cannot listen on 127.0.0.1:{port}: address already in use" in lines[0]
    assert "MCP_WEB_PORT" in lines[0]
    assert out.stdout == ""
