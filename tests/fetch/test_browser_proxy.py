"""The browser's proxy on its own, spoken to as Chromium speaks to it: raw CONNECT and absolute-form
requests over a socket. Every destination is vetted (and pinned) before any connection is made;
refused destinations are loopback addresses the policy does not allow, with a listener on them
that records any connection, so a refusal is proven to come before connecting."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_server_web.fetch import BrowserProxy, ProxyRoutes
from mcp_server_web.fetch.browser.proxy import MAX_HEAD_BYTES, ProxySession
from mcp_server_web.fetch.net.addresses import AddressPolicy
from tests.support.dns import DNSResolver, RebindingDNS
from tests.support.forward_proxy import ForwardProxy
from tests.support.netguard import QuickOrigin, StubResolver
from tests.support.origin import Reply
from tests.support.timing import PATIENCE

ALLOWED = (ipaddress.ip_network("127.0.0.1/32"),)


class Listener:
    """A TCP listener on a loopback address that only counts the connections made to it."""

    def __init__(self, host: str) -> None:
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.settimeout(0.05)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            connection.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@contextmanager
def listening(host: str) -> Iterator[Listener]:
    with Listener(host) as listener:
        yield listener


def proxy(
    resolver: StubResolver | DNSResolver | None = None, routes: ProxyRoutes | None = None
) -> BrowserProxy:
    return BrowserProxy(
        policy=AddressPolicy(allow_cidrs=ALLOWED),
        resolver=resolver or StubResolver(),
        routes=routes or ProxyRoutes(),
    )


async def exchange(session: ProxySession, request: bytes, *, then: bytes = b"") -> tuple[bytes, bytes]:
    """Send request to the session's proxy; return the proxy's answer head and what followed it
    (after sending ``then`` through an established tunnel)."""
    port = int(session.url.rsplit(":", 1)[1])
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        reader = BufferedByteReceiveStream(stream)
        with anyio.fail_after(PATIENCE):  # an answer, not its time, is what is checked
            head = await reader.receive_until(b"\r\n\r\n", 65536)
            if then:
                await stream.send(then)
            rest = bytearray(reader.buffer)
            while True:
                try:
                    rest += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
    return head, bytes(rest)


@pytest.fixture
async def origin() -> AsyncIterator[QuickOrigin]:
    with QuickOrigin() as served:
        yield served


async def test_connect_to_a_refused_address_is_answered_403_before_any_connection() -> None:
    with listening("127.0.0.2") as refused:
        async with proxy().session(max_bytes=1_000_000) as session:
            head, body = await exchange(
                session, f"CONNECT 127.0.0.2:{refused.port} HTTP/1.1\r\n\r\n".encode()
            )
        assert head.startswith(b"HTTP/1.1 403 ")
        assert b"X-Refused-By: mcp-server-web" in head
        assert b"blocked_address" in body
        assert refused.accepted == 0
        assert "127.0.0.2" in session.refusals
        assert session.refusals["127.0.0.2"].code == "blocked_address"
        assert session.destinations == []


async def test_plain_http_to_a_refused_address_is_refused_before_any_connection() -> None:
    with listening("127.0.0.2") as refused:
        async with proxy().session(max_bytes=1_000_000) as session:
            request = f"GET http://127.0.0.2:{refused.port}/secret HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n"
            head, _ = await exchange(session, request.encode())
        assert head.startswith(b"HTTP/1.1 403 ")
        assert refused.accepted == 0


async def test_a_name_with_one_refused_answer_is_refused_and_the_proxy_never_connects() -> None:
    resolver = StubResolver()
    resolver.answer("mixed.test", "127.0.0.1", "127.0.0.2")
    with listening("127.0.0.2") as refused:
        async with proxy(resolver).session(max_bytes=1_000_000) as session:
            head, _ = await exchange(session, f"CONNECT mixed.test:{refused.port} HTTP/1.1\r\n\r\n".encode())
    assert head.startswith(b"HTTP/1.1 403 ")
    assert refused.accepted == 0
    assert resolver.calls == ["mixed.test"]


async def test_cloud_metadata_names_are_refused_without_asking_the_resolver() -> None:
    resolver = StubResolver()
    async with proxy(resolver).session(max_bytes=1_000_000) as session:
        head, _ = await exchange(session, b"CONNECT metadata.google.internal:80 HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403 ")
    assert resolver.calls == []


async def test_hidden_address_forms_are_refused_as_the_fetcher_refuses_them() -> None:
    with listening("127.0.0.2") as refused:
        async with proxy().session(max_bytes=1_000_000) as session:
            for spelled in ("2130706434", "0x7f.0.0.2", "0177.0.0.2", "[::ffff:127.0.0.2]"):
                request = f"GET http://{spelled}:{refused.port}/ HTTP/1.1\r\n\r\n".encode()
                head, _ = await exchange(session, request)
                assert head.startswith((b"HTTP/1.1 403 ", b"HTTP/1.1 400 ")), spelled
        assert refused.accepted == 0


async def test_a_rebinding_name_is_pinned_to_the_address_that_was_vetted(origin: QuickOrigin) -> None:
    # First answer allowed, every later one refused: the proxy must connect where it checked.
    origin.route("/", lambda ctx: ctx.send(Reply(body="pinned")))
    with RebindingDNS({"rebind.test": ["127.0.0.1", "127.0.0.2"]}) as dns:
        async with proxy(DNSResolver(dns.address)).session(max_bytes=1_000_000) as session:
            request = f"GET http://rebind.test:{origin.port}/ HTTP/1.1\r\nHost: rebind.test\r\n\r\n"
            head, body = await exchange(session, request.encode())
    assert head.startswith(b"HTTP/1.1 200 ")
    assert body == b"pinned"
    assert origin.requests[0].headers["host"] == "rebind.test"


async def test_plain_http_is_sent_in_origin_form_one_request_per_connection(origin: QuickOrigin) -> None:
    origin.route("/page", lambda ctx: ctx.send(Reply(body="hello", headers={"Keep-Alive": "timeout=5"})))
    async with proxy().session(max_bytes=1_000_000) as session:
        request = (
            f"GET http://127.0.0.1:{origin.port}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{origin.port}\r\n"
            "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n"
        )
        head, body = await exchange(session, request.encode())
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"connection: close" in head.lower() and b"keep-alive" not in head.lower()
    assert body == b"hello"
    seen = origin.requests[0]
    assert seen.path == "/page?q=1"
    assert "proxy-authorization" not in seen.headers and "proxy-connection" not in seen.headers
    assert session.destinations == [f"127.0.0.1:{origin.port}"]


async def test_a_tunnel_carries_bytes_both_ways_and_counts_them(origin: QuickOrigin) -> None:
    origin.route("/t", lambda ctx: ctx.send(Reply(body="x" * 1000)))
    async with proxy().session(max_bytes=1_000_000) as session:
        request = f"CONNECT 127.0.0.1:{origin.port} HTTP/1.1\r\n\r\n".encode()
        inner = b"GET /t HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        head, answer = await exchange(session, request, then=inner)
    assert head == b"HTTP/1.1 200 Connection Established"
    assert answer.startswith(b"HTTP/1.") and answer.endswith(b"x" * 1000)
    assert session.received == len(answer)


async def received_raw(session: ProxySession, request: bytes) -> bytes:
    """Everything the proxy sends back for request until it closes the connection."""
    port = int(session.url.rsplit(":", 1)[1])
    received = bytearray()
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request)
        with anyio.fail_after(PATIENCE):  # an answer, not its time, is what is checked
            while True:
                try:
                    received += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return bytes(received)


async def test_past_the_byte_budget_connections_are_cut_and_new_ones_refused(origin: QuickOrigin) -> None:
    origin.route("/big", lambda ctx: ctx.send(Reply(body="y" * 500_000)))
    async with proxy().session(max_bytes=50_000) as session:
        request = f"GET http://127.0.0.1:{origin.port}/big HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        cut = await received_raw(session, request)
        assert session.over_budget
        assert len(cut) < 200_000
        head, _ = await exchange(session, request)
    assert head.startswith(b"HTTP/1.1 503 ")


async def test_an_oversized_request_head_is_refused() -> None:
    async with proxy().session(max_bytes=1_000_000) as session:
        request = b"GET http://127.0.0.1/ HTTP/1.1\r\nX-Pad: " + b"a" * (MAX_HEAD_BYTES + 10) + b"\r\n\r\n"
        head, _ = await exchange(session, request)
    assert head.startswith(b"HTTP/1.1 431 ")


async def test_a_client_that_sends_nothing_is_answered_408() -> None:
    quick = BrowserProxy(
        policy=AddressPolicy(allow_cidrs=ALLOWED),
        resolver=StubResolver(),
        routes=ProxyRoutes(),
        connect_timeout=0.2,
    )
    async with quick.session(max_bytes=1_000_000) as session:
        head, _ = await exchange(session, b"")
    assert head.startswith(b"HTTP/1.1 408 ")


async def test_the_session_listener_closes_with_the_render() -> None:
    async with proxy().session(max_bytes=1_000_000) as session:
        port = int(session.url.rsplit(":", 1)[1])
    with pytest.raises(OSError):
        await anyio.connect_tcp("127.0.0.1", port)


async def test_through_an_outbound_proxy_the_vetted_address_is_handed_on_never_the_name(
    origin: QuickOrigin,
) -> None:
    origin.route("/", lambda ctx: ctx.send(Reply(body="via the proxy")))
    # Each name answers an allowed address once, then a refused one: an upstream proxy that
    # resolved the name again would connect to 127.0.0.2.
    names = {"plain.test": ["127.0.0.1", "127.0.0.2"], "tunnel.test": ["127.0.0.1", "127.0.0.2"]}
    with RebindingDNS(names) as dns, ForwardProxy("127.0.0.3", dns.address) as upstream:
        routes = ProxyRoutes.configured(upstream.url, {})
        async with proxy(DNSResolver(dns.address), routes).session(max_bytes=1_000_000) as session:
            plain = f"GET http://plain.test:{origin.port}/ HTTP/1.1\r\nHost: plain.test\r\n\r\n".encode()
            head, body = await exchange(session, plain)
            tunnel_head, _ = await exchange(
                session,
                f"CONNECT tunnel.test:{origin.port} HTTP/1.1\r\n\r\n".encode(),
                then=b"GET / HTTP/1.1\r\nHost: tunnel.test\r\nConnection: close\r\n\r\n",
            )
    assert head.startswith(b"HTTP/1.1 200 ") and body == b"via the proxy"
    assert tunnel_head.startswith(b"HTTP/1.1 200 ")
    targets = [seen.target for seen in upstream.seen]
    assert targets == [f"http://127.0.0.1:{origin.port}/", f"127.0.0.1:{origin.port}"]
    assert all(seen.connected_to == f"127.0.0.1:{origin.port}" for seen in upstream.seen)
