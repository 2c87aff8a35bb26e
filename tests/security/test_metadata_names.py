"""Cloud metadata host names are refused by name, before any lookup, whatever the resolver says.

``metadata.google.internal`` and its kind only mean something inside a cloud, where the local
resolver points them at the metadata service (a credential store). Refusing them only when they
resolve to a refused address makes the answer depend on the resolver: a resolver that answers
an allowed address (a split-horizon DNS, a hosts file, an operator's allow_cidrs covering the
address it returns) would let the request through. So the names themselves are refused.

Every test answers each name with 127.0.0.1 and allows 127.0.0.1/32, where a real origin
listens: without the name rule, the fetch would succeed. ``StubResolver.calls`` proves no lookup
happened and ``GuardBackend`` that no connection was opened.
"""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import ip_network

import pytest
from mcp import Client

from mcp_server_web.errors import BlockedAddress
from mcp_server_web.fetch import FetchConfig
from mcp_server_web.fetch.net import addresses
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, make_settings, text_of
from tests.support.netguard import GuardBackend, QuickOrigin, StubResolver

ONLY_127_0_0_1 = (ip_network("127.0.0.1/32"),)
PAGE = "<html><body><p>Instance credentials: AKIA-EXAMPLE</p></body></html>"

DOCUMENTED = (
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
    "metadata.packet.net",
    "api.metadata.cloud.ibm.com",
    "rancher-metadata",
)
# (host as written in the URL, the listed name it stands for)
SPELLINGS = (
    *((name, name) for name in DOCUMENTED),
    ("METADATA.Google.Internal", "metadata.google.internal"),
    ("metadata.google.internal.", "metadata.google.internal"),
    ("Instance-Data.", "instance-data"),
    ("computeMetadata.metadata.google.internal", "metadata.google.internal"),
    ("a.b.metadata.tencentyun.com", "metadata.tencentyun.com"),
    ("ｍｅｔａｄａｔａ．ｇｏｏｇｌｅ．ｉｎｔｅｒｎａｌ", "metadata.google.internal"),  # full-width
    ("metadata%2Egoogle%2Einternal", "metadata.google.internal"),  # percent-encoded dots
)
NOT_METADATA = ("metadata.example.com", "my-metadata.goog", "metadata.google.internal.example.com")


@pytest.fixture
def origin() -> Iterator[QuickOrigin]:
    with QuickOrigin("127.0.0.1") as server:
        server.serve("/latest/meta-data/", PAGE)
        yield server


def _resolver(*names: str) -> StubResolver:
    spellings = {spelling for name in names for spelling in (name.lower(), name.lower().rstrip("."))}
    return StubResolver({spelling: [["127.0.0.1"]] for spelling in spellings})


def test_the_documented_names_are_declared() -> None:
    assert set(DOCUMENTED) <= addresses.CLOUD_METADATA_NAMES


