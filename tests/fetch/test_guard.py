"""URL parsing and the address policy: every refusal happens before any connection is attempted."""

from __future__ import annotations

import ipaddress
import socket
from ipaddress import ip_address, ip_network

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_server_web.errors import BlockedAddress, HTTPStatusError, InvalidURL
from mcp_server_web.fetch.net import addresses, resolution
from mcp_server_web.fetch.net.addresses import AddressPolicy, literal_ip
from mcp_server_web.fetch.net.resolution import SystemResolver, vet_host
from mcp_server_web.fetch.net.urls import MAX_URL_LENGTH, HiddenAddress, parse_url, resolve_redirect
from tests.security.test_address_policy import LITERAL, NAMED, Attack
from tests.support.netguard import StubResolver

# The attack table (every literal and host-name form that must be refused) lives in the security
# suite, which runs it end to end; here it drives the policy and vet_host as units.
REFUSED_LITERALS = [attack for attack in LITERAL if not attack.hidden]


def _policy_default() -> AddressPolicy:
    return AddressPolicy()


@pytest.mark.parametrize("attack", REFUSED_LITERALS, ids=str)
def test_refused_literal_forms(attack: Attack) -> None:
    parsed = parse_url(attack.url)
    address = literal_ip(parsed.host)
    assert address is not None, f"{attack.url} must be recognised as an IP literal, got host {parsed.host!r}"
    refusal = _policy_default().refusal(address)
    assert refusal is not None and attack.rule in refusal, (attack.url, str(address), refusal)


@pytest.mark.parametrize("attack", NAMED, ids=str)
async def test_vet_host_refuses_names_resolving_to_refused_addresses(attack: Attack) -> None:
    assert attack.name is not None
    resolver = StubResolver({attack.name: [list(attack.answers)]})
    with pytest.raises(BlockedAddress) as caught:
        await vet_host(attack.name, 80, resolver, AddressPolicy())
    message = caught.value.message
    assert attack.rule in message
    if addresses.metadata_name(attack.name) is not None:
        # Refused by name, before the resolver is asked; no CIDR can allow a name.
        assert resolver.calls == []
        assert f"refusing to connect to {attack.name.rstrip('.')}: " in message
        assert caught.value.parameters == ("allow_cidrs",) and "MCP_WEB_" not in message
        return
    assert f"(host {attack.name})" in message
    # A metadata service is opened by a listed range only; anything else by allow_private too.
    expected = ("allow_cidrs",) if "cloud metadata" in attack.rule else ("allow_cidrs", "allow_private")
    assert caught.value.parameters == expected and "MCP_WEB_" not in message


def test_block_message_names_host_address_rule_and_the_way_out() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check(ip_address("10.0.0.5"), "intranet.example")
    assert str(caught.value) == (
        "blocked_address: refusing to connect to 10.0.0.5 (host intranet.example): it is a private "
        "network (RFC 1918) address."
    )
    assert caught.value.parameters == ("allow_cidrs", "allow_private")  # the way out, by parameter


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


def test_allow_private_allows_everything_but_the_metadata_services() -> None:
    policy = AddressPolicy(allow_private=True)
    for attack in REFUSED_LITERALS:
        address = literal_ip(parse_url(attack.url).host)
        assert address is not None
        refusal = policy.refusal(address)
        if "cloud metadata" in attack.rule:
            assert refusal is not None and "cloud metadata endpoint" in refusal, (attack.url, refusal)
        else:
            assert refusal is None, (attack.url, refusal)
    with pytest.raises(BlockedAddress) as caught:
        policy.check(ip_address("169.254.169.254"), "metadata")
    assert caught.value.parameters == ("allow_cidrs",)


def test_policy_allows_listed_ranges_or_everything() -> None:
    policy = AddressPolicy(allow_private=False, allow_cidrs=(ip_network("192.168.5.0/24"),))
    assert policy.refusal(ip_address("192.168.5.7")) is None
    assert policy.refusal(ip_address("192.168.6.7")) is not None
    assert AddressPolicy(allow_private=True).refusal(ip_address("127.0.0.1")) is None


def test_scoped_ipv6_answers_are_link_local() -> None:
    assert AddressPolicy().refusal(ip_address("fe80::1%eth0")) == "link-local address"


