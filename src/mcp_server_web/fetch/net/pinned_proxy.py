"""Proxy connections that take the proxy to the address we vetted, not to a name it would resolve again.

httpcore's own ``AsyncHTTPProxy`` hands the proxy the request's host name (``GET http://name/``
or ``CONNECT name:443``), so the proxy resolves it with its own resolver; a TTL-0 name can answer
an allowed address to our check and a forbidden one to the proxy (DNS rebinding). The pool here
sends the address carried by the request's ``PINNED_ADDRESS`` extension instead:

* http:// targets: the absolute-form request line names the address (``GET http://IP:port/path``)
  while the Host header keeps the name, as the request already has it;
* https:// targets: ``CONNECT IP:port``, then TLS through the tunnel with the name as SNI and as
  the name the certificate is checked against.

Connections stay keyed by the request's origin (scheme, NAME, port): a tunnel whose TLS session
was verified for one name never carries a request for another name at the same address.
A pool built with ``pinned=False`` (``allow_private``, where nothing is vetted) hands
the proxy the name, as httpcore's proxy does; a pinned pool refuses a request that carries no
address rather than fall back to the name. HTTP/1.1 only, like the rest of the fetcher.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Sequence

import anyio
import httpcore

PINNED_ADDRESS = "mcp_server_web.pinned_address"
"""Request extension: the vetted IP address (text) the proxy must connect to."""

Headers = list[tuple[bytes, bytes]]


class PinnedProxyPool(httpcore.AsyncConnectionPool):
    """A connection pool that sends every request through one HTTP(S) proxy, pinned as above."""

    def __init__(
        self,
        *,
        pinned: bool,
        proxy_url: httpcore.URL,
        proxy_auth: tuple[bytes, bytes] | None,
        proxy_headers: Sequence[tuple[bytes, bytes]],
        proxy_ssl_context: ssl.SSLContext | None,
        ssl_context: ssl.SSLContext,
        network_backend: httpcore.AsyncNetworkBackend,
        max_connections: int | None,
        max_keepalive_connections: int | None,
        keepalive_expiry: float | None,
    ) -> None:
        super().__init__(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=network_backend,
        )
        headers = list(proxy_headers)
        if proxy_auth is not None:
            credentials = base64.b64encode(b"%b:%b" % proxy_auth)
            headers.insert(0, (b"Proxy-Authorization", b"Basic " + credentials))
        self._proxy_end = _ProxyEnd(
            pinned=pinned,
            origin=proxy_url.origin,
            headers=headers,
            ssl_context=proxy_ssl_context,
            network_backend=network_backend,
            keepalive_expiry=keepalive_expiry,
        )
        self._origin_ssl_context = ssl_context

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        if origin.scheme == b"http":
            return _ForwardConnection(self._proxy_end, origin)
        return _TunnelConnection(self._proxy_end, origin, self._origin_ssl_context)


class _ProxyEnd:
    """Where the proxy is and how to talk to it."""

    def __init__(
        self,
        *,
        pinned: bool,
        origin: httpcore.Origin,
        headers: Headers,
        ssl_context: ssl.SSLContext | None,
        network_backend: httpcore.AsyncNetworkBackend,
        keepalive_expiry: float | None,
    ) -> None:
        self.pinned = pinned
        self.origin = origin
        self.headers = headers
        self.ssl_context = ssl_context
        self.network_backend = network_backend
        self.keepalive_expiry = keepalive_expiry

    def connection(self) -> httpcore.AsyncHTTPConnection:
        return httpcore.AsyncHTTPConnection(
            origin=self.origin,
            keepalive_expiry=self.keepalive_expiry,
            network_backend=self.network_backend,
            ssl_context=self.ssl_context,
        )

    def host_for(self, request: httpcore.Request, remote: httpcore.Origin) -> bytes:
        """The host to hand the proxy: the pinned address (bracketed if IPv6), or the name."""
        pinned = request.extensions.get(PINNED_ADDRESS)
        if pinned is None:
            if self.pinned:
                raise httpcore.ProxyError("internal error: no vetted address to send the proxy to")
            host = remote.host
        else:
            host = str(pinned).encode("ascii")
        return b"[%b]" % host if b":" in host and not host.startswith(b"[") else host

    def url(self, target: bytes) -> httpcore.URL:
        return httpcore.URL(
            scheme=self.origin.scheme, host=self.origin.host, port=self.origin.port, target=target
        )

    def merged(self, headers: Sequence[tuple[bytes, bytes]]) -> Headers:
        """The proxy's headers, then the request's; a request header wins over a proxy header."""
        overridden = {name.lower() for name, _ in headers}
        return [(n, v) for n, v in self.headers if n.lower() not in overridden] + list(headers)


class _Delegating(httpcore.AsyncConnectionInterface):
    """The pool's bookkeeping questions, answered by the underlying connection."""

    _connection: httpcore.AsyncConnectionInterface
    _remote: httpcore.Origin

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self._remote

    async def aclose(self) -> None:
        await self._connection.aclose()

    def info(self) -> str:
        return self._connection.info()

    def is_available(self) -> bool:
        return self._connection.is_available()

    def has_expired(self) -> bool:
        return self._connection.has_expired()

    def is_idle(self) -> bool:
        return self._connection.is_idle()

    def is_closed(self) -> bool:
        return self._connection.is_closed()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} [{self.info()}]>"


