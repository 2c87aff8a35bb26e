"""One replica against two sharing Redis: calls/s, latency, the cross-replica hit ratio, the cost.

Usage (from the repository root):

    .venv/bin/python bench/replicas.py            # or: make replicas   (about 1.5 min, after up to
                                                  # 60 s waiting for other load to drop)
    .venv/bin/python bench/replicas.py --quick    # about 30 s: fewer URLs; writes no committed file

Three set-ups, measured in one run, one after the other, each behind the same real haproxy
(deploy/haproxy.cfg, via tests/support/haproxy.py) so every call pays the same proxy hop:

  A. one replica, its state in memory (no Redis);
  B. two replicas sharing one redis-server (MCP_WEB_REDIS_URL), a fresh one for this set-up;
  C. two replicas without Redis, each with its own memory: what sharing buys.

Each set-up gets its own URLs on a loopback origin serving real news and blog articles (the zyte
extraction set from ../shared/bench, BENCH_SHARED_DIR; generated articles when it is missing),
and N concurrent SDK clients (each its own Client and connection pool through haproxy, all
connected before the clock starts) make two timed phases:

  * uncached: each URL fetched once (a download, an extraction, a cache write);
  * cached: the same URLs again, in a new shuffled order each pass (--passes), so about half the
    calls of a two-replica set-up reach the replica that did not download the URL.

Per phase: calls/s, p50 and p99 latency as the client sees it, errors (must be 0), and which
replica answered each call (haproxy's X-Served-By). A cached-phase call is cross-replica when the
replica that answered it had not itself downloaded that URL (had not answered it with
cached=false) before; the hit ratio is the share of those calls that answered cached=true. The
origin counts the downloads of every URL: 1 expected with Redis, up to 2 without. Redis: the
commands it ran (INFO commandstats, commands run inside its Lua scripts included) and its
resident memory. CPU: the seconds each process used in each phase (the replicas, haproxy,
redis-server, this process: the clients and the origin) from /proc, and what the rest of the
machine used meanwhile (other load).

A full run writes bench/results/replicas.json and rewrites the table between the
<!-- bench:replicas --> markers of bench/README.md; --quick writes
bench/results/replicas.quick.raw.json only (git-ignored). All traffic stays on 127.0.0.1; every
loop is bounded in count and time.

What a 2-core machine can show: two replicas, haproxy, redis-server, the clients and the origin
share two cores, so B cannot show throughput scaling (a second replica adds no CPU). What it
shows is what sharing costs per call (B against A, same proxy hop), how much CPU each part uses
per call, the cross-replica hit ratio, and the downloads sharing saves (B against C).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import math
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from suite import data, env  # noqa: E402
from suite.extraction import PROXY_VARS  # noqa: E402
from suite.paths import DATASETS, README, RESULTS, ensure_repo_on_path  # noqa: E402
from suite.stats import median, percentile, ratio  # noqa: E402

ensure_repo_on_path()
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp_types import CallToolResult  # noqa: E402
from tests.support.http_server import RunningServer  # noqa: E402
from tests.support.load import StderrDrain, machine_busy_seconds, status_kib  # noqa: E402
from tests.support.origin import Origin  # noqa: E402
from tests.support.redis_server import RedisServer, running_redis  # noqa: E402
from tests.support.replicas import noting_replicas, running_replicas  # noqa: E402
from tests.support.services import find_service  # noqa: E402

logger = logging.getLogger("bench.replicas")

CONTENT_TYPE = "text/html; charset=utf-8"
CALL_TIMEOUT_S = 60.0
PHASE_TIMEOUT_S = 300.0
CACHE_MAX_MB = 512
"""Room for every page of a run, in memory and in Redis: the cached phase must find them all, so
what it measures is the shared cache, not eviction."""
OTHER_LOAD_WARNING = 0.15
WARM_UP_CALLS_PER_REPLICA = 2


@dataclass(frozen=True)
class Setup:
    label: str
    title: str
    replicas: int
    redis: bool


SETUPS = (
    Setup("A", "one replica, in memory", 1, False),
    Setup("B", "two replicas, shared Redis", 2, True),
    Setup("C", "two replicas, no Redis", 2, False),
)


@dataclass(frozen=True)
class Plan:
    urls: int
    clients: int
    passes: int
    rounds: int
    quick: bool
    seed: int = 20261124


# -- the pages -------------------------------------------------------------------------------------


_PROSE = (
    "river valley sediment council budget report station market harbour season museum archive "
    "engineer village bridge weather history railway school library garden minister research "
    "evidence committee festival northern coastal annual policy project island mountain forest"
)


def _generated_page(number: int) -> bytes:
    """An article page of 30-90 paragraphs of varied prose, inside menus, a sidebar and a footer."""
    rng = random.Random(number)
    words = _PROSE.split()
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(words) for _ in range(rng.randint(40, 90))).capitalize() + ".</p>"
        for _ in range(rng.randint(30, 90))
    )
    menu = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(30))
    related = "".join(f'<li><a href="/story/{i}">Related story {i}</a></li>' for i in range(40))
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Story {number}</title>"
        "<script>var analytics = 1;</script></head><body>"
        f"<header><nav><ul>{menu}</ul></nav></header><main><article><h1>Story {number}</h1>"
        f"{paragraphs}</article></main><aside><ul>{related}</ul></aside>"
        "<footer><p>Copyright. All rights reserved.</p></footer></body></html>"
    ).encode()


def article_pages() -> tuple[list[bytes], str]:
    """The pages the origin serves, and what they are."""
    pages_dir = DATASETS["zyte"] / "pages"
    if pages_dir.is_dir():
        files = sorted(pages_dir.iterdir())
        if files:
            note = f"zyte: {len(files)} real news and blog articles"
            return [data.page_bytes(path) for path in files], note
    logger.warning("no zyte pages at %s (BENCH_SHARED_DIR): serving generated articles", pages_dir)
    return [_generated_page(n) for n in range(200)], "200 generated articles (the zyte set was not found)"


# -- processes' and the machine's CPU --------------------------------------------------------------


def _stat_fields(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_tree(root: int) -> list[int]:
    """root and every process under it (a replica's conversion workers live two levels down)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def tree_cpu_seconds(root: int) -> float:
    """CPU time of root and everything under it: each live process's own, plus that of its
    children it has reaped (a retired conversion worker's time moves into its parent's)."""
    total = 0
    for pid in process_tree(root):
        fields = _stat_fields(pid)
        if fields is not None:
            total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def tree_rss_mb(root: int) -> float:
    return round(sum(status_kib(pid, "VmRSS") or 0 for pid in process_tree(root)) / 1024, 1)


class CpuMeter:
    """CPU seconds used over a stretch by named process trees, this process, and the rest of the
    machine (its busy time, from /proc/stat, minus all of those)."""

    def __init__(self, roots: dict[str, list[int]]) -> None:
        self.roots = roots
        self._start: dict[str, float] = {}
        self._busy: float | None = None
        self._own = 0.0
        self._wall = 0.0

    def _read(self) -> dict[str, float]:
        return {name: sum(tree_cpu_seconds(pid) for pid in pids) for name, pids in self.roots.items()}

    def start(self) -> None:
        self._start = self._read()
        self._busy = machine_busy_seconds()
        self._own = time.process_time()
        self._wall = time.perf_counter()

    def stop(self) -> dict[str, Any]:
        used = {name: round(now - self._start[name], 2) for name, now in self._read().items()}
        used["clients and origin"] = round(time.process_time() - self._own, 2)
        wall = time.perf_counter() - self._wall
        busy = machine_busy_seconds()
        other = None
        if busy is not None and self._busy is not None:
            other = max(0.0, busy - self._busy - sum(used.values()))
        capacity = wall * (os.cpu_count() or 1)
        return {
            "seconds": used,
            "other_seconds": None if other is None else round(other, 2),
            "other_share": None if other is None or capacity <= 0 else round(other / capacity, 3),
            "machine_share": round(sum(used.values()) / capacity, 3) if capacity > 0 else None,
        }


# -- Redis readings --------------------------------------------------------------------------------


def redis_commandstats(redis: RedisServer) -> dict[str, int]:
    """Calls per command since the last CONFIG RESETSTAT (commands inside Lua scripts included)."""
    reply = redis.command("INFO", "commandstats")
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    calls: dict[str, int] = {}
    for line in text.splitlines():
        found = re.match(r"cmdstat_([^:]+):calls=(\d+)", line)
        if found:
            calls[found.group(1)] = int(found.group(2))
    return dict(sorted(calls.items(), key=lambda item: -item[1]))


def redis_traffic(redis: RedisServer) -> dict[str, int]:
    """Bytes Redis received and sent since the last CONFIG RESETSTAT."""
    reply = redis.command("INFO", "stats")
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {"in": int(fields["total_net_input_bytes"]), "out": int(fields["total_net_output_bytes"])}


def redis_memory(redis: RedisServer) -> dict[str, Any]:
    reply = redis.command("INFO", "memory")
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    assert redis.process is not None
    pid = redis.process.pid
    keys = redis.command("DBSIZE")
    return {
        "used_memory_mb": round(int(fields["used_memory"]) / 1024 / 1024, 1),
        "rss_mb": round((status_kib(pid, "VmRSS") or 0) / 1024, 1),
        "peak_rss_mb": round((status_kib(pid, "VmHWM") or 0) / 1024, 1),
        "keys": keys,
    }


# -- the clients -----------------------------------------------------------------------------------


@dataclass
class CallRecord:
    path: str
    replica: str
    started: float
    ms: float
    error: str | None = None
    cached: bool | None = None
    snapshot: str | None = None


class Tracked:
    """An SDK client through haproxy that notes which replica answered each of its requests."""

    def __init__(self, client: Client, served_by: list[str]) -> None:
        self.client = client
        self.served_by = served_by

    async def fetch(self, path: str, url: str) -> CallRecord:
        before = len(self.served_by)
        started = time.perf_counter()
        record = CallRecord(path, "?", started, math.nan)
        try:
            with anyio.fail_after(CALL_TIMEOUT_S):
                result: CallToolResult = await self.client.call_tool("web_fetch", {"url": url})
        except TimeoutError:
            record.error = "hung"
        except Exception as exc:  # a protocol or transport failure is a result of the bench too
            record.error = f"protocol: {type(exc).__name__}: {str(exc)[:200]}"
        else:
            if result.is_error:
                text = "".join(getattr(block, "text", "") for block in result.content)
                record.error = text[:300]
            else:
                content = result.structured_content or {}
                record.cached = bool(content.get("cached"))
                record.snapshot = content.get("snapshot")
        record.ms = 1000 * (time.perf_counter() - started)
        # Each client makes one call at a time: the last POST it saw answered is this call's.
        if len(self.served_by) > before:
            record.replica = self.served_by[-1]
        return record


@asynccontextmanager
async def tracked(url: str) -> AsyncIterator[Tracked]:
    async with noting_replicas(url) as (client, served_by):
        yield Tracked(client, served_by)


async def drive(endpoint: str, calls: list[tuple[str, str]], clients: int) -> tuple[list[CallRecord], float]:
    """All clients connected first; then the clock runs while they empty one shared list."""
    records: list[CallRecord] = []
    pending = iter(calls)
    async with AsyncExitStack() as stack:
        ready = []
        for _ in range(clients):
            web = await stack.enter_async_context(tracked(endpoint))
            await web.client.list_tools()  # the client checks results against the output schemas
            ready.append(web)

        async def worker(web: Tracked) -> None:
            for path, url in pending:  # one shared iterator: every call is made exactly once
                records.append(await web.fetch(path, url))

        started = time.perf_counter()
        with anyio.fail_after(PHASE_TIMEOUT_S):
            async with anyio.create_task_group() as group:
                for web in ready:
                    group.start_soon(worker, web)
        return records, time.perf_counter() - started


# -- one set-up ------------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    records: list[CallRecord]
    wall_s: float
    cpu: dict[str, Any]
    redis_commands: dict[str, int] | None = None
    redis_bytes: dict[str, int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        latencies = [r.ms for r in self.records]
        errors = [r for r in self.records if r.error is not None]
        calls = len(self.records)
        cpu_ms = {
            name: round(1000 * seconds / calls, 2) if calls else None
            for name, seconds in self.cpu["seconds"].items()
        }
        out: dict[str, Any] = {
            "calls": calls,
            "wall_s": round(self.wall_s, 2),
            "calls_per_s": round(calls / self.wall_s, 1) if self.wall_s else None,
            "p50_ms": round(percentile(latencies, 0.50), 1),
            "p99_ms": round(percentile(latencies, 0.99), 1),
            "max_ms": round(max(latencies), 1) if latencies else None,
            "errors": len(errors),
            "error_samples": [f"{r.path}: {r.error}" for r in errors[:5]],
            "answered_cached": sum(1 for r in self.records if r.cached),
            "served_by": dict(sorted(Counter(r.replica for r in self.records).items())),
            "cpu_s": self.cpu["seconds"],
            "cpu_ms_per_call": cpu_ms,
            "cpu_ms_per_call_total": round(sum(v for v in cpu_ms.values() if v is not None), 2),
            "other_load": self.cpu["other_share"],
            "machine_share": self.cpu["machine_share"],
        }
        if self.redis_commands is not None:
            total = sum(self.redis_commands.values())
            scripts = self.redis_commands.get("evalsha", 0) + self.redis_commands.get("eval", 0)
            out["redis"] = {
                "commands": total,
                "commands_per_call": round(total / calls, 2) if calls else None,
                "script_calls_per_call": round(scripts / calls, 2) if calls else None,
                "kib_in_per_call": _per_call_kib(self.redis_bytes, "in", calls),
                "kib_out_per_call": _per_call_kib(self.redis_bytes, "out", calls),
                "by_command": self.redis_commands,
            }
        out.update(self.extra)
        return out


def _per_call_kib(traffic: dict[str, int] | None, way: str, calls: int) -> float | None:
    return round(traffic[way] / 1024 / calls, 1) if traffic and calls else None


def cross_replica(uncached: list[CallRecord], cached: list[CallRecord]) -> dict[str, Any]:
    """Of the cached-phase calls answered by a replica that had not downloaded that URL itself,
    how many answered cached=true; and whether every answer was the first one's document."""
    downloaded: dict[str, set[str]] = {}
    snapshots: dict[str, str | None] = {}
    for record in uncached:
        if record.error is None and record.cached is False:
            downloaded.setdefault(record.path, set()).add(record.replica)
        snapshots.setdefault(record.path, record.snapshot)
    calls = hits = other_document = 0
    for record in sorted(cached, key=lambda r: r.started):
        if record.error is not None:
            continue
        if record.snapshot != snapshots.get(record.path):
            other_document += 1
        if record.replica not in downloaded.get(record.path, set()):
            calls += 1
            hits += bool(record.cached)
        if not record.cached:
            downloaded.setdefault(record.path, set()).add(record.replica)
    return {
        "cross_replica_calls": calls,
        "cross_replica_hits": hits,
        "cross_replica_hit_ratio": round(hits / calls, 3) if calls else None,
        "answers_of_another_document": other_document,
    }


def downloads_per_url(origin: Origin, paths: list[str]) -> dict[str, Any]:
    hits = Counter(request.path for request in origin.requests)
    per_url = Counter(hits[path] for path in paths)
    return {
        "origin_downloads": sum(hits[path] for path in paths),
        "urls_by_downloads": {str(n): count for n, count in sorted(per_url.items())},
    }


@contextmanager
def maybe_redis(wanted: bool) -> Iterator[RedisServer | None]:
    if not wanted:
        yield None
        return
    with running_redis() as redis:
        yield redis


def health(servers: list[RunningServer]) -> list[Any]:
    """Each replica's /healthz shared_state (None without Redis), asked directly, not through haproxy."""
    states = []
    for server in servers:
        body = httpx2.get(f"{server.base}/healthz", timeout=5).json()
        states.append(body.get("shared_state"))
    return states


def run_setup(setup: Setup, plan: Plan, origin: Origin, pages: list[bytes], round_no: int) -> dict[str, Any]:
    prefix = f"/{setup.label.lower()}{round_no}"
    paths = [f"{prefix}/{n}.html" for n in range(plan.urls)]
    for n, path in enumerate(paths):
        origin.serve(path, pages[n % len(pages)], content_type=CONTENT_TYPE)
    calls = [(path, origin.url(path)) for path in paths]
    shuffler = random.Random(f"{plan.seed}-{setup.label}-{round_no}")
    shuffler.shuffle(calls)
    cached_calls: list[tuple[str, str]] = []
    for _ in range(plan.passes):
        again = list(calls)
        shuffler.shuffle(again)
        cached_calls += again
    warm = [f"{prefix}/warm-{n}.html" for n in range(WARM_UP_CALLS_PER_REPLICA * setup.replicas)]
    for n, path in enumerate(warm):
        origin.serve(path, pages[-1 - n % len(pages)], content_type=CONTENT_TYPE)

    server_env = {
        "MCP_WEB_CACHE_MAX_MB": str(CACHE_MAX_MB),
        "MCP_WEB_RESPECT_ROBOTS": "false",
        "MCP_WEB_LOG_LEVEL": "warning",
    }
    print(f"  round {round_no}, {setup.label}: {setup.title} ...", file=sys.stderr, flush=True)
    with ExitStack() as stack:
        redis = stack.enter_context(maybe_redis(setup.redis))
        if redis is not None:
            server_env["MCP_WEB_REDIS_URL"] = redis.url
        balancer, servers = stack.enter_context(running_replicas(setup.replicas, **server_env))
        drains = [StderrDrain(server) for server in servers]
        pids = {
            "replicas": [server.process.pid for server in servers],
            "haproxy": [balancer.process.pid],
        }
        if redis is not None and redis.process is not None:
            pids["redis-server"] = [redis.process.pid]
        # Untimed: each replica's first calls pay for lazy imports and its first connections.
        anyio.run(drive, balancer.mcp_url, [(path, origin.url(path)) for path in warm], 1)

        phases = []
        for name, phase_calls in (("uncached", calls), ("cached", cached_calls)):
            if redis is not None:
                redis.command("CONFIG", "RESETSTAT")
            meter = CpuMeter(pids)
            meter.start()
            records, wall = anyio.run(drive, balancer.mcp_url, phase_calls, plan.clients)
            cpu = meter.stop()
            commands = redis_commandstats(redis) if redis is not None else None
            traffic = redis_traffic(redis) if redis is not None else None
            phase = Phase(name, records, wall, cpu, commands, traffic)
            phase.extra.update(downloads_per_url(origin, paths))
            phases.append(phase)
            print(
                f"     {name}: {len(records)} calls in {wall:.1f} s, "
                f"{sum(r.error is not None for r in records)} errors",
                file=sys.stderr,
                flush=True,
            )
        uncached, cached = phases
        # Downloads of the cached phase alone (the origin counts from the start of the set-up).
        cached.extra["origin_downloads"] -= uncached.extra["origin_downloads"]
        cached.extra["urls_by_downloads_after_both"] = cached.extra.pop("urls_by_downloads")
        if setup.replicas > 1:
            cached.extra.update(cross_replica(uncached.records, cached.records))
        shared_states = health(servers)
        memory = redis_memory(redis) if redis is not None else None
        replica_rss = [tree_rss_mb(s.process.pid) for s in servers]
        # Stop the replicas first (leaving the stack stops them), so their logs are complete.
        stack.close()
        for drain in drains:
            drain.join()
    shared_warnings = [w for d in drains for w in d.warnings if "shared state" in w]
    return {
        "setup": setup.title,
        "replicas": setup.replicas,
        "redis": setup.redis,
        "phases": {phase.name: phase.summary() for phase in phases},
        "shared_state": shared_states,
        "shared_state_warnings": shared_warnings,
        "server_errors": [e for d in drains for e in d.error_texts][:5],
        "redis_memory": memory,
        "replica_rss_mb": replica_rss,
    }


# -- the run, the ratios, the tables ---------------------------------------------------------------

MEDIAN_OVER_ROUNDS = ("calls_per_s", "p50_ms", "p99_ms", "cpu_ms_per_call_total", "machine_share", "wall_s")
MAX_OVER_ROUNDS = ("max_ms", "other_load")
SUM_OVER_ROUNDS = (
    "calls",
    "errors",
    "answered_cached",
    "origin_downloads",
    "cross_replica_calls",
    "cross_replica_hits",
    "answers_of_another_document",
)


def _counter_sum(dicts: list[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for one in dicts:
        total.update(one)
    return dict(total)


def combine_phase(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One phase over rounds: rates, latencies and costs are medians, counts are sums."""
    out: dict[str, Any] = {}
    for key in MEDIAN_OVER_ROUNDS:
        out[key] = round(median([r[key] for r in rounds if r[key] is not None]), 2)
    for key in MAX_OVER_ROUNDS:
        values = [r[key] for r in rounds if r.get(key) is not None]
        out[key] = max(values) if values else None
    for key in SUM_OVER_ROUNDS:
        if key in rounds[0]:
            out[key] = sum(r[key] for r in rounds)
    if "cross_replica_calls" in out:
        calls = out["cross_replica_calls"]
        out["cross_replica_hit_ratio"] = round(out["cross_replica_hits"] / calls, 3) if calls else None
    out["error_samples"] = [sample for r in rounds for sample in r["error_samples"]][:5]
    out["served_by"] = dict(sorted(_counter_sum([r["served_by"] for r in rounds]).items()))
    out["cpu_s"] = _counter_sum([r["cpu_s"] for r in rounds])
    out["cpu_ms_per_call"] = {
        name: round(median([r["cpu_ms_per_call"][name] for r in rounds]), 2)
        for name in rounds[0]["cpu_ms_per_call"]
    }
    for key in ("urls_by_downloads", "urls_by_downloads_after_both"):
        if key in rounds[0]:
            out[key] = dict(sorted(_counter_sum([r[key] for r in rounds]).items()))
    if "redis" in rounds[0]:
        redis = [r["redis"] for r in rounds]
        by_command = _counter_sum([one["by_command"] for one in redis])
        out["redis"] = {
            "commands": sum(one["commands"] for one in redis),
            **{
                key: round(median([one[key] for one in redis]), 2)
                for key in (
                    "commands_per_call",
                    "script_calls_per_call",
                    "kib_in_per_call",
                    "kib_out_per_call",
                )
            },
            "by_command": dict(sorted(by_command.items(), key=lambda item: -item[1])),
        }
    out["per_round"] = {
        key: [r[key] for r in rounds] for key in ("calls_per_s", "p50_ms", "p99_ms", "other_load")
    }
    return out


def combine(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One set-up over rounds."""
    first = rounds[0]
    return {
        "setup": first["setup"],
        "replicas": first["replicas"],
        "redis": first["redis"],
        "rounds": len(rounds),
        "phases": {name: combine_phase([r["phases"][name] for r in rounds]) for name in first["phases"]},
        "shared_state": [state for r in rounds for state in r["shared_state"]],
        "shared_state_warnings": [w for r in rounds for w in r["shared_state_warnings"]],
        "server_errors": [e for r in rounds for e in r["server_errors"]][:5],
        "redis_memory": [r["redis_memory"] for r in rounds] if first["redis_memory"] else None,
        "replica_rss_mb": [r["replica_rss_mb"] for r in rounds],
    }


def ratios(setups: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, float | None]]]:
    """Each two-replica set-up against A, per phase: calls/s, p50, p99, CPU per call."""
    base = setups["A"]["phases"]
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for label in ("B", "C"):
        if label not in setups:
            continue
        out[f"{label}/A"] = {}
        for phase, figures in setups[label]["phases"].items():
            one = base[phase]
            out[f"{label}/A"][phase] = {
                key: _round(ratio(figures[key], one[key]), 3)
                for key in ("calls_per_s", "p50_ms", "p99_ms", "cpu_ms_per_call_total")
            }
    return out


def _round(value: float, digits: int) -> float | None:
    return None if math.isnan(value) else round(value, digits)


CAVEAT = (
    "This machine has {cores} cores: the replicas, haproxy, redis-server, the clients and the origin "
    "all share them, so two replicas cannot show throughput scaling here (a second replica adds no "
    "CPU, only another process competing for the same cores), and in the cached phases the clients "
    "alone (one Python process) use about one core. What the figures do show: what the shared cache "
    "costs per call (B against A, with the same proxy hop), the CPU each part uses per call, the "
    "cross-replica hit ratio, and the downloads sharing saves (B against C). With a core or more per "
    "replica, throughput would follow from a replica's CPU per call, not from these calls/s."
)


def _num(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}"


def _times(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}×"


def markdown(report: dict[str, Any]) -> str:
    setups = report["setups"]
    plan = report["plan"]
    rounds = plan["rounds"]
    over = "the median over rounds" if rounds > 1 else "one round"
    lines = [
        f"{plan['urls']} URLs per set-up and round ({report['pages']}), {plan['clients']} concurrent "
        f"SDK clients through haproxy, {rounds} round{'s' if rounds > 1 else ''} (set-ups in turn, "
        f"every other round in reverse order, fresh processes each time); uncached: each URL once; "
        f"cached: the same URLs {plan['passes']} more time{'s' if plan['passes'] != 1 else ''}, "
        f"reshuffled each pass. Calls/s, latencies and CPU per call: {over}; counts: summed over rounds.",
        "",
        "| set-up | phase | calls | calls/s | p50 ms | p99 ms | errors | answered cached | "
        "cross-replica hits | origin downloads | Redis cmds / KiB in / KiB out per call | "
        "CPU ms/call | other load |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, res in setups.items():
        for phase, f in res["phases"].items():
            cross = "n/a"
            if f.get("cross_replica_calls") is not None:
                ratio_text = _num(100 * (f["cross_replica_hit_ratio"] or 0), 0)
                cross = f"{f['cross_replica_hits']:,} / {f['cross_replica_calls']:,} ({ratio_text} %)"
            redis = f.get("redis")
            traffic = "n/a"
            if redis:
                traffic = (
                    f"{_num(redis['commands_per_call'])} / {_num(redis['kib_in_per_call'])} / "
                    f"{_num(redis['kib_out_per_call'])}"
                )
            lines.append(
                f"| {label}: {res['setup']} | {phase} | {f['calls']:,} | {_num(f['calls_per_s'])} | "
                f"{_num(f['p50_ms'])} | {_num(f['p99_ms'])} | {f['errors']} | {f['answered_cached']:,} | "
                f"{cross} | {f['origin_downloads']:,} | {traffic} | "
                f"{_num(f['cpu_ms_per_call_total'])} | {_num(100 * (f['other_load'] or 0), 0)} % |"
            )
    lines += [
        "",
        "Ratios to A (one replica, in memory; calls/s above 1 is faster than A, latency above 1 slower):",
    ]
    lines += [
        "",
        "| compared | phase | calls/s | p50 | p99 | CPU per call |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, phases in report["ratios"].items():
        for phase, r in phases.items():
            lines.append(
                f"| {name} | {phase} | {_times(r['calls_per_s'])} | {_times(r['p50_ms'])} | "
                f"{_times(r['p99_ms'])} | {_times(r['cpu_ms_per_call_total'])} |"
            )
    lines += [
        "",
        "CPU per call by process, ms (from /proc: each replica with its conversion workers; the clients "
        "and the origin are the bench's own process):",
        "",
    ]
    names = ["replicas", "haproxy", "redis-server", "clients and origin"]
    lines += [
        "| set-up | phase | " + " | ".join(names) + " |",
        "| --- | --- |" + " ---: |" * len(names),
    ]
    for label, res in setups.items():
        for phase, f in res["phases"].items():
            cells = [_num(f["cpu_ms_per_call"].get(name), 2) for name in names]
            lines.append(f"| {label} | {phase} | " + " | ".join(cells) + " |")
    lines.append("")
    for label, res in setups.items():
        downloads = res["phases"]["cached"]["urls_by_downloads_after_both"]
        spread = ", ".join(f"{count:,} URLs downloaded {n}×" for n, count in downloads.items())
        notes = [f"{label}: origin downloads per URL, both phases: {spread}"]
        if res["redis_memory"]:
            m = max(res["redis_memory"], key=lambda one: one["rss_mb"])
            cmds = res["phases"]["cached"]["redis"]["by_command"]
            top = ", ".join(f"{name} {count:,}" for name, count in list(cmds.items())[:5])
            notes.append(
                f"redis-server at the end: RSS {m['rss_mb']} MB (peak {m['peak_rss_mb']} MB), used_memory "
                f"{m['used_memory_mb']} MB, {m['keys']:,} keys; cached-phase commands: {top}"
            )
        rss = ", ".join(f"{v} MB" for v in res["replica_rss_mb"][-1])
        notes.append(f"replica RSS at the end (with its conversion workers): {rss}")
        states = sorted({s for s in res["shared_state"] if s is not None})
        if states:
            notes.append(f"/healthz shared_state after each round: {', '.join(states)}")
        lines.append("* " + "; ".join(notes) + ".")
    busy = [
        f"{label} {phase}"
        for label, res in setups.items()
        for phase, f in res["phases"].items()
        if (f["other_load"] or 0) > OTHER_LOAD_WARNING
    ]
    if busy:
        lines += [
            "",
            f"**Other processes used over {OTHER_LOAD_WARNING:.0%} of the CPU in a round of: "
            f"{', '.join(busy)}: those timings are disturbed.**",
        ]
    return "\n".join(lines)


def problems(report: dict[str, Any]) -> list[str]:
    found = []
    for label, res in report["setups"].items():
        for phase, f in res["phases"].items():
            if f["errors"]:
                found.append(f"{label} {phase}: {f['errors']} errors: {f['error_samples'][:2]}")
        if res["server_errors"]:
            found.append(f"{label}: the server logged errors: {res['server_errors'][:1]}")
        if res["redis"] and any(state != "ok" for state in res["shared_state"]):
            found.append(f"{label}: shared_state {res['shared_state']} (Redis was not used throughout)")
        if res["shared_state_warnings"]:
            found.append(f"{label}: {res['shared_state_warnings'][:2]}")
    return found


def update_readme(body: str) -> bool:
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(r"(<!-- bench:replicas -->\n)(.*?)(<!-- /bench:replicas -->)", re.S)
    if not pattern.search(text):
        return False
    README.write_text(pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text), encoding="utf-8")
    return True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="about 30 s; writes no committed file")
    parser.add_argument(
        "--urls", type=int, help="distinct URLs per set-up and round (default 400, quick 150)"
    )
    parser.add_argument("--clients", type=int, default=16, help="concurrent SDK clients (default 16)")
    parser.add_argument("--passes", type=int, help="passes of the cached phase (default 4, quick 2)")
    parser.add_argument(
        "--rounds", type=int, help="rounds, every other one in reverse order (default 2, quick 1)"
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        help="seconds to wait at most, before starting, for other load under 15%% (default 60, quick 0)",
    )
    parser.add_argument("--setups", default="A,B,C", help="which set-ups, a comma list of A, B, C")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    for name in ("redis-server", "haproxy"):
        if find_service(name) is None:
            print(f"no {name} on this machine: see scripts/install-services", file=sys.stderr)
            return 2
    for name in PROXY_VARS:  # loopback only: nothing we start may be sent through a proxy
        os.environ.pop(name, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    plan = Plan(
        urls=args.urls or (150 if args.quick else 400),
        clients=args.clients,
        passes=args.passes or (2 if args.quick else 4),
        rounds=args.rounds or (1 if args.quick else 2),
        quick=args.quick,
    )
    chosen = [setup for setup in SETUPS if setup.label in args.setups.upper().split(",")]
    if not chosen or chosen[0].label != "A":
        print("--setups must include A, the baseline the ratios are taken against", file=sys.stderr)
        return 2
    pages, pages_note = article_pages()
    quiet_wait = args.quiet_wait if args.quiet_wait is not None else (0.0 if args.quick else 60.0)
    busy_before, waited = (
        env.wait_until_quiet(OTHER_LOAD_WARNING, quiet_wait) if quiet_wait > 0 else (None, 0)
    )
    started = time.perf_counter()
    info: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "source": env.source(),
        "versions": {
            "mcp-server-web": env._version("mcp-server-web"),
            "mcp": env._version("mcp"),
            "redis-py": env._version("redis"),
            "python": sys.version.split()[0],
        },
        "machine": env.machine(),
        "quick": plan.quick,
        "busy_before": busy_before,
        "waited_for_quiet_s": waited,
    }
    print(f"replicas bench: {len(chosen)} set-ups, {plan.urls} URLs each ...", file=sys.stderr, flush=True)
    runs: dict[str, list[dict[str, Any]]] = {setup.label: [] for setup in chosen}
    with Origin("127.0.0.1") as origin:
        for round_no in range(1, plan.rounds + 1):
            # Every other round in reverse order: a drift in the machine's speed favours no set-up.
            order = chosen if round_no % 2 else chosen[::-1]
            for setup in order:
                runs[setup.label].append(run_setup(setup, plan, origin, pages, round_no))
    setups = {label: combine(rounds) for label, rounds in runs.items()}
    info["seconds"] = round(time.perf_counter() - started, 1)
    report: dict[str, Any] = {
        "info": info,
        "plan": {
            "urls": plan.urls,
            "clients": plan.clients,
            "passes": plan.passes,
            "rounds": plan.rounds,
            "seed": plan.seed,
        },
        "pages": pages_note,
        "setups": setups,
    }
    report["ratios"] = ratios(setups)
    report["caveat"] = CAVEAT.format(cores=info["machine"]["cores"])
    report["problems"] = problems(report)
    table = markdown(report)
    measured = (
        f"_Measured {info['date']}{' (quick mode)' if plan.quick else ''}: mcp-server-web "
        f"{info['versions']['mcp-server-web']} ({env.describe_source(info['source'])}), redis-server "
        f"{_redis_version()}, {_haproxy_version()}; {info['machine']['cpu']}, "
        f"{info['machine']['cores']} cores; {info['seconds']:.0f} s in all._"
    )
    body = measured + "\n\n" + table
    target = RESULTS / ("replicas.quick.raw.json" if plan.quick else "replicas.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(body + "\n\n" + report["caveat"])
    if not plan.quick and update_readme(body):
        print("bench/README.md: the replicas section was rewritten", file=sys.stderr)
    print(f"\nreport written to {target}", file=sys.stderr)
    if report["problems"]:
        print("FAIL:\n  " + "\n  ".join(report["problems"]), file=sys.stderr)
        return 1
    return 0


def _redis_version() -> str:
    import subprocess

    binary = find_service("redis-server")
    command = [binary or "redis-server", "--version"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    found = re.search(r"v=(\S+)", done.stdout)
    return found.group(1) if found else "unknown"


def _haproxy_version() -> str:
    import subprocess

    binary = find_service("haproxy")
    done = subprocess.run([binary or "haproxy", "-v"], capture_output=True, text=True, check=False)
    found = re.search(r"version (\S+)", done.stdout)
    return f"haproxy {found.group(1)}" if found else "haproxy"


if __name__ == "__main__":
    sys.exit(main())
