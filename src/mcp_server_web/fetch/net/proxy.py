"""Which outbound proxy, if any, a URL goes through (the configured one, the standard variables, NO_PROXY)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping

import httpx

from mcp_server_web.fetch.net.addresses import literal_ip


def _env(environ: Mapping[str, str], name: str) -> str | None:
    # Lower case wins, as in curl and urllib.
    value = (environ.get(name.lower()) or environ.get(name.upper()) or "").strip()
    return value or None


class ProxyRoutes:
    """Which proxy, if any, a URL goes through: the configured one, else the standard variables.

    A configured proxy (FetchConfig.proxy) applies to http and https; otherwise HTTP_PROXY /
    HTTPS_PROXY (falling back to ALL_PROXY) per scheme. NO_PROXY is honoured in both cases: "*",
    host names (matching sub-domains, with or without a leading dot) and IP addresses or CIDR
    ranges; a ":port" suffix on an entry is ignored.
    """

    def __init__(
        self, http: str | None = None, https: str | None = None, no_proxy: Iterable[str] = ()
    ) -> None:
        self.by_scheme = {"http": _with_scheme(http), "https": _with_scheme(https)}
        self.no_proxy = tuple(entry for entry in (_no_proxy_entry(raw) for raw in no_proxy) if entry)

    @classmethod
    def configured(cls, proxy: str | None, environ: Mapping[str, str] | None = None) -> ProxyRoutes:
        """``proxy`` for both schemes when given, else the standard variables of ``environ``."""
        environ = os.environ if environ is None else environ
        no_proxy = (_env(environ, "NO_PROXY") or "").split(",")
        if proxy:
            return cls(proxy, proxy, no_proxy)
        fallback = _env(environ, "ALL_PROXY")
        return cls(
            _env(environ, "HTTP_PROXY") or fallback,
            _env(environ, "HTTPS_PROXY") or fallback,
            no_proxy,
        )

    @property
    def proxies(self) -> set[str]:
        return {proxy for proxy in self.by_scheme.values() if proxy}

    def proxy_for(self, url: httpx.URL) -> str | None:
        proxy = self.by_scheme.get(url.scheme)
        if proxy is None or self._bypassed(url.raw_host.decode("ascii")):
            return None
        return proxy

    def _bypassed(self, host: str) -> bool:
        address = literal_ip(host)
        for entry in self.no_proxy:
            if entry == "*":
                return True
            if address is not None:
                try:
                    network = ipaddress.ip_network(entry, strict=False)
                except ValueError:
                    continue
                if address.version == network.version and address in network:
                    return True
            elif host.rstrip(".") == entry or host.rstrip(".").endswith("." + entry):
                return True
        return False


def _with_scheme(proxy: str | None) -> str | None:
    if proxy and "://" not in proxy:
        return "http://" + proxy  # curl's reading of "proxy.corp:3128"
    return proxy


def _no_proxy_entry(raw: str) -> str:
    entry = raw.strip().lower()
    if entry.startswith("[") and "]" in entry:
        return entry[1 : entry.index("]")]
    if entry.count(":") == 1:
        entry = entry.split(":", 1)[0]
    return entry.removeprefix("*.").lstrip(".").rstrip(".")


class RoutedTransport(httpx.AsyncBaseTransport):
    """Sends each request through the proxy ``routes`` picks for its URL, or directly.

    For endpoints the operator configured (search providers), not for user-given URLs: nothing
    here vets addresses (the Fetcher's pinned transports do). It exists because an httpx client
    given ``proxy=`` sends everything there, NO_PROXY hosts included, and its own reading of the
    environment (``trust_env``) knows no CIDR ranges and never applies to an explicit proxy.
    """

    def __init__(self, routes: ProxyRoutes) -> None:
        self._routes = routes
        # trust_env here only reads SSL_CERT_FILE / SSL_CERT_DIR: the proxy is chosen above.
        self._direct = httpx.AsyncHTTPTransport(trust_env=True)
        self._through = {
            proxy: httpx.AsyncHTTPTransport(proxy=proxy, trust_env=True) for proxy in routes.proxies
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        proxy = self._routes.proxy_for(request.url)
        transport = self._direct if proxy is None else self._through[proxy]
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        for transport in (self._direct, *self._through.values()):
            await transport.aclose()
