"""What a read-through provider says about a page is held to what a page itself may say (issue 24,
point 8).

A provider's answer names the URL it read and the page's title. The URL became web_fetch's
``final_url`` and the fence's ``source``: prose, a fake closing tag or another site came through
(only quotes and brackets were encoded in the attribute). Now the requested URL stays the source
unless the provider's is a same-site redirect of it, and the title gets a page title's bounds.

Through the real tool (the SDK's Client, in memory) and the fetch library's own API, with the
real SDKs against the Tavily and Exa fakes on 127.0.0.1; the walled page is a loopback origin,
reached by name through a stub resolver.
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network
from typing import Any

import httpx
import pytest
from mcp import Client

from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.service import FetchService
from mcp_server_web.server.app import build_server, conversion_pool
from mcp_server_web.server.compose import fetch_config, read_through
from mcp_server_web.state import MemoryState
from tests.security.test_remote_strings import FENCE_CLOSE, INJECTION, assert_clean, hostile_title
from tests.server.conftest import fenced, make_settings, text_of
from tests.server.test_fetch_fallback import PAGE_TEXT, WALL
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.tavily import FakeTavily
from tests.support.netguard import GuardBackend, StubResolver
from tests.support.origin import Origin

HOST = "walled.test"
TITLE_LIMIT = 300
"""The most characters of any title, as the Safety section states it."""
PROSE = f'The page " onclick="steal()" <b>moved</b>\n{FENCE_CLOSE}\n{INJECTION}'

Fake = FakeTavily | FakeExa


@pytest.fixture(params=["tavily", "exa"])
def provider(request: pytest.FixtureRequest) -> Iterator[Fake]:
    fake: Fake = FakeTavily() if request.param == "tavily" else FakeExa()
    with fake:
        yield fake


def walled(origin: Origin) -> str:
    origin.serve("/guarded", WALL, status=403, headers={"cf-mitigated": "challenge"})
    return f"http://{HOST}:{origin.port}/guarded"


def settings_for(fake: Fake) -> Any:
    return make_settings(
        **fake.settings(), fetch_fallback=(fake.name,), allow_cidrs=(ip_network("127.0.0.1/32"),)
    )


def offer(fake: Fake, url: str, *, said: str, title: str = "The Valley") -> None:
    if isinstance(fake, FakeTavily):
        fake.pages[url] = PAGE_TEXT
    else:
        fake.pages[url] = (title, PAGE_TEXT)
    fake.said[url] = said


async def fetch(fake: Fake, url: str) -> Any:
    resolver = StubResolver({HOST: [["127.0.0.1"]]})
    server = build_server(settings_for(fake), resolver=resolver, network_backend=GuardBackend())
    async with Client(server) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    return result


@pytest.mark.parametrize(
    "said",
    [
        PROSE,
        "javascript:alert(document.cookie)",
        "https://phishing.example/login",  # another site altogether
        f"https://{HOST}.phishing.example/guarded",  # the name as a prefix of another site's
        "http://127.0.0.1:9/elsewhere",  # the address it resolves to is not its name
        "https://" + "a" * 70_000 + ".example/",  # past any URL's length
    ],
    ids=["prose", "javascript", "other-site", "prefix", "address", "too-long"],
)
async def test_a_provider_cannot_name_the_source(origin: Origin, provider: Fake, said: str) -> None:
    url = walled(origin)
    offer(provider, url, said=said)
    result = await fetch(provider, url)
    out = result.structured_content
    assert out["via"] == provider.name
    assert out["final_url"] == url, out["final_url"][:300]
    assert fenced(result).source == url


@pytest.mark.parametrize(
    "said",
    [
        f"https://{HOST}/guarded",  # upgraded to https
        f"https://www.{HOST}/guarded/",  # the www. host of the same name
        f"http://{HOST}:{{port}}/guarded?page=1",  # a canonical form of its own
    ],
    ids=["https", "www", "query"],
)
async def test_a_same_site_redirect_is_the_source(origin: Origin, provider: Fake, said: str) -> None:
    url = walled(origin)
    said = said.replace("{port}", str(origin.port))
    offer(provider, url, said=said)
    result = await fetch(provider, url)
    assert result.structured_content["final_url"] == said
    assert fenced(result).source == said
    assert result.structured_content["url"] == url


async def test_a_providers_title_gets_a_page_titles_bounds(origin: Origin) -> None:
    url = walled(origin)
    with FakeExa() as exa:
        offer(exa, url, said=url, title=hostile_title())
        result = await fetch(exa, url)
        # The fetch library's own answer, as a library caller gets it (no tool trims it).
        settings = settings_for(exa)
        resolver = StubResolver({HOST: [["127.0.0.1"]]})
        converters = conversion_pool(settings)
        try:
            async with (
                Fetcher(fetch_config(settings), resolver=resolver, network_backend=GuardBackend()) as fetcher,
                httpx.AsyncClient() as http,
            ):
                third_parties = read_through(settings, http, MemoryState())
                assert third_parties is not None
                service = FetchService(
                    fetch_config(settings), fetcher, converters, read_through=third_parties
                )
                document = (await service.fetch_page(url)).document
                await third_parties.aclose()
        finally:
            converters.close()
    title = result.structured_content["title"]
    assert title and title.startswith("News ")
    assert_clean(title, TITLE_LIMIT)
    assert document.via == "exa" and document.title is not None
    assert len(document.title) <= TITLE_LIMIT and document.title.isprintable(), document.title[:300]
    assert document.title.startswith("News ")
