"""One client cannot starve the others' renders: the real server over HTTP, one client flooding it
with renders that never settle, another client's render timed against its quiet time.

Clients are told apart by their address (the server is stateless and has one token for all: see
server/callers.py); the two clients here connect from 127.0.0.1 and 127.0.0.2."""

from __future__ import annotations

import time

import anyio
from mcp import Client

from tests.render import pages
from tests.render.test_renderer import settled
from tests.server.conftest import fenced_text, text_of
from tests.support.browser import browser_or_skip
from tests.support.http_server import http_client, running_http_server
from tests.support.netguard import QuickOrigin

RENDER_TIMEOUT = 8.0
FLOOD = 6
"""Renders the flooding client asks for at once: two rendering and four queued, before the fix."""
NEVER_SETTLES = '<!doctype html><html><body><div id="app"></div><script>/* waits */</script></body></html>'
"""A page with no text and nothing going on: it holds its render until the limit, at little cost."""


async def _timed_render(client: Client, origin: QuickOrigin, path: str) -> float:
    url = origin.serve(path, pages.spa_shell())
    started = time.monotonic()
    result = await client.call_tool("web_fetch", {"url": url, "render": "always"})
    elapsed = time.monotonic() - started
    assert not result.is_error, text_of(result)
    assert pages.SPA_TEXT in fenced_text(result)
    return elapsed


async def test_another_clients_render_stays_near_its_quiet_time_while_one_client_floods() -> None:
    choice = browser_or_skip()
    env = {"MCP_WEB_RENDER_TIMEOUT": str(RENDER_TIMEOUT), "MCP_WEB_RENDER_CONCURRENCY": "2"}
    if choice.executable:
        env["MCP_WEB_BROWSER"] = choice.executable
    with QuickOrigin() as origin, running_http_server(**env) as server:
        origin.serve("/data.json", pages.spa_data(), content_type="application/json")
        async with (
            http_client(server.url, local_address="127.0.0.1") as flooder,
            http_client(server.url, local_address="127.0.0.2") as other,
        ):
            await _timed_render(other, origin, "/warm-up")  # the browser starts
            # The control: the same render with nothing else going on, the slower of two.
            quiet = max([await _timed_render(other, origin, f"/quiet/{n}") for n in range(2)])

            async def flood(n: int) -> None:
                url = origin.serve(f"/flood/{n}", NEVER_SETTLES)
                await flooder.call_tool("web_fetch", {"url": url, "render": "always"})

            async with anyio.create_task_group() as group:
                for n in range(FLOOD):
                    group.start_soon(flood, n)
                await settled(lambda: any(origin.hits(f"/flood/{n}") for n in range(FLOOD)), RENDER_TIMEOUT)
                assert any(origin.hits(f"/flood/{n}") for n in range(FLOOD)), "the flood never rendered"
                await anyio.sleep(0.5)  # every flood render is rendering or queued by now
                flooded = await _timed_render(other, origin, "/while-flooded")
                group.cancel_scope.cancel()
    assert flooded < 2 * quiet, f"{flooded:.1f} s while one client floods; {quiet:.1f} s quiet"