@pytest.mark.parametrize(("host", "listed"), SPELLINGS, ids=[host for host, _ in SPELLINGS])
async def test_fetcher_refuses_metadata_names_without_a_lookup(
    origin: QuickOrigin, host: str, listed: str
) -> None:
    resolver = _resolver(listed, host)
    backend = GuardBackend(permitted=("127.0.0.1",))
    settings = FetchConfig(allow_cidrs=ONLY_127_0_0_1, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(f"http://{host}:{origin.port}/latest/meta-data/")
    message = caught.value.message
    assert message.startswith("refusing to connect to ") and "cloud metadata" in message, message
    assert listed in message
    assert resolver.calls == []
    assert backend.connects == []
    assert origin.requests == []


@pytest.mark.parametrize("host", NOT_METADATA)
async def test_names_that_only_look_alike_are_fetched(origin: QuickOrigin, host: str) -> None:
    resolver = _resolver(host)
    backend = GuardBackend(permitted=("127.0.0.1",))
    settings = FetchConfig(allow_cidrs=ONLY_127_0_0_1, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        response = await fetcher.fetch(f"http://{host}:{origin.port}/latest/meta-data/")
    assert response.body.decode() == PAGE
    assert resolver.calls == [host]


async def test_a_redirect_to_a_metadata_name_is_refused(origin: QuickOrigin) -> None:
    origin.redirect("/go", f"http://metadata.google.internal:{origin.port}/latest/meta-data/")
    resolver = _resolver("allowed.test", "metadata.google.internal")
    backend = GuardBackend(permitted=("127.0.0.1",))
    settings = FetchConfig(allow_cidrs=ONLY_127_0_0_1, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress):
            await fetcher.fetch(f"http://allowed.test:{origin.port}/go")
    assert resolver.calls == ["allowed.test"]
    assert origin.hits("/latest/meta-data/") == 0


async def test_metadata_names_are_refused_before_the_proxy_too(origin: QuickOrigin) -> None:
    with QuickOrigin("127.0.0.3") as proxy:
        resolver = _resolver("metadata.google.internal")
        backend = GuardBackend(permitted=("127.0.0.3",))
        settings = FetchConfig(proxy=proxy.base, allow_cidrs=ONLY_127_0_0_1, timeout=5.0)
        async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
            with pytest.raises(BlockedAddress):
                await fetcher.fetch(f"http://metadata.google.internal:{origin.port}/latest/meta-data/")
        assert proxy.requests == [] and resolver.calls == [] and backend.connects == []


@pytest.mark.parametrize("robots", [True, False], ids=["robots-on", "robots-off"])
@pytest.mark.parametrize("tool", ["web_fetch", "http_request"])
async def test_the_tools_answer_blocked_address(origin: QuickOrigin, robots: bool, tool: str) -> None:
    resolver = _resolver(*DOCUMENTED)
    backend = GuardBackend(permitted=("127.0.0.1",))
    settings = make_settings(tools=("web_fetch", "http_request"), respect_robots=robots)
    failures = []
    async with Client(build_server(settings, resolver=resolver, network_backend=backend)) as client:
        for name in DOCUMENTED:
            result = await client.call_tool(tool, {"url": f"http://{name}:{origin.port}/latest/meta-data/"})
            if not result.is_error or error_code(result) != "blocked_address":
                failures.append(f"{name}: {text_of(result)[:200]}")
            elif "cloud metadata" not in text_of(result):
                failures.append(f"{name}: refused for another reason: {text_of(result)[:200]}")
    assert failures == []
    assert resolver.calls == [] and backend.connects == [] and origin.requests == []


async def test_allow_private_does_not_lift_the_name_rule(origin: QuickOrigin) -> None:
    # MCP_WEB_ALLOW_PRIVATE=true opens private ranges, not the metadata services (issue 24,
    # point 7): the names stay refused by name, the resolver never asked.
    resolver = _resolver(*DOCUMENTED)
    backend = GuardBackend(permitted=("127.0.0.1",))
    settings = FetchConfig(allow_private=True, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        for name in DOCUMENTED:
            with pytest.raises(BlockedAddress) as caught:
                await fetcher.fetch(f"http://{name}:{origin.port}/latest/meta-data/")
            assert "cloud metadata endpoint name" in caught.value.message
            assert caught.value.parameters == ("allow_cidrs",)
    assert resolver.calls == [] and backend.connects == [] and origin.requests == []


async def test_an_allow_cidrs_entry_holding_a_metadata_address_opens_the_names(origin: QuickOrigin) -> None:
    # The operator who lists a metadata service's address means to reach it, by name too; the
    # name is then looked up and its answers judged like any name's (here pointed at the test
    # origin, which is listed as well).
    resolver = _resolver("metadata.google.internal")
    resolver.answer("metadata", "10.0.0.5")  # an answer that is not listed stays refused
    backend = GuardBackend(permitted=("127.0.0.1",))
    listed = (ip_network("169.254.169.254/32"), *ONLY_127_0_0_1)
    settings = FetchConfig(allow_cidrs=listed, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        response = await fetcher.fetch(f"http://metadata.google.internal:{origin.port}/latest/meta-data/")
        with pytest.raises(BlockedAddress, match="private network"):
            await fetcher.fetch(f"http://metadata:{origin.port}/latest/meta-data/")
    assert response.body.decode() == PAGE
    assert resolver.calls == ["metadata.google.internal", "metadata"]
