"""Which providers exist, which are configured, and in what order the chain tries them."""

from __future__ import annotations

import anyio
import httpx

from mcp_server_web.config import KNOWN_PROVIDERS, Settings
from mcp_server_web.providers.base import ProviderConfig, SearchProvider
from mcp_server_web.providers.chain import SearchChain
from mcp_server_web.providers.redact import url_secrets
from mcp_server_web.state import StateBackend


def provider_classes() -> dict[str, type[SearchProvider]]:
    """Every adapter by name, imported on first use (provider SDKs are slow to import)."""
    from mcp_server_web.providers.brave import BraveProvider
    from mcp_server_web.providers.duckduckgo import DuckDuckGoProvider
    from mcp_server_web.providers.exa import ExaProvider
    from mcp_server_web.providers.searxng import SearxngProvider
    from mcp_server_web.providers.tavily import TavilyProvider

    classes: list[type[SearchProvider]] = [
        TavilyProvider,
        ExaProvider,
        BraveProvider,
        SearxngProvider,
        DuckDuckGoProvider,
    ]
    by_name = {cls.name: cls for cls in classes}
    assert tuple(by_name) == KNOWN_PROVIDERS
    return by_name


def why_unconfigured(cls: type[SearchProvider], settings: Settings) -> str | None:
    """None when the provider can run with these settings, else what is missing."""
    if cls.enabled_by is None or getattr(settings, cls.enabled_by):
        return None
    return cls.setup_hint or f"{cls.title} is not configured."


def provider_config(cls: type[SearchProvider], settings: Settings) -> ProviderConfig:
    api_key = getattr(settings, cls.key_setting) if cls.key_setting else None
    base_url = getattr(settings, cls.url_setting) or cls.default_url
    return ProviderConfig(
        api_key=api_key,
        base_url=base_url.rstrip("/"),
        user_agent=settings.user_agent,
        secrets=configured_secrets(settings),
    )


def configured_secrets(settings: Settings) -> tuple[str, ...]:
    """Every secret in the settings that a provider could echo: each provider's key, credentials
    in the endpoint URLs and the proxy URL, and the server's own bearer token."""
    classes = provider_classes().values()
    keys = [getattr(settings, cls.key_setting) for cls in classes if cls.key_setting]
    urls = [getattr(settings, cls.url_setting) for cls in classes] + [settings.proxy]
    found = [*keys, *(secret for url in urls for secret in url_secrets(url)), settings.auth_token]
    return tuple(secret for secret in found if secret)


def chain_order(settings: Settings) -> tuple[str, ...]:
    """MCP_WEB_SEARCH_PROVIDERS when set, else every configured provider in the default order.

    DuckDuckGo needs no key, so it closes the default chain: there is always a last resort.
    """
    if settings.search_providers:
        return settings.search_providers
    classes = provider_classes()
    return tuple(name for name in KNOWN_PROVIDERS if why_unconfigured(classes[name], settings) is None)


def build_chain(
    settings: Settings, http: httpx.AsyncClient, state: StateBackend | None = None
) -> SearchChain:
    """The chain for these settings: configured providers in order, the others noted with why."""
    classes = provider_classes()
    unconfigured = {
        name: reason
        for name, cls in classes.items()
        if (reason := why_unconfigured(cls, settings)) is not None
    }
    providers = [
        classes[name](provider_config(classes[name], settings), http)
        for name in chain_order(settings)
        if name not in unconfigured
    ]
    return SearchChain(
        providers,
        unconfigured=unconfigured,
        provider_timeout=settings.search_timeout,
        deadline=settings.search_deadline,
        cache_ttl=settings.search_cache_ttl,
        state=state,
    )


class LazyChain:
    """Builds the chain on the first search: provider SDKs take ~0.4 s to import, and a server
    that is only asked to fetch should not pay that at start-up."""

    def __init__(
        self, settings: Settings, http: httpx.AsyncClient, state: StateBackend | None = None
    ) -> None:
        self._settings = settings
        self._http = http
        self._state = state
        self._chain: SearchChain | None = None
        self._lock = anyio.Lock()

    async def get(self) -> SearchChain:
        async with self._lock:
            if self._chain is None:
                # Imports run in a worker thread so they do not stall calls already in flight.
                await anyio.to_thread.run_sync(provider_classes)
                self._chain = build_chain(self._settings, self._http, self._state)
            return self._chain

    async def aclose(self) -> None:
        if self._chain is not None:
            await self._chain.aclose()
