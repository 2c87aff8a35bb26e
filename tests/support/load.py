"""A bounded load test of the real HTTP service, shared by the CI test and the full bench.

``run_load(LoadPlan(...))`` starts ``python -m mcp_server_web --transport http`` on 127.0.0.1
(tests/support/http_server.running_http_server), pointed at a loopback origin (tests/support/origin)
and at the five provider fakes (tests/support/fakes), and drives it with ``plan.clients`` SDK clients
over streamable HTTP, each its own Client and connection pool, all pulling from one list of
``plan.calls`` calls until it is empty. The calls mix:

* cached fetches: a small set of pages (short articles and long documents read at a random page)
  fetched during warm-up, so each call is answered from the cache (checked: ``cached`` is true);
* uncached fetches: every call a URL the server has not seen, whose page carries a token of its
  own (checked: the answer holds that token and no other, so answers cannot cross between calls);
* searches, pinned in turn to each of the five providers: repeated queries (cached after warm-up)
  and distinct ones (a provider round trip each), checked to echo the query and the provider;
* cancelled calls: the client abandons the call mid-flight (the SDK then aborts the call's POST,
  which is how streamable HTTP at 2026-07-28 cancels). Most are fetches of a page the origin
  trickles out over a second, so the cancel always lands while the server is working; the rest
  cancel ordinary calls within a few milliseconds, wherever they happen to be.

Each call ends in exactly one outcome: ``ok``; ``refused`` (the rate_limited error of the
server's concurrency cap, MCP_WEB_MAX_CONCURRENCY); ``cancelled`` (abandoned by the client);
``tool_error`` (any other isError); ``protocol_error`` (the call raised: transport, JSON-RPC or
SDK failure); ``hung`` (no answer within ``plan.call_timeout``). A load run passes when there are
no tool errors, protocol errors or hangs and no failed content check.

Resources are read from /proc for the server process: open file descriptors and VmRSS at a
baseline, their peak during the load (a sampler thread; the RSS peak is the kernel's VmHWM),
and after it. Baseline and "after" are taken the same way, so they compare like with like: with
no client connected, after the idle keep-alive connections of the server's outbound pools have
expired (httpx keeps them 5 s and closes expired ones on the pool's next request), then one
probe round (an uncached fetch, one search per provider, a cached fetch) that must be answered,
then a short pause. Extra descriptors after the load are leaks; RSS is allowed ``rss_bound_mb``
above baseline, room for the document cache (capped low by ``cache_max_mb``) and
``rss_headroom_mb`` for the rest (see LoadPlan). After each reading, as many slow calls at once
as the concurrency cap allows must all be answered: a refusal would mean a slot of the cap
leaked (to a cancelled call, say).

Everything is on loopback; the origin, the fakes and the clients share this process.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.config import OPTIONS_BY_ATTR, Settings
from tests.support.fakes.base import FakeProvider, sample_results
from tests.support.fakes.brave import FakeBrave
from tests.support.fakes.duckduckgo import FakeDuckDuckGo
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.searxng import FakeSearxng
from tests.support.fakes.tavily import FakeTavily
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.origin import Origin, Reply, RequestContext
from tests.support.samples import article_html, long_markdown_html

logger = logging.getLogger(__name__)

PROVIDERS = ("tavily", "exa", "brave", "searxng", "duckduckgo")
KINDS = ("cached_fetch", "uncached_fetch", "search_repeat", "search_distinct", "cancelled")
OUTCOMES = ("ok", "refused", "cancelled", "tool_error", "protocol_error", "hung")
PAGE_LENGTH = 8000
"""web_fetch's default max_length: the page size when a cached long document is read at a page."""
KEEPALIVE_IDLE_S = 5.5
"""A little over httpx's keep-alive expiry (5 s), which every outbound pool of the server uses."""
SLOW_CHUNKS = 10
SLOW_CHUNK_DELAY_S = 0.1
"""The trickled page of a cancelled fetch takes about a second, longer than any cancel delay."""
REFUSAL_MARKER = "MCP_WEB_MAX_CONCURRENCY"
SAMPLES_KEPT = 10


