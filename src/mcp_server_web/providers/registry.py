"""The search providers: each one's declaration, once, and the chain built from them.

``PROVIDERS`` is the only list of providers. Each entry says what the rest of the server knows of
a provider without importing its adapter (Tavily's and Exa's SDKs take up to a second to
import): its name, its human title, what switches it on, how to switch it on, and where its
adapter class lives. From it come the settings and their environment variables (``config``),
the ``provider`` enum of web_search's input schema, the CLI's choices, ``doctor`` and the
messages that say how to configure a provider. The adapter class (``providers/<name>.py``) holds
only what speaks the provider's wire format, and finds its own name and title here.

``config`` reads this module at start-up, so it imports nothing of the package at module level:
what building the chain needs is imported inside the functions that build it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import httpx

    from mcp_server_web.config import Settings
    from mcp_server_web.providers.base import ProviderConfig, SearchProvider
    from mcp_server_web.providers.chain import SearchChain
    from mcp_server_web.state import StateBackend


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider's declaration. Its settings follow from ``name`` and ``needs``:

    - ``needs="key"``: the key in ``<NAME>_API_KEY`` switches it on; ``MCP_WEB_<NAME>_URL``
      overrides its endpoint (the adapter's ``default_url``).
    - ``needs="url"``: a self-hosted instance; its address in ``<NAME>_URL`` switches it on.
    - ``needs=None``: nothing to configure; ``MCP_WEB_<NAME>_URL`` overrides its endpoint.
    """

    name: str
    """Identifier in MCP_WEB_SEARCH_PROVIDERS, in web_search's ``provider`` and in answers."""
    title: str
    """Human name, in messages and `doctor`."""
    adapter: str
    """``module:Class`` of the adapter, imported on the first search."""
    needs: Literal["key", "url"] | None
    hint: str
    """How a user switches it on, for `doctor` and error messages; ``{setting}`` stands for the
    environment variable that does it."""

    @property
    def key_env(self) -> str | None:
        return f"{self.name.upper()}_API_KEY" if self.needs == "key" else None

    @property
    def url_env(self) -> str:
        return f"{self.name.upper()}_URL" if self.needs == "url" else f"MCP_WEB_{self.name.upper()}_URL"

    @property
    def switch_env(self) -> str | None:
        """The environment variable that switches the provider on; None when nothing does."""
        return self.key_env if self.needs == "key" else self.url_env if self.needs == "url" else None

    @property
    def setup_hint(self) -> str:
        return self.hint.format(setting=self.switch_env)


PROVIDERS: tuple[ProviderSpec, ...] = (
    # The default chain tries them in this order; DuckDuckGo needs nothing, so it closes it.
    ProviderSpec(
        "tavily",
        "Tavily",
        "mcp_server_web.providers.tavily:TavilyProvider",
        needs="key",
        hint="Set {setting} to switch Tavily on (get a key at https://app.tavily.com; "
        "the free tier includes monthly credits).",
    ),
    ProviderSpec(
        "exa",
        "Exa",
        "mcp_server_web.providers.exa:ExaProvider",
        needs="key",
        hint="Set {setting} to switch Exa on (get a key at https://dashboard.exa.ai).",
    ),
    ProviderSpec(
        "brave",
        "Brave Search",
        "mcp_server_web.providers.brave:BraveProvider",
        needs="key",
        hint="Set {setting} to a Brave Search API key from https://brave.com/search/api/ "
        "(the free plan allows about 2,000 queries a month at 1 query per second).",
    ),
    ProviderSpec(
        "searxng",
        "SearXNG",
        "mcp_server_web.providers.searxng:SearxngProvider",
        needs="url",
        hint="Set {setting} to your SearXNG instance (e.g. http://localhost:8080) and enable the JSON "
        "output: add `json` to `search.formats` in its settings.yml.",
    ),
    ProviderSpec(
        "duckduckgo",
        "DuckDuckGo",
        "mcp_server_web.providers.duckduckgo:DuckDuckGoProvider",
        needs=None,
        hint="DuckDuckGo needs no key; it reads DuckDuckGo's HTML results page.",
    ),
)


def spec_named(name: str) -> ProviderSpec:
    for spec in PROVIDERS:
        if spec.name == name:
            return spec
    raise KeyError(name)


