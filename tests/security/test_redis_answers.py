"""What Redis holds or answers is not trusted (issue 24, point 5).

A real server (a subprocess) shares state through a real redis-server into whose keys the test
writes what no replica would (a word for a count, an endless pacing turn, store bookkeeping that
does not parse, a lock that never lets go), or through a hostile RESP server the test runs on
127.0.0.1 (every reply of the wrong type, an array nested 100,000 deep, a 600 MB bulk string).
Every web_search and web_fetch answers as it would from memory alone; /healthz answers, and
says degraded; no wait on another replica's lock outlasts the call's own limit; the server's
memory does not grow with what a hostile Redis sends.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp_types import CallToolResult

from tests.support.fakes.base import FakeProvider, sample_results
from tests.support.hostile_redis import WRONG_TYPES, HostileRedis, always, huge_bulk, nested, wrong_types
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.origin import Origin, trickle
from tests.support.redis_server import RedisServer
from tests.support.samples import article_html

MARKER = "MARKER-OF-THE-PAGE"
PAGE = article_html(paragraphs=12).replace("<p>Paragraph 1:", f"<p>{MARKER} Paragraph 1:")
LIMIT = 4.0
"""MCP_WEB_TIMEOUT and MCP_WEB_SEARCH_DEADLINE of the servers here: the call's own limit."""


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def environment(redis_url: str, fakes: dict[str, FakeProvider], **extra: str) -> dict[str, str]:
    return {
        "MCP_WEB_REDIS_URL": redis_url,
        "MCP_WEB_LOG_LEVEL": "warning",
        "MCP_WEB_SEARCH_PROVIDERS": "duckduckgo",
        "MCP_WEB_DUCKDUCKGO_URL": fakes["duckduckgo"].origin.base,
        # Paced and budgeted, so every search takes a turn and counts a call in Redis.
        "MCP_WEB_DUCKDUCKGO_RPS": "50",
        "MCP_WEB_DUCKDUCKGO_DAILY_LIMIT": "1000",
        "MCP_WEB_TIMEOUT": str(LIMIT),
        "MCP_WEB_SEARCH_DEADLINE": str(LIMIT),
        **extra,
    }


@asynccontextmanager
async def served(env: dict[str, str]) -> AsyncIterator[tuple[RunningServer, Client]]:
    with running_http_server(**env) as server:
        async with http_client(server.url) as client:
            yield server, client


async def search_answers(client: Client, query: str) -> str:
    """ "ok" when web_search answered with the fake's results, else what it said."""
    result = await client.call_tool("web_search", {"query": query})
    data = result.structured_content or {}
    if result.is_error or data.get("provider") != "duckduckgo" or len(data.get("results", ())) != 3:
        return text_of(result)[:300]
    return "ok"


async def fetch_answers(client: Client, url: str, **arguments: Any) -> str:
    """ "ok" when web_fetch answered with the page, else what it said."""
    result = await client.call_tool("web_fetch", {"url": url, **arguments})
    if result.is_error or MARKER not in text_of(result):
        return text_of(result)[:300]
    return "ok"


def health(server: RunningServer) -> tuple[int, dict[str, Any]]:
    response = httpx2.get(f"{server.base}/healthz", timeout=10)
    try:
        body = response.json()
    except ValueError:
        body = {"text": response.text[:200]}
    return response.status_code, body


def stderr_of(server: RunningServer) -> str:
    """What the server logged, once it has stopped."""
    server.terminate()
    assert server.process.stderr is not None
    return server.process.stderr.read().decode(errors="replace")


# A real redis-server holding what no replica writes ---------------------------------------------


