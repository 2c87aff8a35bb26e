"""URL parsing and the address policy: every refusal happens before any connection is attempted."""

from __future__ import annotations

import ipaddress
import socket
from ipaddress import ip_address, ip_network

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_server_web.config import Settings
from mcp_server_web.errors import BlockedAddress, HTTPStatusError, InvalidURL
from mcp_server_web.fetch import guard
from mcp_server_web.fetch.client import Fetcher
from mcp_server_web.fetch.guard import (
    MAX_URL_LENGTH,
    AddressPolicy,
    SystemResolver,
    literal_ip,
    parse_url,
    resolve_redirect,
    vet_host,
)
from tests.support.netguard import GuardBackend, StubResolver

# (URL, words the refusal must contain). Each is refused by the default policy.
REFUSED_URLS: list[tuple[str, str]] = [
    # IPv4 loopback in every spelling a browser accepts
    ("http://127.0.0.1/", "loopback"),
    ("http://127.255.255.254/", "loopback"),
    ("http://2130706433/", "loopback"),  # decimal
    ("http://0177.0.0.1/", "loopback"),  # octal
    ("http://0x7f.0.0.1/", "loopback"),  # hex
    ("http://0x7f000001/", "loopback"),  # one hex number
    ("http://017700000001/", "loopback"),  # one octal number
    ("http://127.1/", "loopback"),  # short
    ("http://127.0.1/", "loopback"),  # short, three parts
    ("http://0x7f.1/", "loopback"),  # mixed
    ("http://0x7F.0X0.0.01/", "loopback"),  # mixed case and radix
    ("http://127.0.0.1./", "loopback"),  # trailing dot
    ("http://%31%32%37.0.0.1/", "loopback"),  # percent-encoded host
    ("http://１２７．０．０．１/", "loopback"),  # full-width digits and dots (IDNA mapping)
    ("http://127.000.000.001/", "loopback"),  # zero-padded octal
    # unspecified / this network
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://0x0/", "unspecified"),
    ("http://0.1.2.3/", "this network"),
    # RFC 1918
    ("http://10.0.0.5/", "private network (RFC 1918)"),
    ("http://167772165/", "private network (RFC 1918)"),  # 10.0.0.5 as decimal
    ("http://10.255.255.255/", "private network (RFC 1918)"),
    ("http://172.16.0.1/", "private network (RFC 1918)"),
    ("http://172.31.255.254/", "private network (RFC 1918)"),
    ("http://192.168.0.1/", "private network (RFC 1918)"),
    ("http://0xc0.0xa8.1.1/", "private network (RFC 1918)"),
    # carrier-grade NAT, link-local and cloud metadata
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
    ("http://0xa9fea9fe/", "cloud metadata"),
    ("http://2852039166/", "cloud metadata"),
    ("http://169.254.1.1/", "link-local"),
    ("http://100.100.100.200/", "cloud metadata"),
    ("http://[fd00:ec2::254]/", "cloud metadata"),
    # special-purpose IPv4
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250/", "multicast"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://198.19.255.1/", "benchmarking"),
    ("http://192.0.0.1/", "IETF protocol assignment"),
    ("http://192.0.0.170/", "IETF protocol assignment"),
    ("http://192.0.2.1/", "documentation"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "broadcast"),
    # IPv6
    ("http://[::1]/", "loopback"),
    ("http://[0:0:0:0:0:0:0:1]/", "loopback"),
    ("http://[::]/", "unspecified"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fc00::1]/", "unique local IPv6 (ULA)"),
    ("http://[fd12:3456::1]/", "unique local IPv6 (ULA)"),
    ("http://[ff02::1]/", "multicast"),
    ("http://[fec0::1]/", "site-local"),
    ("http://[2001:db8::1]/", "documentation"),
    # IPv6 forms that embed an IPv4 address
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped IPv6 form of a loopback"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped IPv6 form of a loopback"),
    ("http://[::ffff:10.0.0.1]/", "IPv4-mapped IPv6 form of a private network (RFC 1918)"),
    ("http://[::ffff:169.254.169.254]/", "IPv4-mapped IPv6 form of a cloud metadata"),
    ("http://[::127.0.0.1]/", "IPv4-compatible IPv6 form of a loopback"),
    ("http://[::ffff:0:127.0.0.1]/", "IPv4-translated IPv6 form of a loopback"),
    ("http://[2002:7f00:1::]/", "6to4 form of a loopback"),
    ("http://[2002:a00:1::]/", "6to4 form of a private network (RFC 1918)"),
    ("http://[2002:a9fe:a9fe::1]/", "6to4 form of a cloud metadata"),
    ("http://[64:ff9b::7f00:1]/", "NAT64 form of a loopback"),
    ("http://[64:ff9b::a00:1]/", "NAT64 form of a private network (RFC 1918)"),
    ("http://[64:ff9b::169.254.169.254]/", "NAT64 form of a cloud metadata"),
    ("http://[64:ff9b:1::a00:1]/", "NAT64 form of a private network (RFC 1918)"),
    ("http://[64:ff9b:1::808:808]/", "local-use NAT64"),
    # Teredo: client 10.0.0.1 is stored inverted in the last 32 bits (f5ff:fffe); server public
    ("http://[2001:0:808:808:0:0:f5ff:fffe]/", "Teredo form of a private network (RFC 1918)"),
    # Teredo: server 127.0.0.1 in bits 32-63
    ("http://[2001:0:7f00:1::]/", "Teredo form of a loopback"),
]


