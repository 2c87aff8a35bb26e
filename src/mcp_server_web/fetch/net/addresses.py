"""Which IP addresses outbound connections may go to: the address policy that stops SSRF.

``AddressPolicy`` refuses anything that is not a globally reachable unicast address, including
IPv6 spellings that smuggle an IPv4 address (IPv4-mapped, 6to4, Teredo, NAT64...), unless the
operator allowed it. Cloud metadata host names (``CLOUD_METADATA_NAMES``) are refused by name,
before any lookup. Pure and cheap: nothing here resolves or connects (``resolution`` does).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from mcp_server_web.errors import BlockedAddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def shortened(text: str, limit: int = 100) -> str:
    """text cut to ``limit`` characters for a message (host names and URLs can be kilobytes)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def literal_ip(host: str) -> IPAddress | None:
    """The address when host is an IP literal (as parse_url leaves it), else None."""
    # parse_url writes zone ids the RFC 6874 way ("fe80::1%25eth0"); ipaddress wants "%eth0".
    text = host.strip("[]").replace("%25", "%", 1)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

CLOUD_METADATA = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "fd00:ec2::254",  # AWS over IPv6
        "fd20:ce::254",  # GCP over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        # Azure's WireServer: a public address, so no range rule catches it, yet from inside an
        # Azure VM it answers with the VM's goal state and certificates.
        "168.63.129.16",
    )
)

CLOUD_METADATA_NAMES = frozenset(
    {
        # Inside a cloud the local resolver points these at the metadata service; anywhere else
        # they should not resolve at all. Refused by name (and every name under them), so the
        # answer does not depend on what a resolver says.
        "metadata.google.internal",  # Google Cloud (and Yandex Cloud's GCE-compatible service)
        "metadata.goog",  # Google Cloud
        "metadata",  # Google Cloud's short form, through the VM's DNS search domain
        "instance-data",  # AWS EC2, through the VPC's search domain
        "instance-data.ec2.internal",  # AWS EC2
        "metadata.azure.internal",  # Azure, as SSRF blocklists list it
        "metadata.tencentyun.com",  # Tencent Cloud
        "metadata.platformequinix.com",  # Equinix Metal
        "metadata.packet.net",  # Equinix Metal under its former name, Packet
        "api.metadata.cloud.ibm.com",  # IBM Cloud VPC
        "rancher-metadata",  # Rancher
    }
)


def metadata_name(host: str) -> str | None:
    """The entry of CLOUD_METADATA_NAMES that host is or lies under (any case, trailing dot), else None."""
    labels = host.rstrip(".").lower().split(".")
    for start in range(len(labels)):
        candidate = ".".join(labels[start:])
        if candidate in CLOUD_METADATA_NAMES:
            return candidate
    return None


# Named refusals, most specific first. Anything else that is not globally reachable is refused
# as "reserved/special-purpose address".
_V4_RULES: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/32"), "unspecified address"),
    (_V4("0.0.0.0/8"), '"this network" address (0.0.0.0/8)'),
    (_V4("127.0.0.0/8"), "loopback address"),
    (_V4("10.0.0.0/8"), "private network (RFC 1918) address"),
    (_V4("172.16.0.0/12"), "private network (RFC 1918) address"),
    (_V4("192.168.0.0/16"), "private network (RFC 1918) address"),
    (_V4("100.64.0.0/10"), "carrier-grade NAT (RFC 6598) address"),
    (_V4("169.254.0.0/16"), "link-local address"),
    (_V4("192.0.0.0/24"), "IETF protocol assignment (192.0.0.0/24) address"),
    (_V4("192.0.2.0/24"), "documentation (TEST-NET) address"),
    (_V4("198.51.100.0/24"), "documentation (TEST-NET) address"),
    (_V4("203.0.113.0/24"), "documentation (TEST-NET) address"),
    (_V4("198.18.0.0/15"), "benchmarking (RFC 2544) address"),
    (_V4("224.0.0.0/4"), "multicast address"),
    (_V4("255.255.255.255/32"), "broadcast address"),
    (_V4("240.0.0.0/4"), "reserved (240.0.0.0/4) address"),
)
_V6_RULES: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("::/128"), "unspecified address"),
    (_V6("::1/128"), "loopback address"),
    (_V6("fe80::/10"), "link-local address"),
    (_V6("fec0::/10"), "site-local (deprecated) address"),
    (_V6("fc00::/7"), "unique local IPv6 (ULA) address"),
    (_V6("ff00::/8"), "multicast address"),
    (_V6("2001:db8::/32"), "documentation address"),
    (_V6("100::/64"), "discard-only address"),
)

