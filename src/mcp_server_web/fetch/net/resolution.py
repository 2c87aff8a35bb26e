"""Resolving a host name once and vetting every answer against the address policy.

The connection-time half (connect to the vetted address, never a second lookup) is
``transport.PinnedBackend``; ``vet_host`` is the resolve-and-vet step it and the proxy share.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Protocol

import anyio

from mcp_server_web.errors import BlockedAddress, HTTPStatusError
from mcp_server_web.fetch.net.addresses import (
    AddressPolicy,
    IPAddress,
    described,
    literal_ip,
    shortened,
    with_article,
)


class Resolver(Protocol):
    """Turns a host name into the addresses to connect to. Injected in tests."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]: ...


class SystemResolver:
    """The operating system's resolver (getaddrinfo), run off the event loop by anyio."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise HTTPStatusError(f"could not resolve host {host}: {reason}.") from None
        addresses: list[IPAddress] = []
        for family, _, _, _, sockaddr in answers:
            if family not in (socket.AF_INET, socket.AF_INET6):
                continue
            # anyio folds a non-zero IPv6 scope id into the text ("fe80::1%2"); ipaddress keeps it.
            address = ipaddress.ip_address(str(sockaddr[0]))
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise HTTPStatusError(f"could not resolve host {host}: no addresses found.")
        return addresses


async def vet_host(host: str, port: int, resolver: Resolver, policy: AddressPolicy) -> list[IPAddress]:
    """Resolve host once and vet every answer; all must pass, or BlockedAddress is raised.

    Refusing when any answer is refused (rather than skipping that answer) closes the trick of
    publishing one public and one private record and hoping the private one gets used. Cloud
    metadata names are refused before the resolver is asked.
    """
    literal = literal_ip(host)
    if literal is None:
        policy.check_name(host)
    addresses = [literal] if literal is not None else await resolver.resolve(host, port)
    if not addresses:
        raise HTTPStatusError(f"could not resolve host {host}: no addresses found.")
    for address in addresses:
        policy.check(address, host)
    return addresses


def check_unresolved(host: str, policy: AddressPolicy) -> None:
    """Refuse what can be refused of host without a lookup: an IP literal by the policy, a cloud
    metadata name by name. For a proxy handed the name unresolved (``allow_private``, where only
    the proxy may be able to resolve outside names): the metadata services stay closed there too."""
    literal = literal_ip(host)
    if literal is not None:
        policy.check(literal, host)
    else:
        policy.check_name(host)


async def private_destination(host: str, port: int, resolver: Resolver, policy: AddressPolicy) -> str | None:
    """Why host is no public destination under policy (a phrase naming it, the address and the
    rule), or None when every address it resolves to passes.

    For a URL about to be handed to someone else (a read-through provider), with the policy of
    what counts as public (``AddressPolicy.public``). A host that cannot be resolved here is not
    public either: where it leads cannot be told.
    """
    shown = shortened(host)
    literal = literal_ip(host)
    try:
        if literal is None:
            policy.check_name(host)
        addresses = [literal] if literal is not None else await resolver.resolve(host, port)
    except BlockedAddress:
        return f"{shown} is a cloud metadata endpoint name"
    except HTTPStatusError:
        return f"{shown} could not be resolved here to tell whether it is public"
    for address in addresses:
        rule = policy.refusal(address)
        if rule is not None:
            if literal is not None:
                return f"{shown} is {with_article(rule)}"
            return f"{shown} resolves to {described(address, rule)}"
    return None
