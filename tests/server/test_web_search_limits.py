"""web_search under real-world limits (issue 16): pacing, daily budgets, benched keys and
single-flight, through the real tool with the SDK Client against the wire-format fakes."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import anyio
from mcp import Client

from mcp_server_web.server.app import build_server
from tests.server.conftest import text_of
from tests.support.fakes.base import FakeProvider, Plan, sample_results, settings_for
from tests.support.http_server import healthz_and_doctor, http_client, running_http_server
from tests.support.timing import allowance, slowest, timed


def enforce_one_per_second(fake: FakeProvider) -> list[float]:
    """Make the fake answer as Brave's free plan does: a 429 to a request less than 1 s after
    the last one it accepted. Returns the times of the accepted requests."""
    accepted: list[float] = []
    lock = threading.Lock()

    def plan_for(query: str, earlier: int) -> Plan:
        with lock:
            now = time.monotonic()
            if accepted and now - accepted[-1] < 1.0:
                return Plan("rate_limit", retry_after=1)
            accepted.append(now)
            return Plan("ok")

    fake.schedule(plan_for)
    return accepted


async def search_all(
    fakes: dict[str, FakeProvider], queries: list[dict[str, Any]], **settings: Any
) -> list[Any]:
    server = build_server(settings_for(fakes, **settings))
    results: list[Any] = [None] * len(queries)
    async with Client(server) as client:

        async def one(i: int) -> None:
            results[i] = await client.call_tool("web_search", queries[i])

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(len(queries)):
                    tg.start_soon(one, i)
    return results


async def test_five_parallel_searches_pinned_to_brave_are_paced_and_all_answer(
    fakes: dict[str, FakeProvider],
) -> None:
    fakes["brave"].answer(sample_results(3))
    # The control: one such search alone (a server of its own, so no turn to wait for).
    control = await slowest(lambda: search_all(fakes, [{"query": "control", "provider": "brave"}]))
    served_before = len(fakes["brave"].served)
    accepted = enforce_one_per_second(fakes["brave"])
    results, elapsed = await timed(
        lambda: search_all(fakes, [{"query": f"q{i}", "provider": "brave"} for i in range(5)])
    )
    assert [r.is_error for r in results] == [False] * 5, [text_of(r) for r in results if r.is_error]
    assert {r.structured_content["provider"] for r in results} == {"brave"}
    assert len(fakes["brave"].served) - served_before == 5 and len(accepted) == 5  # not one 429
    # One turn a second: the fifth waits about 4 s (printed for the note).
    print(f"5 parallel paced Brave searches: {elapsed:.2f} s (one alone: {control:.2f} s)")
    late = allowance(4.0, control, 10)
    assert 3.9 <= elapsed < 4.0 + late, (elapsed, late)


async def test_a_turn_past_the_deadline_fails_over_or_fails_when_pinned(
    fakes: dict[str, FakeProvider],
) -> None:
    fakes["brave"].answer(sample_results(3))
    fakes["duckduckgo"].answer(sample_results(2))
    settings = {"search_providers": ("brave", "duckduckgo"), "search_deadline": 2.5}
    results = await search_all(fakes, [{"query": f"q{i}"} for i in range(4)], **settings)
    providers = sorted(r.structured_content["provider"] for r in results)
    # Turns at 0 and 1 s fit in a 2.5 s deadline (with 1 s left for the call); the others don't.
    assert providers == ["brave", "brave", "duckduckgo", "duckduckgo"]
    skipped = [a for r in results for a in r.structured_content["attempts"] if a["outcome"] == "skipped"]
    assert len(skipped) == 2 and all("deadline" in a["error"] and "paced" in a["error"] for a in skipped)

    pinned = await search_all(
        fakes, [{"query": f"p{i}", "provider": "brave"} for i in range(4)], search_deadline=2.5
    )
    failed = [r for r in pinned if r.is_error]
    assert len(failed) == 2 and all("paced at 1 request(s) per second" in text_of(r) for r in failed)


async def test_a_daily_budget_skips_the_provider_with_the_reason_budget(
    fakes: dict[str, FakeProvider],
) -> None:
    fakes["tavily"].answer(sample_results(2))
    fakes["duckduckgo"].answer(sample_results(1))
    settings = {"search_providers": ("tavily", "duckduckgo"), "tavily_daily_limit": 2}
    results = await search_all(fakes, [{"query": f"q{i}"} for i in range(3)], **settings)
    assert sorted(r.structured_content["provider"] for r in results) == ["duckduckgo", "tavily", "tavily"]
    over = next(r for r in results if r.structured_content["provider"] == "duckduckgo")
    attempt = over.structured_content["attempts"][0]
    assert attempt["provider"] == "tavily" and attempt["outcome"] == "skipped"
    assert attempt["error"].startswith("budget")
    assert len(fakes["tavily"].served) == 2


async def test_a_rejected_key_is_benched_naming_its_variable(fakes: dict[str, FakeProvider]) -> None:
    fakes["brave"].fail("auth")
    fakes["duckduckgo"].answer(sample_results(2))
    server = build_server(settings_for(fakes, search_providers=("brave", "duckduckgo")))
    async with Client(server) as client:
        with anyio.fail_after(20):
            first = await client.call_tool("web_search", {"query": "one"})
            second = await client.call_tool("web_search", {"query": "two"})
    assert first.structured_content["attempts"][0]["outcome"] == "error"
    benched = second.structured_content["attempts"][0]
    assert benched["provider"] == "brave" and benched["outcome"] == "skipped"
    assert "BRAVE_API_KEY was rejected" in benched["error"] and "3600 s" in benched["error"]
    assert len(fakes["brave"].served) == 1  # not asked again


async def test_the_auth_cooldown_is_a_setting(fakes: dict[str, FakeProvider]) -> None:
    fakes["tavily"].fail("auth")
    fakes["duckduckgo"].answer(sample_results(2))
    settings = {"search_providers": ("tavily", "duckduckgo"), "auth_cooldown": 120.0}
    server = build_server(settings_for(fakes, **settings))
    async with Client(server) as client:
        with anyio.fail_after(20):
            await client.call_tool("web_search", {"query": "one"})
            second = await client.call_tool("web_search", {"query": "two"})
    assert (
        "cooling down for 120 s after auth: TAVILY_API_KEY was rejected"
        in second.structured_content["attempts"][0]["error"]
    )


async def test_identical_concurrent_searches_share_one_call_and_the_joiners_say_cached(
    fakes: dict[str, FakeProvider],
) -> None:
    fakes["tavily"].answer_each(lambda query: sample_results(2))
    fakes["tavily"].schedule(lambda query, earlier: Plan("slow", delay=0.5))
    results = await search_all(
        fakes, [{"query": "same thing"} for _ in range(4)], search_providers=("tavily",)
    )
    assert [r.is_error for r in results] == [False] * 4
    assert len(fakes["tavily"].served) == 1
    assert sorted(r.structured_content["cached"] for r in results) == [False, True, True, True]


async def test_healthz_reports_todays_calls_and_a_benched_key(fakes: dict[str, FakeProvider]) -> None:
    """doctor runs in a process of its own; the running server reports what it used and benched."""
    fakes["brave"].fail("auth")
    fakes["duckduckgo"].answer(sample_results(2))
    env = {
        "BRAVE_API_KEY": "brave-test-key",
        "MCP_WEB_BRAVE_URL": fakes["brave"].origin.base,
        "MCP_WEB_DUCKDUCKGO_URL": fakes["duckduckgo"].origin.base,
        "MCP_WEB_SEARCH_PROVIDERS": "brave,duckduckgo",
        "MCP_WEB_DUCKDUCKGO_DAILY_LIMIT": "100",
    }
    with running_http_server(**env) as server:
        async with http_client(server.url) as client:
            result = await client.call_tool("web_search", {"query": "one"})
            assert not result.is_error, text_of(result)
        health, stdout = await healthz_and_doctor(server, env)
    brave, duckduckgo = health["search"]["brave"], health["search"]["duckduckgo"]
    assert brave["calls_today"] == 1 and brave["rps"] == 1.0
    assert "BRAVE_API_KEY was rejected" in brave["cooling_down"]["reason"]
    assert duckduckgo == {"calls_today": 1, "daily_limit": 100, "rps": None}
    assert f"Today (UTC), as the server at {server.base}/healthz counts them:" in stdout
    assert re.search(
        r"^    brave: 1 call\(s\); not asked for another \d+ s \(auth: BRAVE_API_KEY was rejected",
        stdout,
        re.M,
    ), stdout
    assert re.search(r"^    duckduckgo: 1 of 100 call\(s\)$", stdout, re.M), stdout