def poison(redis: RedisServer, kind: str) -> list[bytes]:
    """Write, into the keys of one kind, a value no replica writes; the keys written."""
    day = datetime.now(UTC).date().isoformat()
    commands: dict[str, list[tuple[str, ...]]] = {
        "cooldown count": [("SET", "mcp-web:search.cooldowns:count", "many")],
        "cooldown record": [
            (
                "HSET",
                "mcp-web:search.cooldowns:records",
                "duckduckgo",
                '{"until": 1e300, "strikes": 1, "reason": "rate_limit", "penalty": 1}',
            )
        ],
        "pacing turn": [("HSET", "mcp-web:search.pacing:turns", "duckduckgo", "inf")],
        "daily count": [("SET", f"mcp-web:search.calls:{day}:duckduckgo", "1e999")],
        "store bookkeeping": [],
    }
    if kind == "store bookkeeping":
        for meta in redis.keys("mcp-web:*:meta"):
            for member in redis.command("HKEYS", meta) or []:  # type: ignore[union-attr]
                commands[kind].append(("HSET", meta.decode(), member.decode(), "garbage"))  # type: ignore[union-attr]
        commands[kind] += [("SET", key.decode(), "NaN-bytes") for key in redis.keys("mcp-web:*:bytes")]
        commands[kind] += [("SET", key.decode(), "x") for key in redis.keys("mcp-web:*:seq")]
        # An entry of another type than a string (every entry of the document store).
        for entry in redis.keys("mcp-web:fetch:*:e:*"):
            commands[kind] += [("DEL", entry.decode()), ("HSET", entry.decode(), "field", "value")]
    for command in commands[kind]:
        redis.command(*command)
    return sorted({command[1].encode() for command in commands[kind]})


KINDS = ("cooldown count", "cooldown record", "pacing turn", "daily count", "store bookkeeping")


@pytest.mark.parametrize("kind", KINDS)
async def test_values_no_replica_writes_fail_no_call_and_healthz_says_degraded(
    kind: str, fakes: dict[str, FakeProvider], origin: Origin, redis_server: RedisServer
) -> None:
    fakes["duckduckgo"].answer(sample_results(3))
    cached = origin.serve("/cached", PAGE)
    env = environment(redis_server.url, fakes)
    async with served(env) as (server, client):
        # Before: the keys exist (a document and an answer stored, a turn, a count).
        assert await search_answers(client, "warm up") == "ok"
        assert await fetch_answers(client, cached) == "ok"
        status, body = health(server)
        assert status == 200 and body["shared_state"] == "ok", body
        assert poison(redis_server, kind)
        outcomes = {}
        for n in range(3):
            outcomes[f"search {n}"] = await search_answers(client, f"fresh query {n}")
            outcomes[f"fetch {n}"] = await fetch_answers(client, origin.serve(f"/new{n}", PAGE))
            outcomes[f"cached fetch {n}"] = await fetch_answers(client, cached)
        status, body = health(server)
    log = stderr_of(server)
    assert outcomes == dict.fromkeys(outcomes, "ok"), outcomes
    assert status == 200 and body["shared_state"] == "degraded" and body["status"] == "degraded", body
    assert "Traceback" not in log, log[-3000:]
    # Each kind of bad value is logged, once (not once per call).
    said = [line.split("shared state:", 1)[1] for line in log.splitlines() if "shared state:" in line]
    assert said, log[-2000:]
    assert len(said) == len(set(said)), said