@dataclass(frozen=True)
class LoadPlan:
    """How big the load is, what it is made of, and the bounds it is judged by."""

    clients: int = 50
    calls: int = 20_000
    mix: dict[str, float] = field(
        default_factory=lambda: {
            "cached_fetch": 0.35,
            "uncached_fetch": 0.20,
            "search_repeat": 0.17,
            "search_distinct": 0.18,
            "cancelled": 0.10,
        }
    )
    max_concurrency: int | None = None
    """MCP_WEB_MAX_CONCURRENCY for the server; None keeps the server's default (32)."""
    cache_max_mb: int = 16
    """MCP_WEB_CACHE_MAX_MB: low, so the cache fills and evicts during a long run."""
    cached_pages: int = 16
    long_pages: int = 4
    repeated_queries: int = 8
    slow_share_of_cancels: float = 0.6
    """Cancelled calls that are trickled fetches (cancel surely mid-call); the rest cancel any call."""
    slow_cancel_after: tuple[float, float] = (0.05, 0.6)
    quick_cancel_after: tuple[float, float] = (0.0, 0.03)
    call_timeout: float = 60.0
    run_timeout: float = 1800.0
    fd_tolerance: int = 3
    rss_headroom_mb: float = 48.0
    """RSS may end this much above baseline besides the document cache: the search cache, the
    robots cache, and memory CPython and the allocator keep once used (they do not give freed
    arenas back to the system, so RSS levels off rather than falling back)."""
    seed: int = 20261122

    @property
    def rss_bound_mb(self) -> float:
        """How far above baseline the server's RSS may be after the load."""
        return self.cache_max_mb + self.rss_headroom_mb


@dataclass(frozen=True)
class Call:
    index: int
    kind: str
    tool: str
    arguments: dict[str, Any]
    cancel_after: float | None = None
    token: str | None = None
    """Text the answer must contain (a page's own token, or the query a search echoes)."""
    expect_cached: bool | None = None
    provider: str | None = None


@dataclass
class Tally:
    """Outcomes, and latencies by kind and outcome (a refusal is quick: kept apart from answers)."""

    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    latencies: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    check_failures: int = 0
    cancel_late: int = 0
    samples: dict[str, list[str]] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    """When the load began (perf_counter), for the times in samples."""

    def add(self, call: Call, outcome: str, latency_ms: float | None = None) -> None:
        self.outcomes[(call.kind, outcome)] += 1
        if latency_ms is not None:
            self.latencies.setdefault((call.kind, outcome), []).append(latency_ms)

    def note(self, what: str, text: str) -> None:
        kept = self.samples.setdefault(what, [])
        if len(kept) < SAMPLES_KEPT:
            kept.append(text[:400])

    def count(self, outcome: str, kind: str | None = None) -> int:
        return sum(n for (k, o), n in self.outcomes.items() if o == outcome and kind in (None, k))

    def latencies_of(self, outcome: str, kind: str | None = None) -> list[float]:
        return [
            value
            for (k, o), values in self.latencies.items()
            if o == outcome and kind in (None, k)
            for value in values
        ]


def percentile(values: list[float], share: float) -> float | None:
    """Nearest-rank percentile (share in 0..1); None when there are no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def latency_summary(values: list[float]) -> dict[str, float | None]:
    figures = {
        "p50_ms": percentile(values, 0.50),
        "p99_ms": percentile(values, 0.99),
        "max_ms": max(values) if values else None,
    }
    return {name: None if value is None else round(value, 1) for name, value in figures.items()}


# -- /proc readings -------------------------------------------------------------------------------


def open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def status_kib(pid: int, name: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time the process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def machine_busy_seconds() -> float | None:
    """CPU time every core of the machine has spent busy since boot (from /proc/stat)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def fd_kinds(pid: int) -> dict[str, int]:
    """Open descriptors by what they point at (socket, pipe, anon_inode:[eventpoll], a path)."""
    kinds: Counter[str] = Counter()
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            kinds[re.sub(r"\[\d+\]$", "", target)] += 1
    except OSError:
        pass
    return dict(kinds)


