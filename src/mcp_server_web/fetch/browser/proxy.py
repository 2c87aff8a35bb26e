"""The browser's only way out: a forward proxy inside the server that vets and pins every connection.

A render's browser context is told to use one ``ProxySession`` (a listener on 127.0.0.1 that
lives as long as the render), and Chromium is started so that it cannot reach anything any other
way (see launch.py). Each connection the browser opens arrives here as either

* ``CONNECT host:port`` (https:// and every WebSocket): the name is resolved once, every answer is
  vetted by the same ``AddressPolicy`` as a plain fetch, and the tunnel goes to the vetted address;
  the browser's TLS runs end to end inside it, so certificates are still checked for the name;
* ``GET http://host:port/path`` (plain http://): vetted and pinned the same way, then sent on in
  origin form with ``Connection: close``, one request per connection, so a kept-alive connection
  can never carry a second request to another host past the check.

Bytes received from the network are counted against the session's budget (the plain fetch's
``max_response_bytes``); past it every connection of the session is cut and new ones are refused.
A refused destination is answered with 403 and remembered by host, so the renderer can report
the page's own refusal as the plain fetch would (``BlockedAddress``). Through an outbound proxy
(``MCP_WEB_PROXY``, NO_PROXY honoured) the vetted ADDRESS is handed on, never the name, as in
pinned_proxy.py.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
import anyio.abc
import h11
import httpx
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_server_web.errors import HTTPStatusError, WebToolError
from mcp_server_web.fetch.net.addresses import AddressPolicy, IPAddress, shortened
from mcp_server_web.fetch.net.proxy import ProxyRoutes
from mcp_server_web.fetch.net.resolution import Resolver, check_unresolved, vet_host
from mcp_server_web.fetch.net.urls import parse_url

logger = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
"""A request or response head larger than this is refused (browsers send a few KB)."""
_CHUNK = 64 * 1024
# Hop-by-hop headers (RFC 9110 section 7.6.1) and the proxy's own: not passed on.
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization", b"te", b"trailer"}
)
_STATUS_LINE = re.compile(rb"HTTP/1\.[01] (\d{3})")


@dataclass(slots=True)
class ProxySession:
    """One render's view of the proxy: where to send the browser, and what happened."""

    max_bytes: int
    url: str = ""
    """The proxy server for the browser context, ``http://127.0.0.1:PORT``."""
    received: int = 0
    """Bytes received from the network so far (response heads, bodies, tunnelled bytes)."""
    over_budget: bool = False
    connections: int = 0
    """Connections the browser opened through the session, refused ones included."""
    refusals: dict[str, WebToolError] = field(default_factory=dict)
    """Why a destination was refused, by ``host`` as the browser named it (lower case)."""
    destinations: list[str] = field(default_factory=list)
    """``host:port`` of every connection made, in order (for the logs and the tests)."""
    _live: set[anyio.CancelScope] = field(default_factory=set)

    def count(self, size: int) -> None:
        self.received += size
        if self.received > self.max_bytes and not self.over_budget:
            self.over_budget = True
            logger.debug("render over its %d-byte budget: cutting its connections", self.max_bytes)
            for scope in self._live:
                scope.cancel()