# Host names the injected resolver answers with a refused address.
RESOLVED_REFUSED: list[tuple[str, list[str], str]] = [
    ("intranet.example", ["10.0.0.5"], "private network (RFC 1918)"),
    ("router.example", ["192.168.1.1"], "private network (RFC 1918)"),
    ("metadata.google.internal", ["169.254.169.254"], "cloud metadata"),
    ("localhost", ["127.0.0.1", "::1"], "loopback"),
    ("v6only.example", ["::1"], "loopback"),
    ("mapped.example", ["::ffff:10.1.2.3"], "IPv4-mapped IPv6 form of a private network"),
    ("cgnat.example", ["100.64.1.1"], "carrier-grade NAT"),
    ("ula.example", ["fd00::1234"], "unique local IPv6"),
    # one public and one private answer: refused, the private one is named
    ("mixed.example", ["93.184.216.34", "10.0.0.5"], "private network (RFC 1918)"),
    ("mixed6.example", ["2606:4700::1111", "fe80::1"], "link-local"),
]


def _policy_default() -> AddressPolicy:
    return AddressPolicy()


@pytest.mark.parametrize(("url", "rule"), REFUSED_URLS)
def test_refused_literal_forms(url: str, rule: str) -> None:
    parsed = parse_url(url)
    address = literal_ip(parsed.host)
    assert address is not None, f"{url} must be recognised as an IP literal, got host {parsed.host!r}"
    refusal = _policy_default().refusal(address)
    assert refusal is not None and rule in refusal, (url, str(address), refusal)


def test_enough_refused_forms_are_covered() -> None:
    assert len(REFUSED_URLS) + len(RESOLVED_REFUSED) >= 40