class _ForwardConnection(_Delegating):
    """http:// through the proxy: absolute-form request lines naming the pinned address."""

    def __init__(self, proxy: _ProxyEnd, remote: httpcore.Origin) -> None:
        self._proxy = proxy
        self._remote = remote
        self._connection = proxy.connection()

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        url = request.url
        port = b"" if url.port is None else b":%d" % url.port
        host = self._proxy.host_for(request, self._remote)
        absolute = b"%b://%b%b%b" % (url.scheme, host, port, url.target)
        forwarded = httpcore.Request(
            method=request.method,
            url=self._proxy.url(absolute),
            headers=self._proxy.merged(request.headers),  # Host: still the name
            content=request.stream,
            extensions=request.extensions,
        )
        return await self._connection.handle_async_request(forwarded)


class _TunnelConnection(_Delegating):
    """https:// through the proxy: CONNECT to the pinned address, TLS for the name."""

    def __init__(self, proxy: _ProxyEnd, remote: httpcore.Origin, ssl_context: ssl.SSLContext) -> None:
        self._proxy = proxy
        self._remote = remote
        self._ssl_context = ssl_context
        self._connection = proxy.connection()
        self._connect_lock = anyio.Lock()
        self._connected = False

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        async with self._connect_lock:
            if not self._connected:
                await self._open_tunnel(request)
        return await self._connection.handle_async_request(request)

    async def _open_tunnel(self, request: httpcore.Request) -> None:
        target = b"%b:%d" % (self._proxy.host_for(request, self._remote), self._remote.port)
        connect = httpcore.Request(
            method=b"CONNECT",
            url=self._proxy.url(target),
            headers=self._proxy.merged([(b"Host", target), (b"Accept", b"*/*")]),
            extensions=request.extensions,
        )
        response = await self._connection.handle_async_request(connect)
        if not 200 <= response.status <= 299:
            reason = response.extensions.get("reason_phrase", b"").decode("ascii", errors="ignore")
            await self._connection.aclose()
            raise httpcore.ProxyError(f"{response.status} {reason}".strip())
        stream: httpcore.AsyncNetworkStream = response.extensions["network_stream"]
        self._ssl_context.set_alpn_protocols(["http/1.1"])
        # The name, not the address we tunnelled to: SNI and the certificate check both use it.
        stream = await stream.start_tls(
            ssl_context=self._ssl_context,
            server_hostname=self._remote.host.decode("ascii"),
            timeout=request.extensions.get("timeout", {}).get("connect"),
        )
        self._connection = httpcore.AsyncHTTP11Connection(
            origin=self._remote, stream=stream, keepalive_expiry=self._proxy.keepalive_expiry
        )
        self._connected = True
