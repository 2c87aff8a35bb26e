"""A page or a query made to stall focused reading (query=, outline=true) stalls nothing else.

The reviewed attacks (issue 24, point 1), each against the real server over HTTP (a subprocess),
pages served from 127.0.0.1: one heading line of "# a", 2,500 spaces, "b" (served as
text/markdown, and inside <pre> of an HTML page), a heading of 50,000 "[", a 10 MB document
with a 400-character query of one- and two-letter words. While each call runs, the health check
and another client's plain fetch are timed: they must answer within 1 s (or three times what
they took on the quiet server just before, on a machine too busy for that).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio
import httpx
from mcp import Client

from tests.server.conftest import text_of
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.origin import Origin, RequestContext
from tests.support.samples import SHORT_WORDS_QUERY, english_like
from tests.support.timing import allowance

TOKEN = "focused-reading-token"
RESPONSIVE_S = 1.0
ORDINARY = (
    "<html><head><title>Ordinary</title></head><body><article><h1>Ordinary</h1>"
    + ("<p>An ordinary paragraph about rivers, lakes and the towns that draw water from them.</p>" * 30)
    + "</article></body></html>"
)


def serve_any_query(origin: Origin, path: str, body: str, content_type: str) -> str:
    encoded = body.encode()

    def handler(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Type": content_type, "Content-Length": str(len(encoded))})
        ctx.write(encoded)

    origin.route(path, handler)
    return origin.url(path)


class Probes:
    """The health check and another client's plain fetch, timed one after the other."""

    def __init__(self, server: RunningServer, other: Client, ordinary: str) -> None:
        self._server = server
        self._other = other
        self._ordinary = ordinary
        self._count = 0

    async def once(self) -> tuple[float, float]:
        self._count += 1
        async with httpx.AsyncClient(base_url=self._server.base, timeout=60) as health:
            started = time.monotonic()
            answer = await health.get("/healthz")
            healthz = time.monotonic() - started
        assert answer.status_code == 200
        started = time.monotonic()
        result = await self._other.call_tool("web_fetch", {"url": f"{self._ordinary}?probe={self._count}"})
        fetch = time.monotonic() - started
        assert not result.is_error, text_of(result)
        return healthz, fetch

    async def while_running(
        self, call: Callable[[], Awaitable[object]]
    ) -> tuple[list[tuple[float, float]], float]:
        """Probe until call returns (at least once); the probes' times, and the call's."""
        probes: list[tuple[float, float]] = []
        done = anyio.Event()
        took = 0.0

        async def run_call() -> None:
            nonlocal took
            started = time.monotonic()
            await call()
            took = time.monotonic() - started
            done.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run_call)
            await anyio.sleep(0.05)  # the call is under way on the server
            while not done.is_set() or not probes:
                probes.append(await self.once())
        return probes, took


async def responsive_while(
    server: RunningServer, origin: Origin, call: Callable[[Client], Awaitable[object]]
) -> float:
    """Run call (from its own client) under probes; assert they stayed quick; return the call's time."""
    ordinary = serve_any_query(origin, "/ordinary", ORDINARY, "text/html; charset=utf-8")
    async with http_client(server.url, TOKEN) as attacker, http_client(server.url, TOKEN) as other:
        probes = Probes(server, other, ordinary)
        await probes.once()  # the first plain fetch starts a converter: not a quiet server's time
        quiet = [await probes.once() for _ in range(3)]
        during, took = await probes.while_running(lambda: call(attacker))
    bound = allowance(RESPONSIVE_S, max(max(pair) for pair in quiet), 3)
    slowest_health = max(health for health, _ in during)
    slowest_fetch = max(fetch for _, fetch in during)
    print(
        f"\n{len(during)} probes during a {took:.2f} s call: healthz {slowest_health:.3f} s, "
        f"another client's fetch {slowest_fetch:.3f} s at most (quiet: {quiet})"
    )
    assert slowest_health <= bound, f"healthz took {slowest_health:.2f} s while the call ran"
    assert slowest_fetch <= bound, f"another client's fetch took {slowest_fetch:.2f} s while the call ran"
    return took


HEADING_OF_SPACES = "# a" + " " * 2500 + "b\n\nThe river feeds the lake.\n"


async def focused(client: Client, url: str, **arguments: object) -> dict[str, object]:
    result = await client.call_tool("web_fetch", {"url": url, **arguments})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def test_a_heading_of_spaces_stalls_nothing_by_outline_or_query() -> None:
    with Origin() as origin, running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN) as server:
        markdown = serve_any_query(origin, "/spaces.md", HEADING_OF_SPACES, "text/markdown; charset=utf-8")
        in_pre = serve_any_query(
            origin,
            "/spaces.html",
            "<html><head><title>Pre</title></head><body><main><h1>Pre</h1><p>The river feeds the lake, "
            f"as the log below shows.</p><pre>{HEADING_OF_SPACES * 3}</pre></main></body></html>",
            "text/html; charset=utf-8",
        )

        async def attack(client: Client) -> None:
            for _ in range(2):  # the second on the cached page: the cost was paid on every call
                entries = (await focused(client, markdown, outline=True))["outline"]
                assert entries and entries[0]["heading"].startswith("a")  # type: ignore[index]
                assert (await focused(client, markdown, query="river lake"))["passages"]
                assert (await focused(client, in_pre, query="river lake"))["passages"]
                await focused(client, in_pre, outline=True)

        await responsive_while(server, origin, attack)


async def test_a_heading_of_brackets_stalls_nothing() -> None:
    document = "# " + "[" * 50_000 + "\n\nThe river feeds the lake.\n"
    with Origin() as origin, running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN) as server:
        url = serve_any_query(origin, "/brackets.md", document, "text/markdown; charset=utf-8")

        async def attack(client: Client) -> None:
            entries = (await focused(client, url, outline=True))["outline"]
            assert len(entries[0]["heading"]) <= 300  # type: ignore[index]
            assert (await focused(client, url, query="river"))["passages"]

        await responsive_while(server, origin, attack)


async def test_a_ten_megabyte_document_and_a_query_of_short_words_stall_nothing() -> None:
    document = english_like(10_000_000)
    with (
        Origin() as origin,
        running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN, MCP_WEB_MAX_RESPONSE_MB="16") as server,
    ):
        url = serve_any_query(origin, "/big.md", document, "text/markdown; charset=utf-8")
        async with http_client(server.url, TOKEN) as client:
            first = await focused(client, url, max_length=1000)  # converted and cached beforehand
        assert first["total_length"] >= 9_000_000

        async def attack(client: Client) -> None:
            for _ in range(2):
                found = await focused(client, url, query=SHORT_WORDS_QUERY)
                assert found["cached"] and found["passages"]
            assert (await focused(client, url, outline=True))["outline"]

        took = await responsive_while(server, origin, attack)
        print(f"two 400-character queries of short words and an outline of 10 MB: {took:.2f} s")