class BrowserProxy:
    """Opens ProxySessions: vetted, pinned, byte-counted forward proxies for one render each."""

    def __init__(
        self,
        *,
        policy: AddressPolicy,
        resolver: Resolver,
        routes: ProxyRoutes,
        connect_timeout: float = 10.0,
        max_connections: int = 64,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._routes = routes
        self._connect_timeout = connect_timeout
        self._max_connections = max_connections

    @asynccontextmanager
    async def session(self, *, max_bytes: int) -> AsyncIterator[ProxySession]:
        """A listener for one render; leaving the block closes it and every connection it carries."""
        session = ProxySession(max_bytes=max_bytes)
        listener = (await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)).listeners[0]
        assert isinstance(listener, anyio.abc.SocketListener)  # one TCP listener on one address
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        session.url = f"http://127.0.0.1:{port}"
        limiter = anyio.CapacityLimiter(self._max_connections)
        try:
            async with listener, anyio.create_task_group() as group:
                group.start_soon(self._accept, listener, session, limiter)
                try:
                    yield session
                finally:
                    group.cancel_scope.cancel()
        except BaseExceptionGroup as grouped:
            # The render's own failure, raised inside the block: the caller gets it as it was.
            raise _leaf(grouped) from None

    async def check(self, url: str) -> None:
        """Raise why a connection to url would be refused (BlockedAddress, InvalidURL, or an
        HTTPStatusError when its name does not resolve in time), without connecting: for a
        navigation the renderer cancels rather than let the refusal replace the page."""
        parsed = parse_url(url)
        if self._policy.allow_private:
            return
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        try:
            with anyio.fail_after(self._connect_timeout):
                await vet_host(parsed.host, port, self._resolver, self._policy)
        except TimeoutError:
            raise HTTPStatusError(f"could not resolve {shortened(parsed.host)} in time.") from None

    async def _accept(
        self,
        listener: anyio.abc.SocketListener,
        session: ProxySession,
        limiter: anyio.CapacityLimiter,
    ) -> None:
        async with anyio.create_task_group() as group:
            while True:
                client = await listener.accept()
                session.connections += 1
                group.start_soon(self._serve, client, session, limiter)

    async def _serve(
        self, client: anyio.abc.SocketStream, session: ProxySession, limiter: anyio.CapacityLimiter
    ) -> None:
        async with client:
            if session.over_budget:
                await _answer(client, 503, "this render is over its byte budget")
                return
            with anyio.CancelScope() as scope:
                session._live.add(scope)
                try:
                    async with limiter:
                        await self._relay(client, session)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, OSError):
                    pass  # either side hung up: the browser sees a closed connection
                except anyio.DelimiterNotFound:
                    await _answer(client, 431, "request head too large")
                except Exception:  # a fault here must cost one connection, not the render
                    logger.exception("browser proxy connection failed")
                finally:
                    session._live.discard(scope)

    async def _relay(self, client: anyio.abc.SocketStream, session: ProxySession) -> None:
        reader = BufferedByteReceiveStream(client)
        try:
            with anyio.fail_after(self._connect_timeout):
                head = await reader.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
        except TimeoutError:
            # Caught here, where only the head's deadline can raise it: in _serve it would be
            # taken by the OSError clause (its base class), and later a socket's own ETIMEDOUT
            # must not write an HTTP answer into an established tunnel.
            await _answer(client, 408, "no request in time")
            return
        request_line, _, header_block = head.partition(b"\r\n")
        parts = request_line.split(b" ")
        if len(parts) != 3:
            await _answer(client, 400, "not an HTTP request")
            return
        method, target, _version = parts
        tunnel = method == b"CONNECT"
        try:
            url = parse_url(f"https://{target.decode('ascii')}/" if tunnel else target.decode("ascii"))
        except (WebToolError, UnicodeDecodeError) as exc:
            await _answer(client, 400, str(exc))
            return
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            upstream, via_proxy = await self._connect(url, port)
        except WebToolError as exc:
            session.refusals[host.lower()] = exc
            logger.debug("browser connection to %s:%d refused: %s", host, port, exc)
            await _answer(client, 403, str(exc))
            return
        session.destinations.append(f"{host}:{port}")
        logger.debug("browser %s %s", method.decode("ascii", "replace"), shortened(target.decode("ascii")))
        async with upstream:
            if tunnel:
                await client.send(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await _pipe(reader, client, upstream, session, answer_of=None)
                return
            headers = _forwarded_headers(header_block)
            upgrade = any(name.lower() == b"upgrade" for name, _ in headers)
            if upgrade:
                headers.append((b"Connection", b"Upgrade"))
            else:
                headers.append((b"Connection", b"close"))
            line_target = via_proxy if via_proxy is not None else (url.raw_path or b"/")
            out = b"%b %b HTTP/1.1\r\n" % (method, line_target)
            out += b"".join(b"%b: %b\r\n" % pair for pair in headers) + b"\r\n"
            await upstream.send(out)
            await _pipe(reader, client, upstream, session, answer_of=None if upgrade else method)

    async def _connect(self, url: httpx.URL, port: int) -> tuple[anyio.abc.SocketStream, bytes | None]:
        """A connection to url's vetted address (directly or through the outbound proxy), and, for
        plain http through that proxy, the absolute-form target naming the address."""
        host = url.host
        addresses: list[IPAddress] = []
        proxy = self._routes.proxy_for(url)
        if proxy is not None and self._policy.allow_private:
            # The outbound proxy is handed the name, as the Fetcher's is (transport.py).
            check_unresolved(host, self._policy)
        else:
            with anyio.fail_after(self._connect_timeout):
                addresses = await vet_host(host, port, self._resolver, self._policy)
        try:
            with anyio.fail_after(self._connect_timeout):
                if proxy is None:
                    return await _connect_first(addresses, port), None
                return await self._through_proxy(httpx.URL(proxy), url, port, addresses)
        except TimeoutError:
            raise HTTPStatusError(f"could not connect to {shortened(host)}:{port} in time.") from None
        except OSError as exc:
            raise HTTPStatusError(f"could not connect to {shortened(host)}:{port}: {exc}.") from None

    async def _through_proxy(
        self, proxy: httpx.URL, url: httpx.URL, port: int, addresses: list[IPAddress]
    ) -> tuple[anyio.abc.SocketStream, bytes | None]:
        """Through the operator's proxy, handing it the vetted address (the name only when nothing
        is vetted); http:// is forwarded in absolute form, everything else tunnelled."""
        if proxy.scheme != "http":
            raise HTTPStatusError("the browser can only use an http:// outbound proxy.")
        pinned = _bracketed(str(addresses[0])) if addresses else url.host
        stream = await anyio.connect_tcp(proxy.host, proxy.port or 80)
        auth = b""
        if proxy.username:
            token = base64.b64encode(f"{proxy.username}:{proxy.password}".encode())
            auth = b"Proxy-Authorization: Basic %b\r\n" % token
        if url.scheme == "http":
            # Most proxies' default rules refuse CONNECT to anything but 443: plain http goes in
            # absolute form, as pinned_proxy.py sends it (the Host header keeps the name).
            return stream, b"http://%b:%d%b" % (pinned.encode("ascii"), port, url.raw_path or b"/")
        target = f"{pinned}:{port}".encode("ascii")
        await stream.send(b"CONNECT %b HTTP/1.1\r\nHost: %b\r\n%b\r\n" % (target, target, auth))
        reader = BufferedByteReceiveStream(stream)
        head = await reader.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES)
        status = _STATUS_LINE.match(head)
        if status is None or not status.group(1).startswith(b"2"):
            await stream.aclose()
            answer = head.partition(b"\r\n")[0].decode("latin-1")
            raise HTTPStatusError(f"the outbound proxy refused the tunnel ({shortened(answer)}).")
        return stream, None


