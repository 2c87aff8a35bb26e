"""Deployments that share one Redis do not serve each other's documents past their own policy
(issue 24, point 4).

Two real servers (subprocesses) with different admission policies share one real redis-server,
all on 127.0.0.1. One may read the loopback origin (MCP_WEB_ALLOW_CIDRS) or ignores robots.txt;
the other is the default. Whatever the first one cached, or is downloading right now, the second
must refuse as it would on its own: by a plain read, by ``snapshot=``, by ``query=``.

In one process the policy only changes with the settings, at a restart: with Redis that is the
two-deployment case again (an old deployment's entries, a new policy), and with memory the cache
dies with the process. What a library caller can still do is hand one MemoryState to two
services of different policies: the last test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from ipaddress import ip_network
from typing import Any

import anyio
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.config import Settings
from mcp_server_web.errors import BlockedAddress, RobotsDisallowed
from mcp_server_web.fetch import FetchConfig, Fetcher, FetchService
from mcp_server_web.fetch.config import ADMISSION, admission_scope
from mcp_server_web.server.app import conversion_pool
from mcp_server_web.state import MemoryState
from tests.support.http_server import RunningServer, http_client, running_http_server
from tests.support.origin import Origin, trickle
from tests.support.redis_server import RedisServer
from tests.support.samples import article_html

SECRET = "INTERNAL-ONLY-MARKER"
SECRET_PAGE = article_html(paragraphs=20).replace("<p>Paragraph 1:", f"<p>{SECRET} Paragraph 1:")
QUERY = "sediment downstream erosion"
LOOPBACK = (ip_network("127.0.0.1/32"),)


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def code_of(result: CallToolResult) -> str:
    return text_of(result).split(":", 1)[0] if result.is_error else "ok"


@contextmanager
def two_deployments(
    redis: RedisServer, loose: dict[str, str], strict: dict[str, str]
) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two servers over one Redis and one key prefix (the default), with these policies."""
    shared = {"MCP_WEB_REDIS_URL": redis.url, "MCP_WEB_LOG_LEVEL": "warning"}
    with ExitStack() as stack:
        first = stack.enter_context(running_http_server(**shared, **loose))
        second = stack.enter_context(running_http_server(**shared, **strict))
        yield first, second


@asynccontextmanager
async def clients(first: RunningServer, second: RunningServer) -> AsyncIterator[tuple[Client, Client]]:
    async with http_client(first.url) as one, http_client(second.url) as other:
        yield one, other


async def reads_by_the_strict_one(strict: Client, url: str, snapshot: str) -> dict[str, CallToolResult]:
    """The strict deployment's three ways to the loose one's document."""
    calls: dict[str, dict[str, Any]] = {
        "plain": {"url": url},
        "snapshot": {"url": url, "snapshot": snapshot, "start_index": 0},
        "query": {"url": url, "query": QUERY},
    }
    return {name: await strict.call_tool("web_fetch", arguments) for name, arguments in calls.items()}


