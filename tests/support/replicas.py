"""Several real servers behind a real haproxy: the shape compose.yaml deploys, on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from tests.support.haproxy import Balancer, running_haproxy
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
