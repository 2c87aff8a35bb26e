"""Bench 3: our server over streamable HTTP under concurrent clients, and its memory.

One server subprocess (``python -m mcp_server_web --transport http``, started by
tests/support/http_server.running_http_server) with MCP_WEB_CACHE_MAX_MB set low (32 MB by
default), robots.txt off and loopback allowed. N concurrent SDK clients (each its own Client
and HTTP connection pool, all connected before the clock starts) share a fixed list of calls:

* uncached: every call a URL the server has not seen (a real page from the data sets with a
  fresh query string), so each call downloads from the loopback origin, extracts and caches;
  the pages cycle through all 724 pages of both sets, far more bytes than the cache holds, so
  by the end of the first phase the cache is full and evicting;
* cached: calls cycling over a warm set of pages fetched just before, each answered from the
  cache (checked: the structured result says cached).

Per phase: calls/s (calls / wall time), p50 and p99 latency of a call as the client sees it;
each phase runs once per round and the figures are medians over rounds. Memory: the server's
resident set (/proc/PID/status VmRSS) when idle after start-up and at the end of every phase of
every round (to show whether it levels off), and the kernel's high-water mark VmHWM at the end
(the true peak; a 50 ms sampler stands in where there is no VmHWM), checked against a bound.

The origin (a thread in this process) and the clients share this process; on a 2-core machine
the server gets about one core, so the figures are a floor, not the server's ceiling.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from suite import site
from suite.paths import ensure_repo_on_path
from suite.stats import median, percentile

ensure_repo_on_path()
from tests.support.http_server import http_client, running_http_server  # noqa: E402

PHASE_TIMEOUT_S = 600
WARM_SET = 32
WARM_MAX_BYTES = 300_000


def _status_kib(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class RssSampler:
    """Samples a process's VmRSS in a thread; the peak is read from the kernel's VmHWM at the end."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.max_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            kib = _status_kib(self.pid, "VmRSS")
            if kib is None:
                return
            self.max_kib = max(self.max_kib, kib)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


async def _phase(
    endpoint: str, urls: list[str], concurrency: int, expect_cached: bool, sampler: RssSampler
) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    error_codes: Counter[str] = Counter()
    not_cached = 0
    calls = iter(urls)

    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(http_client(endpoint)) for _ in range(concurrency)]

        async def worker(client: Any) -> None:
            nonlocal errors, not_cached
            for url in calls:  # one shared iterator: every URL is called exactly once
                started = time.perf_counter()
                result = await client.call_tool("web_fetch", {"url": url})
                latencies.append(1000 * (time.perf_counter() - started))
                if result.is_error:
                    errors += 1
                    text = result.content[0].text if result.content else ""
                    error_codes[text.split(":", 1)[0]] += 1
                elif expect_cached and not (result.structured_content or {}).get("cached"):
                    not_cached += 1

        started = time.perf_counter()
        with anyio.fail_after(PHASE_TIMEOUT_S):
            async with anyio.create_task_group() as group:
                for client in clients:
                    group.start_soon(worker, client)
        wall = time.perf_counter() - started
    return {
        "calls": len(latencies),
        "calls_per_s": len(latencies) / wall,
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        "errors": errors,
        "error_codes": dict(error_codes),
        "not_cached": not_cached,
        "wall_s": wall,
        "rss_end_mb": (_status_kib(sampler.pid, "VmRSS") or 0) / 1024,
    }


async def _run(
    endpoint: str,
    origin_base: str,
    pool: list[site.Page],
    warm: list[site.Page],
    rounds: int,
    uncached_calls: int,
    cached_calls: int,
    concurrency: list[int],
    sampler: RssSampler,
) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    async with http_client(endpoint) as client:
        await client.call_tool("web_fetch", {"url": f"{origin_base}/warmup.html"})
    for rnd in range(rounds):
        for conc in concurrency:
            print(
                f"  http: round {rnd + 1}/{rounds}, uncached, {conc} clients ...", file=sys.stderr, flush=True
            )
            urls = [
                f"{origin_base}{pool[i % len(pool)].path}?r={rnd}&c={conc}&i={i}"
                for i in range(uncached_calls)
            ]
            phase = await _phase(endpoint, urls, conc, expect_cached=False, sampler=sampler)
            out.setdefault(f"uncached-{conc}", []).append(phase)
        warm_urls = []
        async with http_client(endpoint) as client:
            for page in warm:  # pages that fail (no readable text) are not cached: leave them out
                url = f"{origin_base}{page.path}?warm={rnd}"
                if not (await client.call_tool("web_fetch", {"url": url})).is_error:
                    warm_urls.append(url)
        for conc in concurrency:
            print(
                f"  http: round {rnd + 1}/{rounds}, cached, {conc} clients ...", file=sys.stderr, flush=True
            )
            urls = [warm_urls[i % len(warm_urls)] for i in range(cached_calls)]
            phase = await _phase(endpoint, urls, conc, expect_cached=True, sampler=sampler)
            out.setdefault(f"cached-{conc}", []).append(phase)
    return out


def run(
    *,
    rounds: int,
    uncached_calls: int,
    cached_calls: int,
    concurrency: list[int],
    cache_mb: int,
    rss_bound_mb: int,
    server_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    pool = site.all_real_pages()
    random.Random(0).shuffle(pool)
    warm = [page for page in pool if len(page.body) <= WARM_MAX_BYTES][:WARM_SET]
    fetched_bytes = sum(len(pool[i % len(pool)].body) for i in range(uncached_calls)) * len(concurrency)
    env = {
        "MCP_WEB_CACHE_MAX_MB": str(cache_mb),
        "MCP_WEB_RESPECT_ROBOTS": "false",
        "MCP_WEB_LOG_LEVEL": "error",
        **(server_env or {}),
    }
    with site.serving(pool) as origin, running_http_server(**env) as server:
        pid = server.process.pid
        time.sleep(0.5)
        idle_kib = _status_kib(pid, "VmRSS") or 0
        with RssSampler(pid) as sampler:
            phases = anyio.run(
                _run,
                server.url,
                origin.base,
                pool,
                warm,
                rounds,
                uncached_calls,
                cached_calls,
                concurrency,
                sampler,
            )
        final_kib = _status_kib(pid, "VmRSS") or 0
        origin_requests = len(origin.requests)
        peak_kib = _status_kib(pid, "VmHWM") or sampler.max_kib
    summary = {
        name: {
            "calls_per_s": median([r["calls_per_s"] for r in runs]),
            "p50_ms": median([r["p50_ms"] for r in runs]),
            "p99_ms": median([r["p99_ms"] for r in runs]),
            "calls": runs[0]["calls"],
            "errors": sum(r["errors"] for r in runs),
            "error_codes": dict(sum((Counter(r["error_codes"]) for r in runs), Counter())),
            "not_cached": sum(r["not_cached"] for r in runs),
            "rss_end_mb": [round(r["rss_end_mb"]) for r in runs],
        }
        for name, runs in phases.items()
    }
    peak_mb = peak_kib / 1024
    return {
        "rounds": rounds,
        "concurrency": concurrency,
        "cache_max_mb": cache_mb,
        "html_fetched_per_round_mb": round(fetched_bytes / 1024 / 1024, 1),
        "phases": summary,
        "origin_requests": origin_requests,
        "rss_idle_mb": round(idle_kib / 1024, 1),
        "rss_peak_mb": round(peak_mb, 1),
        "rss_final_mb": round(final_kib / 1024, 1),
        "rss_bound_mb": rss_bound_mb,
        "rss_within_bound": peak_mb <= rss_bound_mb,
    }