async def test_a_foreign_lock_holds_a_fetch_no_longer_than_its_own_limit(
    fakes: dict[str, FakeProvider], origin: Origin, redis_server: RedisServer
) -> None:
    body = PAGE.encode()
    origin.route("/slow", trickle([body[: len(body) // 2], body[len(body) // 2 :]], 1.0))
    url = origin.url("/slow")
    env = environment(redis_server.url, fakes)
    async with served(env) as (server, client):
        # The control: the same page, nothing in the way. Meanwhile the locks' names are read.
        locks: set[bytes] = set()
        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            outcome: dict[str, str] = {}

            async def control() -> None:
                outcome["control"] = await fetch_answers(client, url)

            tg.start_soon(control)
            while "control" not in outcome:
                locks.update(redis_server.keys("mcp-web:*:lock:*"))
                await anyio.sleep(0.05)
        control_time = time.monotonic() - started
        assert outcome["control"] == "ok" and len(locks) >= 2, (outcome, locks)

        timings = {}
        for kind in ("never expires", "renewed like a live one"):
            for key in redis_server.keys("mcp-web:fetch:*"):
                redis_server.command("DEL", key)  # the document is gone: the next call works again
            stop = anyio.Event()

            async def hold_locks(kind: str = kind, stop: anyio.Event = stop) -> None:
                while not stop.is_set():
                    for lock in locks:
                        if kind == "never expires":
                            redis_server.command("SET", lock, "someone-else")
                        else:
                            redis_server.command("SET", lock, "0123456789abcdef", "PX", 10_000)
                    await anyio.sleep(1.0)

            started = time.monotonic()
            async with anyio.create_task_group() as tg:
                tg.start_soon(hold_locks)
                await anyio.sleep(0.1)
                outcome[kind] = await fetch_answers(client, url)
                stop.set()
            timings[kind] = time.monotonic() - started
        status, body = health(server)
    assert outcome == dict.fromkeys(outcome, "ok"), outcome
    assert status == 200 and body["shared_state"] == "degraded", body  # a lock no replica takes, said
    # A lock no replica could have written (no expiry, not a token) is not waited on at all; one
    # that looks alive is waited on for the call's limit at most, in all, then the work is done.
    assert timings["never expires"] < 2 * control_time + 1.0, (timings, control_time)
    assert timings["renewed like a live one"] < LIMIT + 2 * control_time + 1.0, (timings, control_time)


# A hostile RESP server -----------------------------------------------------------------------------


@contextmanager
def hostile(answer: Any) -> Iterator[HostileRedis]:
    with HostileRedis(answer) as server:
        yield server


@pytest.mark.parametrize(
    "answer",
    [
        *(pytest.param(always(reply), id=f"always {reply[:12]!r}") for reply in WRONG_TYPES),
        pytest.param(wrong_types, id="every type in turn"),
        pytest.param(nested(100_000), id="nested 100000 deep"),
    ],
)
async def test_a_redis_answering_garbage_fails_no_call_and_healthz_says_degraded(
    answer: Any, fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    fakes["duckduckgo"].answer(sample_results(3))
    with hostile(answer) as redis:
        async with served(environment(redis.url, fakes)) as (server, client):
            outcomes = {}
            for n in range(3):
                outcomes[f"search {n}"] = await search_answers(client, f"query {n}")
                url = origin.serve(f"/page{n}", PAGE)
                outcomes[f"fetch {n}"] = await fetch_answers(client, url)
                outcomes[f"fetch {n} again"] = await fetch_answers(client, url, start_index=0)
            checks = [health(server) for _ in range(3)]
        log = stderr_of(server)
        asked = redis.data_commands()
    assert asked, "the server never asked the hostile Redis anything"
    assert outcomes == dict.fromkeys(outcomes, "ok"), outcomes
    assert all(status == 200 and body.get("shared_state") == "degraded" for status, body in checks), checks
    assert "Traceback" not in log, log[-3000:]


def peak_rss(pid: int) -> int:
    """The process's peak resident set since the last reset, in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    assert match is not None
    return int(match.group(1)) * 1024


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


async def test_a_600_mb_reply_costs_the_server_no_more_memory_than_a_small_one(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    fakes["duckduckgo"].answer(sample_results(3))
    growth = {}
    outcomes = {}
    for name, answer in (("control", huge_bulk(5)), ("600MB", huge_bulk(600 * 1024 * 1024))):
        with hostile(answer) as redis:
            async with served(environment(redis.url, fakes)) as (server, client):
                # The first call of each kind has imported and warmed up what it needs.
                assert await fetch_answers(client, origin.serve(f"/warm-{name}", PAGE)) == "ok"
                await anyio.sleep(3)  # the degraded replica's probe asks Redis again: ok for now
                reset_peak(server.process.pid)
                before = peak_rss(server.process.pid)
                for n in range(3):
                    outcomes[f"{name} search {n}"] = await search_answers(client, f"{name} query {n}")
                    outcomes[f"{name} fetch {n}"] = await fetch_answers(
                        client, origin.serve(f"/{name}-{n}", PAGE)
                    )
                    await anyio.sleep(2.5)  # a probe interval: Redis is asked again, and answers again
                growth[name] = peak_rss(server.process.pid) - before
                status, body = health(server)
            stderr_of(server)
        assert status == 200, body
    assert outcomes == dict.fromkeys(outcomes, "ok"), outcomes
    assert growth["600MB"] < growth["control"] + 40 * 1024 * 1024, growth
