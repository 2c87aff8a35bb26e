"""web_search(read=N): the top results read through web_fetch's path, each cut to the passages
that answer the query. Fake providers answer with URLs of pages served on 127.0.0.1."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import anyio
from mcp import Client

from mcp_server_web.server.app import build_server
from tests.server.conftest import LOOPBACK_ONLY, error_code, fenced, text_of
from tests.support.fakes.base import FakeProvider, settings_for
from tests.support.origin import Origin, RequestContext
from tests.support.timing import allowance, slowest, timed

FILLER = "\n\n".join(
    f"## Chapter {n}\n\nThis chapter talks about weather, gardens and the town's history in general terms."
    for n in range(30)
)


def page(title: str, answer: str) -> str:
    """A long page with one paragraph that answers the query and plenty that does not."""
    body = FILLER.replace("## Chapter 17", f"## Lighthouses\n\n{answer}\n\n## Chapter 17")
    blocks = "".join(
        f"<h2>{block[3:]}</h2>" if block.startswith("## ") else f"<p>{block}</p>"
        for block in body.split("\n\n")
    )
    head = f"<html><head><title>{title}</title></head>"
    return f"{head}<body><article><h1>{title}</h1>{blocks}</article></body></html>"


ANSWER = "The lighthouse keeper lit the lamp at dusk every evening, using whale oil until 1890."


def results_for(origin: Origin, paths: list[str]) -> list[dict[str, Any]]:
    return [
        {"title": f"Result {n}", "url": origin.url(path), "snippet": "a snippet", "score": 1 - n / 10}
        for n, path in enumerate(paths)
    ]


async def search(fakes: dict[str, FakeProvider], arguments: dict[str, Any], **settings: Any) -> Any:
    values = {"search_providers": ("brave",), "allow_cidrs": LOOPBACK_ONLY, "render": "off", "timeout": 5.0}
    values.update(settings)
    async with Client(build_server(settings_for(fakes, **values))) as client:
        with anyio.fail_after(40):
            result = await client.call_tool("web_search", arguments)
            follow = None
            if not result.is_error and result.structured_content["results"]:
                first = result.structured_content["results"][0]["url"]
                follow = await client.call_tool("web_fetch", {"url": first})
    return result, follow


async def test_read_gives_the_top_results_the_passages_that_answer_the_query(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    paths = ["/one", "/two", "/three"]
    for path in paths:
        origin.serve(path, page(f"Town history {path}", ANSWER))
    fakes["brave"].answer(results_for(origin, paths))
    question = {"query": "when did the lighthouse keeper light the lamp", "read": 2}
    result, follow = await search(fakes, question)
    assert not result.is_error, text_of(result)
    results = result.structured_content["results"]
    assert [bool(r.get("content")) for r in results] == [True, True, False]
    for read in results[:2]:
        assert ANSWER in read["content"]
        assert len(read["content"]) <= 3000
        assert "Lighthouses" in read["content"]  # the passage's heading path
        assert read.get("content_error") is None
    assert origin.hits("/three") == 0
    # The content is web text: inside the fence, under its result.
    listing = fenced(result)
    assert ANSWER in listing.inside and ANSWER not in listing.after
    # A later web_fetch of a read URL is served from the cache: no second download.
    assert follow is not None and follow.structured_content["cached"] is True
    assert origin.hits("/one") == 1


async def test_a_page_that_cannot_be_read_costs_only_its_own_result(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    origin.serve("/good", page("Good page", ANSWER))
    origin.serve("/missing", "not here", status=404)
    released = threading.Event()

    def slow(ctx: RequestContext) -> None:
        # Never in time: without the read budget the call would wait for the 10 s timeout.
        released.wait(60)
        ctx.send_head(200, {"Content-Type": "text/html"})

    origin.route("/slow", slow)
    # The control: the same call reading one good page, which answers at once.
    fakes["brave"].answer(results_for(origin, ["/good"]))
    control = await slowest(
        lambda: search(fakes, {"query": "lighthouse keeper lamp", "read": 1}, read_budget=2.0, timeout=10.0)
    )
    fakes["brave"].answer(
        [
            *results_for(origin, ["/good", "/missing", "/slow"]),
            {"title": "Private", "url": "http://127.0.0.2/secret", "snippet": "x"},
        ]
    )
    try:
        (result, _), elapsed = await timed(
            lambda: search(
                fakes, {"query": "lighthouse keeper lamp", "read": 4}, read_budget=2.0, timeout=10.0
            )
        )
    finally:
        released.set()
    assert not result.is_error, text_of(result)
    good, missing, stalled, private = result.structured_content["results"]
    assert ANSWER in good["content"]
    assert missing["content_error"]["code"] == "http_error" and missing.get("content") is None
    assert stalled["content_error"]["code"] == "timeout"
    assert "read budget" in stalled["content_error"]["message"]
    assert private["content_error"]["code"] == "blocked_address"
    late = allowance(3.0, control, 5)
    assert elapsed < 2.0 + late, f"{elapsed:.2f} s: the read budget bounds the call, not the slowest page"
    assert "Could not read it: http_error" in fenced(result).inside


async def test_read_is_bounded_and_checked(fakes: dict[str, FakeProvider], origin: Origin) -> None:
    fakes["brave"].answer(results_for(origin, ["/a"]))
    # Like every number argument, read is clamped to its bounds (5) rather than refused.
    too_many, _ = await search(fakes, {"query": "x", "read": 6})
    assert too_many.structured_content["results"][0]["content_error"]["code"] == "http_error"
    not_a_number, _ = await search(fakes, {"query": "x", "read": "many"})
    assert error_code(not_a_number) == "invalid_argument"
    without_fetch, _ = await search(fakes, {"query": "x", "read": 1}, tools=("web_search",))
    assert error_code(without_fetch) == "invalid_argument"
    assert "web_fetch" in text_of(without_fetch)
    hits_before = origin.hits("/a")
    no_read, _ = await search(fakes, {"query": "x"})
    assert no_read.structured_content["results"][0].get("content") is None
    assert origin.hits("/a") == hits_before + 1  # only the helper's follow-up web_fetch: no read


async def test_read_through_the_real_server_over_stdio_and_http(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    from mcp import StdioServerParameters

    from mcp_server_web.config import OPTIONS_BY_ATTR
    from tests.support.http_server import http_client, running_http_server

    origin.serve("/story", page("Town history", ANSWER))
    fakes["brave"].answer(results_for(origin, ["/story"]))
    env = {OPTIONS_BY_ATTR[attr].env: str(value) for attr, value in fakes["brave"].settings().items()}
    env.update(MCP_WEB_SEARCH_PROVIDERS="brave", MCP_WEB_RENDER="off")
    question = {"query": "lighthouse keeper lamp", "read": 1}

    def check(result: Any) -> None:
        assert not result.is_error, text_of(result)
        assert ANSWER in result.structured_content["results"][0]["content"]
        assert ANSWER in fenced(result).inside

    with running_http_server(**env) as server:
        async with http_client(server.url) as client:
            check(await client.call_tool("web_search", question))
    stdio_env = {
        **os.environ,
        **env,
        "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32",
        "MCP_WEB_LOG_LEVEL": "warning",
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_web"], env=stdio_env)
    with anyio.fail_after(60):
        async with Client(params) as client:
            check(await client.call_tool("web_search", question))


UNRELATED = (
    "<html><head><title>Configuration reference</title></head><body><article>"
    "<h1>Configuration reference</h1><h2>Settings</h2>"
    "<p>Each setting is read from the environment at start-up; flags win over variables.</p>"
    "<h2>Logging</h2><p>Logs go to standard error at the level the operator chose.</p>"
    "</article></body></html>"
)


async def test_read_gives_only_what_matches_and_says_so_when_nothing_does(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    origin.serve("/story", page("Town history", ANSWER))
    origin.serve("/reference", UNRELATED)
    fakes["brave"].answer(results_for(origin, ["/story", "/reference"]))
    result, _ = await search(fakes, {"query": "lighthouse keeper lamp", "read": 2})
    assert not result.is_error, text_of(result)
    story, reference = result.structured_content["results"]
    # A page that never mentions the query gives no text at all, not its opening as a guess.
    assert reference["content"] is None and reference.get("content_error") is None
    assert "did not mention" in reference["content_note"]
    assert "Settings" not in text_of(result) and "standard error" not in text_of(result)
    assert "did not mention" in fenced(result).after or "did not mention" in fenced(result).inside
    # Each passage names its heading once: in its [path] line, not again as a Markdown heading.
    assert story["content_note"] is None
    assert story["content"].count("Lighthouses") == 1, story["content"]
    assert "## Lighthouses" not in story["content"]


async def test_read_reports_progress_as_pages_are_read(
    fakes: dict[str, FakeProvider], origin: Origin
) -> None:
    paths = ["/p1", "/p2", "/p3"]
    for path in paths:
        origin.serve(path, page(f"History {path}", ANSWER))
    fakes["brave"].answer(results_for(origin, paths))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    values = {"search_providers": ("brave",), "allow_cidrs": LOOPBACK_ONLY, "render": "off"}
    async with Client(build_server(settings_for(fakes, **values))) as client:
        with anyio.fail_after(40):
            result = await client.call_tool(
                "web_search", {"query": "lighthouse keeper", "read": 3}, progress_callback=on_progress
            )
    assert not result.is_error, text_of(result)
    assert [progress for progress, _, _ in seen] == [1, 2, 3]
    assert {total for _, total, _ in seen} == {3}
    assert all(message and "of 3" in message for _, _, message in seen)
