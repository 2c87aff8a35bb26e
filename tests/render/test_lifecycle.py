"""The real server with a browser, over stdio and streamable HTTP: it renders through the tools,
and however it ends (stdin closed, SIGTERM, SIGKILL) no browser or driver process outlives it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from tests.render import pages
from tests.server.conftest import fenced_text, text_of
from tests.support.browser import browser_or_skip
from tests.support.http_server import http_client, running_http_server
from tests.support.netguard import QuickOrigin
from tests.support.proctree import descendants, living
from tests.support.timing import PATIENCE


def _environment(browser: str | None) -> dict[str, str]:
    env = {**os.environ, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning"}
    if browser:
        env["MCP_WEB_BROWSER"] = browser
    return env


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _our_servers() -> list[int]:
    """Living servers started by this process (children running mcp_server_web)."""
    return [
        pid
        for pid in living(descendants(os.getpid()))
        if b"mcp_server_web" in _command(pid) and _parent(pid) == os.getpid()
    ]


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _wait_gone(pids: list[int], seconds: float = PATIENCE) -> list[int]:
    deadline = time.monotonic() + seconds
    while living(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return living(pids)


def _browser_processes(server_pid: int) -> list[int]:
    """The server's descendants that belong to the browser: Playwright's driver and Chromium."""
    found = []
    for pid in descendants(server_pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"chrom" in command or b"playwright" in command or b"run-driver" in command:
            found.append(pid)
    return found


def _serve_spa(origin: QuickOrigin) -> str:
    origin.serve("/data.json", pages.spa_data(), content_type="application/json")
    return origin.serve("/", pages.spa_shell())


async def _render(client: Client, url: str) -> None:
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "browser"
    assert pages.SPA_TEXT in fenced_text(result)


async def test_over_stdio_the_browser_ends_when_stdin_closes() -> None:
    choice = browser_or_skip()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_server_web"], env=_environment(choice.executable)
    )
    before = set(_our_servers())
    with QuickOrigin() as origin, anyio.fail_after(60):
        async with Client(params) as client:
            await _render(client, _serve_spa(origin))
            # This test's server: a child of this process that was not there before (another
            # test's server may still be on its way out).
            servers = [pid for pid in _our_servers() if pid not in before]
            assert len(servers) == 1
            browser = _browser_processes(servers[0])
            assert any(b"chrom" in _command(pid) for pid in browser)
    assert _wait_gone([*servers, *browser]) == []


async def test_over_http_sigterm_closes_the_browser_and_sigkill_leaves_no_orphan() -> None:
    choice = browser_or_skip()
    env = {key: value for key, value in _environment(choice.executable).items() if key.startswith("MCP_WEB_")}
    for ending in (signal.SIGTERM, signal.SIGKILL):
        with QuickOrigin() as origin, running_http_server(**env) as server:
            async with http_client(server.url) as client:
                await _render(client, _serve_spa(origin))
            browser = _browser_processes(server.process.pid)
            assert browser, "the render ran in a browser below the server"
            server.process.send_signal(ending)
            server.process.wait(timeout=20)
            assert _wait_gone(browser) == [], f"browser processes outlived the server after {ending.name}"


async def test_an_in_memory_server_closes_its_browser_when_its_client_leaves() -> None:
    # A server run in-process (the SDK's in-memory Client; a host embedding it) ends by being
    # cancelled: its closing must still stop the browser and Playwright's driver.
    from mcp_server_web.server.app import build_server
    from tests.server.conftest import make_settings

    choice = browser_or_skip()
    before = set(_browser_processes(os.getpid()))
    settings = make_settings(render="auto", render_timeout=10.0, browser=choice.executable)
    with QuickOrigin() as origin:
        async with Client(build_server(settings)) as client:
            await _render(client, _serve_spa(origin))
            started = [pid for pid in _browser_processes(os.getpid()) if pid not in before]
            assert any(b"run-driver" in _command(pid) for pid in started)
            assert any(b"chrom" in _command(pid) for pid in started)
    assert _wait_gone(started) == []
