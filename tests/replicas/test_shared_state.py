"""Replicas behind haproxy sharing one Redis (issue 17): real servers (subprocesses), a real
haproxy with the shipped configuration, a real redis-server, an origin and provider fakes, all on
127.0.0.1. Which replica served each request is read from haproxy's X-Served-By header.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp_types import CallToolResult

from tests.support.fakes.base import FakeProvider, Plan, sample_results
from tests.support.haproxy import SERVED_BY
from tests.support.origin import Origin, trickle
from tests.support.redis_server import RedisServer, running_redis
from tests.support.replicas import noting_replicas, running_replicas
from tests.support.samples import article_html
from tests.support.timing import eventually

PAGE = 1500


def shared(redis: RedisServer, **env: str) -> dict[str, str]:
    return {"MCP_WEB_REDIS_URL": redis.url, "MCP_WEB_LOG_LEVEL": "warning", **env}


class Tracked:
    """An MCP client through haproxy that notes which replica answered each of its requests."""

    def __init__(self, client: Client, served_by: list[str]) -> None:
        self.client = client
        self.served_by = served_by

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[CallToolResult, str]:
        before = len(self.served_by)
        result = await self.client.call_tool(tool, arguments)
        return result, self.served_by[-1] if len(self.served_by) > before else "?"


@asynccontextmanager
async def tracked(url: str) -> AsyncIterator[Tracked]:
    async with noting_replicas(url, read_timeout=60) as (client, served_by):
        yield Tracked(client, served_by)


def brave_then_duckduckgo(redis: RedisServer, fakes: dict[str, FakeProvider], **env: str) -> dict[str, str]:
    """Replicas' settings: Brave first, DuckDuckGo after it, both at their fakes, state in redis."""
    return shared(
        redis,
        BRAVE_API_KEY="brave-test-key",
        MCP_WEB_BRAVE_URL=fakes["brave"].origin.base,
        MCP_WEB_DUCKDUCKGO_URL=fakes["duckduckgo"].origin.base,
        MCP_WEB_SEARCH_PROVIDERS="brave,duckduckgo",
        **env,
    )


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def long_article(origin: Origin) -> str:
    return origin.serve("/article", article_html(paragraphs=40))


async def test_page_one_from_one_replica_and_page_two_from_another_are_one_document(
    origin: Origin, redis_server: RedisServer
) -> None:
    url = long_article(origin)
    with running_replicas(2, **shared(redis_server)) as (balancer, _):
        async with tracked(balancer.mcp_url) as web:
            pages: list[tuple[dict[str, Any], str]] = []
            arguments: dict[str, Any] = {"url": url, "max_length": PAGE}
            while True:
                result, replica = await web.call("web_fetch", arguments)
                assert not result.is_error, text_of(result)
                data = result.structured_content
                assert data is not None
                pages.append((data, replica))
                if data["next_start_index"] is None or len(pages) == 4:
                    break
                arguments = {
                    **arguments,
                    "start_index": data["next_start_index"],
                    "snapshot": data["snapshot"],
                }
    replicas = [replica for _, replica in pages]
    assert len(set(replicas)) == 2, replicas  # round robin: the pages came from both
    assert {data["snapshot"] for data, _ in pages} == {pages[0][0]["snapshot"]}
    assert [data["cached"] for data, _ in pages] == [False] + [True] * (len(pages) - 1)
    assert origin.hits("/article") == 1  # one download in the whole cluster