@pytest.mark.parametrize(("url", "rule"), REFUSED_URLS)
async def test_fetcher_refuses_literal_forms_without_connecting(url: str, rule: str) -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver()
    async with Fetcher(Settings(), resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(url)
    assert rule in caught.value.message
    assert backend.connects == []
    assert resolver.calls == []  # literals are never resolved


@pytest.mark.parametrize(("host", "answers", "rule"), RESOLVED_REFUSED)
async def test_vet_host_refuses_names_resolving_to_refused_addresses(
    host: str, answers: list[str], rule: str
) -> None:
    resolver = StubResolver({host: [answers]})
    with pytest.raises(BlockedAddress) as caught:
        await vet_host(host, 80, resolver, AddressPolicy())
    message = caught.value.message
    assert rule in message
    assert f"(host {host})" in message
    assert "MCP_WEB_ALLOW_PRIVATE=true" in message and "MCP_WEB_ALLOW_CIDRS" in message


@pytest.mark.parametrize(("host", "answers", "rule"), RESOLVED_REFUSED)
async def test_fetcher_refuses_names_resolving_to_refused_addresses(
    host: str, answers: list[str], rule: str
) -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver({host: [answers]})
    async with Fetcher(Settings(), resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(f"http://{host}/page")
    assert rule in caught.value.message
    assert backend.connects == []
    assert resolver.calls == [host]


def test_block_message_names_host_address_rule_and_the_way_out() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check(ip_address("10.0.0.5"), "intranet.example")
    assert str(caught.value) == (
        "blocked_address: refusing to connect to 10.0.0.5 (host intranet.example): it is a private "
        "network (RFC 1918) address. Set MCP_WEB_ALLOW_PRIVATE=true, or add the range to "
        "MCP_WEB_ALLOW_CIDRS, to allow it."
    )


def test_block_message_for_a_literal_does_not_repeat_the_host() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check(ip_address("::1"), "::1")
    assert caught.value.message.startswith("refusing to connect to ::1: it is a loopback address.")


# ------------------------------------------------------------------------------------------
# Allowed addresses
# ------------------------------------------------------------------------------------------

PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700::1111",
    "2a00:1450:4001:81c::200e",
    "::ffff:93.184.216.34",
    "2002:5db8:d822::1",
    "64:ff9b::5db8:d822",
]


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    # Only the policy is asked; nothing connects to these.
    assert AddressPolicy().refusal(ip_address(address)) is None


def test_allow_cidrs_allows_exactly_the_listed_range() -> None:
    policy = AddressPolicy(allow_cidrs=(ip_network("127.0.0.1/32"),))
    assert policy.refusal(ip_address("127.0.0.1")) is None
    assert policy.refusal(ip_address("::ffff:127.0.0.1")) is None  # the embedded address is listed
    assert policy.refusal(ip_address("127.0.0.2")) == "loopback address"
    assert policy.refusal(ip_address("::1")) == "loopback address"
    assert policy.refusal(ip_address("10.0.0.1")) is not None


def test_allow_cidrs_covers_ipv6_and_larger_ranges() -> None:
    policy = AddressPolicy(allow_cidrs=(ip_network("10.0.0.0/8"), ip_network("fd00::/8")))
    assert policy.refusal(ip_address("10.200.0.1")) is None
    assert policy.refusal(ip_address("fd00::1")) is None
    assert policy.refusal(ip_address("64:ff9b::a00:1")) is None  # NAT64 of a listed address
    assert policy.refusal(ip_address("192.168.0.1")) is not None
    assert policy.refusal(ip_address("fc00::1")) is not None


def test_allow_private_allows_everything() -> None:
    policy = AddressPolicy(allow_private=True)
    for url, _ in REFUSED_URLS:
        address = literal_ip(parse_url(url).host)
        assert address is not None
        assert policy.refusal(address) is None
    policy.check(ip_address("169.254.169.254"), "metadata")  # does not raise


def test_policy_from_settings() -> None:
    settings = Settings(allow_private=False, allow_cidrs=(ip_network("192.168.5.0/24"),))
    policy = AddressPolicy.from_settings(settings)
    assert policy.refusal(ip_address("192.168.5.7")) is None
    assert policy.refusal(ip_address("192.168.6.7")) is not None
    assert AddressPolicy.from_settings(Settings(allow_private=True)).refusal(ip_address("127.0.0.1")) is None


def test_scoped_ipv6_answers_are_link_local() -> None:
    assert AddressPolicy().refusal(ip_address("fe80::1%eth0")) == "link-local address"


# ------------------------------------------------------------------------------------------
# URL parsing
# ------------------------------------------------------------------------------------------

INVALID_URLS: list[tuple[str, str]] = [
    ("file:///etc/passwd", "only http and https"),
    ("FILE:///etc/passwd", "only http and https"),
    ("ftp://example.com/file", "only http and https"),
    ("data:text/html,<script>alert(1)</script>", "only http and https"),
    ("javascript:alert(1)", "only http and https"),
    ("gopher://127.0.0.1:25/", "only http and https"),
    ("example.com/page", "no scheme"),
    ("www.example.com", "no scheme"),
    ("localhost:8080/x", "no scheme"),
    ("/relative/path", "no scheme"),
    ("//example.com/x", "no scheme"),
    ("", "empty"),
    ("   ", "empty"),
    ("http://example.com/" + "a" * MAX_URL_LENGTH, "characters long"),
    ("http://user@example.com/", "credentials"),
    ("http://a:b@example.com/", "credentials"),
    ("http://allowed@127.0.0.1/", "credentials"),
    ("http://example.com@127.0.0.1/", "credentials"),
    ("http://:@example.com/", "credentials"),
    ("http://example.com\\@127.0.0.1/", "backslash"),
    ("http:\\\\127.0.0.1\\", "backslash"),
    ("http:/\\127.0.0.1/", "backslash"),
    ("http://127.0.0.1\\.example.com/", "backslash"),
    ("http:example.com", "must start with http://"),
    ("http:/example.com", "must start with http://"),
    ("http:///path", "no host"),
    ("http://:80/", "no host"),
    ("http://[fe80::1%25eth0]/", "zone id"),
    ("http://[fe80::1%eth0]/", "zone id"),
    ("http://[::1/", "closing"),
    ("http://[::1]x/", "unexpected text"),
    ("http://[not-an-address]/", "not a valid IPv6"),
    ("http://example.com:0/", "port"),
    ("http://example.com:65536/", "port"),
    ("http://example.com:80a/", "port"),
    ("http://1.2.3.4.5/", "more than four parts"),
    ("http://256.256.256.256/", "out of range"),
    ("http://4294967296/", "out of range"),
    ("http://0x100000000/", "out of range"),
    ("http://1.2.3.09/", "not a number"),  # 09 is a bad octal number
    ("http://foo.0x/", "not a number"),  # "0x" alone is the number zero
    ("http://evil.com.123/", "not a number"),  # last label numeric: must be an IPv4 address
    ("http://exa mple.com/", "not allowed"),
    ("http://exa%00mple.com/", "not allowed"),
    ("http://exa<mple.com/", "not allowed"),
    ("http://a..b.example/", "empty label"),
    ("http://example.com/\x00", "control characters"),
    ("http://exam\tple.com/", "control characters"),
    ("http://exam\nple.com/", "control characters"),
]


@pytest.mark.parametrize(("url", "why"), INVALID_URLS)
def test_invalid_urls_are_refused_with_a_sentence(url: str, why: str) -> None:
    with pytest.raises(InvalidURL) as caught:
        parse_url(url)
    assert why in caught.value.message
    assert caught.value.message.endswith(".")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("http://127.1/", "http://127.0.0.1/"),
        ("http://0x7f.0.0.1:8080/a?b=c", "http://127.0.0.1:8080/a?b=c"),
        ("http://2130706433/x", "http://127.0.0.1/x"),
        ("http://0177.0.0.1/", "http://127.0.0.1/"),
        ("http://93.184.216.34./", "http://93.184.216.34/"),
        ("http://0/", "http://0.0.0.0/"),
        ("  https://Example.COM/Path?Q=1#frag  ", "https://example.com/Path?Q=1"),
        ("HTTPS://example.com:443/", "https://example.com/"),
        ("http://example.com:/", "http://example.com/"),
        ("http://bücher.example/straße", "http://xn--bcher-kva.example/stra%C3%9Fe"),
        ("http://ＥＸＡＭＰＬＥ.com/", "http://example.com/"),
        ("http://[::FFFF:127.0.0.1]:81/", "http://[::ffff:7f00:1]:81/"),
        ("http://[2606:4700:0:0:0:0:0:1111]/", "http://[2606:4700::1111]/"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com", "http://example.com"),
        ("http://my_host.example/", "http://my_host.example/"),
        ("http://example.com./", "http://example.com./"),
        ("http://example.com/@evil.com", "http://example.com/@evil.com"),
        ("http://example.com?q=http://x@y/", "http://example.com?q=http://x@y/"),
    ],
)
def test_urls_are_normalised(raw: str, expected: str) -> None:
    assert str(parse_url(raw)) == expected


