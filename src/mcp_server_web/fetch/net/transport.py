"""The network layer under the Fetcher: connections pinned to vetted addresses, and proxy routing.

DNS pinning: ``PinnedBackend`` sits under httpcore's connection pool. When the pool opens a
connection it resolves the host once, vets every answer, and connects to the vetted address
itself, so a DNS answer that changes between "check" and "connect" (DNS rebinding) cannot steer
the socket. Through an outbound proxy the same holds: the proxy is handed the vetted address,
not the name (``GuardedTransport`` and pinned_proxy.py).
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable

import anyio
import httpcore
import httpx

from mcp_server_web.errors import ConfigError, WebToolError
from mcp_server_web.fetch.net.addresses import AddressPolicy
from mcp_server_web.fetch.net.pinned_proxy import PINNED_ADDRESS, PinnedProxyPool
from mcp_server_web.fetch.net.proxy import ProxyRoutes
from mcp_server_web.fetch.net.resolution import Resolver, check_unresolved, vet_host
from mcp_server_web.fetch.net.urls import resolve_redirect


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """A network backend that only connects to addresses the policy accepted.

    ``connect_tcp`` resolves the host once with our resolver (IP literals are used as they are),
    refuses the connection with BlockedAddress if ANY answer is refused, then connects to the
    vetted addresses in order until one accepts. The name is never handed to a lower layer that
    could resolve it again.

    TLS still verifies the real host name: httpcore's ``AsyncHTTPConnection._connect`` calls
    ``stream.start_tls(server_hostname=sni_hostname or self._origin.host)`` on the stream returned
    here, and the origin is the request's URL host, not the address we connected to (checked
    against httpcore 1.0.9, httpcore/_async/connection.py).
    """

    def __init__(
        self, inner: httpcore.AsyncNetworkBackend, resolver: Resolver, policy: AddressPolicy
    ) -> None:
        self._inner = inner
        self._resolver = resolver
        self._policy = policy

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                addresses = await vet_host(host, port, self._resolver, self._policy)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} took too long") from None
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # vet_host never returns an empty list
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the fetcher")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _BackendTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (request/response mapping, error mapping), over our network backend.

    httpx builds its httpcore pool without a way to pass a network backend, so the pool is
    rebuilt here with the same arguments httpx uses (httpx 0.28, _transports/default.py).
    """

    def __init__(
        self,
        backend: httpcore.AsyncNetworkBackend,
        ssl_context: ssl.SSLContext,
        limits: httpx.Limits,
        proxy: httpx.Proxy | None = None,
        pinned: bool = True,
    ) -> None:
        super().__init__(verify=ssl_context, limits=limits, trust_env=False)
        pool: httpcore.AsyncConnectionPool
        if proxy is None:
            pool = httpcore.AsyncConnectionPool(
                ssl_context=ssl_context,
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry,
                http1=True,
                http2=False,
                network_backend=backend,
            )
        else:
            pool = PinnedProxyPool(
                pinned=pinned,
                proxy_url=httpcore.URL(
                    scheme=proxy.url.raw_scheme,
                    host=proxy.url.raw_host,
                    port=proxy.url.port,
                    target=proxy.url.raw_path,
                ),
                proxy_auth=proxy.raw_auth,
                proxy_headers=proxy.headers.raw,
                proxy_ssl_context=proxy.ssl_context,
                ssl_context=ssl_context,
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry,
                network_backend=backend,
            )
        self._pool = pool


class GuardedTransport(httpx.AsyncBaseTransport):
    """Routes each request: straight out over pinned connections, or through a proxy.

    Through a proxy the socket goes to the proxy, which the operator configured, so the proxy's
    address is not vetted. The target is pinned through the proxy instead: we resolve its name
    once, refuse the request if any answer is refused, and hand the proxy the first vetted
    ADDRESS, never the name (pinned_proxy.py): ``GET http://IP:port/path`` with ``Host: name``
    for http://, ``CONNECT IP:port`` then TLS with the name as SNI and certificate name for
    https://. The proxy therefore never resolves the name itself, so a name that answers
    differently to a second lookup (DNS rebinding) cannot steer it. Unlike direct connections,
    the other vetted addresses are not tried when the first fails. Every redirect hop is a new
    request through here, so it is vetted and pinned again. NO_PROXY destinations go direct.

    Caveat: a proxy that follows RFC 9112 section 3.2.2 to the letter rebuilds the Host header
    from the request line, so a name-based virtual host on plain http:// may see the address as
    its Host; https:// is unaffected (Host travels inside the tunnel).

    When the policy allows private addresses nothing is resolved beforehand: the proxy is handed
    the name and resolves it, which suits setups where only the proxy can resolve outside names.
    What needs no lookup is still refused first: IP literals of the metadata services, and their
    names (``check_unresolved``).
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy,
        resolver: Resolver,
        backend: httpcore.AsyncNetworkBackend,
        routes: ProxyRoutes,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._routes = routes
        # Honours SSL_CERT_FILE / SSL_CERT_DIR, like httpx does by default.
        ssl_context = httpx.create_ssl_context(trust_env=True)
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
        self._direct = _BackendTransport(PinnedBackend(backend, resolver, policy), ssl_context, limits)
        self._proxied: dict[str, _BackendTransport] = {}
        for proxy_url in routes.proxies:
            try:
                proxy = httpx.Proxy(proxy_url)
            except (ValueError, httpx.InvalidURL) as exc:
                raise ConfigError(f"the proxy URL is not usable: {exc}") from None
            if proxy.url.scheme not in ("http", "https"):
                raise ConfigError(
                    f"only http:// and https:// proxies are supported, not {proxy.url.scheme}://."
                )
            self._proxied[proxy_url] = _BackendTransport(
                backend, ssl_context, limits, proxy, pinned=not policy.allow_private
            )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._route(request)
        if response.has_redirect_location:
            await _canonical_location(request, response)
        return response

    async def _route(self, request: httpx.Request) -> httpx.Response:
        proxy_url = self._routes.proxy_for(request.url)
        if proxy_url is None:
            return await self._direct.handle_async_request(request)
        host = request.url.raw_host.decode("ascii")
        if not self._policy.allow_private:
            port = request.url.port or (443 if request.url.scheme == "https" else 80)
            addresses = await vet_host(host, port, self._resolver, self._policy)
            request.extensions = {**request.extensions, PINNED_ADDRESS: str(addresses[0])}
        else:
            check_unresolved(host, self._policy)
        return await self._proxied[proxy_url].handle_async_request(request)

    async def aclose(self) -> None:
        await self._direct.aclose()
        for transport in self._proxied.values():
            await transport.aclose()


async def _canonical_location(request: httpx.Request, response: httpx.Response) -> None:
    """Replace a redirect's Location with the URL parse_url makes of it, or refuse it now.

    httpx's client parses every Location header, even with follow_redirects=False (to offer
    ``response.next_request``), and its parser disagrees with ours: "http://0177.0.0.1/" or
    "http://１２７．０．０．１/" fail there with "not valid HTTP", and "http:127.0.0.1/" with an
    untyped httpx.InvalidURL. Parsing the target here the way the Fetcher will lets a redirect
    to a refused address be reported as one (BlockedAddress, InvalidURL), and hands httpx only
    URLs it can read.
    """
    try:
        target = resolve_redirect(request.url, response.headers["location"])
    except WebToolError:
        await response.aclose()
        raise
    response.headers["location"] = str(target)
