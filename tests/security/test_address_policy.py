"""The address (SSRF) policy as one attack table: every way we know to aim a fetch at a non-public address.

Each row of ``ATTACKS`` is a URL that the default settings must refuse with ``blocked_address``
before any connection is opened. The rows are exercised end to end: through the real Fetcher,
through the MCP tools (web_fetch, http_request with each of its methods) via the SDK's in-memory
Client, behind redirects from an allowed host (every redirect status, absolute and
scheme-relative), and through a configured proxy. Separate tests cover DNS answers that change
between check and connect, and show that MCP_WEB_ALLOW_PRIVATE=true lets the loopback forms
through.

Nothing here may touch a real private, link-local or metadata address:

* ``GuardBackend`` fails the test on any connection it was not told to permit, and only ever
  permits loopback addresses of origins these tests start.
* ``StubResolver`` answers every host name; nothing reaches a real resolver.
* The allowed host that issues redirects is a loopback origin on ``REDIRECTOR`` (127.45.45.45),
  reachable because ``allow_cidrs`` lists exactly that /32. Loopback is private, so the origin
  had to be allowed somehow; using an address no row aims at keeps 127.0.0.1, and every other
  address in the table, refused.
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from ipaddress import ip_address, ip_network
from typing import Any

import httpx
import pytest
from mcp import Client

from mcp_server_web.config import Settings
from mcp_server_web.errors import BlockedAddress, WebToolError
from mcp_server_web.fetch import BrowserProxy, FetchConfig, ProxyRoutes
from mcp_server_web.fetch.net.addresses import AddressPolicy, literal_ip, metadata_name
from mcp_server_web.fetch.net.client import REDIRECT_STATUSES, Fetcher
from mcp_server_web.fetch.net.urls import HiddenAddress, parse_url
from mcp_server_web.server.app import build_server
from mcp_server_web.server.http_request import HTTP_METHODS
from tests.fetch.test_browser_proxy import exchange
from tests.server.conftest import error_code, text_of
from tests.support.netguard import GuardBackend, QuickOrigin, StubResolver
from tests.support.origin import Origin, RequestContext

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REDIRECTOR = "127.45.45.45"
"""The loopback address of the allowed host; no row of the table may reach it."""
ALLOWED_NAME = "allowed.test"
"""A public-looking name the test resolver points at REDIRECTOR."""
ONLY_REDIRECTOR = (ip_network(f"{REDIRECTOR}/32"),)


# ------------------------------------------------------------------------------------------
# The attack table
# ------------------------------------------------------------------------------------------

IPV4_SPELLING = "IPv4 literal spellings (decimal, octal, hex, mixed, short)"
UNSPECIFIED = "0.0.0.0, 0 and the unspecified address"
IPV4_RANGE = "non-public IPv4 ranges"
IPV6 = "IPv6 loopback, link-local (with zone ids), ULA and other non-global ranges"
IPV6_EMBEDDED = "IPv6 forms of private IPv4 (mapped, compatible, 6to4, Teredo, NAT64)"
METADATA = "cloud metadata endpoints"
DNS = "host names resolving to non-public addresses"
USERINFO_BACKSLASH = "userinfo and backslash tricks"
ENCODING_IDN = "percent-encoded and IDN host names"
TRAILING_DOT = "trailing dots"
PORTS = "explicit ports"


@dataclass(frozen=True)
class Attack:
    """One way to aim a fetch at a non-public address."""

    category: str
    url: str
    reaches: str
    """The address the URL really leads to: what the parser makes of the host, or the
    resolver's (refused) answer for a host name."""
    rule: str
    """Words the refusal must contain (the policy rule that applies)."""
    answers: tuple[str, ...] = ()
    """The test resolver's answer for the URL's host name; empty when the host is a literal."""

    @property
    def name(self) -> str | None:
        """The host name the resolver is asked about, as the fetcher will ask it."""
        return parse_url(self.url).raw_host.decode("ascii") if self.answers else None

    @property
    def hidden(self) -> bool:
        """Refused while parsing: the URL is also malformed or ambiguous (credentials, backslashes)."""
        return self.category == USERINFO_BACKSLASH

    def __str__(self) -> str:
        return self.url


def _row(category: str, url: str, reaches: str, rule: str, *answers: str) -> Attack:
    return Attack(category, url, reaches, rule, tuple(answers))


LOOPBACK = "loopback"
RFC1918 = "private network (RFC 1918)"
CLOUD = "cloud metadata"
MAPPED = "IPv4-mapped IPv6 form of a"

