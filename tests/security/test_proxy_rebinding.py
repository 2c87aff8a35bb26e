"""DNS rebinding through a configured outbound proxy: the proxy must go where we vetted.

The attack: a name whose authoritative server answers with TTL 0, first an allowed address,
then a forbidden one. Without a proxy, PinnedBackend resolves once and connects to the vetted
address itself. Through a proxy the socket goes to the proxy; if we hand the proxy the NAME, it
resolves again, gets the forbidden address, and the page behind it comes back to the model.

Everything here is real and on loopback:

* ``RebindingDNS`` (UDP, 127.0.0.1) answers ``rebind.test`` with 127.0.0.1, then 127.0.0.2.
  Our Fetcher asks it through ``DNSResolver``; the proxy asks it too, so both sides see one
  shared sequence of answers, as in the real attack.
* ``ForwardProxy`` (127.0.0.3) serves absolute-form requests and CONNECT, resolving names itself.
* The allowed origin listens on 127.0.0.1 (allowed by ``allow_cidrs``), the victim on 127.0.0.2,
  on the same port; the victim records every request it gets.
* ``GuardBackend`` only lets the Fetcher connect to the proxy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import ip_network
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
from mcp import Client

from mcp_server_web.errors import BlockedAddress, HTTPStatusError
from mcp_server_web.fetch import FetchConfig
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.net.pinned_proxy import PinnedProxyPool
from mcp_server_web.server.app import build_server
from tests.server.conftest import make_settings, text_of
from tests.support.dns import DNSResolver, RebindingDNS
from tests.support.forward_proxy import ForwardProxy
from tests.support.netguard import GuardBackend, QuickOrigin, StubResolver
from tests.support.tls import Certificates, TLSOrigin, make_certificates

NAME = "rebind.test"
ALLOWED = "127.0.0.1"
VICTIM = "127.0.0.2"
PROXY = "127.0.0.3"
ONLY_ALLOWED = (ip_network(f"{ALLOWED}/32"),)
ALLOWED_PAGE = "<html><body><p>The allowed origin's page.</p></body></html>"
VICTIM_PAGE = "<html><body><p>SECRET from the victim behind the proxy.</p></body></html>"

# How each test configures the proxy: (FetchConfig overrides, environ for the Fetcher).
HTTP_CONFIGS = {
    "MCP_WEB_PROXY": lambda url: ({"proxy": url}, {}),
    "HTTP_PROXY": lambda url: ({}, {"HTTP_PROXY": url}),
    "http_proxy": lambda url: ({}, {"http_proxy": url}),
    "ALL_PROXY": lambda url: ({}, {"ALL_PROXY": url}),
}
HTTPS_CONFIGS = {
    "MCP_WEB_PROXY": lambda url: ({"proxy": url}, {}),
    "HTTPS_PROXY": lambda url: ({}, {"HTTPS_PROXY": url}),
    "ALL_PROXY": lambda url: ({}, {"ALL_PROXY": url}),
}


@dataclass
class Scene:
    dns: RebindingDNS
    proxy: ForwardProxy
    allowed: QuickOrigin
    victim: QuickOrigin
    backend: GuardBackend

    @property
    def port(self) -> int:
        return self.allowed.port

    def fetcher(self, settings: dict[str, Any], environ: dict[str, str]) -> Fetcher:
        values: dict[str, Any] = {"allow_cidrs": ONLY_ALLOWED, "timeout": 5.0, **settings}
        return Fetcher(
            FetchConfig(**values),
            resolver=DNSResolver(self.dns.address),
            network_backend=self.backend,
            environ=environ,
        )


@pytest.fixture
def scene() -> Iterator[Scene]:
    with (
        RebindingDNS({NAME: [ALLOWED, VICTIM]}) as dns,
        ForwardProxy(PROXY, dns.address) as proxy,
        QuickOrigin(ALLOWED) as allowed,
        QuickOrigin(VICTIM, port=allowed.port) as victim,
    ):
        allowed.serve("/page", ALLOWED_PAGE)
        victim.serve("/page", VICTIM_PAGE)
        backend = GuardBackend(permitted=(PROXY,))
        yield Scene(dns, proxy, allowed, victim, backend)
        assert backend.violations == []


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("tls"), NAME)


@pytest.fixture
def tls_scene(certificates: Certificates, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scene]:
    # The Fetcher's TLS context trusts the test CA (httpx.create_ssl_context reads SSL_CERT_FILE);
    # certificate and host name checks stay on.
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with (
        RebindingDNS({NAME: [ALLOWED, VICTIM]}) as dns,
        ForwardProxy(PROXY, dns.address) as proxy,
        TLSOrigin(certificates, ALLOWED) as allowed,
        TLSOrigin(certificates, VICTIM, port=allowed.port) as victim,
    ):
        allowed.serve("/page", ALLOWED_PAGE)
        victim.serve("/page", VICTIM_PAGE)
        backend = GuardBackend(permitted=(PROXY,))
        yield Scene(dns, proxy, allowed, victim, backend)
        assert backend.violations == []


def _config_ids(configs: dict[str, Any]) -> list[str]:
    return list(configs)


# ------------------------------------------------------------------------------------------
# http:// targets: absolute-form request line to the vetted address
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", list(HTTP_CONFIGS), ids=_config_ids(HTTP_CONFIGS))
async def test_http_through_a_proxy_goes_to_the_vetted_address(scene: Scene, config: str) -> None:
    settings, environ = HTTP_CONFIGS[config](scene.proxy.url)
    async with scene.fetcher(settings, environ) as fetcher:
        response = await fetcher.fetch(f"http://{NAME}:{scene.port}/page")
    assert scene.victim.requests == [], "the proxy was steered to the rebound address"
    assert response.body.decode() == ALLOWED_PAGE
    [seen] = scene.proxy.seen
    assert (seen.method, seen.target) == ("GET", f"http://{ALLOWED}:{scene.port}/page")
    assert seen.host_header == f"{NAME}:{scene.port}"
    assert seen.connected_to == f"{ALLOWED}:{scene.port}"
    # The name was resolved once, by us; the proxy was handed the address.
    assert scene.dns.answers_for(NAME) == [ALLOWED]
    [reached] = scene.allowed.requests
    assert reached.headers["host"] == f"{NAME}:{scene.port}"
    assert {host for host, _ in scene.backend.connects} == {PROXY}


async def test_redirects_through_a_proxy_are_pinned_per_hop(scene: Scene) -> None:
    scene.dns.set("start.test", ALLOWED)
    scene.allowed.redirect("/start", f"http://{NAME}:{scene.port}/page")
    async with scene.fetcher({"proxy": scene.proxy.url}, {}) as fetcher:
        response = await fetcher.fetch(f"http://start.test:{scene.port}/start")
    assert scene.victim.requests == []
    assert response.body.decode() == ALLOWED_PAGE
    assert [(seen.target, seen.host_header) for seen in scene.proxy.seen] == [
        (f"http://{ALLOWED}:{scene.port}/start", f"start.test:{scene.port}"),
        (f"http://{ALLOWED}:{scene.port}/page", f"{NAME}:{scene.port}"),
    ]


async def test_a_name_that_answers_a_refused_address_first_never_reaches_the_proxy(scene: Scene) -> None:
    scene.dns.set(NAME, VICTIM, ALLOWED)
    async with scene.fetcher({"proxy": scene.proxy.url}, {}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(f"http://{NAME}:{scene.port}/page")
    assert str(caught.value).startswith("blocked_address: ")
    assert scene.proxy.seen == [] and scene.victim.requests == [] and scene.allowed.requests == []


async def test_no_proxy_still_sends_the_name_straight_to_its_pinned_address(scene: Scene) -> None:
    backend = GuardBackend(permitted=(ALLOWED,))
    scene.backend = backend
    environ = {"HTTP_PROXY": scene.proxy.url, "NO_PROXY": NAME}
    async with scene.fetcher({}, environ) as fetcher:
        response = await fetcher.fetch(f"http://{NAME}:{scene.port}/page")
    assert response.body.decode() == ALLOWED_PAGE
    assert scene.proxy.seen == [] and scene.victim.requests == []
    assert backend.connects == [(ALLOWED, scene.port)]


async def test_allow_private_hands_the_name_to_the_proxy_unresolved(scene: Scene) -> None:
    # Documented: with MCP_WEB_ALLOW_PRIVATE=true nothing is vetted, so nothing is pre-resolved,
    # which suits networks where only the proxy can resolve outside names.
    resolver = DNSResolver(scene.dns.address)
    settings = FetchConfig(proxy=scene.proxy.url, allow_private=True, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=scene.backend, environ={}) as fetcher:
        response = await fetcher.fetch(f"http://{NAME}:{scene.port}/page")
    assert resolver.calls == []
    assert [seen.target for seen in scene.proxy.seen] == [f"http://{NAME}:{scene.port}/page"]
    assert response.body.decode() == ALLOWED_PAGE  # the proxy's own (first) lookup


async def test_an_ipv6_vetted_address_is_bracketed_in_the_request_line() -> None:
    with QuickOrigin("::1") as origin, RebindingDNS() as dns, ForwardProxy(PROXY, dns.address) as proxy:
        origin.serve("/page", ALLOWED_PAGE)
        resolver = StubResolver({"six.test": [["::1"]]})
        settings = FetchConfig(proxy=proxy.url, allow_cidrs=(ip_network("::1/128"),), timeout=5.0)
        backend = GuardBackend(permitted=(PROXY,))
        async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
            response = await fetcher.fetch(f"http://six.test:{origin.port}/page")
        assert response.body.decode() == ALLOWED_PAGE
        [seen] = proxy.seen
        assert (seen.target, seen.host_header) == (
            f"http://[::1]:{origin.port}/page",
            f"six.test:{origin.port}",
        )


# ------------------------------------------------------------------------------------------
# https:// targets: CONNECT to the vetted address, TLS for the name
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", list(HTTPS_CONFIGS), ids=_config_ids(HTTPS_CONFIGS))
async def test_https_through_a_proxy_tunnels_to_the_vetted_address(tls_scene: Scene, config: str) -> None:
    scene = tls_scene
    settings, environ = HTTPS_CONFIGS[config](scene.proxy.url)
    async with scene.fetcher(settings, environ) as fetcher:
        response = await fetcher.fetch(f"https://{NAME}:{scene.port}/page")
    assert scene.victim.requests == [], "the tunnel was steered to the rebound address"
    assert response.body.decode() == ALLOWED_PAGE
    [seen] = scene.proxy.seen
    assert (seen.method, seen.target) == ("CONNECT", f"{ALLOWED}:{scene.port}")
    assert seen.connected_to == f"{ALLOWED}:{scene.port}"
    assert seen.sni == NAME  # TLS speaks to the name, through a tunnel to the address
    assert scene.dns.answers_for(NAME) == [ALLOWED]
    [reached] = scene.allowed.requests
    assert reached.headers["host"] == f"{NAME}:{scene.port}"


async def test_https_through_a_proxy_still_checks_the_certificate_against_the_name(
    tls_scene: Scene, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CA that signed nothing the origin presents: the handshake must fail, so the tunnel to an
    # address did not turn certificate verification off (or point it at the address).
    other = make_certificates(tmp_path, "other.test")
    monkeypatch.setenv("SSL_CERT_FILE", str(other.ca_file))
    scene = tls_scene
    async with scene.fetcher({"proxy": scene.proxy.url}, {}) as fetcher:
        with pytest.raises(HTTPStatusError, match="certificate"):
            await fetcher.fetch(f"https://{NAME}:{scene.port}/page")
    assert scene.allowed.requests == [] and scene.victim.requests == []
    assert [seen.sni for seen in scene.proxy.seen] == [NAME]


async def test_one_tunnel_per_name_even_when_names_share_an_address(tls_scene: Scene) -> None:
    # A tunnel whose TLS session was verified for one name must not carry another name's request.
    scene = tls_scene
    scene.dns.set("other.test", ALLOWED)
    async with scene.fetcher({"proxy": scene.proxy.url}, {}) as fetcher:
        first = await fetcher.fetch(f"https://{NAME}:{scene.port}/page")
        with pytest.raises(HTTPStatusError, match="certificate"):
            await fetcher.fetch(f"https://other.test:{scene.port}/page")
    assert first.body.decode() == ALLOWED_PAGE
    assert [seen.sni for seen in scene.proxy.seen] == [NAME, "other.test"]
    assert len(scene.allowed.requests) == 1


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_proxy_credentials_still_go_to_the_proxy(
    scheme: str, certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca_file))
    with (
        RebindingDNS({NAME: [ALLOWED]}) as dns,
        ForwardProxy(PROXY, dns.address) as proxy,
        TLSOrigin(certificates, ALLOWED) if scheme == "https" else QuickOrigin(ALLOWED) as origin,
    ):
        origin.serve("/page", ALLOWED_PAGE)
        with_credentials = proxy.url.replace("http://", "http://user:s%3Acret@")
        settings = FetchConfig(proxy=with_credentials, allow_cidrs=ONLY_ALLOWED, timeout=5.0)
        backend = GuardBackend(permitted=(PROXY,))
        resolver = DNSResolver(dns.address)
        async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
            response = await fetcher.fetch(f"{scheme}://{NAME}:{origin.port}/page")
        assert response.body.decode() == ALLOWED_PAGE
        [seen] = proxy.seen
        assert seen.proxy_authorization == "Basic dXNlcjpzOmNyZXQ="  # user:s:cret
        assert "proxy-authorization" not in origin.requests[0].headers


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_pinned_pool_never_falls_back_to_the_name(scene: Scene, scheme: str) -> None:
    # Fail closed: a request that reaches the proxy pool without a vetted address is refused,
    # not sent to the proxy by name.
    proxy_url = httpx.URL(scene.proxy.url)
    pool = PinnedProxyPool(
        pinned=True,
        proxy_url=httpcore.URL(scheme=b"http", host=proxy_url.raw_host, port=proxy_url.port, target=b"/"),
        proxy_auth=None,
        proxy_headers=[],
        proxy_ssl_context=None,
        ssl_context=httpx.create_ssl_context(),
        network_backend=scene.backend,
        max_connections=1,
        max_keepalive_connections=1,
        keepalive_expiry=1.0,
    )
    async with pool:
        with pytest.raises(httpcore.ProxyError, match="no vetted address"):
            await pool.request("GET", f"{scheme}://{NAME}:{scene.port}/page")
    assert scene.proxy.seen == [] and scene.backend.connects == []


# ------------------------------------------------------------------------------------------
# The whole tool path
# ------------------------------------------------------------------------------------------


async def test_web_fetch_through_a_proxy_returns_the_vetted_page(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(variable, raising=False)
        monkeypatch.delenv(variable.lower(), raising=False)
    settings = make_settings(proxy=scene.proxy.url, tools=("web_fetch",), respect_robots=False)
    server = build_server(settings, resolver=DNSResolver(scene.dns.address), network_backend=scene.backend)
    async with Client(server) as client:
        result = await client.call_tool("web_fetch", {"url": f"http://{NAME}:{scene.port}/page"})
    text = text_of(result)
    assert scene.victim.requests == []
    assert not result.is_error, text[:300]
    assert "The allowed origin's page." in text and "SECRET" not in text
    assert [seen.target for seen in scene.proxy.seen] == [f"http://{ALLOWED}:{scene.port}/page"]


def test_the_test_proxy_resolves_names_itself(scene: Scene) -> None:
    # The premise of every test above: handed a name, this proxy follows the rebinding DNS.
    with httpx.Client(proxy=scene.proxy.url, trust_env=False) as client:
        first = client.get(f"http://{NAME}:{scene.port}/page")
        second = client.get(f"http://{NAME}:{scene.port}/page")
    assert (first.text, second.text) == (ALLOWED_PAGE, VICTIM_PAGE)
    assert scene.dns.answers_for(NAME) == [ALLOWED, VICTIM]