_IPV4_MAPPED = _V6("::ffff:0:0/96")
_IPV4_COMPATIBLE = _V6("::/96")
_IPV4_TRANSLATED = _V6("::ffff:0:0:0/96")
_SIX_TO_FOUR = _V6("2002::/16")
_TEREDO = _V6("2001::/32")
_NAT64 = _V6("64:ff9b::/96")
_NAT64_LOCAL = _V6("64:ff9b:1::/48")


@dataclass(frozen=True)
class _Embedding:
    form: str
    ipv4s: tuple[ipaddress.IPv4Address, ...]
    always_refused: str | None = None
    """Why the form is refused even when the embedded IPv4 address is fine."""


def _embedded_ipv4(address: ipaddress.IPv6Address) -> _Embedding | None:
    """The IPv4 address(es) an IPv6 address carries, for the forms that reach them."""
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _IPV4_MAPPED:
        return _Embedding("IPv4-mapped IPv6", (low32,))
    if address in _IPV4_TRANSLATED:
        return _Embedding("IPv4-translated IPv6", (low32,), "IPv4-translated IPv6 address (deprecated)")
    if address in _IPV4_COMPATIBLE and int(address) > 1:
        return _Embedding("IPv4-compatible IPv6", (low32,), "IPv4-compatible IPv6 address (deprecated)")
    if address in _SIX_TO_FOUR:
        return _Embedding("6to4", (ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF),))
    if address in _TEREDO:
        # RFC 4380: server in bits 32-63, client in the last 32 bits, inverted.
        server = ipaddress.IPv4Address((int(address) >> 64) & 0xFFFFFFFF)
        client = ipaddress.IPv4Address(~int(address) & 0xFFFFFFFF)
        return _Embedding("Teredo", (server, client))
    if address in _NAT64:
        return _Embedding("NAT64", (low32,))
    if address in _NAT64_LOCAL:
        # RFC 8215 local-use prefix: the IPv4 position depends on the local setup, so the
        # whole range is refused; the /96 reading only makes the reason more precise.
        return _Embedding("NAT64", (low32,), "local-use NAT64 (RFC 8215) address")
    return None


_METADATA_RULE = "cloud metadata endpoint"


def _unscoped(address: IPAddress) -> IPAddress:
    """address without its IPv6 zone id (the rules are about the address, not the interface)."""
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
        return ipaddress.IPv6Address(address.compressed.split("%", 1)[0])
    return address


def _article(phrase: str) -> str:
    if phrase.startswith(("IPv4", "IPv6", "IETF")):
        return "an"
    return "an" if phrase[:1] in "aeiou" and not phrase.startswith("uni") else "a"


def _display(address: IPAddress) -> str:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return f"::ffff:{address.ipv4_mapped}"  # Python 3.11 would print ::ffff:7f00:1
    return str(address)


def described(address: IPAddress, rule: str) -> str:
    """ "<address>, a <rule>": an address with the rule that refuses it, for a message."""
    return f"{_display(address)}, {_article(rule)} {rule}"


def with_article(rule: str) -> str:
    """ "a <rule>" (or "an ..."), for a message."""
    return f"{_article(rule)} {rule}"


def refusal_text(address: IPAddress, rule: str, about: str = "") -> str:
    """ "refusing to connect to <address><about>: it is a <rule>": how every refusal begins."""
    return f"refusing to connect to {_display(address)}{about}: it is {_article(rule)} {rule}"


