"""robots.txt policy against a real origin: RFC 9309 outcomes, matching, caching, size limit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from ipaddress import ip_network

import pytest

from mcp_server_web.errors import FetchTimeout, HTTPStatusError, RobotsDisallowed
from mcp_server_web.fetch import FetchConfig
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.net.robots import ROBOTS_MAX_BYTES, RobotsPolicy
from tests.support.origin import Origin, RequestContext

SETTINGS = FetchConfig(allow_cidrs=(ip_network("127.0.0.1/32"),), timeout=3.0)


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with Fetcher(SETTINGS) as opened:
        yield opened


async def test_rules_for_our_token_longest_match(fetcher: Fetcher, origin: Origin) -> None:
    origin.serve(
        "/robots.txt",
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: mcp-server-web\nDisallow: /private/\nAllow: /private/open/\n",
        "text/plain",
    )
    policy = RobotsPolicy(fetcher)
    await policy.check(origin.url("/public/page"))  # our group does not disallow it
    await policy.check(origin.url("/private/open/doc"))  # the longer Allow wins
    with pytest.raises(RobotsDisallowed) as caught:
        await policy.check(origin.url("/private/secret?x=1"))
    message = caught.value.message
    assert "Disallow: /private/" in message and "/private/secret?x=1" in message
    # The library names the parameter that would let the fetch through; the server words it.
    assert caught.value.parameters == ("respect_robots",) and "MCP_WEB_" not in message
    assert origin.hits("/robots.txt") == 1  # read once, then cached


async def test_missing_robots_allows_everything(fetcher: Fetcher, origin: Origin) -> None:
    await RobotsPolicy(fetcher).check(origin.url("/anything"))  # the origin answers 404


async def test_server_error_disallows_everything(fetcher: Fetcher, origin: Origin) -> None:
    origin.serve("/robots.txt", "oops", "text/plain", status=503)
    with pytest.raises(RobotsDisallowed) as caught:
        await RobotsPolicy(fetcher).check(origin.url("/page"))
    assert "503" in caught.value.message and "RFC 9309" in caught.value.message


async def test_redirected_robots_is_followed(fetcher: Fetcher, origin: Origin) -> None:
    origin.serve("/real-robots.txt", "User-agent: *\nDisallow: /no/\n", "text/plain")
    origin.redirect("/robots.txt", "/real-robots.txt", 301)
    with pytest.raises(RobotsDisallowed):
        await RobotsPolicy(fetcher).check(origin.url("/no/way"))


async def test_huge_robots_is_read_up_to_the_limit(fetcher: Fetcher, origin: Origin) -> None:
    # A 10 MB robots.txt: the first 500 KiB are parsed (RFC 9309 2.5), the rest never buffered.
    head = "User-agent: *\nDisallow: /blocked/\n"
    origin.serve("/robots.txt", head + "#" * (10 * 1024 * 1024), "text/plain")
    policy = RobotsPolicy(fetcher)
    with pytest.raises(RobotsDisallowed):
        await policy.check(origin.url("/blocked/x"))
    await policy.check(origin.url("/fine"))
    assert ROBOTS_MAX_BYTES == 500 * 1024


async def test_unreachable_host_is_reported_as_such(fetcher: Fetcher) -> None:
    with pytest.raises(HTTPStatusError) as caught:
        await RobotsPolicy(fetcher).check("http://127.0.0.1:9/page")
    assert "could not connect" in caught.value.message


async def test_silent_robots_times_out(origin: Origin) -> None:
    def never(ctx: RequestContext) -> None:
        import time

        time.sleep(3)

    origin.route("/robots.txt", never)
    async with Fetcher(SETTINGS) as fetcher:
        with pytest.raises(FetchTimeout):
            await RobotsPolicy(fetcher, timeout=0.5).check(origin.url("/page"))