ATTACKS: list[Attack] = [
    # -- IPv4 spellings a browser or libc accepts, all of which parse_url must see through
    _row(IPV4_SPELLING, "http://127.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(IPV4_SPELLING, "http://127.255.255.254/", "127.255.255.254", LOOPBACK),
    _row(IPV4_SPELLING, "http://2130706433/", "127.0.0.1", LOOPBACK),  # one decimal number
    _row(IPV4_SPELLING, "http://0177.0.0.1/", "127.0.0.1", LOOPBACK),  # octal
    _row(IPV4_SPELLING, "http://017700000001/", "127.0.0.1", LOOPBACK),  # one octal number
    _row(IPV4_SPELLING, "http://0x7f.0.0.1/", "127.0.0.1", LOOPBACK),  # hex
    _row(IPV4_SPELLING, "http://0x7f000001/", "127.0.0.1", LOOPBACK),  # one hex number
    _row(IPV4_SPELLING, "http://0X7F.0X0.0X0.0X1/", "127.0.0.1", LOOPBACK),  # upper-case hex
    _row(IPV4_SPELLING, "http://0x7f.1/", "127.0.0.1", LOOPBACK),  # hex, short
    _row(IPV4_SPELLING, "http://0177.0x0.1/", "127.0.0.1", LOOPBACK),  # octal, hex and decimal
    _row(IPV4_SPELLING, "http://127.1/", "127.0.0.1", LOOPBACK),  # short, two parts
    _row(IPV4_SPELLING, "http://127.0.1/", "127.0.0.1", LOOPBACK),  # short, three parts
    _row(IPV4_SPELLING, "http://127.000.000.001/", "127.0.0.1", LOOPBACK),  # zero-padded (octal)
    _row(IPV4_SPELLING, "http://167772165/", "10.0.0.5", RFC1918),
    _row(IPV4_SPELLING, "http://012.0.0.5/", "10.0.0.5", RFC1918),
    _row(IPV4_SPELLING, "http://0xa.0.0.5/", "10.0.0.5", RFC1918),
    _row(IPV4_SPELLING, "http://10.5/", "10.0.0.5", RFC1918),
    _row(IPV4_SPELLING, "http://0xc0.0xa8.1.1/", "192.168.1.1", RFC1918),
    _row(IPV4_SPELLING, "http://3232235777/", "192.168.1.1", RFC1918),
    _row(IPV4_SPELLING, "http://0300.0250.0001.0001/", "192.168.1.1", RFC1918),
    _row(IPV4_SPELLING, "http://192.168.257/", "192.168.1.1", RFC1918),  # 257 = 1 * 256 + 1
    _row(IPV4_SPELLING, "http://0xac100001/", "172.16.0.1", RFC1918),
    # -- "this host" addresses (Linux connects 0.0.0.0 to the local machine)
    _row(UNSPECIFIED, "http://0.0.0.0/", "0.0.0.0", "unspecified"),
    _row(UNSPECIFIED, "http://0/", "0.0.0.0", "unspecified"),
    _row(UNSPECIFIED, "http://0x0/", "0.0.0.0", "unspecified"),
    _row(UNSPECIFIED, "http://00000000000/", "0.0.0.0", "unspecified"),
    _row(UNSPECIFIED, "http://0.0/", "0.0.0.0", "unspecified"),
    _row(UNSPECIFIED, "http://0.1.2.3/", "0.1.2.3", "this network"),
    _row(UNSPECIFIED, "http://[::]/", "::", "unspecified"),
    _row(UNSPECIFIED, "http://[0:0:0:0:0:0:0:0]/", "::", "unspecified"),
    _row(UNSPECIFIED, "http://[::ffff:0.0.0.0]/", "::ffff:0.0.0.0", f"{MAPPED}n unspecified"),
    # -- the other IPv4 ranges that are not the public internet
    _row(IPV4_RANGE, "http://10.255.255.255/", "10.255.255.255", RFC1918),
    _row(IPV4_RANGE, "http://172.31.255.254/", "172.31.255.254", RFC1918),
    _row(IPV4_RANGE, "http://192.168.0.1/", "192.168.0.1", RFC1918),
    _row(IPV4_RANGE, "http://100.64.0.1/", "100.64.0.1", "carrier-grade NAT"),
    _row(IPV4_RANGE, "http://169.254.1.1/", "169.254.1.1", "link-local"),
    _row(IPV4_RANGE, "http://224.0.0.1/", "224.0.0.1", "multicast"),
    _row(IPV4_RANGE, "http://255.255.255.255/", "255.255.255.255", "broadcast"),
    _row(IPV4_RANGE, "http://240.0.0.1/", "240.0.0.1", "reserved"),
    _row(IPV4_RANGE, "http://198.18.0.1/", "198.18.0.1", "benchmarking"),
    _row(IPV4_RANGE, "http://192.0.2.1/", "192.0.2.1", "documentation"),
    _row(IPV4_RANGE, "http://192.0.0.8/", "192.0.0.8", "IETF protocol assignment"),
    # -- IPv6
    _row(IPV6, "http://[::1]/", "::1", LOOPBACK),
    _row(IPV6, "http://[0:0:0:0:0:0:0:1]/", "::1", LOOPBACK),
    _row(IPV6, "http://[0000::0001]/", "::1", LOOPBACK),
    _row(IPV6, "http://[fe80::1]/", "fe80::1", "link-local"),
    _row(IPV6, "http://[fe80::1%25eth0]/", "fe80::1%eth0", "link-local"),  # RFC 6874 zone id
    _row(IPV6, "http://[fe80::1%eth0]/", "fe80::1%eth0", "link-local"),  # zone id, bare '%'
    _row(IPV6, "http://[fe80::a:b:c:d%251]/", "fe80::a:b:c:d%1", "link-local"),  # numeric zone
    _row(IPV6, "http://[FE80::1%25lo]/", "fe80::1%lo", "link-local"),
    _row(IPV6, "http://[::1%25lo]/", "::1%lo", "scoped (zone id)"),
    _row(IPV6, "http://[ff02::1%25eth0]/", "ff02::1%eth0", "scoped (zone id)"),
    _row(IPV6, "http://[fc00::1]/", "fc00::1", "unique local IPv6 (ULA)"),
    _row(IPV6, "http://[fd12:3456:789a::1]/", "fd12:3456:789a::1", "unique local IPv6 (ULA)"),
    _row(IPV6, "http://[fec0::1]/", "fec0::1", "site-local"),
    _row(IPV6, "http://[ff02::1]/", "ff02::1", "multicast"),
    _row(IPV6, "http://[2001:db8::1]/", "2001:db8::1", "documentation"),
    # -- IPv6 spellings that carry a private IPv4 address
    _row(IPV6_EMBEDDED, "http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", f"{MAPPED} {LOOPBACK}"),
    _row(IPV6_EMBEDDED, "http://[::ffff:7f00:1]/", "::ffff:127.0.0.1", f"{MAPPED} {LOOPBACK}"),
    _row(
        IPV6_EMBEDDED,
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        "::ffff:127.0.0.1",
        f"{MAPPED} {LOOPBACK}",
    ),
    _row(IPV6_EMBEDDED, "http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1", f"{MAPPED} {RFC1918}"),
    _row(IPV6_EMBEDDED, "http://[::ffff:c0a8:101]/", "::ffff:192.168.1.1", f"{MAPPED} {RFC1918}"),
    _row(IPV6_EMBEDDED, "http://[::127.0.0.1]/", "::7f00:1", "IPv4-compatible IPv6 form of a loopback"),
    _row(IPV6_EMBEDDED, "http://[::7f00:1]/", "::7f00:1", "IPv4-compatible IPv6 form of a loopback"),
    _row(IPV6_EMBEDDED, "http://[::10.0.0.1]/", "::a00:1", f"IPv4-compatible IPv6 form of a {RFC1918}"),
    _row(
        IPV6_EMBEDDED,
        "http://[::ffff:0:127.0.0.1]/",
        "::ffff:0:7f00:1",
        "IPv4-translated IPv6 form of a loopback",
    ),
    _row(IPV6_EMBEDDED, "http://[2002:7f00:1::]/", "2002:7f00:1::", "6to4 form of a loopback"),
    _row(IPV6_EMBEDDED, "http://[2002:a00:1::1]/", "2002:a00:1::1", f"6to4 form of a {RFC1918}"),
    _row(IPV6_EMBEDDED, "http://[2002:c0a8:101::]/", "2002:c0a8:101::", f"6to4 form of a {RFC1918}"),
    # Teredo (RFC 4380): server address in bits 32-63, client address inverted in the last 32.
    _row(IPV6_EMBEDDED, "http://[2001:0:7f00:1::]/", "2001:0:7f00:1::", "Teredo form of a loopback"),
    _row(
        IPV6_EMBEDDED,
        "http://[2001:0:808:808:0:0:f5ff:fffe]/",
        "2001:0:808:808::f5ff:fffe",
        f"Teredo form of a {RFC1918}",
    ),
    _row(
        IPV6_EMBEDDED,
        "http://[2001:0:4136:e378:8000:63bf:3f57:fefe]/",
        "2001:0:4136:e378:8000:63bf:3f57:fefe",
        f"Teredo form of a {RFC1918}",
    ),
    _row(IPV6_EMBEDDED, "http://[64:ff9b::127.0.0.1]/", "64:ff9b::7f00:1", "NAT64 form of a loopback"),
    _row(IPV6_EMBEDDED, "http://[64:ff9b::a00:1]/", "64:ff9b::a00:1", f"NAT64 form of a {RFC1918}"),
    _row(IPV6_EMBEDDED, "http://[64:ff9b::192.168.1.1]/", "64:ff9b::c0a8:101", f"NAT64 form of a {RFC1918}"),
    _row(IPV6_EMBEDDED, "http://[64:ff9b:1::a00:1]/", "64:ff9b:1::a00:1", f"NAT64 form of a {RFC1918}"),
    # -- cloud metadata services, in every spelling
    _row(METADATA, "http://169.254.169.254/latest/meta-data/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://2852039166/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://0xa9fea9fe/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://0251.0376.0251.0376/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://169.254.43518/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://0xa9.254.0251.0xfe/", "169.254.169.254", CLOUD),
    _row(METADATA, "http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254", f"{MAPPED} {CLOUD}"),
    _row(METADATA, "http://[::ffff:a9fe:a9fe]/", "::ffff:169.254.169.254", f"{MAPPED} {CLOUD}"),
    _row(METADATA, "http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe", f"NAT64 form of a {CLOUD}"),
    _row(METADATA, "http://[2002:a9fe:a9fe::]/", "2002:a9fe:a9fe::", f"6to4 form of a {CLOUD}"),
    _row(METADATA, "http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254", CLOUD),  # AWS, IPv6
    _row(METADATA, "http://[fd20:ce::254]/computeMetadata/v1/", "fd20:ce::254", CLOUD),  # GCP, IPv6
    _row(METADATA, "http://169.254.170.2/v2/credentials", "169.254.170.2", CLOUD),  # AWS ECS
    _row(METADATA, "http://100.100.100.200/latest/meta-data/", "100.100.100.200", CLOUD),  # Alibaba
    _row(METADATA, "http://192.0.0.192/opc/v2/instance/", "192.0.0.192", CLOUD),  # Oracle
    _row(METADATA, "http://168.63.129.16/machine?comp=goalstate", "168.63.129.16", CLOUD),  # Azure
    _row(
        METADATA,
        "http://metadata.google.internal/computeMetadata/v1/",
        "169.254.169.254",
        CLOUD,
        "169.254.169.254",
    ),
    _row(METADATA, "http://instance-data.ec2.internal/latest/", "169.254.169.254", CLOUD, "169.254.169.254"),
    # -- names whose DNS answer is not public
    _row(DNS, "http://localhost/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(DNS, "http://intranet.example/", "10.0.0.5", RFC1918, "10.0.0.5"),
    _row(DNS, "http://router.example/", "192.168.1.1", RFC1918, "192.168.1.1"),
    _row(DNS, "http://127.0.0.1.nip.io/", "127.0.0.1", LOOPBACK, "127.0.0.1"),  # wildcard DNS services
    _row(DNS, "http://10.0.0.1.sslip.io/", "10.0.0.1", RFC1918, "10.0.0.1"),
    _row(DNS, "http://v6only.example/", "::1", LOOPBACK, "::1"),
    _row(DNS, "http://mapped.example/", "::ffff:10.1.2.3", f"{MAPPED} {RFC1918}", "::ffff:10.1.2.3"),
    _row(
        DNS, "http://nat64.example/", "64:ff9b::a9fe:a9fe", f"NAT64 form of a {CLOUD}", "64:ff9b::a9fe:a9fe"
    ),
    _row(DNS, "http://scoped.example/", "fe80::1%2", "link-local", "fe80::1%2"),
    _row(DNS, "http://cgnat.example/", "100.64.1.1", "carrier-grade NAT", "100.64.1.1"),
    _row(DNS, "http://ula.example/", "fd00::1234", "unique local IPv6", "fd00::1234"),
    _row(DNS, "http://zero.example/", "0.0.0.0", "unspecified", "0.0.0.0"),
    # one public and one private answer: refused as a whole, the private one named
    _row(DNS, "http://mixed.example/", "10.0.0.5", RFC1918, "93.184.216.34", "10.0.0.5"),
    _row(DNS, "http://mixed6.example/", "fe80::1", "link-local", "2606:4700::1111", "fe80::1"),
    # -- userinfo and backslash tricks: refused while parsing, as blocked addresses
    _row(USERINFO_BACKSLASH, "http://allowed@127.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http://allowed:secret@127.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http://allowed.example@169.254.169.254/", "169.254.169.254", CLOUD),
    _row(USERINFO_BACKSLASH, "http://a@allowed.example@10.0.0.1/", "10.0.0.1", RFC1918),
    _row(USERINFO_BACKSLASH, "http://allowed@[::1]:80/", "::1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http://allowed@0x7f.1/", "127.0.0.1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http://allowed\\@127.0.0.1/", "127.0.0.1", LOOPBACK),  # RFC 3986 reading
    _row(USERINFO_BACKSLASH, "http:\\\\127.0.0.1\\", "127.0.0.1", LOOPBACK),  # browser reading
    _row(USERINFO_BACKSLASH, "http:/\\127.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http://127.0.0.1\\.allowed.example/", "127.0.0.1", LOOPBACK),
    _row(USERINFO_BACKSLASH, "http:127.0.0.1/", "127.0.0.1", LOOPBACK),  # browsers need no "//"
    _row(USERINFO_BACKSLASH, "http:/10.0.0.1/", "10.0.0.1", RFC1918),
    _row(USERINFO_BACKSLASH, "http:///169.254.169.254/", "169.254.169.254", CLOUD),
    # -- percent-encoding and IDNA mapping of the host
    _row(ENCODING_IDN, "http://%31%32%37.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(ENCODING_IDN, "http://127%2E0%2E0%2E1/", "127.0.0.1", LOOPBACK),
    _row(ENCODING_IDN, "http://0x%37f.1/", "127.0.0.1", LOOPBACK),
    _row(ENCODING_IDN, "http://%31%30.0.0.5/", "10.0.0.5", RFC1918),
    _row(ENCODING_IDN, "http://１２７．０．０．１/", "127.0.0.1", LOOPBACK),  # full-width digits and dots
    _row(ENCODING_IDN, "http://①②⑦.⓪.⓪.①/", "127.0.0.1", LOOPBACK),  # circled digits
    _row(ENCODING_IDN, "http://127。0。0。1/", "127.0.0.1", LOOPBACK),  # ideographic full stops
    _row(ENCODING_IDN, "http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(ENCODING_IDN, "http://ｌｏｃａｌｈｏｓｔ/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(ENCODING_IDN, "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(ENCODING_IDN, "http://LOCALHOST/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(ENCODING_IDN, "http://%6c%6f%63%61%6c%68%6f%73%74/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(ENCODING_IDN, "http://bücher.intranet.example/", "10.0.0.8", RFC1918, "10.0.0.8"),
    # -- trailing dots
    _row(TRAILING_DOT, "http://127.0.0.1./", "127.0.0.1", LOOPBACK),
    _row(TRAILING_DOT, "http://0x7f.1./", "127.0.0.1", LOOPBACK),
    _row(TRAILING_DOT, "http://2130706433./", "127.0.0.1", LOOPBACK),
    _row(TRAILING_DOT, "http://127.0.0.1。/", "127.0.0.1", LOOPBACK),
    _row(TRAILING_DOT, "http://localhost./", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
    _row(TRAILING_DOT, "http://metadata.google.internal./", "169.254.169.254", CLOUD, "169.254.169.254"),
    # -- explicit ports (what the port is does not matter to the policy)
    _row(PORTS, "http://127.0.0.1:80/", "127.0.0.1", LOOPBACK),
    _row(PORTS, "http://127.0.0.1:8080/admin", "127.0.0.1", LOOPBACK),
    _row(PORTS, "http://127.0.0.1:00080/", "127.0.0.1", LOOPBACK),
    _row(PORTS, "http://127.0.0.1:/", "127.0.0.1", LOOPBACK),  # empty port: the default
    _row(PORTS, "http://0x7f.1:22/", "127.0.0.1", LOOPBACK),
    _row(PORTS, "http://10.0.0.1:65535/", "10.0.0.1", RFC1918),
    _row(PORTS, "http://[::1]:6379/", "::1", LOOPBACK),
    _row(PORTS, "https://127.0.0.1/", "127.0.0.1", LOOPBACK),
    _row(PORTS, "https://169.254.169.254:443/", "169.254.169.254", CLOUD),
    _row(PORTS, "http://localhost:11211/", "127.0.0.1", LOOPBACK, "127.0.0.1", "::1"),
]

MINIMUM_FORMS = 60
CATEGORIES = (
    IPV4_SPELLING,
    UNSPECIFIED,
    IPV4_RANGE,
    IPV6,
    IPV6_EMBEDDED,
    METADATA,
    DNS,
    USERINFO_BACKSLASH,
    ENCODING_IDN,
    TRAILING_DOT,
    PORTS,
)
NAMED = [attack for attack in ATTACKS if attack.answers]
LITERAL = [attack for attack in ATTACKS if not attack.answers]


def _resolver_table(attacks: Iterable[Attack]) -> dict[str, list[list[str]]]:
    table: dict[str, list[list[str]]] = {ALLOWED_NAME: [[REDIRECTOR]]}
    for attack in attacks:
        if attack.name is not None:
            answers = [list(attack.answers)]
            assert table.setdefault(attack.name, answers) == answers, f"{attack.name} answered twice"
    return table


def _ids(attacks: Sequence[Attack]) -> list[str]:
    return [attack.url for attack in attacks]


@pytest.fixture(autouse=True)
def one_ssl_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Build the TLS context once: loading the CA bundle is most of what a new Fetcher costs,
    this module makes a few hundred of them, and none of them ever completes a TLS handshake."""
    context = _ssl_context()
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *args, **kwargs: context)


@cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context(trust_env=True)


def assert_plain_sentence(message: str) -> None:
    """A refusal a person can read: one line of prose, no traceback or exception dump."""
    assert message, "empty refusal"
    assert "\n" not in message, message
    for marker in ("Traceback", 'File "', "Error(", "<class"):
        assert marker not in message, message
    assert message.startswith("refusing to connect to "), message
    assert message.endswith("."), message
    assert len(message) < 400, message


def assert_plain_tool_error(text: str) -> None:
    code, _, message = text.partition(": ")
    assert code == "blocked_address", text
    assert_plain_sentence(message)


# ------------------------------------------------------------------------------------------
# The table itself
# ------------------------------------------------------------------------------------------


def test_the_table_holds_at_least_60_distinct_forms() -> None:
    # Guards against the table being shrunk silently: lower MINIMUM_FORMS only on purpose.
    urls = [attack.url for attack in ATTACKS]
    assert len(set(urls)) == len(urls), "a form is listed twice"
    assert len(urls) >= MINIMUM_FORMS
    counts = {category: sum(attack.category == category for attack in ATTACKS) for category in CATEGORIES}
    assert set(counts) == {attack.category for attack in ATTACKS}
    assert all(count >= 4 for count in counts.values()), counts


def test_no_row_aims_at_the_allowed_redirector() -> None:
    for attack in ATTACKS:
        assert ip_address(attack.reaches) != ip_address(REDIRECTOR), attack
        assert REDIRECTOR not in attack.answers, attack


@pytest.mark.parametrize("attack", ATTACKS, ids=_ids(ATTACKS))
def test_each_form_reaches_the_address_it_claims(attack: Attack) -> None:
    """The table is honest: the parser, or the resolver, really leads each URL where the row says."""
    reaches = ip_address(attack.reaches)
    if attack.hidden:
        with pytest.raises(HiddenAddress) as caught:
            parse_url(attack.url)
        assert f"refusing to connect to {attack.reaches}:" in caught.value.message
        return
    host = parse_url(attack.url).host
    if attack.answers:
        assert literal_ip(host) is None, f"{attack.url} must be a host name"
        assert reaches in [ip_address(answer) for answer in attack.answers]
    else:
        address = literal_ip(host)
        assert address == reaches and str(address) == str(reaches), (attack.url, host)


# ------------------------------------------------------------------------------------------
# Through the Fetcher
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", ATTACKS, ids=_ids(ATTACKS))
async def test_fetcher_refuses_each_form_before_connecting(attack: Attack) -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table([attack]))
    async with Fetcher(FetchConfig(), resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(attack.url)
    message = caught.value.message
    assert attack.rule in message, message
    assert_plain_sentence(message)
    assert str(caught.value).startswith("blocked_address: ")
    assert backend.connects == []
    # Literals and cloud metadata names are judged without a lookup; any other name is looked
    # up once, by the connection itself.
    looked_up = attack.name is not None and metadata_name(attack.name) is None
    assert resolver.calls == ([attack.name] if looked_up else [])


@pytest.mark.parametrize("attack", NAMED, ids=_ids(NAMED))
async def test_fetcher_refuses_names_through_a_proxy_too(attack: Attack) -> None:
    # With a proxy the target is resolved by the proxy; we resolve and vet it first.
    backend = GuardBackend(permitted=(REDIRECTOR,))
    with QuickOrigin(REDIRECTOR) as proxy:
        resolver = StubResolver(_resolver_table([attack]))
        settings = FetchConfig(proxy=proxy.base, allow_cidrs=ONLY_REDIRECTOR)
        async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
            with pytest.raises(BlockedAddress) as caught:
                await fetcher.fetch(attack.url)
        assert attack.rule in caught.value.message
        assert proxy.requests == []
    assert backend.connects == []


async def refusal_failures(fetcher: Fetcher, attempts: list[tuple[str, str, str]]) -> list[str]:
    """What went wrong fetching each (url, label, rule): fetched, refused by another rule than
    ``rule`` (any rule when it is ""), or failed some other way; [] when every one was refused."""
    failures: list[str] = []
    for url, label, rule in attempts:
        try:
            await fetcher.fetch(url)
            failures.append(f"{label}: fetched")
        except BlockedAddress as error:
            if rule not in error.message:
                failures.append(f"{label}: wrong rule: {error.message}")
        except WebToolError as error:
            failures.append(f"{label}: {error}")
    return failures


async def test_every_literal_form_is_refused_through_a_proxy() -> None:
    backend = GuardBackend(permitted=(REDIRECTOR,))
    with QuickOrigin(REDIRECTOR) as proxy:
        settings = FetchConfig(proxy=proxy.base, allow_cidrs=ONLY_REDIRECTOR)
        async with Fetcher(settings, resolver=StubResolver(), network_backend=backend, environ={}) as fetcher:
            failures = await refusal_failures(fetcher, [(attack.url, attack.url, "") for attack in LITERAL])
        assert proxy.requests == []
    assert failures == []
    assert backend.connects == []


# ------------------------------------------------------------------------------------------
# Through the MCP tools
# ------------------------------------------------------------------------------------------


@asynccontextmanager
async def mcp_client(
    backend: GuardBackend, resolver: StubResolver, **overrides: Any
) -> AsyncIterator[Client]:
    """The real server with both fetching tools, every connection it opens going through backend."""
    values: dict[str, Any] = {
        "tools": ("web_fetch", "http_request"),
        "allow_cidrs": ONLY_REDIRECTOR,
        "timeout": 5.0,
        **overrides,
    }
    server = build_server(Settings(**values), resolver=resolver, network_backend=backend)
    async with Client(server) as client:
        yield client


async def _refusals(client: Client, tool: str, attacks: Iterable[Attack], **arguments: Any) -> list[str]:
    """Call tool with each attack's URL; describe every call that was not a plain blocked_address."""
    failures = []
    for attack in attacks:
        result = await client.call_tool(tool, {"url": attack.url, **arguments})
        text = text_of(result)
        if not result.is_error or error_code(result) != "blocked_address":
            failures.append(f"{attack.url}: {text[:200]}")
            continue
        try:
            assert_plain_tool_error(text)
        except AssertionError:
            failures.append(f"{attack.url}: not a plain sentence: {text[:300]}")
    return failures


async def test_web_fetch_refuses_every_literal_form() -> None:
    backend = GuardBackend(permitted=())
    async with mcp_client(backend, StubResolver()) as client:
        failures = await _refusals(client, "web_fetch", LITERAL)
    assert failures == []
    assert backend.connects == []


async def test_web_fetch_refuses_every_name_when_robots_txt_is_off() -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table(NAMED))
    async with mcp_client(backend, resolver, respect_robots=False) as client:
        failures = await _refusals(client, "web_fetch", NAMED)
    assert failures == []
    assert backend.connects == []


async def test_web_fetch_refuses_every_name_with_robots_txt_on() -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table(NAMED))
    async with mcp_client(backend, resolver) as client:
        failures = await _refusals(client, "web_fetch", NAMED)
    assert backend.connects == []  # refused before connecting either way
    assert failures == []


@pytest.mark.parametrize("method", HTTP_METHODS)
async def test_http_request_refuses_every_form_with_each_method(method: str) -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table(NAMED))
    body = {} if method in ("GET", "HEAD") else {"body": '{"action": "delete-everything"}'}
    async with mcp_client(backend, resolver) as client:
        failures = await _refusals(client, "http_request", ATTACKS, method=method, **body)
    assert failures == []
    assert backend.connects == []


@pytest.mark.parametrize("method", sorted({"OPTIONS", "TRACE", "CONNECT", "PROPFIND"} - set(HTTP_METHODS)))
async def test_http_request_methods_it_does_not_support_never_connect(method: str) -> None:
    backend = GuardBackend(permitted=())
    async with mcp_client(backend, StubResolver()) as client:
        result = await client.call_tool("http_request", {"url": "http://169.254.169.254/", "method": method})
    assert error_code(result) == "invalid_argument"
    assert backend.connects == []


# ------------------------------------------------------------------------------------------
# Redirects from an allowed host
# ------------------------------------------------------------------------------------------


def _raw_redirect(status: int, location: str) -> Any:
    """A redirect whose Location is sent as UTF-8 bytes, as real servers do for non-ASCII targets.

    (http.server's send_header only takes Latin-1.)
    """

    def handler(ctx: RequestContext) -> None:
        ctx.write(
            b"HTTP/1.1 %d Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n"
            % (status, location.encode("utf-8"))
        )

    return handler


def _scheme_relative(url: str) -> str | None:
    """The URL without its scheme, when what is left still names a host ("//host/", "\\\\host\\")."""
    rest = url.split(":", 1)[1]
    return rest if rest.startswith("//") or "\\" in rest[:2] else None


def _redirect_targets(form: str) -> list[tuple[Attack, str]]:
    if form == "absolute":
        return [(attack, attack.url) for attack in ATTACKS]
    return [(attack, target) for attack in ATTACKS if (target := _scheme_relative(attack.url)) is not None]


@pytest.fixture
def redirector() -> Iterator[Origin]:
    with QuickOrigin(REDIRECTOR) as origin:
        yield origin


def _start(origin: Origin, path: str) -> str:
    return f"http://{ALLOWED_NAME}:{origin.port}{path}"


@pytest.mark.parametrize("form", ["absolute", "scheme-relative"])
@pytest.mark.parametrize("status", sorted(REDIRECT_STATUSES))
async def test_redirect_from_an_allowed_host_to_each_form_is_refused(
    redirector: Origin, status: int, form: str
) -> None:
    targets = _redirect_targets(form)
    assert len(targets) >= MINIMUM_FORMS
    for index, (_, target) in enumerate(targets):
        redirector.route(f"/r{index}", _raw_redirect(status, target))
    backend = GuardBackend(permitted=(REDIRECTOR,))
    resolver = StubResolver(_resolver_table(ATTACKS))
    settings = FetchConfig(allow_cidrs=ONLY_REDIRECTOR, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        failures = await refusal_failures(
            fetcher,
            [
                (_start(redirector, f"/r{index}"), target, attack.rule)
                for index, (attack, target) in enumerate(targets)
            ],
        )
    assert failures == []
    # Every hop to the allowed host happened; nothing else was ever connected to.
    assert redirector.hits("/r0") == 1 and len(redirector.requests) == len(targets)
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


# The main forms, one or two per kind of trick: the tool-level redirect matrices use these (the
# Fetcher-level matrix above takes every row).
MAIN_FORMS = [
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.1/",
    "http://0/",
    "http://[::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[64:ff9b::192.168.1.1]/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://allowed@127.0.0.1/",
    "http:\\\\127.0.0.1\\",
    "http://１２７．０．０．１/",
    "http://127.0.0.1:8080/admin",
    "http://intranet.example/",
    "http://localhost./",
]
MAIN = [attack for attack in ATTACKS if attack.url in MAIN_FORMS]


def _redirect_matrix(origin: Origin, attacks: Iterable[Attack]) -> list[tuple[str, str]]:
    """Routes on origin redirecting to each attack, with every status, absolute and scheme-relative."""
    routes: list[tuple[str, str]] = []
    for status in sorted(REDIRECT_STATUSES):
        for attack in attacks:
            for target in (attack.url, _scheme_relative(attack.url)):
                if target is not None:
                    path = f"/r{len(routes)}"
                    origin.route(path, _raw_redirect(status, target))
                    routes.append((path, f"{status} -> {target}"))
    return routes


def test_the_main_forms_are_in_the_table() -> None:
    assert len(MAIN) == len(MAIN_FORMS)


async def test_web_fetch_follows_no_redirect_to_the_main_literal_forms(redirector: Origin) -> None:
    routes = _redirect_matrix(redirector, [attack for attack in MAIN if not attack.answers])
    backend = GuardBackend(permitted=(REDIRECTOR,))
    failures: list[str] = []
    async with mcp_client(backend, StubResolver(_resolver_table([]))) as client:
        for path, label in routes:
            result = await client.call_tool("web_fetch", {"url": _start(redirector, path)})
            if not result.is_error or error_code(result) != "blocked_address":
                failures.append(f"{label}: {text_of(result)[:200]}")
            else:
                assert_plain_tool_error(text_of(result))
    assert failures == []
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


async def test_web_fetch_follows_no_redirect_to_a_name_with_robots_txt_on(redirector: Origin) -> None:
    for index, attack in enumerate(NAMED):
        redirector.route(f"/r{index}", _raw_redirect(302, attack.url))
    backend = GuardBackend(permitted=(REDIRECTOR,))
    async with mcp_client(backend, StubResolver(_resolver_table(NAMED))) as client:
        codes = [
            error_code(await client.call_tool("web_fetch", {"url": _start(redirector, f"/r{index}")}))
            for index in range(len(NAMED))
        ]
    assert {host for host, _ in backend.connects} == {REDIRECTOR}
    assert set(codes) == {"blocked_address"}


@pytest.mark.parametrize(
    ("location", "code"),
    [
        # httpx parses every Location itself: these used to escape as an untyped httpx.InvalidURL
        # (internal_error) or as "not valid HTTP" (http_error).
        ("http:127.0.0.1/", "blocked_address"),
        ("http://0177.0.0.1/", "blocked_address"),
        ("http://１２７．０．０．１/", "blocked_address"),
        ("http:example.com/", "invalid_url"),
        ("http://[::1/", "invalid_url"),
    ],
)
async def test_redirect_targets_httpx_cannot_parse_are_refused_with_a_code(
    redirector: Origin, location: str, code: str
) -> None:
    redirector.route("/go", _raw_redirect(302, location))
    backend = GuardBackend(permitted=(REDIRECTOR,))
    async with mcp_client(backend, StubResolver(_resolver_table([]))) as client:
        result = await client.call_tool("http_request", {"url": _start(redirector, "/go")})
    assert error_code(result) == code, text_of(result)
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


@pytest.mark.parametrize("method", HTTP_METHODS)
async def test_http_request_follows_no_redirect_to_the_main_forms(redirector: Origin, method: str) -> None:
    routes = _redirect_matrix(redirector, MAIN)
    backend = GuardBackend(permitted=(REDIRECTOR,))
    body = {} if method in ("GET", "HEAD") else {"body": "x=1"}
    failures: list[str] = []
    async with mcp_client(backend, StubResolver(_resolver_table(MAIN))) as client:
        for path, label in routes:
            result = await client.call_tool(
                "http_request", {"url": _start(redirector, path), "method": method, **body}
            )
            if not result.is_error or error_code(result) != "blocked_address":
                failures.append(f"{label}: {text_of(result)[:200]}")
    assert failures == []
    assert all(seen.method == method for seen in redirector.requests)
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


# ------------------------------------------------------------------------------------------
# DNS answers that change between check and connect (DNS rebinding)
# ------------------------------------------------------------------------------------------

REBOUND_TO = ["10.0.0.5", "169.254.169.254", "127.0.0.1", "::1", "fd00:ec2::254", "100.100.100.200"]


def _closing(body: str) -> Any:
    """A 200 that closes the connection, so the next request must connect (and resolve) again."""

    def handler(ctx: RequestContext) -> None:
        data = body.encode()
        ctx.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
        )
        ctx.close_connection()

    return handler


@pytest.mark.parametrize("private", REBOUND_TO)
async def test_a_name_that_turns_private_after_a_fetch_is_refused_at_connect(
    redirector: Origin, private: str
) -> None:
    redirector.route("/", _closing("public page"))
    resolver = StubResolver({"rebind.test": [[REDIRECTOR], [private]]})
    backend = GuardBackend(permitted=(REDIRECTOR,))
    url = f"http://rebind.test:{redirector.port}/"
    settings = FetchConfig(allow_cidrs=ONLY_REDIRECTOR, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        assert (await fetcher.fetch(url)).body == b"public page"
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(url)
    assert "(host rebind.test)" in caught.value.message
    assert_plain_sentence(caught.value.message)
    assert resolver.calls == ["rebind.test", "rebind.test"]
    assert backend.connects == [(REDIRECTOR, redirector.port)]


async def test_a_name_that_turns_private_mid_redirect_is_refused(redirector: Origin) -> None:
    # The first hop is vetted and fetched; the redirect to the same name must not reuse that verdict.
    def hop(ctx: RequestContext) -> None:
        ctx.write(b"HTTP/1.1 302 Found\r\nLocation: /next\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        ctx.close_connection()

    redirector.route("/start", hop)
    redirector.route("/next", _closing("must not be fetched"))
    resolver = StubResolver({"rebind.test": [[REDIRECTOR], ["169.254.169.254"]]})
    backend = GuardBackend(permitted=(REDIRECTOR,))
    settings = FetchConfig(allow_cidrs=ONLY_REDIRECTOR, timeout=5.0)
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress, match="cloud metadata"):
            await fetcher.fetch(f"http://rebind.test:{redirector.port}/start")
    assert redirector.hits("/start") == 1 and redirector.hits("/next") == 0
    assert backend.connects == [(REDIRECTOR, redirector.port)]


async def test_an_open_connection_stays_pinned_to_the_vetted_address(redirector: Origin) -> None:
    # Kept alive, the connection is reused without a new lookup: the changed answer is never
    # used to open a socket, so only the address vetted first is ever connected to.
    redirector.serve("/", "public page", content_type="text/plain")
    resolver = StubResolver({"rebind.test": [[REDIRECTOR], ["10.0.0.5"]]})
    backend = GuardBackend(permitted=(REDIRECTOR,))
    settings = FetchConfig(allow_cidrs=ONLY_REDIRECTOR, timeout=5.0)
    url = f"http://rebind.test:{redirector.port}/"
    async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        for _ in range(3):
            assert (await fetcher.fetch(url)).body == b"public page"
    assert resolver.calls == ["rebind.test"]
    assert backend.connects == [(REDIRECTOR, redirector.port)]


async def test_web_fetch_rebinding_between_robots_check_and_page_is_refused(redirector: Origin) -> None:
    # robots.txt is the "check" that sees the public answer; the page's connection sees the new one.
    redirector.route("/robots.txt", _closing("User-agent: *\nAllow: /\n"))
    redirector.route("/page", _closing("must not be fetched"))
    resolver = StubResolver({"rebind.test": [[REDIRECTOR], ["169.254.169.254"]]})
    backend = GuardBackend(permitted=(REDIRECTOR,))
    async with mcp_client(backend, resolver) as client:
        result = await client.call_tool("web_fetch", {"url": f"http://rebind.test:{redirector.port}/page"})
    assert error_code(result) == "blocked_address"
    assert_plain_tool_error(text_of(result))
    assert redirector.hits("/robots.txt") == 1 and redirector.hits("/page") == 0
    assert backend.connects == [(REDIRECTOR, redirector.port)]


@pytest.mark.parametrize("method", HTTP_METHODS)
async def test_http_request_rebinding_is_refused_with_each_method(redirector: Origin, method: str) -> None:
    redirector.route("/api", _closing("{}"))
    resolver = StubResolver({"rebind.test": [[REDIRECTOR], ["10.0.0.5"]]})
    backend = GuardBackend(permitted=(REDIRECTOR,))
    url = f"http://rebind.test:{redirector.port}/api"
    async with mcp_client(backend, resolver) as client:
        first = await client.call_tool("http_request", {"url": url, "method": method})
        assert not first.is_error, text_of(first)
        second = await client.call_tool("http_request", {"url": url, "method": method})
    assert error_code(second) == "blocked_address"
    assert backend.connects == [(REDIRECTOR, redirector.port)]


# ------------------------------------------------------------------------------------------
# MCP_WEB_ALLOW_PRIVATE=true lets the loopback forms through
# ------------------------------------------------------------------------------------------


def _with_port(url: str, port: int) -> str:
    """url with its port set to port, every other character of its spelling kept."""
    scheme, rest = url.split("://", 1)
    ends = [position for position in (rest.find(char) for char in "/?#") if position != -1]
    end = min(ends, default=len(rest))
    authority, tail = rest[:end], rest[end:]
    host = authority[: authority.index("]") + 1] if authority.startswith("[") else authority.split(":")[0]
    return f"{scheme}://{host}:{port}{tail}"


# IPv4 loopback forms a plain http origin on 127.x can answer (the credential and backslash
# forms are refused whatever the policy: they are malformed too).
LOOPBACK_FORMS = [
    attack
    for attack in ATTACKS
    if ip_address(attack.reaches) in ip_network("127.0.0.0/8")
    and not attack.hidden
    and attack.url.startswith("http://")
]


def test_enough_loopback_forms_are_checked_with_private_allowed() -> None:
    assert len(LOOPBACK_FORMS) >= 30


async def test_allow_private_permits_the_loopback_forms() -> None:
    addresses = sorted({attack.reaches for attack in LOOPBACK_FORMS})
    with QuickOrigin(addresses[0]) as first:
        others = [QuickOrigin(address, first.port) for address in addresses[1:]]
        for other in others:
            other.__enter__()
        try:
            for origin in (first, *others):
                origin.route("/", _closing(f"hello from {origin.host}"))
                origin.route("/admin", _closing(f"hello from {origin.host}"))
            backend = GuardBackend(permitted=addresses)
            resolver = StubResolver(_resolver_table(LOOPBACK_FORMS))
            settings = FetchConfig(allow_private=True, timeout=5.0)
            failures: list[str] = []
            async with Fetcher(settings, resolver=resolver, network_backend=backend, environ={}) as fetcher:
                for attack in LOOPBACK_FORMS:
                    url = _with_port(attack.url, first.port)
                    try:
                        response = await fetcher.fetch(url)
                    except WebToolError as error:
                        failures.append(f"{url}: {error}")
                        continue
                    if response.body != f"hello from {attack.reaches}".encode():
                        failures.append(f"{url}: answered {response.status} {response.body[:60]!r}")
        finally:
            for other in others:
                other.__exit__(None, None, None)
    assert failures == []
    assert {host for host, _ in backend.connects} == set(addresses)
    assert all(ip_address(host) in ip_network("127.0.0.0/8") for host, _ in backend.connects)


async def test_allow_private_through_the_tools(redirector: Origin) -> None:
    # The same switch, through web_fetch and http_request: loopback forms are fetched.
    redirector.route("/", _closing("hello from the loopback origin"))
    backend = GuardBackend(permitted=(REDIRECTOR,))
    resolver = StubResolver({"localhost": [[REDIRECTOR]]})
    spellings = ["127.45.45.45", "2133667117", "0x7f.0x2d.0x2d.0x2d", "0177.055.055.055", "127.45.11565"]
    urls = [f"http://{host}:{redirector.port}/" for host in [*spellings, "localhost"]]
    async with mcp_client(backend, resolver, allow_private=True, allow_cidrs=()) as client:
        for url in urls:
            for tool in ("web_fetch", "http_request"):
                result = await client.call_tool(tool, {"url": url})
                assert not result.is_error, (tool, url, text_of(result))
                assert "hello from the loopback origin" in text_of(result)
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


async def test_without_allow_private_the_same_tool_calls_are_refused(redirector: Origin) -> None:
    backend = GuardBackend(permitted=(REDIRECTOR,))
    async with mcp_client(backend, StubResolver(), allow_cidrs=()) as client:
        for tool in ("web_fetch", "http_request"):
            result = await client.call_tool(tool, {"url": f"http://0x7f.0x2d.0x2d.0x2d:{redirector.port}/"})
            assert error_code(result) == "blocked_address"
    assert backend.connects == []


# ------------------------------------------------------------------------------------------
# MCP_WEB_ALLOW_PRIVATE opens private ranges, never the cloud metadata services (issue 24, 7)
# ------------------------------------------------------------------------------------------

METADATA_FORMS = [attack for attack in ATTACKS if CLOUD in attack.rule]
"""Every row that reaches a metadata service: literals in every spelling, IPv6 forms that carry
one, metadata names, and names whose answer is one."""


def test_enough_metadata_forms_are_checked_with_private_allowed() -> None:
    assert len(METADATA_FORMS) >= 20


@pytest.mark.parametrize("attack", METADATA_FORMS, ids=_ids(METADATA_FORMS))
async def test_allow_private_still_refuses_each_metadata_form_before_connecting(attack: Attack) -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table([attack]))
    config = FetchConfig(allow_private=True, timeout=5.0)
    async with Fetcher(config, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(attack.url)
    assert attack.rule in caught.value.message, caught.value.message
    assert backend.connects == []
    # allow_private would not help: only an explicit allow_cidrs entry opens a metadata service.
    assert "allow_private" not in caught.value.parameters
    looked_up = attack.name is not None and metadata_name(attack.name) is None
    assert resolver.calls == ([attack.name] if looked_up else [])


async def test_allow_private_through_a_proxy_still_refuses_metadata_literals_and_names() -> None:
    # With allow_private the proxy is handed names unresolved (it may be the only one that can
    # resolve outside names): the metadata literals and names are refused before that, without
    # a lookup.
    backend = GuardBackend(permitted=(REDIRECTOR,))
    forms = [a for a in METADATA_FORMS if a.name is None or metadata_name(a.name) is not None]
    with QuickOrigin(REDIRECTOR) as proxy:
        resolver = StubResolver(_resolver_table(forms))
        config = FetchConfig(proxy=proxy.base, allow_private=True, timeout=5.0)
        async with Fetcher(config, resolver=resolver, network_backend=backend, environ={}) as fetcher:
            failures = await refusal_failures(fetcher, [(attack.url, attack.url, CLOUD) for attack in forms])
        assert proxy.requests == []
    assert failures == [] and len(forms) >= 15
    assert backend.connects == [] and resolver.calls == []


async def test_allow_private_follows_no_redirect_to_a_metadata_form(redirector: Origin) -> None:
    targets = [target for attack, target in _redirect_targets("absolute") if attack in METADATA_FORMS]
    for index, target in enumerate(targets):
        redirector.route(f"/m{index}", _raw_redirect(302, target))
    backend = GuardBackend(permitted=(REDIRECTOR,))
    resolver = StubResolver(_resolver_table(ATTACKS))
    config = FetchConfig(allow_private=True, timeout=5.0)
    async with Fetcher(config, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        failures = await refusal_failures(
            fetcher,
            [(_start(redirector, f"/m{index}"), target, CLOUD) for index, target in enumerate(targets)],
        )
    assert failures == [] and len(targets) >= 20
    assert {host for host, _ in backend.connects} == {REDIRECTOR}


async def test_the_tools_refuse_metadata_forms_with_private_allowed_and_say_what_opens_them() -> None:
    backend = GuardBackend(permitted=())
    resolver = StubResolver(_resolver_table(METADATA_FORMS))
    async with mcp_client(backend, resolver, allow_private=True, allow_cidrs=()) as client:
        failures = []
        for tool in ("web_fetch", "http_request"):
            failures += await _refusals(client, tool, METADATA_FORMS)
        result = await client.call_tool("web_fetch", {"url": "http://169.254.169.254/latest/meta-data/"})
    assert failures == []
    assert backend.connects == []
    text = text_of(result)
    assert "MCP_WEB_ALLOW_CIDRS" in text and "MCP_WEB_ALLOW_PRIVATE=true" not in text, text


def test_only_an_allow_cidrs_entry_opens_a_metadata_address() -> None:
    # Judged by the policy alone: nothing may connect to a real metadata address.
    for address in ("169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "168.63.129.16"):
        assert AddressPolicy(allow_private=True).refusal(ip_address(address)) is not None, address
    listed = AddressPolicy(allow_cidrs=(ip_network("169.254.169.254/32"), ip_network("fd00:ec2::254/128")))
    assert listed.refusal(ip_address("169.254.169.254")) is None
    assert listed.refusal(ip_address("fd00:ec2::254")) is None
    assert listed.refusal(ip_address("169.254.170.2")) is not None  # the next one is not listed
    # allow_private still opens the rest of link-local, and every other private range.
    opened = AddressPolicy(allow_private=True)
    for address in ("169.254.1.1", "10.0.0.5", "127.0.0.1", "::1", "fe80::1", "fd00::1234", "100.64.1.1"):
        assert opened.refusal(ip_address(address)) is None, address


async def test_a_loopback_refusal_names_allow_cidrs_first() -> None:
    backend = GuardBackend(permitted=())
    async with mcp_client(backend, StubResolver(), allow_cidrs=()) as client:
        result = await client.call_tool("web_fetch", {"url": "http://127.0.0.2:8080/"})
    text = text_of(result)
    assert error_code(result) == "blocked_address"
    assert "MCP_WEB_ALLOW_CIDRS" in text and "MCP_WEB_ALLOW_PRIVATE" in text, text
    assert text.index("MCP_WEB_ALLOW_CIDRS") < text.index("MCP_WEB_ALLOW_PRIVATE"), text


@pytest.mark.parametrize("outbound", [False, True], ids=["direct", "through-a-proxy"])
async def test_the_browsers_proxy_refuses_metadata_with_private_allowed(outbound: bool) -> None:
    # Chromium's only way out vets as the Fetcher does. The stub resolver knows no name, and the
    # outbound proxy is a loopback origin that records what reaches it: nothing may.
    targets = (
        "169.254.169.254:80",
        "[fd00:ec2::254]:443",
        "[::ffff:a9fe:a9fe]:443",
        "metadata.google.internal:80",
    )
    with QuickOrigin("127.0.0.3") as upstream:
        routes = ProxyRoutes(upstream.base, upstream.base) if outbound else ProxyRoutes()
        resolver = StubResolver()
        browser_proxy = BrowserProxy(
            policy=AddressPolicy(allow_private=True), resolver=resolver, routes=routes
        )
        answers = []
        async with browser_proxy.session(max_bytes=1_000_000) as session:
            for target in targets:
                head, body = await exchange(session, f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
                answers.append((target, head.split(b"\r\n", 1)[0], b"cloud metadata" in body))
        assert upstream.requests == []
    assert answers == [(target, b"HTTP/1.1 403 Forbidden", True) for target in targets]
    assert session.destinations == [] and resolver.calls == []