async def test_a_default_deployment_never_serves_what_a_private_range_deployment_cached(
    origin: Origin, redis_server: RedisServer
) -> None:
    url = origin.serve("/intranet/report", SECRET_PAGE)
    body = SECRET_PAGE.encode()
    origin.route("/intranet/slow", trickle([body[: len(body) // 2], body[len(body) // 2 :]], 1.5))
    slow = origin.url("/intranet/slow")
    internal = {"MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32"}
    default = {"MCP_WEB_ALLOW_CIDRS": ""}
    with two_deployments(redis_server, internal, default) as (loose, strict):
        async with clients(loose, strict) as (inside, outside):
            read = await inside.call_tool("web_fetch", {"url": url})
            assert not read.is_error and SECRET in text_of(read), text_of(read)[:300]
            assert read.structured_content is not None
            reads = await reads_by_the_strict_one(outside, url, read.structured_content["snapshot"])

            # While the internal deployment downloads, the default one asks for the same page: it
            # must not wait for that download and take its result.
            during: dict[str, CallToolResult] = {}

            async def internal_reads() -> None:
                during["internal"] = await inside.call_tool("web_fetch", {"url": slow})

            async with anyio.create_task_group() as tg:
                tg.start_soon(internal_reads)
                await anyio.sleep(0.7)  # the internal download is under way (1.5 s between halves)
                during["default"] = await outside.call_tool("web_fetch", {"url": slow})
    assert not during["internal"].is_error, text_of(during["internal"])[:300]
    reads["concurrent"] = during["default"]
    assert {name: code_of(result) for name, result in reads.items()} == dict.fromkeys(
        ("plain", "snapshot", "query", "concurrent"), "blocked_address"
    ), {name: text_of(result)[:200] for name, result in reads.items()}
    assert not any(SECRET in text_of(result) for result in reads.values())
    assert origin.hits("/intranet/report") == 1 and origin.hits("/intranet/slow") == 1


async def test_a_deployment_that_obeys_robots_never_serves_what_one_that_ignores_it_cached(
    origin: Origin, redis_server: RedisServer
) -> None:
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /members/\n", content_type="text/plain")
    url = origin.serve("/members/list", SECRET_PAGE)
    reachable = {"MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32"}
    with two_deployments(redis_server, {**reachable, "MCP_WEB_RESPECT_ROBOTS": "false"}, reachable) as (
        ignoring,
        obeying,
    ):
        async with clients(ignoring, obeying) as (loose, strict):
            read = await loose.call_tool("web_fetch", {"url": url})
            assert not read.is_error and SECRET in text_of(read), text_of(read)[:300]
            assert read.structured_content is not None
            reads = await reads_by_the_strict_one(strict, url, read.structured_content["snapshot"])
    assert {name: code_of(result) for name, result in reads.items()} == dict.fromkeys(
        ("plain", "snapshot", "query"), "robots_disallowed"
    ), {name: text_of(result)[:200] for name, result in reads.items()}
    assert not any(SECRET in text_of(result) for result in reads.values())
    assert origin.hits("/members/list") == 1


async def test_services_of_different_policies_over_one_memory_state_keep_apart(origin: Origin) -> None:
    """The library case: one MemoryState handed to a service that reads loopback and to a default
    one; to one that ignores robots.txt and to one that obeys it."""
    origin.serve("/robots.txt", "User-agent: *\nDisallow: /members/\n", content_type="text/plain")
    pairs = (
        (FetchConfig(allow_cidrs=LOOPBACK), FetchConfig(), "/intranet/report", BlockedAddress),
        (
            FetchConfig(allow_cidrs=LOOPBACK, respect_robots=False),
            FetchConfig(allow_cidrs=LOOPBACK),
            "/members/list",
            RobotsDisallowed,
        ),
    )
    converters = conversion_pool(Settings())
    outcomes: list[str] = []
    try:
        for loose, strict, path, refusal in pairs:
            url = origin.serve(path, SECRET_PAGE)
            state = MemoryState()
            async with Fetcher(loose) as loose_fetcher, Fetcher(strict) as strict_fetcher:
                first = FetchService(loose, loose_fetcher, converters, state)
                snapshot = (await first.fetch_page(url)).document.snapshot
                second = FetchService(strict, strict_fetcher, converters, state)
                for asked in (None, snapshot):
                    try:
                        got = await second.fetch_page(url, snapshot=asked)
                        outcomes.append(f"served, marker {SECRET in got.document.text}")
                    except refusal:
                        outcomes.append("refused")
    finally:
        converters.close()
    assert outcomes == ["refused"] * 4
    assert origin.hits("/intranet/report") == 1 and origin.hits("/members/list") == 1


def test_the_scope_names_every_admission_field_and_no_bound() -> None:
    """Each field that decides admission changes the scope; a limit of time or cache does not;
    a field added to FetchConfig is one or the other (listed here until it is decided)."""
    bounds: dict[str, Any] = {
        "timeout": 5.0,
        "proxy": "http://127.0.0.1:9",
        "cache_max_bytes": 1 << 20,
        "cache_ttl": 1.0,
        "pdf_max_pages": 3,
    }
    admission: dict[str, Any] = {
        "allow_private": True,
        "allow_cidrs": LOOPBACK,
        "respect_robots": False,
        "robots_token": "OtherBot",
        "user_agent": "OtherBot/1.0",
        "max_response_bytes": 1 << 20,
    }
    assert set(admission) == set(ADMISSION)
    assert set(bounds) | set(admission) == {field.name for field in dataclasses.fields(FetchConfig)}
    default = admission_scope(FetchConfig())
    assert default == admission_scope(FetchConfig())
    for name, value in admission.items():
        assert admission_scope(FetchConfig(**{name: value})) != default, name
    for name, value in bounds.items():
        assert admission_scope(FetchConfig(**{name: value})) == default, name
    ranges = (ip_network("10.0.0.0/8"), ip_network("127.0.0.1/32"))
    assert admission_scope(FetchConfig(allow_cidrs=ranges)) == admission_scope(
        FetchConfig(allow_cidrs=ranges[::-1])
    )