def spec_for(cls: type) -> ProviderSpec:
    """The declaration of an adapter class (or of the adapter a subclass extends)."""
    by_adapter = {spec.adapter: spec for spec in PROVIDERS}
    for klass in cls.__mro__:
        spec = by_adapter.get(f"{klass.__module__}:{klass.__qualname__}")
        if spec is not None:
            return spec
    raise LookupError(f"{cls.__qualname__} is not registered in providers/registry.py PROVIDERS")


def adapter_class(spec: ProviderSpec) -> type[SearchProvider]:
    module, _, attr = spec.adapter.partition(":")
    cls: type[SearchProvider] = getattr(importlib.import_module(module), attr)
    return cls


def provider_classes() -> dict[str, type[SearchProvider]]:
    """Every adapter by name, imported on first use (provider SDKs are slow to import)."""
    return {spec.name: adapter_class(spec) for spec in PROVIDERS}


def why_unconfigured(spec: ProviderSpec, settings: Settings) -> str | None:
    """None when the provider can run with these settings, else what is missing."""
    switched_on = {
        "key": settings.provider_key(spec.name),
        "url": settings.provider_url(spec.name),
        None: True,
    }[spec.needs]
    if switched_on:
        return None
    return spec.setup_hint or f"{spec.title} is not configured."


def no_provider_hint() -> str:
    """What switches a provider on, for the error when none is: "A, B or C"."""
    switches = [spec.switch_env for spec in PROVIDERS if spec.switch_env]
    return ", ".join(switches[:-1]) + " or " + switches[-1] if len(switches) > 1 else "".join(switches)


def provider_config(cls: type[SearchProvider], settings: Settings) -> ProviderConfig:
    from mcp_server_web.providers.base import ProviderConfig

    name = spec_for(cls).name
    base_url = settings.provider_url(name) or cls.default_url
    return ProviderConfig(
        api_key=settings.provider_key(name),
        base_url=base_url.rstrip("/"),
        user_agent=settings.user_agent,
        secrets=configured_secrets(settings),
    )


def configured_secrets(settings: Settings) -> tuple[str, ...]:
    """Every secret in the settings that a provider could echo: each provider's key, credentials
    in the endpoint URLs and the proxy URL, and the server's own bearer token."""
    from mcp_server_web.providers.redact import url_secrets

    keys = [settings.provider_key(spec.name) for spec in PROVIDERS]
    urls = [settings.provider_url(spec.name) for spec in PROVIDERS] + [settings.proxy]
    found = [*keys, *(secret for url in urls for secret in url_secrets(url)), settings.auth_token]
    return tuple(secret for secret in found if secret)


def chain_order(settings: Settings) -> tuple[str, ...]:
    """MCP_WEB_SEARCH_PROVIDERS when set, else every configured provider in the default order.

    DuckDuckGo needs no key, so it closes the default chain: there is always a last resort.
    """
    if settings.search_providers:
        return settings.search_providers
    return tuple(spec.name for spec in PROVIDERS if why_unconfigured(spec, settings) is None)


def build_chain(
    settings: Settings, http: httpx.AsyncClient, state: StateBackend | None = None
) -> SearchChain:
    """The chain for these settings: configured providers in order, the others noted with why."""
    from mcp_server_web.providers.chain import SearchChain

    unconfigured = {
        spec.name: reason for spec in PROVIDERS if (reason := why_unconfigured(spec, settings)) is not None
    }
    providers: list[SearchProvider] = []
    for name in chain_order(settings):
        if name not in unconfigured:
            cls = adapter_class(spec_named(name))
            providers.append(cls(provider_config(cls, settings), http))
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
        import anyio

        self._settings = settings
        self._http = http
        self._state = state
        self._chain: SearchChain | None = None
        self._lock = anyio.Lock()

    async def get(self) -> SearchChain:
        import anyio

        async with self._lock:
            if self._chain is None:
                # Imports run in a worker thread so they do not stall calls already in flight.
                await anyio.to_thread.run_sync(provider_classes)
                self._chain = build_chain(self._settings, self._http, self._state)
            return self._chain

    async def aclose(self) -> None:
        if self._chain is not None:
            await self._chain.aclose()