def test_parse_url_returns_an_httpx_url_with_the_canonical_host() -> None:
    url = parse_url("http://0x7f.1:8080/p")
    assert isinstance(url, httpx.URL)
    assert url.host == "127.0.0.1" and url.port == 8080 and url.path == "/p"


def test_max_length_is_inclusive() -> None:
    base = "http://example.com/"
    assert len(str(parse_url(base + "a" * (MAX_URL_LENGTH - len(base))))) == MAX_URL_LENGTH


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_ipv4_spelling_parses_to_the_same_address(value: int) -> None:
    expected = str(ipaddress.IPv4Address(value))
    octets = [int(part) for part in expected.split(".")]
    spellings = [
        str(value),
        hex(value),
        f"0{value:o}" if value else "0",
        ".".join(hex(octet) for octet in octets),
        ".".join(f"0{octet:o}" for octet in octets),
        f"{octets[0]}.{octets[1]}.{octets[2] * 256 + octets[3]}",
        f"{octets[0]}.{(octets[1] << 16) + (octets[2] << 8) + octets[3]}",
        f"{hex(octets[0])}.{(octets[1] << 16) + (octets[2] << 8) + octets[3]}",
        expected + ".",
    ]
    for spelling in spellings:
        assert parse_url(f"http://{spelling}/").host == expected, spelling


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/next", "http://origin.example:8080/next"),
        ("next?x=1", "http://origin.example:8080/dir/next?x=1"),
        ("../up", "http://origin.example:8080/up"),
        ("?only=query", "http://origin.example:8080/dir/page?only=query"),
        ("//other.example/p", "http://other.example/p"),
        ("https://secure.example/p#frag", "https://secure.example/p"),
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("//2130706433:81/", "http://127.0.0.1:81/"),
    ],
)
def test_redirect_targets_are_resolved_and_reparsed(location: str, expected: str) -> None:
    current = parse_url("http://origin.example:8080/dir/page")
    assert str(resolve_redirect(current, location)) == expected