class Sampler:
    """Samples a process's open descriptors and VmRSS in a thread, keeping the highest of each."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.max_fds = 0
        self.max_rss_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="load-sampler", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            fds, rss = open_fds(self.pid), status_kib(self.pid, "VmRSS")
            if fds is None or rss is None:
                return
            self.max_fds, self.max_rss_kib = max(self.max_fds, fds), max(self.max_rss_kib, rss)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


class StderrDrain:
    """Reads the server's stderr as it comes, so a chatty log can never fill the pipe and stall
    the server; counts records by level and keeps the first ERROR/CRITICAL records whole (with
    their tracebacks) and the first warnings other than the concurrency cap's refusals."""

    _RECORD = re.compile(r"^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")
    KEPT = 20

    def __init__(self, server: RunningServer) -> None:
        self._stream = server.process.stderr
        self.levels: Counter[str] = Counter()
        self.errors: list[list[str]] = []
        self.warnings: list[str] = []
        self.refusal_warnings = 0
        self._thread = threading.Thread(target=self._loop, name="server-stderr", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        assert self._stream is not None
        current: list[str] | None = None  # the ERROR record whose continuation lines follow
        for raw in self._stream:
            line = raw.decode("utf-8", "replace").rstrip()
            found = self._RECORD.match(line)
            if found is None:
                # A traceback or other continuation of the record before it; a traceback with no
                # record of its own (printed by something other than logging) is kept too.
                if current is None and line.startswith("Traceback") and len(self.errors) < self.KEPT:
                    current = []
                    self.errors.append(current)
                if current is not None and len(current) < 80:
                    current.append(line[:300])
                continue
            level = found.group(1)
            self.levels[level] += 1
            current = None
            if level in ("ERROR", "CRITICAL") and len(self.errors) < self.KEPT:
                current = [line[:500]]
                self.errors.append(current)
            elif level == "WARNING" and "refusing a tool call" in line:
                self.refusal_warnings += 1
            elif level == "WARNING" and len(self.warnings) < self.KEPT:
                self.warnings.append(line[:500])

    @property
    def error_texts(self) -> list[str]:
        return ["\n".join(lines) for lines in self.errors]

    def join(self, timeout: float = 5) -> None:
        self._thread.join(timeout)


# -- the loopback origin and the provider fakes ---------------------------------------------------


def _query(ctx: RequestContext) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(ctx.path).query).items()}


def page_token(key: str) -> str:
    return f"LOADTOKEN-{key}-END"


def token_page(key: str, paragraphs: int) -> str:
    """An article whose text carries its own token, so an answer shows which page it came from."""
    html = article_html(paragraphs)
    marker = f"<p>This page is number {page_token(key)} of the load test, unique to its address.</p>"
    return html.replace("<h2>Erosion</h2>", marker + "\n<h2>Erosion</h2>", 1)


def _uncached(ctx: RequestContext) -> None:
    key = _query(ctx).get("n", "none")
    ctx.send(Reply(body=token_page(key, 4 + sum(map(ord, key)) % 24)))