@pytest.mark.parametrize(
    ("url", "host", "address"),
    [
        ("http://[fe80::1%25eth0]/", "fe80::1%25eth0", "fe80::1%eth0"),
        ("http://[fe80::1%eth0]:81/x", "fe80::1%25eth0", "fe80::1%eth0"),
        ("http://[FE80::A%25en0.1]/", "fe80::a%25en0.1", "fe80::a%en0.1"),
        ("http://[fe80::1%251]/", "fe80::1%251", "fe80::1%1"),  # RFC 6874 reading of "%25"
        ("http://[fe80::1%25]/", None, None),
    ],
)
def test_zone_ids_are_kept_the_rfc_6874_way(url: str, host: str | None, address: str | None) -> None:
    # Kept, not refused: the address policy refuses them as blocked addresses, and an operator
    # who allows private destinations can reach a link-local host.
    if host is None:
        with pytest.raises(InvalidURL, match="zone id"):
            parse_url(url)
        return
    parsed = parse_url(url)
    assert parsed.raw_host.decode() == host
    assert str(literal_ip(parsed.host)) == address
    assert AddressPolicy(allow_private=True).refusal(ip_address(address)) is None


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://allowed@127.0.0.1/", "127.0.0.1"),
        ("http://a:b@[::1]/", "::1"),
        ("http://example.com\\@10.0.0.1/", "10.0.0.1"),  # RFC 3986 reading
        ("http://10.0.0.1\\.example.com/", "10.0.0.1"),  # browser reading
        ("http:\\\\169.254.169.254\\", "169.254.169.254"),
        ("http:127.1/", "127.0.0.1"),
        ("http:///127.0.0.1/", "127.0.0.1"),
    ],
)
def test_ambiguous_urls_aimed_at_refused_addresses_are_blocked_addresses(url: str, address: str) -> None:
    with pytest.raises(HiddenAddress) as caught:
        parse_url(url)
    error = caught.value
    # Both errors at once: reported as blocked_address, still an InvalidURL to code that catches that.
    assert isinstance(error, BlockedAddress) and isinstance(error, InvalidURL)
    assert error.code == "blocked_address"
    assert error.message.startswith(f"refusing to connect to {address}: it is a")
    assert error.parameters == () and "MCP_WEB_" not in error.message  # allowing private would not help
    assert "allowed" not in error.message and ":b@" not in error.message  # credentials not echoed


@pytest.mark.parametrize(
    "url",
    ["http://user@93.184.216.34/", "http://example.com\\@8.8.8.8/", "http:\\\\1.1.1.1\\", "http:8.8.8.8/"],
)
def test_ambiguous_urls_aimed_at_public_addresses_stay_invalid(url: str) -> None:
    with pytest.raises(InvalidURL) as caught:
        parse_url(url)
    assert not isinstance(caught.value, BlockedAddress)


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
    ("http://127.0.0.1@example.com/", "credentials"),
    ("http://:@example.com/", "credentials"),
    ("http://example.com\\@example.org/", "backslash"),
    ("http:\\\\example.com\\", "backslash"),
    ("http:/\\example.com/", "backslash"),
    ("http://example.org\\.example.com/", "backslash"),
    ("http:example.com", "must start with http://"),
    ("http:/example.com", "must start with http://"),
    ("http:///path", "no host"),
    ("http://:80/", "no host"),
    ("http://[fe80::1%]/", "zone id"),
    ("http://[fe80::1%25eth%200]/", "zone id"),
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

    monkeypatch.setattr(resolution.anyio, "getaddrinfo", fake_getaddrinfo)
    assert await SystemResolver().resolve("example.test", 443) == [
        ip_address("2606:4700::1111"),
        ip_address("93.184.216.34"),
    ]


async def test_system_resolver_failure_is_an_http_error_without_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def failing_getaddrinfo(host: str, port: int, **_: object) -> list[tuple]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(resolution.anyio, "getaddrinfo", failing_getaddrinfo)
    with pytest.raises(HTTPStatusError) as caught:
        await SystemResolver().resolve("nowhere.test", 80)
    assert caught.value.status is None
    assert caught.value.message == "could not resolve host nowhere.test: Name or service not known."


async def test_system_resolver_refuses_names_that_are_not_valid_idna() -> None:
    # Fails while encoding the name, before getaddrinfo runs: no DNS traffic.
    with pytest.raises(HTTPStatusError) as caught:
        await SystemResolver().resolve("bücher..example", 80)
    assert caught.value.message.startswith("could not resolve host bücher..example")