def _leaf(grouped: BaseExceptionGroup[BaseException]) -> BaseException:
    leaf: BaseException = grouped
    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
        leaf = leaf.exceptions[0]
    return leaf


async def _connect_first(addresses: list[IPAddress], port: int) -> anyio.abc.SocketStream:
    failure: OSError | None = None
    for address in addresses:
        try:
            return await anyio.connect_tcp(str(address), port)
        except OSError as exc:
            failure = exc
    assert failure is not None  # vet_host and resolvers never return an empty list
    raise failure


def _bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def _forwarded_headers(block: bytes) -> list[tuple[bytes, bytes]]:
    headers: list[tuple[bytes, bytes]] = []
    for line in block.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep or name.strip().lower() in _HOP_BY_HOP:
            continue
        headers.append((name.strip(), value.strip()))
    return headers


async def _pipe(
    reader: BufferedByteReceiveStream,
    client: anyio.abc.SocketStream,
    upstream: anyio.abc.SocketStream,
    session: ProxySession,
    *,
    answer_of: bytes | None,
) -> None:
    """Relay both ways; count what the network side sends. With ``answer_of`` (the method of a
    plain http request) the relay ends with that request's response, read by its own framing,
    whether or not the other side keeps the connection open; otherwise when the network side
    closes."""

    async def outbound() -> None:
        if reader.buffer:
            await upstream.send(bytes(reader.buffer))
        async for chunk in client:  # the rest of the request (a body), or the browser's TLS
            await upstream.send(chunk)
        await upstream.send_eof()

    async def inbound() -> None:
        if answer_of is None:
            await _relay_raw(upstream, client, session)
        else:
            await _relay_response(upstream, client, session, answer_of)
        group.cancel_scope.cancel()  # the answer is complete: no more request bytes matter

    async with anyio.create_task_group() as group:
        group.start_soon(outbound)
        group.start_soon(inbound)


