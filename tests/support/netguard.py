"""Test doubles for the network edge of the fetcher: a resolver and a connect-checking backend.

``GuardBackend`` wraps the real network backend and fails the test if anything asks it to
connect to an address that is not explicitly permitted (and it never permits a non-loopback
address), so tests of the address policy prove that refusals happen before any connection.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterable, Mapping, Sequence

import httpcore
import pytest

from mcp_server_web.errors import HTTPStatusError
from tests.support.origin import Origin, _Server

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class GuardBackend(httpcore.AsyncNetworkBackend):
    """Connects only to permitted loopback addresses; anything else fails the test."""

    def __init__(self, permitted: Iterable[str] = ("127.0.0.1",)) -> None:
        self.permitted = {str(ipaddress.ip_address(address)) for address in permitted}
        for address in self.permitted:
            assert ipaddress.ip_address(address).is_loopback, "tests only ever connect to loopback"
        self.inner = httpcore.AnyIOBackend()
        self.connects: list[tuple[str, int]] = []
        self.violations: list[str] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        if host not in self.permitted:
            self.violations.append(f"{host}:{port}")
            pytest.fail(f"the fetcher tried to connect to {host}:{port}, which the test does not permit")
        return await self.inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pytest.fail("the fetcher tried to open a unix socket")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class StubResolver:
    """Answers from a table. Each host maps to a list of answers, one per call (the last repeats)."""

    def __init__(self, table: Mapping[str, Sequence[Sequence[str]]] | None = None) -> None:
        self.table = {host: [list(answer) for answer in answers] for host, answers in (table or {}).items()}
        self.calls: list[str] = []

    def answer(self, host: str, *addresses: str) -> None:
        """Always answer host with these addresses."""
        self.table[host] = [list(addresses)]

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        answers = self.table.get(host)
        if not answers:
            raise HTTPStatusError(f"could not resolve host {host}: unknown to the test resolver.")
        index = min(self.calls.count(host), len(answers)) - 1
        return [ipaddress.ip_address(address) for address in answers[index]]


class QuickOrigin(Origin):
    """An Origin that stops quickly and can bind a chosen port.

    Origin's serve_forever polls for shutdown every 0.5 s, which makes every test that uses one
    half a second slower; this one polls every 20 ms. A fixed port lets two loopback addresses
    serve the same host:port (one allowed, one refused), as DNS-rebinding tests need.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host)
        self._fixed_port = port

    def __enter__(self) -> QuickOrigin:
        server = _Server((self.host, self._fixed_port), self)
        self._server = server
        self._thread = threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.02), name="test-origin", daemon=True
        )
        self._thread.start()
        return self
