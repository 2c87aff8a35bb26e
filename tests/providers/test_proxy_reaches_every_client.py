"""MCP_WEB_PROXY reaches every outbound client: each search provider's (the Tavily and Exa SDKs'
included) and the page fetcher's.

The server is configured the way an operator configures it, from environment variables, with
MCP_WEB_PROXY naming a recording forward proxy on 127.0.0.1. Each provider points at its fake,
which speaks that provider's wire format on 127.0.0.1; a search through each one and a web_fetch
of a page must all show up at the proxy, and nothing may reach a fake or the page's origin
without passing through it.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from mcp_server_web.config import KNOWN_PROVIDERS, OPTIONS_BY_ATTR, load_settings
from mcp_server_web.server.app import build_server
from tests.server.conftest import text_of
from tests.support.fakes.base import FakeProvider, sample_results
from tests.support.forward_proxy import ForwardProxy, ProxySeen
from tests.support.origin import Origin

PAGE = "<html><head><title>Through the proxy</title></head><body><p>Proxied page text.</p></body></html>"

# Standard proxy variables a developer's shell may hold: they must not decide the routes here.
_AMBIENT = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def environment(fakes: dict[str, FakeProvider], proxy: str) -> dict[str, str]:
    """The environment an operator would write: each provider's key and endpoint, the proxy."""
    env = {"MCP_WEB_PROXY": proxy, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_TIMEOUT": "5"}
    for fake in fakes.values():
        for attr, value in fake.settings().items():
            env[OPTIONS_BY_ATTR[attr].env] = str(value)
    return env


async def test_every_outbound_request_goes_through_the_proxy(
    fakes: dict[str, FakeProvider], origin: Origin, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for fake in fakes.values():
        fake.answer(sample_results(2))
    origin.serve("/page", PAGE)
    # Every target is an IP literal, so the proxy never asks the (absent) DNS server.
    with ForwardProxy("127.0.0.1", ("127.0.0.1", 9)) as proxy:
        settings = load_settings(env=environment(fakes, proxy.url))
        assert settings.proxy == proxy.url
        async with Client(build_server(settings)) as client:
            with anyio.fail_after(30):
                for name in KNOWN_PROVIDERS:
                    result = await client.call_tool("web_search", {"query": "rivers", "provider": name})
                    assert not result.is_error, f"{name}: {text_of(result)}"
                    assert result.structured_content["provider"] == name
                page = await client.call_tool("web_fetch", {"url": f"{origin.base}/page"})
                assert not page.is_error, text_of(page)
                assert "Proxied page text." in text_of(page)
        seen = list(proxy.seen)

    def through_proxy(base: str) -> list[ProxySeen]:
        return [s for s in seen if s.target.startswith(base + "/")]

    # Each request a fake received came through the proxy, to the fake's address: none went around it.
    around = {
        name: (len(fakes[name].requests), len(through_proxy(fakes[name].origin.base)))
        for name in KNOWN_PROVIDERS
        if not fakes[name].requests
        or len(through_proxy(fakes[name].origin.base)) != len(fakes[name].requests)
    }
    assert around == {}, "(requests received, requests the proxy saw) of each provider that went around it"
    for name in KNOWN_PROVIDERS:
        address = fakes[name].origin.base.removeprefix("http://")
        assert {s.connected_to for s in through_proxy(fakes[name].origin.base)} == {address}
    assert [s.target for s in through_proxy(origin.base)] == [
        f"{origin.base}/robots.txt",
        f"{origin.base}/page",
    ]
    assert len(origin.requests) == 2


async def test_no_proxy_hosts_go_direct_from_every_client(
    fakes: dict[str, FakeProvider], origin: Origin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NO_PROXY holds with MCP_WEB_PROXY set, for the providers' client as for the fetcher: a
    SearXNG on the operator's own network must not be sent to an outside proxy."""
    for name in _AMBIENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("NO_PROXY", "example.invalid,127.0.0.1")
    for fake in fakes.values():
        fake.answer(sample_results(2))
    origin.serve("/page", PAGE)
    with ForwardProxy("127.0.0.1", ("127.0.0.1", 9)) as proxy:
        settings = load_settings(
            env={**environment(fakes, proxy.url), "NO_PROXY": "example.invalid,127.0.0.1"}
        )
        async with Client(build_server(settings)) as client:
            with anyio.fail_after(30):
                for name in KNOWN_PROVIDERS:
                    result = await client.call_tool("web_search", {"query": "rivers", "provider": name})
                    assert not result.is_error, f"{name}: {text_of(result)}"
                page = await client.call_tool("web_fetch", {"url": f"{origin.base}/page"})
                assert not page.is_error, text_of(page)
        seen = list(proxy.seen)
    assert seen == []
    assert all(fakes[name].requests for name in KNOWN_PROVIDERS)
    assert len(origin.requests) == 2
