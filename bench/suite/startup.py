"""Bench 4: start-up, from spawning the stdio server to the answer of the first tools/list.

The SDK Client spawns the server (the same command lines as the end-to-end bench), connects
(its default protocol negotiation, the same for both), and lists the tools; the clock starts just
before the spawn and stops when tools/list has answered. Runs alternate the servers; the figure
is the median over runs. mcp-server-fetch is started with Node on PATH (Node is not used before
the first fetch, so the without-Node start is the same).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

from suite.servers import StdioServer, compared, connect
from suite.stats import median, ratio


async def _once(server: StdioServer, log: Path) -> tuple[float, int]:
    with log.open("a", encoding="utf-8") as errlog, anyio.fail_after(60):
        started = time.perf_counter()
        async with connect(server, errlog) as client:
            tools = await client.list_tools()
            elapsed = time.perf_counter() - started
    return 1000 * elapsed, len(tools.tools)


async def _run(servers: list[StdioServer], runs: int, log: Path) -> dict[str, Any]:
    times: dict[str, list[float]] = {s.key: [] for s in servers}
    tools: dict[str, int] = {}
    for server in servers:  # one untimed start each: first-run disk cache, .pyc files
        await _once(server, log)
    for run in range(runs):
        print(f"  startup: run {run + 1}/{runs} ...", file=sys.stderr, flush=True)
        for server in servers:
            ms, count = await _once(server, log)
            times[server.key].append(ms)
            tools[server.key] = count
    servers_out = {
        s.key: {
            "label": s.label,
            "median_ms": median(times[s.key]),
            "min_ms": min(times[s.key]),
            "max_ms": max(times[s.key]),
            "tools": tools[s.key],
            "runs": runs,
        }
        for s in servers
    }
    ratios = {
        key: ratio(row["median_ms"], servers_out["ours"]["median_ms"])
        for key, row in servers_out.items()
        if key != "ours"
    }
    return {"servers": servers_out, "ratios_to_ours": ratios}


def run(*, runs: int, with_peer: bool, log: Path) -> dict[str, Any]:
    servers = [s for s in compared(with_peer, with_node=True) if s.key != "fetch-nonode"]
    if len(servers) == 1 and with_peer:
        servers = compared(with_peer, with_node=False)
    return anyio.run(_run, servers, runs, log)