async def _relay_raw(
    upstream: anyio.abc.SocketStream, client: anyio.abc.SocketStream, session: ProxySession
) -> None:
    while True:
        try:
            chunk = await upstream.receive(_CHUNK)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return
        session.count(len(chunk))
        await client.send(chunk)


async def _relay_response(
    upstream: anyio.abc.SocketStream, client: anyio.abc.SocketStream, session: ProxySession, method: bytes
) -> None:
    """One response, parsed by h11 (which knows its framing from the status, the headers and the
    request method) and passed on with ``Connection: close``, its body ended by the close."""
    parser = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
    # The request itself went out raw; h11 only needs its method to frame the response.
    parser.send(
        h11.Request(method=method, target=b"/", headers=[(b"host", b"-"), (b"transfer-encoding", b"chunked")])
    )
    while True:
        try:
            event = parser.next_event()
        except h11.RemoteProtocolError:
            return  # not HTTP: the browser gets what was passed on so far, then a closed connection
        if event is h11.NEED_DATA:
            try:
                chunk = await upstream.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                chunk = b""
            session.count(len(chunk))
            parser.receive_data(chunk)
            continue
        if isinstance(event, h11.InformationalResponse | h11.Response):
            await client.send(_head(event))
        elif isinstance(event, h11.Data):
            await client.send(bytes(event.data))
        else:  # EndOfMessage, or ConnectionClosed mid-way
            return


def _head(event: h11.Response | h11.InformationalResponse) -> bytes:
    """The response head for the browser: its own headers but the hop-by-hop ones and the
    transfer coding (the body goes on decoded of its chunks), and ``Connection: close``."""
    kept = [
        (name, value)
        for name, value in event.headers
        if name not in _HOP_BY_HOP and name != b"transfer-encoding"
    ]
    if isinstance(event, h11.Response):
        kept.append((b"connection", b"close"))
    lines = [b"HTTP/1.1 %d %b" % (event.status_code, bytes(event.reason))]
    lines.extend(b"%b: %b" % (name, value) for name, value in kept)
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _answer(client: anyio.abc.SocketStream, status: int, reason: str) -> None:
    """The proxy's own answer: a short plain-text response, then the connection closes."""
    body = reason.encode("utf-8", "replace")[:1000]
    phrase = {
        400: b"Bad Request",
        403: b"Forbidden",
        408: b"Request Timeout",
        431: b"Request Header Fields Too Large",
    }.get(status, b"Service Unavailable")
    head = (
        b"HTTP/1.1 %d %b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
        b"X-Refused-By: mcp-server-web\r\nConnection: close\r\n\r\n" % (status, phrase, len(body))
    )
    with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await client.send(head + body)
