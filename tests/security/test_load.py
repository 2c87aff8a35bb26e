"""The HTTP service under a bounded load: every call answered or refused, nothing leaked.

The bounded form of bench/load.py (same driver, tests/support/load.py): the real server process
over streamable HTTP on loopback, 20 concurrent clients, 1,500 calls mixing cached and uncached
fetches, repeated and distinct searches against the provider fakes, and calls cancelled
mid-flight. The server's cap is set below the number of clients, so refusals happen and are
checked to be the concurrency error and nothing else. About 25 s on a 2-core machine.
"""

from __future__ import annotations

import logging
import socket
import sys
import time
from types import SimpleNamespace

import anyio
import httpx
import pytest

from mcp_server_web.server.middleware import REFUSAL_LOG_INTERVAL_S, ConcurrencyLimit
from tests.support.http_server import running_http_server
from tests.support.load import LoadPlan, format_report, run_load

logger = logging.getLogger(__name__)

PLAN = LoadPlan(clients=20, calls=1500, max_concurrency=12, call_timeout=30.0, run_timeout=120.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's /proc entries")
@pytest.mark.timeout(180)
def test_bounded_load_is_answered_without_leaks() -> None:
    started = time.monotonic()
    report = run_load(PLAN)
    logger.info("load test: %.1f s\n%s", time.monotonic() - started, format_report(report))

    outcomes = report["outcomes"]
    assert report["calls"] == PLAN.calls
    # Every call is answered, refused by the cap, or abandoned by its client; nothing else.
    assert outcomes["protocol_error"] == 0, report["samples"].get("protocol_error")
    assert outcomes["tool_error"] == 0, report["samples"].get("tool_error")
    assert outcomes["hung"] == 0, report["samples"].get("hung")
    assert outcomes["ok"] + outcomes["refused"] + outcomes["cancelled"] == PLAN.calls
    assert report["check_failures"] == 0, report["samples"].get("check_failure")
    # Each kind of call was made and answered, and calls were abandoned mid-flight.
    for kind, row in report["by_kind"].items():
        assert row["cancelled" if kind == "cancelled" else "ok"] > 0, (kind, row)
    assert report["latency"]["p99_ms"] is not None

    # After the load the server is as it was: same descriptors, RSS within its bound, and no
    # slot of the concurrency cap left taken (the probe calls would have been refused).
    fds, rss = report["fds"], report["rss_mb"]
    assert fds["after"] <= fds["baseline"] + PLAN.fd_tolerance, report["fd_kinds"]
    assert rss["after"] <= rss["baseline"] + PLAN.rss_bound_mb, rss
    assert report["probe_failures"] == {"baseline": [], "after": []}
    assert not report["server_log"]["errors"], report["server_log"]["errors"][0]
    # Hundreds of refusals, a handful of log lines.
    assert outcomes["refused"] == 0 or 1 <= report["server_log"]["refusal_warnings"] <= 2 + (
        report["wall_s"] / REFUSAL_LOG_INTERVAL_S
    )
    assert report["problems"] == []


def test_a_client_hanging_up_before_its_request_body_is_read_is_not_an_error() -> None:
    # What a call cancelled at once looks like to the server: the POST's headers arrive, the
    # body does not, the connection closes. The SDK's handler then raises ClientDisconnect
    # while reading the body; that must end the request quietly, not as "Exception in ASGI
    # application" with a traceback at ERROR (once per cancelled call under load).
    with running_http_server() as server:
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(
                    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Accept: application/json, text/event-stream\r\n"
                    b"MCP-Protocol-Version: 2026-07-28\r\nContent-Length: 4000\r\n\r\n"
                    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "web_'
                )
                time.sleep(0.2)  # the server is waiting for the rest of the body
        # The server still answers, and said nothing alarming about the hang-ups.
        assert httpx.get(server.base + "/healthz", timeout=5).status_code == 200
        assert server.terminate() in (0, -15)
        log = server.process.stderr.read().decode()  # type: ignore[union-attr]
    assert "Exception in ASGI application" not in log and "Traceback" not in log, log[-3000:]


async def test_refusals_are_logged_once_per_interval_with_a_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    limit = ConcurrencyLimit(1, clock=lambda: now[0])
    release = anyio.Event()

    async def hold(_: object) -> str:
        await release.wait()
        return "done"

    async def refused_call(_: object) -> str:
        raise AssertionError("a call past the cap must not run")

    call = SimpleNamespace(method="tools/call")
    with caplog.at_level(logging.WARNING, logger="mcp_server_web.server.middleware"):
        async with anyio.create_task_group() as group:
            group.start_soon(limit, call, hold)
            await anyio.sleep(0.05)  # the one slot is taken
            for at in (100.0, 101.0, 105.0, 100.0 + REFUSAL_LOG_INTERVAL_S + 1, 112.0):
                now[0] = at
                result = await limit(call, refused_call)  # type: ignore[arg-type]
                assert result.is_error and "rate_limited" in result.content[0].text
            release.set()
    lines = [r.getMessage() for r in caplog.records if "refusing a tool call" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "more refused" not in lines[0]
    assert lines[1].endswith("; 2 more refused since the last warning")
    assert limit.in_use == 0
