"""Bench 2: web_fetch end to end over stdio, ours against mcp-server-fetch, on a loopback origin.

Each server is spawned by the SDK Client over stdio (a fresh process per round), with robots.txt
ignored by both (MCP_WEB_RESPECT_ROBOTS=false / --ignore-robots-txt) and loopback allowed for
both (MCP_WEB_ALLOW_CIDRS=127.0.0.1/32 / --allow-private-ips: mcp-server-fetch refuses private
and loopback addresses by default). One untimed call on a small page comes first. Then, timed
call by call from the client:

* first page of each real page (a URL with a per-round query string, so never cached);
* the long document: its first page, then every following page with start_index/max_length
  until the server says there is no more, with the same max_length for both servers.

Rounds alternate the servers (ours, theirs, ours, ...), so drift on the machine hits both.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio

from suite import site
from suite.servers import StdioServer, compared, connect
from suite.stats import median, percentile, ratio

CALL_TIMEOUT_S = 120
MAX_PAGES = 200
"""Upper bound on the pages walked through one document (the loop is bounded)."""


async def _round(
    server: StdioServer, origin_base: str, pages: list[site.Page], run: int, max_length: int, errlog: Path
) -> dict[str, Any]:
    first_ms: list[float] = []
    chars: list[int] = []
    errors: list[str] = []
    following_ms: list[float] = []
    with errlog.open("a", encoding="utf-8") as log:
        async with connect(server, log) as client:
            with anyio.fail_after(CALL_TIMEOUT_S):
                await server.fetch(client, f"{origin_base}/warmup.html?run={run}", 0, max_length)
            for page in pages:
                url = f"{origin_base}{page.path}?run={run}"
                with anyio.fail_after(CALL_TIMEOUT_S):
                    started = time.perf_counter()
                    got = await server.fetch(client, url, 0, max_length)
                    first_ms.append(1000 * (time.perf_counter() - started))
                chars.append(0 if got.error else len(got.text))
                if got.error:
                    errors.append(f"{page.path}: {got.text[:160]}")
            long_url = f"{origin_base}/long.html?run={run}"
            with anyio.fail_after(CALL_TIMEOUT_S):
                started = time.perf_counter()
                got = await server.fetch(client, long_url, 0, max_length)
                long_first_ms = 1000 * (time.perf_counter() - started)
            if got.error:
                errors.append(f"/long.html: {got.text[:160]}")
            long_pages = 1
            while got.next_start is not None and long_pages < MAX_PAGES:
                with anyio.fail_after(CALL_TIMEOUT_S):
                    started = time.perf_counter()
                    got = await server.fetch(client, long_url, got.next_start, max_length)
                    following_ms.append(1000 * (time.perf_counter() - started))
                if got.error:
                    errors.append(f"/long.html page {long_pages + 1}: {got.text[:160]}")
                long_pages += 1
    return {
        "first_ms": first_ms,
        "chars": chars,
        "errors": errors,
        "long_first_ms": long_first_ms,
        "following_ms": following_ms,
        "long_pages": long_pages,
    }


async def _run(
    rounds: int, max_length: int, pages: list[site.Page], servers: list[StdioServer], log: Path
) -> dict[str, Any]:
    collected: dict[str, list[dict[str, Any]]] = {s.key: [] for s in servers}
    with site.serving(pages, site.long_document()) as origin:
        for run in range(rounds):
            for server in servers:
                print(f"  e2e: {server.key} round {run + 1}/{rounds} ...", file=sys.stderr, flush=True)
                collected[server.key].append(await _round(server, origin.base, pages, run, max_length, log))
    summary: dict[str, Any] = {}
    for server in servers:
        runs = collected[server.key]
        first_all = [ms for r in runs for ms in r["first_ms"]]
        following_all = [ms for r in runs for ms in r["following_ms"]]
        summary[server.key] = {
            "label": server.label,
            "first_page_median_ms": median(first_all),
            "first_page_p90_ms": percentile(first_all, 0.9),
            "long_first_page_ms": median([r["long_first_ms"] for r in runs]),
            "following_page_median_ms": median(
                [median(r["following_ms"]) for r in runs if r["following_ms"]]
            ),
            "following_page_p90_ms": percentile(following_all, 0.9),
            "long_pages": runs[0]["long_pages"],
            "first_page_chars_median": median([c for r in runs for c in r["chars"]]),
            "errors": sorted({e for r in runs for e in r["errors"]}),
            "error_calls": sum(len(r["errors"]) for r in runs),
        }
    ratios: dict[str, Any] = {}
    base = summary.get("ours")
    for key, row in summary.items():
        if key == "ours" or base is None:
            continue
        ratios[key] = {
            "first_page": ratio(row["first_page_median_ms"], base["first_page_median_ms"]),
            "long_first_page": ratio(row["long_first_page_ms"], base["long_first_page_ms"]),
            "following_page": ratio(row["following_page_median_ms"], base["following_page_median_ms"]),
        }
    return {"servers": summary, "ratios": ratios}


def run(
    *,
    rounds: int,
    max_length: int,
    zyte_pages: int,
    wcxb_per_type: int,
    with_peer: bool,
    with_node: bool,
    log: Path,
) -> dict[str, Any]:
    pages = site.real_pages(zyte_pages, wcxb_per_type)
    servers = compared(with_peer, with_node)
    result = anyio.run(_run, rounds, max_length, pages, servers, log)
    result.update(
        {
            "rounds": rounds,
            "max_length": max_length,
            "real_pages": len(pages),
            "long_document_bytes": len(site.long_document()),
            "robots": "ignored by both",
        }
    )
    following = [r["following_page"] for r in result["ratios"].values()]
    if following:
        result["target_following_pages_10x"] = bool(min(following) >= 10)
    return result
