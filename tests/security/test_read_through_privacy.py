"""A URL whose destination is private never leaves for a read-through provider because of
MCP_WEB_ALLOW_PRIVATE (issue 24, point 7).

The switch lets this server reach an intranet; it says nothing about telling Tavily or Exa where
that intranet is, or handing them a page's ``?token=``. Only ranges the operator listed one by
one (MCP_WEB_ALLOW_CIDRS, e.g. a proxy's fake-IP range that stands for public sites) count as
public there.

Through the real tool (the SDK's Client, in memory) with the real SDKs against the Tavily and Exa
fakes; the walled pages are served on 127.0.0.1, and names are answered by a stub resolver, so
nothing but loopback is ever connected to. Ranges no test may connect to (RFC 1918, link-local)
are judged by the same function the service asks, through the same resolver seam, without a
connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network
from typing import Any

import pytest
from mcp import Client

from mcp_server_web.fetch.net import resolution
from mcp_server_web.fetch.net.addresses import AddressPolicy
from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, make_settings, text_of
from tests.server.test_fetch_fallback import PAGE_TEXT, SHELL, WALL
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.tavily import FakeTavily
from tests.support.netguard import GuardBackend, StubResolver
from tests.support.origin import Origin

TOKEN = "s3cret-intranet-token"
NOT_SENT = "was not sent to a third party"


@pytest.fixture
def providers() -> Iterator[tuple[FakeTavily, FakeExa]]:
    with FakeTavily() as tavily, FakeExa() as exa:
        yield tavily, exa  # type: ignore[misc]


def settings(providers: tuple[FakeTavily, FakeExa], **overrides: Any) -> Any:
    tavily, exa = providers
    values = {**tavily.settings(), **exa.settings(), "fetch_fallback": ("tavily", "exa"), **overrides}
    return make_settings(**values)


def offer(providers: tuple[FakeTavily, FakeExa], url: str) -> None:
    """Both providers could read url: only our refusal can keep it from them."""
    tavily, exa = providers
    tavily.pages[url] = PAGE_TEXT
    exa.pages[url] = ("Intranet", PAGE_TEXT)


def sent(providers: tuple[FakeTavily, FakeExa]) -> list[str]:
    tavily, exa = providers
    return [str(body) for fake in (tavily, exa) for body in fake.bodies]


@pytest.mark.parametrize("host", ["127.0.0.1", "wiki.intranet.test"])
async def test_a_private_walled_page_is_not_sent_with_private_allowed(
    origin: Origin, providers: tuple[FakeTavily, FakeExa], host: str
) -> None:
    origin.serve("/wiki/page", WALL, status=403, headers={"cf-mitigated": "challenge"})
    url = f"http://{host}:{origin.port}/wiki/page?token={TOKEN}"
    offer(providers, url)
    resolver = StubResolver({"wiki.intranet.test": [["127.0.0.1"]]})
    server = build_server(
        settings(providers, allow_private=True, allow_cidrs=()),
        resolver=resolver,
        network_backend=GuardBackend(permitted=("127.0.0.1",)),
    )
    async with Client(server) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "challenge_page"
    text = text_of(result)
    assert NOT_SENT in text and "loopback address" in text, text
    assert sent(providers) == []
    assert origin.hits("/wiki/page") == 1


async def test_a_private_shell_is_kept_as_downloaded_with_a_note(
    origin: Origin, providers: tuple[FakeTavily, FakeExa]
) -> None:
    url = origin.serve("/app", SHELL) + f"?token={TOKEN}"
    offer(providers, url)
    async with Client(build_server(settings(providers, allow_private=True, allow_cidrs=()))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert error_code(result) == "extraction_failed"
    assert NOT_SENT in text_of(result)
    assert sent(providers) == []


async def test_a_private_page_built_by_scripts_keeps_its_own_text_with_a_note(
    origin: Origin, providers: tuple[FakeTavily, FakeExa]
) -> None:
    page = (
        "<html><head><title>App</title></head><body><div id='root'><p>Please wait, loading the app</p>"
        "</div><script>" + "render();" * 2000 + "</script></body></html>"
    )
    url = origin.serve("/dashboard", page) + f"?token={TOKEN}"
    offer(providers, url)
    async with Client(build_server(settings(providers, allow_private=True, allow_cidrs=()))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "direct"
    assert any(NOT_SENT in note for note in result.structured_content["warnings"])
    assert sent(providers) == []


async def test_a_listed_range_counts_as_public(origin: Origin, providers: tuple[FakeTavily, FakeExa]) -> None:
    # The control: 127.0.0.1/32 listed one by one (as a proxy's fake-IP range would be), with
    # allow_private on as well, is sent, through the same path.
    url = origin.serve("/guarded", WALL, status=403, headers={"cf-mitigated": "challenge"})
    offer(providers, url)
    listed = (ip_network("127.0.0.1/32"),)
    async with Client(build_server(settings(providers, allow_private=True, allow_cidrs=listed))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["via"] == "tavily"
    assert len(sent(providers)) == 1


@pytest.mark.parametrize(
    ("answers", "rule"),
    [
        (["10.1.2.3"], "private network"),
        (["192.168.7.7"], "private network"),
        (["169.254.10.20"], "link-local"),
        (["fe80::1%2"], "link-local"),
        (["fd12:3456::1"], "unique local"),
        (["100.64.0.9"], "carrier-grade NAT"),
        (["93.184.216.34", "10.0.0.5"], "private network"),  # one private answer is enough
    ],
)
async def test_private_ranges_are_not_public_destinations(answers: list[str], rule: str) -> None:
    resolver = StubResolver({"intranet.test": [answers]})
    reason = await resolution.private_destination(
        "intranet.test", 443, resolver, AddressPolicy(allow_private=True).public()
    )
    assert reason is not None and rule in reason and "intranet.test" in reason, reason
    assert resolver.calls == ["intranet.test"]


async def test_public_and_listed_destinations_are_public() -> None:
    resolver = StubResolver({"example.test": [["93.184.216.34"]], "fake-ip.test": [["198.18.0.7"]]})
    policy = AddressPolicy(allow_private=True, allow_cidrs=(ip_network("198.18.0.0/15"),)).public()
    assert await resolution.private_destination("example.test", 443, resolver, policy) is None
    assert await resolution.private_destination("fake-ip.test", 443, resolver, policy) is None
    assert (
        await resolution.private_destination("10.9.8.7", 80, resolver, policy) is not None
    )  # a literal: no lookup
    assert resolver.calls == ["example.test", "fake-ip.test"]


async def test_a_host_that_cannot_be_resolved_is_not_sent() -> None:
    # Unknown here means unknown: the third party would resolve it somewhere we cannot see.
    reason = await resolution.private_destination(
        "nowhere.test", 443, StubResolver(), AddressPolicy().public()
    )
    assert reason is not None and "could not be resolved" in reason