async def test_twenty_identical_fetches_across_replicas_cause_one_download(
    origin: Origin, redis_server: RedisServer
) -> None:
    body = article_html(paragraphs=10).encode()
    # Slow enough that all twenty are in flight together.
    origin.route("/slow", trickle([body[: len(body) // 2], body[len(body) // 2 :]], 1.0))
    url = origin.url("/slow")
    with running_replicas(3, **shared(redis_server)) as (balancer, _):
        async with tracked(balancer.mcp_url) as web:
            results: list[tuple[CallToolResult, str]] = []

            async def one() -> None:
                results.append(await web.call("web_fetch", {"url": url, "max_length": PAGE}))

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for _ in range(20):
                        tg.start_soon(one)
    assert all(not result.is_error for result, _ in results), [text_of(r) for r, _ in results if r.is_error]
    assert len({replica for _, replica in results}) >= 2  # round robin (a slow health check may skip one)
    assert origin.hits("/slow") == 1
    assert sorted(result.structured_content["cached"] for result, _ in results)[-19:] == [True] * 19  # type: ignore[index]


async def test_a_429_seen_by_one_replica_cools_the_provider_for_the_others(
    fakes: dict[str, FakeProvider], redis_server: RedisServer
) -> None:
    fakes["brave"].schedule(lambda query, earlier: Plan("rate_limit", retry_after=600))
    fakes["duckduckgo"].answer(sample_results(3))
    env = brave_then_duckduckgo(redis_server, fakes)
    with running_replicas(3, **env) as (balancer, _):
        async with tracked(balancer.mcp_url) as web:
            answers = [await web.call("web_search", {"query": f"query {n}"}) for n in range(6)]
    assert len({replica for _, replica in answers}) == 3
    assert all(not result.is_error for result, _ in answers)
    assert len(fakes["brave"].served) == 1  # asked once in the cluster, then cooled for all
    skipped = [result.structured_content["attempts"][0] for result, _ in answers[1:]]  # type: ignore[index]
    assert all(
        attempt["outcome"] == "skipped" and "cooling down" in attempt["error"] for attempt in skipped
    ), skipped


async def test_a_daily_budget_counts_across_replicas(
    fakes: dict[str, FakeProvider], redis_server: RedisServer
) -> None:
    fakes["brave"].answer(sample_results(3))
    fakes["duckduckgo"].answer(sample_results(2))
    env = brave_then_duckduckgo(redis_server, fakes, MCP_WEB_BRAVE_DAILY_LIMIT="4", MCP_WEB_BRAVE_RPS="100")
    with running_replicas(2, **env) as (balancer, _):
        async with tracked(balancer.mcp_url) as web:
            answers = [await web.call("web_search", {"query": f"budget {n}"}) for n in range(7)]
    assert len({replica for _, replica in answers}) == 2
    providers = [result.structured_content["provider"] for result, _ in answers]  # type: ignore[index]
    assert providers == ["brave"] * 4 + ["duckduckgo"] * 3
    assert len(fakes["brave"].served) == 4
    last = answers[-1][0].structured_content["attempts"][0]  # type: ignore[index]
    assert last["outcome"] == "skipped" and last["error"].startswith("budget")


async def replicas_find_redis_again(balancer: str, count: int) -> None:
    """Return once each of count replicas says shared_state ok (their background probe, every 2 s,
    finds Redis again with no call made)."""
    found: dict[str, str] = {}

    def all_found() -> bool:
        answer = httpx2.get(f"{balancer}/healthz", timeout=5)
        found[answer.headers[SERVED_BY]] = answer.json()["shared_state"]
        return len(found) == count and set(found.values()) == {"ok"}

    assert await eventually(all_found, every=0.1), found


async def test_redis_stopped_mid_run_and_started_again_every_call_succeeds(
    origin: Origin, redis_server: RedisServer
) -> None:
    urls = [origin.serve(f"/doc{n}", article_html(paragraphs=6)) for n in range(30)]
    with running_replicas(2, **shared(redis_server)) as (balancer, _):
        async with tracked(balancer.mcp_url) as web:
            outcomes = []
            for n, url in enumerate(urls):
                if n == 10:
                    redis_server.stop()
                if n == 20:
                    # Both replicas served calls without Redis: both say so, and still serve.
                    during = [httpx2.get(f"{balancer.url}/healthz", timeout=5) for _ in range(2)]
                    assert {
                        (r.status_code, r.json()["shared_state"], r.json()["status"]) for r in during
                    } == {(200, "degraded", "degraded")}
                    assert len({r.headers[SERVED_BY] for r in during}) == 2
                    redis_server.start()
                    await replicas_find_redis_again(balancer.url, 2)
                result, replica = await web.call("web_fetch", {"url": url, "max_length": PAGE})
                outcomes.append((result.is_error, replica, text_of(result)[:200]))
            health = [httpx2.get(f"{balancer.url}/healthz", timeout=5).json() for _ in range(2)]
    assert [failed for failed, _, _ in outcomes] == [False] * 30, [o for o in outcomes if o[0]]
    assert {h["shared_state"] for h in health} == {"ok"}
    # After the restart the entries are in Redis again: a new replica's read would find them.
    assert redis_server.keys("mcp-web:fetch:*:e:*")


async def test_a_replica_killed_mid_pagination_the_next_page_comes_from_another(
    origin: Origin, redis_server: RedisServer
) -> None:
    url = long_article(origin)
    with running_replicas(3, **shared(redis_server)) as (balancer, servers):
        async with tracked(balancer.mcp_url) as web:
            first, replica = await web.call("web_fetch", {"url": url, "max_length": PAGE})
            assert not first.is_error, text_of(first)
            data = first.structured_content
            assert data is not None
            doomed = next(s for s in servers if balancer.names[s.port] == replica)
            doomed.process.kill()
            doomed.process.wait()
            second, other = await web.call(
                "web_fetch",
                {
                    "url": url,
                    "max_length": PAGE,
                    "start_index": data["next_start_index"],
                    "snapshot": data["snapshot"],
                },
            )
    assert not second.is_error, text_of(second)
    assert other not in (replica, "?")
    assert second.structured_content["snapshot"] == data["snapshot"]  # type: ignore[index]
    assert second.structured_content["cached"] is True  # type: ignore[index]
    assert origin.hits("/article") == 1
    assert re.sub(r"\s+", " ", text_of(second))


def every_value(redis: RedisServer) -> bytes:
    """Everything stored in redis, keys and values, as one blob to search."""
    blob = b""
    for key in redis.keys("*"):
        kind = redis.command("TYPE", key)
        if kind == "string":
            value = redis.command("GET", key)
        elif kind == "hash":
            value = redis.command("HGETALL", key)
        elif kind == "zset":
            value = redis.command("ZRANGE", key, 0, -1)
        else:
            raise AssertionError(f"unexpected type {kind} of {key!r}")
        blob += key + repr(value).encode()
    return blob


async def test_nothing_secret_reaches_redis_and_doctor_reads_the_cluster_figures(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    """A password-protected Redis (its password in the URL, read from MCP_WEB_REDIS_URL_FILE);
    provider keys, the bearer token, request headers and URLs are never written to it."""
    fakes["brave"].fail("auth")
    fakes["duckduckgo"].answer(sample_results(3))
    url = origin.serve("/private/report", article_html(paragraphs=8)) + "?session=URL-SECRET"
    with running_redis(password="redis-pass-secret") as redis, tempfile.TemporaryDirectory() as folder:
        url_file = Path(folder) / "redis-url"
        url_file.write_text(redis.url_with_password + "\n")
        env = {
            "MCP_WEB_REDIS_URL_FILE": str(url_file),
            "MCP_WEB_LOG_LEVEL": "warning",
            "BRAVE_API_KEY": "BRAVE-KEY-SECRET",
            "MCP_WEB_BRAVE_URL": fakes["brave"].origin.base,
            "MCP_WEB_DUCKDUCKGO_URL": fakes["duckduckgo"].origin.base,
            "MCP_WEB_SEARCH_PROVIDERS": "brave,duckduckgo",
            "MCP_WEB_DUCKDUCKGO_DAILY_LIMIT": "50",
        }
        with running_replicas(2, **env) as (balancer, _):
            async with tracked(balancer.mcp_url) as web:
                for n in range(3):
                    result, _ = await web.call("web_search", {"query": f"secret query {n}"})
                    assert not result.is_error, text_of(result)
                fetched, _ = await web.call("web_fetch", {"url": url, "max_length": PAGE})
                assert not fetched.is_error, text_of(fetched)
            health = [httpx2.get(f"{balancer.url}/healthz", timeout=5).json() for _ in range(2)]
            stored = every_value(redis)
            redis_keys = redis.keys("*")
        # doctor, with the same settings, reads today's figures where every replica counts them.
        with anyio.fail_after(60):
            doctor = await anyio.run_process(
                [sys.executable, "-m", "mcp_server_web", "doctor"], env={**os.environ, **env}, check=False
            )
        stdout = doctor.stdout.decode()
    assert {h["shared_state"] for h in health} == {"ok"}
    assert b"search.calls" in stored and b"fetch" in stored  # the figures and the document are there
    # Cached documents and answers hold their URL and query (that is what they are); key names
    # do not, and no key, password or request header is stored anywhere.
    names = b" ".join(redis_keys)
    assert not any(
        part in names for part in (b"URL-SECRET", b"/private/report", b"secret query", b"127.0.0.1")
    )
    leaked = [
        part
        for part in (b"BRAVE-KEY-SECRET", b"redis-pass", b"user-agent", b"authorization")
        if part in stored
    ]
    assert leaked == []
    assert doctor.returncode == 0, doctor.stderr
    assert "redis-pass-secret" not in stdout
    assert f"Today (UTC), as the Redis at redis://***@127.0.0.1:{redis.port}/0 counts them:" in stdout, stdout
    assert re.search(
        r"^    brave: 1 call\(s\); not asked for another \d+ s \(auth: BRAVE_API_KEY", stdout, re.M
    )
    assert re.search(r"^    duckduckgo: 3 of 50 call\(s\)$", stdout, re.M), stdout


def test_doctor_says_when_the_shared_redis_does_not_answer() -> None:
    env = {
        **os.environ,
        "MCP_WEB_REDIS_URL": "redis://127.0.0.1:9/0",
        "MCP_WEB_SEARCH_PROVIDERS": "duckduckgo",
    }
    doctor = subprocess.run(
        [sys.executable, "-m", "mcp_server_web", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert doctor.returncode == 0, doctor.stderr
    assert (
        "  Today's calls and benched keys: not shown, the Redis at redis://127.0.0.1:9/0 did not answer."
        in doctor.stdout
    ), doctor.stdout