def _slow(ctx: RequestContext) -> None:
    body = token_page(_query(ctx).get("n", "slow"), 12).encode()
    step = -(-len(body) // SLOW_CHUNKS)
    ctx.send_head(200, {"Content-Type": "text/html; charset=utf-8", "Transfer-Encoding": "chunked"})
    for start in range(0, len(body), step):
        chunk = body[start : start + step]
        if not ctx.write(b"%x\r\n%s\r\n" % (len(chunk), chunk)):
            ctx.origin.note_disconnect(ctx.path)
            return
        time.sleep(SLOW_CHUNK_DELAY_S)
    ctx.write(b"0\r\n\r\n")


def load_origin(origin: Origin, plan: LoadPlan) -> None:
    """Routes of the load: cached pages (/c, /long), uncached (/u), trickled (/slow), robots.txt."""
    # socketserver listens with a backlog of 5; the server's bursts of new connections would
    # overflow it, and each dropped handshake costs a 1 s SYN retransmit that is the origin's
    # doing, not the server's. Listening again only raises the backlog.
    assert origin._server is not None
    origin._server.socket.listen(128)
    origin.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    articles = {str(i): token_page(f"c{i}", 8 + i % 10) for i in range(plan.cached_pages)}
    longs = {str(i): long_markdown_html(30 + 10 * i) for i in range(plan.long_pages)}
    origin.route("/c", lambda ctx: ctx.send(Reply(body=articles.get(_query(ctx).get("n", ""), ""))))
    origin.route("/long", lambda ctx: ctx.send(Reply(body=longs.get(_query(ctx).get("n", ""), ""))))
    origin.route("/u", _uncached)
    origin.route("/slow", _slow)


@contextmanager
def provider_fakes() -> Iterator[dict[str, FakeProvider]]:
    """The five fakes, each answering five results in its provider's wire format."""
    made: dict[str, FakeProvider] = {
        "tavily": FakeTavily(),
        "exa": FakeExa(),
        "brave": FakeBrave(),
        "searxng": FakeSearxng(),
        "duckduckgo": FakeDuckDuckGo(),
    }
    with ExitStack() as stack:
        for name, fake in made.items():
            stack.enter_context(fake)
            fake.answer(sample_results(5, prefix=name))
        yield made


def server_env(plan: LoadPlan, fakes: dict[str, FakeProvider]) -> dict[str, str]:
    """Environment pointing the server at the fakes, with the plan's cache cap and concurrency."""
    env = {
        "MCP_WEB_SEARCH_PROVIDERS": ",".join(PROVIDERS),
        "MCP_WEB_CACHE_MAX_MB": str(plan.cache_max_mb),
        # StderrDrain reads the warnings (the cap's refusals among them); info would only add noise.
        "MCP_WEB_LOG_LEVEL": "warning",
    }
    for fake in fakes.values():
        for attr, value in fake.settings().items():
            env[OPTIONS_BY_ATTR[attr].env] = str(value)
    if plan.max_concurrency is not None:
        env["MCP_WEB_MAX_CONCURRENCY"] = str(plan.max_concurrency)
    return env


# -- the calls ------------------------------------------------------------------------------------


@dataclass
class Corpus:
    """What the calls are drawn from: the warm pages (with their lengths) and the queries."""

    origin: str
    cached: list[tuple[str, str | None, int]]
    """(url, token or None, total text length) of every page fetched during warm-up."""
    repeated: list[str]


def build_corpus(origin: Origin, plan: LoadPlan) -> Corpus:
    cached: list[tuple[str, str | None, int]] = [
        (origin.url(f"/c?n={i}"), page_token(f"c{i}"), 0) for i in range(plan.cached_pages)
    ]
    cached += [(origin.url(f"/long?n={i}"), None, 0) for i in range(plan.long_pages)]
    repeated = [f"load repeated query {i} rivers and valleys" for i in range(plan.repeated_queries)]
    return Corpus(origin.base, cached, repeated)


def plan_calls(plan: LoadPlan, corpus: Corpus) -> list[Call]:
    rng = random.Random(plan.seed)
    kinds = list(plan.mix)
    weights = [plan.mix[kind] for kind in kinds]
    calls: list[Call] = []
    for index in range(plan.calls):
        kind = rng.choices(kinds, weights)[0]
        if kind == "cancelled":
            if rng.random() < plan.slow_share_of_cancels:
                calls.append(
                    Call(
                        index,
                        kind,
                        "web_fetch",
                        {"url": f"{corpus.origin}/slow?n=cancel-{index}"},
                        cancel_after=rng.uniform(*plan.slow_cancel_after),
                    )
                )
                continue
            inner = _call(index, rng.choice([k for k in kinds if k != "cancelled"]), rng, corpus)
            calls.append(
                Call(
                    index,
                    kind,
                    inner.tool,
                    inner.arguments,
                    cancel_after=rng.uniform(*plan.quick_cancel_after),
                    token=inner.token,
                    expect_cached=inner.expect_cached,
                    provider=inner.provider,
                )
            )
        else:
            calls.append(_call(index, kind, rng, corpus))
    return calls


def _call(index: int, kind: str, rng: random.Random, corpus: Corpus) -> Call:
    if kind == "cached_fetch":
        url, token, total = rng.choice(corpus.cached)
        arguments: dict[str, Any] = {"url": url}
        if token is None and total > PAGE_LENGTH:
            arguments["start_index"] = PAGE_LENGTH * rng.randrange(-(-total // PAGE_LENGTH))
        return Call(index, kind, "web_fetch", arguments, token=token, expect_cached=True)
    if kind == "uncached_fetch":
        key = f"u{index}"
        return Call(
            index,
            kind,
            "web_fetch",
            {"url": f"{corpus.origin}/u?n={key}"},
            token=page_token(key),
            expect_cached=False,
        )
    provider = PROVIDERS[index % len(PROVIDERS)]
    if kind == "search_repeat":
        query = rng.choice(corpus.repeated)
        return Call(
            index,
            kind,
            "web_search",
            {"query": query, "provider": provider},
            token=query,
            expect_cached=True,
            provider=provider,
        )
    query = f"load distinct query {index} sediment"
    return Call(
        index,
        kind,
        "web_search",
        {"query": query, "provider": provider},
        token=query,
        expect_cached=False,
        provider=provider,
    )


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def check_answer(call: Call, result: CallToolResult) -> list[str]:
    """What is wrong with a successful answer; empty when nothing is."""
    structured: dict[str, Any] = result.structured_content or {}
    text = text_of(result)
    wrong: list[str] = []
    if call.expect_cached is not None and structured.get("cached") is not call.expect_cached:
        wrong.append(f"cached={structured.get('cached')!r}, expected {call.expect_cached}")
    if call.tool == "web_fetch":
        if call.token is not None and call.token not in text:
            wrong.append(f"the page's token {call.token} is missing")
        others = set(re.findall(r"LOADTOKEN-[\w-]+?-END", text)) - {call.token}
        if others:
            wrong.append(f"the answer holds another page's token: {sorted(others)[:3]}")
        return wrong
    if structured.get("query") != call.token:
        wrong.append(f"search answered query {structured.get('query')!r}")
    if structured.get("provider") != call.provider:
        wrong.append(f"search answered by {structured.get('provider')!r}, pinned to {call.provider}")
    if not structured.get("results"):
        wrong.append("search answered no results")
    if wrong:
        wrong.append(f"attempts {structured.get('attempts')}")
    return wrong


async def run_call(client: Client, call: Call, tally: Tally, call_timeout: float) -> None:
    started = time.perf_counter()
    result: CallToolResult | None = None
    with anyio.CancelScope(deadline=anyio.current_time() + call_timeout) as guard:
        try:
            if call.cancel_after is None:
                result = await client.call_tool(call.tool, call.arguments)
            else:
                with anyio.move_on_after(call.cancel_after) as abandon:
                    result = await client.call_tool(call.tool, call.arguments)
                if abandon.cancelled_caught:
                    tally.add(call, "cancelled")
                    return
                tally.cancel_late += 1
        except Exception as exc:
            # Anything the call raises is a failure of the transport or the protocol: a tool's own
            # failure arrives as an isError result, never as an exception.
            tally.add(call, "protocol_error")
            tally.note("protocol_error", f"{call.kind} {call.arguments}: {type(exc).__name__}: {exc!r}")
            return
    if guard.cancelled_caught or result is None:
        tally.add(call, "hung")
        tally.note("hung", f"{call.kind} {call.arguments}: no answer in {call_timeout:g} s")
        return
    latency_ms = 1000 * (time.perf_counter() - started)
    if result.is_error:
        text = text_of(result)
        if text.startswith("rate_limited:") and REFUSAL_MARKER in text:
            tally.add(call, "refused", latency_ms)
        else:
            tally.add(call, "tool_error", latency_ms)
            tally.note("tool_error", f"{call.kind} {call.arguments}: {text}")
        return
    tally.add(call, "ok", latency_ms)
    wrong = check_answer(call, result)
    if wrong:
        tally.check_failures += 1
        at = started - tally.started
        tally.note("check_failure", f"call {call.index} at {at:.1f} s, {call.kind} {call.arguments}: {wrong}")


# -- warm-up, quiescence, the load ----------------------------------------------------------------


async def warm_up(url: str, corpus: Corpus) -> list[str]:
    """Fill the cache with the cached set (noting long pages' lengths) and the repeated queries."""
    problems: list[str] = []
    async with http_client(url) as client:
        await client.list_tools()
        for position, (page_url, token, _) in enumerate(corpus.cached):
            result = await client.call_tool("web_fetch", {"url": page_url})
            if result.is_error:
                problems.append(f"warm-up fetch {page_url}: {text_of(result)[:300]}")
                continue
            total = int((result.structured_content or {}).get("total_length") or 0)
            corpus.cached[position] = (page_url, token, total)
        for query in corpus.repeated:
            for provider in PROVIDERS:
                result = await client.call_tool("web_search", {"query": query, "provider": provider})
                # An answer without results is not cached, so its query would not be a cached one.
                if result.is_error or not (result.structured_content or {}).get("results"):
                    problems.append(f"warm-up search {provider} {query!r}: {text_of(result)[:300]}")
    return problems


async def quiesce(url: str, corpus: Corpus, pid: int, label: str, cap: int) -> dict[str, Any]:
    """Let idle keep-alive connections expire, make one probe round, read fds and RSS; then check
    that every slot of the concurrency cap is free: ``cap`` slow calls at once, none refused."""
    await anyio.sleep(KEEPALIVE_IDLE_S)
    failures: list[str] = []
    async with http_client(url) as client:
        await client.list_tools()
        probes: list[tuple[str, dict[str, Any]]] = [
            ("web_fetch", {"url": f"{corpus.origin}/u?n=probe-{label}"})
        ]
        probes += [("web_search", {"query": f"probe {label}", "provider": name}) for name in PROVIDERS]
        probes.append(("web_fetch", {"url": corpus.cached[0][0]}))
        for tool, arguments in probes:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                failures.append(f"{tool} {arguments}: {text_of(result)[:300]}")
    await anyio.sleep(0.5)  # the server has seen the client's connection close
    reading = {"fds": open_fds(pid), "rss_kib": status_kib(pid, "VmRSS"), "fd_kinds": fd_kinds(pid)}

    async def slow_call(client: Client, number: int) -> None:
        # Each takes about a second at the origin, so all of them hold a slot at the same time.
        arguments = {"url": f"{corpus.origin}/slow?n=slots-{label}-{number}"}
        result = await client.call_tool("web_fetch", arguments)
        if result.is_error:
            failures.append(f"web_fetch {arguments} ({cap} at once): {text_of(result)[:300]}")

    async with http_client(url) as client:
        await client.list_tools()
        async with anyio.create_task_group() as group:
            for number in range(cap):
                group.start_soon(slow_call, client, number)
    return {**reading, "probe_failures": failures}


async def drive(url: str, calls: list[Call], plan: LoadPlan, tally: Tally) -> tuple[float, float]:
    """All clients connected first, then the clock runs while they empty the shared list."""
    pending = iter(calls)
    async with AsyncExitStack() as stack:
        connect_started = time.perf_counter()
        clients: list[Client] = []
        for _ in range(plan.clients):
            client = await stack.enter_async_context(http_client(url))
            # The client checks structured results against the listed output schemas.
            await client.list_tools()
            clients.append(client)
        connect_s = time.perf_counter() - connect_started

        async def worker(client: Client) -> None:
            for call in pending:  # one shared iterator: every call is made exactly once
                await run_call(client, call, tally, plan.call_timeout)

        started = tally.started = time.perf_counter()
        with anyio.fail_after(plan.run_timeout):
            async with anyio.create_task_group() as group:
                for client in clients:
                    group.start_soon(worker, client)
        return time.perf_counter() - started, connect_s


def _other_cpu(
    busy_before: float | None,
    busy_after: float | None,
    server_before: float | None,
    server_after: float | None,
    driver: float,
) -> float | None:
    if busy_before is None or busy_after is None or server_before is None or server_after is None:
        return None
    return round(max(0.0, busy_after - busy_before - (server_after - server_before) - driver), 1)


def _mb(kib: int | None) -> float | None:
    return None if kib is None else round(kib / 1024, 1)


def run_load(plan: LoadPlan) -> dict[str, Any]:
    """Start the fakes, the origin and the server, run the plan, and return the report."""
    with provider_fakes() as fakes, Origin("127.0.0.1") as origin:
        load_origin(origin, plan)
        corpus = build_corpus(origin, plan)
        with running_http_server(**server_env(plan, fakes)) as server:
            drain = StderrDrain(server)
            pid = server.process.pid
            warm_problems = anyio.run(warm_up, server.url, corpus)
            calls = plan_calls(plan, corpus)
            cap = plan.max_concurrency or Settings().max_concurrency
            baseline = anyio.run(quiesce, server.url, corpus, pid, "baseline", cap)
            tally = Tally()
            cpu_before, own_before = cpu_seconds(pid), time.process_time()
            busy_before = machine_busy_seconds()
            with Sampler(pid) as sampler:
                wall_s, connect_s = anyio.run(drive, server.url, calls, plan, tally)
            cpu_after, own_after = cpu_seconds(pid), time.process_time()
            busy_after = machine_busy_seconds()
            during_max_fds, during_max_rss = sampler.max_fds, sampler.max_rss_kib
            after = anyio.run(quiesce, server.url, corpus, pid, "after", cap)
            peak_rss_kib = status_kib(pid, "VmHWM") or during_max_rss
            exit_code = server.terminate()
            drain.join()
        # The load's own cancelled fetches, not the slot checks' (which are answered in full).
        slow_disconnects = sum(1 for path in origin.disconnects if path.startswith("/slow?n=cancel-"))
        slow_requests = sum(1 for r in origin.requests if r.path.startswith("/slow?n=cancel-"))
        provider_requests = {name: len(fake.requests) for name, fake in fakes.items()}
    return build_report(
        plan,
        tally,
        wall_s=wall_s,
        connect_s=connect_s,
        baseline=baseline,
        after=after,
        peak_fds=max(during_max_fds, baseline["fds"] or 0),
        peak_rss_kib=peak_rss_kib,
        warm_problems=warm_problems,
        server_log={
            "levels": dict(drain.levels),
            "errors": drain.error_texts,
            "refusal_warnings": drain.refusal_warnings,
            "other_warnings": drain.warnings,
            "exit_code": exit_code,
        },
        cpu_s={
            # Includes the clients' connect phase; both figures cover the same span.
            "server": None if cpu_before is None or cpu_after is None else round(cpu_after - cpu_before, 1),
            "driver": round(own_after - own_before, 1),
            # Everything else the machine ran meanwhile: other load makes the timings slower.
            "other": _other_cpu(busy_before, busy_after, cpu_before, cpu_after, own_after - own_before),
        },
        origin={"slow_requests": slow_requests, "slow_abandoned_by_server": slow_disconnects},
        provider_requests=provider_requests,
    )


def build_report(
    plan: LoadPlan,
    tally: Tally,
    *,
    wall_s: float,
    connect_s: float,
    baseline: dict[str, Any],
    after: dict[str, Any],
    peak_fds: int,
    peak_rss_kib: int,
    warm_problems: list[str],
    server_log: dict[str, Any],
    origin: dict[str, int],
    provider_requests: dict[str, int],
    cpu_s: dict[str, float | None],
) -> dict[str, Any]:
    answered = sum(tally.count(outcome) for outcome in OUTCOMES)
    by_kind = {
        kind: {
            "calls": sum(tally.count(outcome, kind) for outcome in OUTCOMES),
            **{outcome: tally.count(outcome, kind) for outcome in OUTCOMES},
            **latency_summary(tally.latencies_of("ok", kind)),
        }
        for kind in KINDS
    }
    report: dict[str, Any] = {
        "plan": {**asdict(plan), "rss_bound_mb": plan.rss_bound_mb},
        "calls": answered,
        "wall_s": round(wall_s, 2),
        "connect_s": round(connect_s, 2),
        "calls_per_s": round(answered / wall_s, 1) if wall_s else None,
        "cpu_s": cpu_s,
        "outcomes": {outcome: tally.count(outcome) for outcome in OUTCOMES},
        "cancel_requested": tally.count("cancelled") + tally.cancel_late,
        "cancel_late": tally.cancel_late,
        "check_failures": tally.check_failures,
        # Latency of the calls answered; refusals come back at once and would only flatter it.
        "latency": latency_summary(tally.latencies_of("ok")),
        "refusal_latency": latency_summary(tally.latencies_of("refused")),
        "by_kind": by_kind,
        "fds": {"baseline": baseline["fds"], "peak": peak_fds, "after": after["fds"]},
        "fd_kinds": {"baseline": baseline["fd_kinds"], "after": after["fd_kinds"]},
        "rss_mb": {
            "baseline": _mb(baseline["rss_kib"]),
            "peak": _mb(peak_rss_kib),
            "after": _mb(after["rss_kib"]),
        },
        "probe_failures": {"baseline": baseline["probe_failures"], "after": after["probe_failures"]},
        "warm_up_problems": warm_problems,
        "server_log": server_log,
        "origin": origin,
        "provider_requests": provider_requests,
        "samples": tally.samples,
    }
    report["problems"] = problems(report, plan)
    return report


def problems(report: dict[str, Any], plan: LoadPlan) -> list[str]:
    """Everything that makes the run a failure; empty when it passed."""
    found: list[str] = []
    outcomes = report["outcomes"]
    if report["calls"] != plan.calls:
        found.append(f"{report['calls']} of {plan.calls} calls have an outcome")
    for outcome in ("tool_error", "protocol_error", "hung"):
        if outcomes[outcome]:
            found.append(f"{outcomes[outcome]} {outcome}(s): {report['samples'].get(outcome, [])[:3]}")
    if report["check_failures"]:
        found.append(
            f"{report['check_failures']} answers failed their check: "
            f"{report['samples'].get('check_failure', [])[:3]}"
        )
    if report["warm_up_problems"]:
        found.append(f"warm-up failed: {report['warm_up_problems'][:3]}")
    for when, failures in report["probe_failures"].items():
        if failures:
            found.append(f"probe calls {when} the load failed: {failures[:3]}")
    if report["server_log"]["errors"]:
        found.append(f"the server logged errors: {report['server_log']['errors'][:2]}")
    fds = report["fds"]
    if fds["baseline"] is None or fds["after"] is None:
        found.append("could not read the server's open descriptors")
    elif fds["after"] > fds["baseline"] + plan.fd_tolerance:
        found.append(
            f"open descriptors {fds['baseline']} before, {fds['after']} after "
            f"(tolerance {plan.fd_tolerance}): {json.dumps(report['fd_kinds'])}"
        )
    rss = report["rss_mb"]
    if rss["baseline"] is None or rss["after"] is None:
        found.append("could not read the server's RSS")
    elif rss["after"] > rss["baseline"] + plan.rss_bound_mb:
        found.append(
            f"RSS {rss['baseline']} MB before, {rss['after']} MB after (bound +{plan.rss_bound_mb} MB)"
        )
    return found


def format_report(report: dict[str, Any]) -> str:
    """The results as plain-text tables."""

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    plan = report["plan"]
    lines = [
        f"{report['calls']} calls from {plan['clients']} clients in {report['wall_s']} s: "
        f"{report['calls_per_s']} calls/s (server cap {plan['max_concurrency'] or 'default'})",
        "",
        f"{'kind':<16} {'calls':>6} {'ok':>6} {'refused':>7} {'cancel':>6} {'t.err':>5} {'p.err':>5} "
        f"{'hung':>4} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}   (latency of the calls answered ok)",
    ]
    rows = [
        *report["by_kind"].items(),
        ("all", {**report["outcomes"], "calls": report["calls"], **report["latency"]}),
    ]
    for kind, row in rows:
        lines.append(
            f"{kind:<16} {row['calls']:>6} {row['ok']:>6} {row['refused']:>7} {row['cancelled']:>6} "
            f"{row['tool_error']:>5} {row['protocol_error']:>5} {row['hung']:>4} "
            f"{ms(row['p50_ms']):>8} {ms(row['p99_ms']):>8} {ms(row['max_ms']):>8}"
        )
    fds, rss, refusal = report["fds"], report["rss_mb"], report["refusal_latency"]
    cpu = report["cpu_s"]
    lines += [
        "",
        f"refusals answered in p50 {ms(refusal['p50_ms'])} ms, p99 {ms(refusal['p99_ms'])} ms; "
        f"CPU seconds during the load: server {cpu['server']}, clients + origin + fakes {cpu['driver']}, "
        f"other processes on the machine {cpu['other']}",
        f"cancels requested {report['cancel_requested']} "
        f"(answered before the cancel: {report['cancel_late']}); "
        f"trickled fetches the server abandoned at the origin: "
        f"{report['origin']['slow_abandoned_by_server']} of {report['origin']['slow_requests']}",
        f"answers failing their check: {report['check_failures']}",
        "",
        f"{'':<14} {'baseline':>9} {'peak':>9} {'after':>9}",
        f"{'open fds':<14} {fds['baseline']:>9} {fds['peak']:>9} {fds['after']:>9}",
        f"{'RSS MB':<14} {rss['baseline']:>9} {rss['peak']:>9} {rss['after']:>9}",
        "",
        f"server log lines by level: {report['server_log']['levels']}",
        "PASS" if not report["problems"] else "FAIL:\n  " + "\n  ".join(report["problems"]),
    ]
    return "\n".join(lines)