class AddressPolicy:
    """Which IP addresses outbound connections may go to.

    Refused: everything that is not a globally reachable unicast address (loopback, RFC 1918,
    link-local and cloud metadata, CGNAT, ULA, multicast, reserved ranges...), judged for IPv6
    addresses that embed an IPv4 address by the embedded address too. ``allow_cidrs`` lets
    chosen ranges through; ``allow_private`` lets every private, loopback and link-local address
    through, but not the cloud metadata services (CLOUD_METADATA, in any IPv6 form that carries
    one): a switch meant for an intranet must not hand out the machine's credentials too. Only
    an ``allow_cidrs`` entry holding a metadata address opens it.

    Cloud metadata host names (CLOUD_METADATA_NAMES) are refused by name, before any lookup
    (``check_name``), whatever address they would resolve to, ``allow_private`` or not. An
    ``allow_cidrs`` entry that holds a metadata address lifts that rule: the operator means to
    reach the service, and the names are then looked up and their answers judged like any.
    """

    def __init__(self, allow_private: bool = False, allow_cidrs: Iterable[IPNetwork] = ()) -> None:
        self.allow_private = allow_private
        self.allow_cidrs: tuple[IPNetwork, ...] = tuple(allow_cidrs)
        self._metadata_listed = any(self._listed(address) for address in CLOUD_METADATA)

    def _listed(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.allow_cidrs)

    def public(self) -> AddressPolicy:
        """What counts as a public address: the built-in rules with the listed ranges let through,
        without ``allow_private``'s blanket (which opens this server's way to private addresses,
        not a third party's view of them)."""
        return AddressPolicy(allow_cidrs=self.allow_cidrs)

    def refusal(self, address: IPAddress) -> str | None:
        """The rule that refuses address (e.g. 'loopback address'), or None when it is allowed."""
        if self.allow_private:
            bare = _unscoped(address)
            return None if self._listed(bare) else self._metadata_refusal(bare)
        if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
            # A scoped address names a local interface: local by definition.
            address = ipaddress.IPv6Address(address.compressed.split("%", 1)[0])
            if not address.is_link_local:
                return "scoped (zone id) address"
        if self._listed(address):
            return None
        if isinstance(address, ipaddress.IPv4Address):
            return self._ipv4_refusal(address)
        return self._ipv6_refusal(address)

    def _metadata_refusal(self, address: IPAddress) -> str | None:
        """The rule that refuses address as a cloud metadata service (itself, or an IPv6 form that
        carries one not listed), else None."""
        if address in CLOUD_METADATA:
            return _METADATA_RULE
        if isinstance(address, ipaddress.IPv6Address) and (embedding := _embedded_ipv4(address)):
            for ipv4 in embedding.ipv4s:
                if ipv4 in CLOUD_METADATA and not self._listed(ipv4):
                    return f"{embedding.form} form of a {_METADATA_RULE}"
        return None

    def _ipv4_refusal(self, address: ipaddress.IPv4Address) -> str | None:
        if address in CLOUD_METADATA:
            return _METADATA_RULE
        for network, rule in _V4_RULES:
            if address in network:
                return rule
        if not address.is_global:
            return "reserved/special-purpose address"
        return None

    def _ipv6_refusal(self, address: ipaddress.IPv6Address) -> str | None:
        if address in CLOUD_METADATA:
            return _METADATA_RULE
        for network, rule in _V6_RULES[:2]:  # :: and ::1 sit inside the IPv4-compatible range
            if address in network:
                return rule
        embedding = _embedded_ipv4(address)
        if embedding is not None:
            if all(self._listed(ipv4) for ipv4 in embedding.ipv4s):
                return None
            for ipv4 in embedding.ipv4s:
                inner = self._ipv4_refusal(ipv4)
                if inner is not None:
                    return f"{embedding.form} form of {_article(inner)} {inner}"
            if embedding.always_refused:
                return embedding.always_refused
            if address in _IPV4_MAPPED:
                return None  # a connection to ::ffff:a.b.c.d goes to a.b.c.d, which is fine
        for network, rule in _V6_RULES:
            if address in network:
                return rule
        if not address.is_global:
            return "reserved/special-purpose address"
        return None

    def check_name(self, host: str) -> None:
        """Raise BlockedAddress when host is a cloud metadata name; no lookup is involved."""
        if self._metadata_listed:
            return
        listed = metadata_name(host)
        if listed is None:
            return
        shown = shortened(host.rstrip(".").lower())
        which = "" if shown == listed else f" (it is under {listed})"
        raise BlockedAddress(
            f"refusing to connect to {shown}: it is a cloud metadata endpoint name{which}, refused "
            "without looking it up.",
            parameters=("allow_cidrs",),
        )

    def check(self, address: IPAddress, host: str | None = None) -> None:
        """Raise BlockedAddress (naming host, address, rule and the way out) when refused."""
        rule = self.refusal(address)
        if rule is None:
            return
        about = f" (host {host})" if host and literal_ip(host) != address else ""
        # The way out, most specific first: a listed range; allow_private never opens a metadata
        # service, so it is not offered for one.
        metadata = self._metadata_refusal(_unscoped(address)) is not None
        raise BlockedAddress(
            f"{refusal_text(address, rule, about)}.",
            parameters=("allow_cidrs",) if metadata else ("allow_cidrs", "allow_private"),
        )


BUILT_IN_POLICY = AddressPolicy()
"""The policy with no allowances: what refuses a hidden address whatever the operator allowed."""
