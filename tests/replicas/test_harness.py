"""The real components the replica tests stand on: our own redis-server, haproxy with the shipped
configuration, and several real servers behind it (tests/support/{redis_server,haproxy,replicas}.py)."""

from __future__ import annotations

import itertools
import socket
import subprocess
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.haproxy import DEPLOYED_CONFIG, SERVED_BY
from tests.support.origin import Origin
from tests.support.redis_server import RedisReplyError, RedisServer, running_redis
from tests.support.replicas import running_replicas
from tests.support.services import service_or_skip

# -- redis-server --------------------------------------------------------------------------------


def test_redis_restarts_empty_on_the_same_port(redis_server: RedisServer) -> None:
    port = redis_server.port
    assert redis_server.command("SET", "mcp-web:probe", "1") == "OK"
    assert redis_server.command("CONFIG", "GET", "port") == [b"port", str(port).encode()]

    redis_server.stop()
    with pytest.raises(ConnectionRefusedError):
        redis_server.command("PING")

    redis_server.start()
    assert redis_server.port == port
    assert redis_server.command("GET", "mcp-web:probe") is None
    assert redis_server.command("DBSIZE") == 0
    assert redis_server.command("CONFIG", "GET", "save") == [b"save", b""]
    assert redis_server.command("CONFIG", "GET", "appendonly") == [b"appendonly", b"no"]


def test_redis_with_a_password_refuses_a_client_without_it() -> None:
    with running_redis(password="s3cret-for-tests") as server:
        with pytest.raises(RedisReplyError, match="NOAUTH"):
            server.command("PING", authenticate=False)
        assert server.command("PING") == "PONG"
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        assert server.url_with_password == f"redis://:s3cret-for-tests@127.0.0.1:{server.port}/0"
        # In its config file, not its command line: other users' `ps` does not show it.
        assert server.process is not None
        assert b"s3cret" not in Path(f"/proc/{server.process.pid}/cmdline").read_bytes()


def test_redis_out_of_memory_refuses_writes_and_still_reads() -> None:
    with running_redis(maxmemory="2mb") as server:
        assert server.command("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy", b"noeviction"]
        with pytest.raises(RedisReplyError, match=r"^OOM"):
            for index in range(200):
                server.command("SET", f"filler:{index}", b"x" * 65536)
        assert server.command("GET", "filler:0") == b"x" * 65536


def test_a_paused_redis_accepts_connections_and_answers_nothing(redis_server: RedisServer) -> None:
    redis_server.pause()
    try:
        with pytest.raises(TimeoutError):
            redis_server.command("PING", timeout=0.3)
    finally:
        redis_server.resume()
    assert redis_server.command("PING") == "PONG"


# -- haproxy and replicas ------------------------------------------------------------------------


def test_the_shipped_haproxy_config_is_valid() -> None:
    haproxy = service_or_skip("haproxy")
    checked = subprocess.run([haproxy, "-c", "-f", str(DEPLOYED_CONFIG)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_one_client_is_spread_over_two_replicas_and_outlives_one_of_them(origin: Origin) -> None:
    """Round robin, request by request, within one MCP client session (the server is stateless:
    no Mcp-Session-Id to stick to); a replica killed outright costs no call, since haproxy
    retries a refused connection on the other one at once."""
    page = origin.serve("/page", "<html><body><article><h1>Hi</h1><p>Served.</p></article></body></html>")
    served_by: list[str] = []
    session_ids: list[str] = []

    async def record(response: httpx2.Response) -> None:
        if response.request.url.path == "/mcp":
            served_by.append(response.headers.get(SERVED_BY, f"no server: HTTP {response.status_code}"))
            if "mcp-session-id" in response.headers:
                session_ids.append(response.headers["mcp-session-id"])

    with running_replicas(2) as (balancer, servers):
        hooks, mcp_url = {"response": [record]}, balancer.mcp_url
        async with (
            httpx2.AsyncClient(event_hooks=hooks, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(mcp_url, http_client=http, terminate_on_close=False)) as client,
        ):
            for _ in range(3):
                assert "web_fetch" in [tool.name for tool in (await client.list_tools()).tools]
            assert set(served_by) == set(balancer.names.values())
            assert all(a != b for a, b in itertools.pairwise(served_by)), served_by
            assert session_ids == []

            # Kill the replica that is next in line, so the next request is sent to a dead one.
            doomed = next(s for s in servers if balancer.names[s.port] != served_by[-1])
            survivor = next(s for s in servers if s is not doomed)
            doomed.process.kill()
            doomed.process.wait()
            before = len(served_by)
            for _ in range(4):
                assert "web_fetch" in [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("web_fetch", {"url": page})
            assert not result.is_error, result
            assert "Served." in "".join(getattr(block, "text", "") for block in result.content)
            assert set(served_by[before:]) == {balancer.names[survivor.port]}

            balancer.wait_until_down(doomed.port)
            assert balancer.status()[balancer.names[survivor.port]] == "UP"


def test_healthz_through_haproxy_alternates_and_names_the_replica() -> None:
    with running_replicas(2) as (balancer, _), httpx2.Client(timeout=10) as http:
        answers = [http.get(f"{balancer.url}/healthz") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200] * 4
    assert all(answer.json()["ready"] is True for answer in answers)
    names = [answer.headers[SERVED_BY] for answer in answers]
    assert names[0] != names[1] and names[0::2] == [names[0]] * 2 and names[1::2] == [names[1]] * 2


def test_the_restartable_port_is_outside_the_ephemeral_range(redis_server: RedisServer) -> None:
    low, high = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert not low <= redis_server.port <= high
    with socket.socket() as sock, pytest.raises(OSError):
        sock.bind(("127.0.0.1", redis_server.port))