@pytest.mark.parametrize(
    "location",
    [
        "/\\evil.example/",
        "\\\\evil.example/",
        "file:///etc/passwd",
        "http://user@127.0.0.1/",
        "",
        "gopher://x/",
    ],
)
def test_bad_redirect_targets_are_invalid(location: str) -> None:
    with pytest.raises(InvalidURL):
        resolve_redirect(parse_url("http://origin.example/"), location)


# ------------------------------------------------------------------------------------------
# Resolution
# ------------------------------------------------------------------------------------------


async def test_vet_host_returns_all_answers_when_all_are_allowed() -> None:
    resolver = StubResolver({"pinned.test": [["127.0.0.1", "::1"]]})
    policy = AddressPolicy(allow_cidrs=(ip_network("127.0.0.0/8"), ip_network("::1/128")))
    assert await vet_host("pinned.test", 80, resolver, policy) == [ip_address("127.0.0.1"), ip_address("::1")]


async def test_vet_host_does_not_resolve_literals() -> None:
    resolver = StubResolver()
    with pytest.raises(BlockedAddress):
        await vet_host("10.1.1.1", 80, resolver, AddressPolicy())
    assert resolver.calls == []


async def test_system_resolver_returns_numeric_hosts_without_lookups() -> None:
    # Numeric hosts are parsed by getaddrinfo itself: no DNS traffic.
    assert await SystemResolver().resolve("127.0.0.1", 80) == [ip_address("127.0.0.1")]
    assert await SystemResolver().resolve("::1", 80) == [ip_address("::1")]


async def test_system_resolver_dedupes_and_keeps_order(monkeypatch: pytest.MonkeyPatch) -> None:
    async def fake_getaddrinfo(host: str, port: int, **_: object) -> list[tuple]:
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:4700::1111", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:4700::1111", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
        ]

    monkeypatch.setattr(guard.anyio, "getaddrinfo", fake_getaddrinfo)
    assert await SystemResolver().resolve("example.test", 443) == [
        ip_address("2606:4700::1111"),
        ip_address("93.184.216.34"),
    ]


async def test_system_resolver_failure_is_an_http_error_without_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def failing_getaddrinfo(host: str, port: int, **_: object) -> list[tuple]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(guard.anyio, "getaddrinfo", failing_getaddrinfo)
    with pytest.raises(HTTPStatusError) as caught:
        await SystemResolver().resolve("nowhere.test", 80)
    assert caught.value.status is None
    assert caught.value.message == "could not resolve host nowhere.test: Name or service not known."


async def test_system_resolver_refuses_names_that_are_not_valid_idna() -> None:
    # Fails while encoding the name, before getaddrinfo runs: no DNS traffic.
    with pytest.raises(HTTPStatusError) as caught:
        await SystemResolver().resolve("bücher..example", 80)
    assert caught.value.message.startswith("could not resolve host bücher..example")
