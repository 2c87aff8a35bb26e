"""Several real servers behind a real haproxy: the shape compose.yaml deploys, on loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.haproxy import SERVED_BY, Balancer, running_haproxy
from tests.support.http_server import RunningServer, running_http_server


@contextmanager
def running_replicas(
    n: int, *args: str, balance: str = "roundrobin", **env: str
) -> Iterator[tuple[Balancer, list[RunningServer]]]:
    """n servers (``running_http_server(*args, **env)``, each on its own port) and haproxy in
    front of them, every one of them passing haproxy's health check; servers[i] is named
    ``mcp{i + 1}`` in X-Served-By (``balancer.names[server.port]``).

    The servers get the same settings (point them at one Redis with MCP_WEB_REDIS_URL to share
    state). Kill one with ``server.process.kill()``; haproxy sends its requests elsewhere.
    """
    with ExitStack() as stack:
        servers = [stack.enter_context(running_http_server(*args, **env)) for _ in range(n)]
        balancer = stack.enter_context(running_haproxy([server.port for server in servers], balance=balance))
        balancer.wait_until_up()
        yield balancer, servers


@asynccontextmanager
async def noting_replicas(url: str, read_timeout: float = 120) -> AsyncIterator[tuple[Client, list[str]]]:
    """The SDK's Client over streamable HTTP through haproxy at url, and the replica that answered
    each POST it made, in order (haproxy's X-Served-By; "no server: HTTP <status>" when none did)."""
    served_by: list[str] = []

    async def note(response: httpx2.Response) -> None:
        if response.request.url.path == "/mcp" and response.request.method == "POST":
            served_by.append(response.headers.get(SERVED_BY, f"no server: HTTP {response.status_code}"))

    async with (
        httpx2.AsyncClient(
            event_hooks={"response": [note]}, timeout=httpx2.Timeout(30, read=read_timeout)
        ) as http,
        Client(streamable_http_client(url, http_client=http, terminate_on_close=False)) as client,
    ):
        yield client, served_by
