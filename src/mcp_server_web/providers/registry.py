"""The search providers: each one's declaration, once, and the chain built from them.

``PROVIDERS`` is the only list of providers. Each entry says what the rest of the server knows of
a provider without importing its adapter (Tavily's and Exa's SDKs take up to a second to
import): its name, its human title, what switches it on, how to switch it on, and where its
adapter class lives. From it come the server's settings and their environment variables
(``config``), the ``provider`` enum of web_search's input schema, the CLI's choices, ``doctor``
and the messages that say how to configure a provider. The adapter class (``providers/<name>.py``) holds
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

    from mcp_server_web.providers.base import ProviderConfig, SearchProvider
    from mcp_server_web.providers.chain import SearchChain
    from mcp_server_web.providers.config import ProvidersConfig
    from mcp_server_web.state import StateBackend


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider's declaration. What switches it on follows from ``needs``:

    - ``needs="key"``: an API key (``ProvidersConfig.keys``); its endpoint can be overridden
      (``ProvidersConfig.urls``, else the adapter's ``default_url``).
    - ``needs="url"``: a self-hosted instance; its address (``ProvidersConfig.urls``) switches it on.
    - ``needs=None``: nothing to configure; its endpoint can be overridden.
    """

    name: str
    """Identifier in ``ProvidersConfig.order``, in web_search's ``provider`` and in answers."""
    title: str
    """Human name, in messages and `doctor`."""
    adapter: str
    """``module:Class`` of the adapter, imported on the first search."""
    needs: Literal["key", "url"] | None
    hint: str
    """How a user switches it on, for `doctor` and error messages; ``{setting}`` stands for the
    name of the value that does it (``ProvidersConfig.name_of``)."""
    rps: float | None = None
    """Requests per second the provider's entry plan allows, the default pace; None: unpaced."""

    @property
    def switch_parameter(self) -> str | None:
        """The ``ProvidersConfig`` value that switches the provider on; None when nothing does."""
        from mcp_server_web.providers.config import key_parameter, url_parameter

        if self.needs == "key":
            return key_parameter(self.name)
        if self.needs == "url":
            return url_parameter(self.name)
        return None

    def setup_hint(self, config: ProvidersConfig) -> str:
        switch = self.switch_parameter
        return self.hint.format(setting=config.name_of(switch) if switch else "")


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
        rps=1.0,
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


READERS: tuple[str, ...] = ("tavily", "exa")
"""The providers that can also read one page's text for web_fetch (providers/extract.py)."""


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


def why_unconfigured(spec: ProviderSpec, config: ProvidersConfig) -> str | None:
    """None when the provider can run with this config, else what is missing."""
    switched_on = {
        "key": spec.name in config.keys,
        "url": spec.name in config.urls,
        None: True,
    }[spec.needs]
    if switched_on:
        return None
    return spec.setup_hint(config) or f"{spec.title} is not configured."


def no_provider_message(config: ProvidersConfig) -> str:
    """The error when no provider is left to ask: what the configuration lacks, in the names the
    caller uses. When the order is set, the providers it lists are what needs setting up, not the
    order the caller has already set."""
    from mcp_server_web.providers.config import ORDER_PARAMETER

    order = config.name_of(ORDER_PARAMETER)
    if config.order:
        listed = " and ".join(config.order) if len(config.order) <= 2 else ", ".join(config.order)
        hints = [reason for name in config.order if (reason := why_unconfigured(spec_named(name), config))]
        state = "it is not" if len(config.order) == 1 else "none of them is"
        return (
            f"no search provider is configured: {order} lists {listed}, and {state} set up. {' '.join(hints)}"
        )
    switches = [config.name_of(p) for spec in PROVIDERS if (p := spec.switch_parameter)]
    either = ", ".join(switches[:-1]) + " or " + switches[-1] if len(switches) > 1 else "".join(switches)
    return f"no search provider is configured; set {order} or a provider key ({either})."


def provider_config(cls: type[SearchProvider], config: ProvidersConfig) -> ProviderConfig:
    """What the adapter ``cls`` is built with under ``config``."""
    from mcp_server_web.providers.base import ProviderConfig
    from mcp_server_web.providers.config import key_parameter, url_parameter

    spec = spec_for(cls)
    base_url = config.urls.get(spec.name) or cls.default_url
    return ProviderConfig(
        api_key=config.keys.get(spec.name),
        base_url=base_url.rstrip("/"),
        user_agent=config.user_agent,
        secrets=configured_secrets(config),
        key_name=config.name_of(key_parameter(spec.name)),
        url_name=config.name_of(url_parameter(spec.name)),
        setup_hint=spec.setup_hint(config),
    )


def configured_secrets(config: ProvidersConfig) -> tuple[str, ...]:
    """Every secret in the config that a provider could echo: each provider's key, credentials
    in the endpoint URLs, and the other secrets the caller named (and the credentials in them,
    when they are URLs)."""
    from mcp_server_web.providers.redact import url_secrets

    urls = [*config.urls.values(), *config.secrets]
    found = [*config.keys.values(), *config.secrets, *(secret for url in urls for secret in url_secrets(url))]
    return tuple(secret for secret in found if secret)


def chain_order(config: ProvidersConfig) -> tuple[str, ...]:
    """``config.order`` when set, else every configured provider in the default order.

    DuckDuckGo needs no key, so it closes the default chain: there is always a last resort.
    """
    if config.order:
        return config.order
    return tuple(spec.name for spec in PROVIDERS if why_unconfigured(spec, config) is None)


def build_chain(
    config: ProvidersConfig, http: httpx.AsyncClient, state: StateBackend | None = None
) -> SearchChain:
    """The chain for this config: configured providers in order, the others noted with why."""
    from mcp_server_web.providers.chain import SearchChain

    unconfigured = {
        spec.name: reason for spec in PROVIDERS if (reason := why_unconfigured(spec, config)) is not None
    }
    providers: list[SearchProvider] = []
    for name in chain_order(config):
        if name not in unconfigured:
            cls = adapter_class(spec_named(name))
            providers.append(cls(provider_config(cls, config), http))
    return SearchChain(
        providers,
        unconfigured=unconfigured,
        no_provider=no_provider_message(config),
        provider_timeout=config.provider_timeout,
        deadline=config.deadline,
        cache_ttl=config.cache_ttl,
        state=state,
        mode=config.mode,
        fanout=config.fanout,
        rps=config.rps,
        daily_limits=config.daily_limits,
        auth_cooldown=config.auth_cooldown,
    )


class LazyChain:
    """Builds the chain on the first search: provider SDKs take ~0.4 s to import, and a server
    that is only asked to fetch should not pay that at start-up."""

    def __init__(
        self,
        config: ProvidersConfig,
        http: httpx.AsyncClient,
        state: StateBackend | None = None,
        *,
        readers: tuple[str, ...] = (),
    ) -> None:
        """readers: the providers web_fetch reads pages through (``LazyReadThrough``), whose
        calls count in the same figures as searches, reported beside the chain's."""
        import anyio

        self._config = config
        self._http = http
        self._state = state
        self._readers = readers
        self._chain: SearchChain | None = None
        self._lock = anyio.Lock()

    async def get(self) -> SearchChain:
        import anyio

        async with self._lock:
            if self._chain is None:
                # Imports run in a worker thread so they do not stall calls already in flight.
                await anyio.to_thread.run_sync(provider_classes)
                self._chain = build_chain(self._config, self._http, self._state)
            return self._chain

    async def status(self) -> dict[str, dict[str, object]] | None:
        """Each provider's use today, limits and cooldown (``SearchChain.status``), the chain's
        and the readers', read from the state whether or not a search built the chain yet (a
        server may only have read pages through a provider); None when the chain keeps its own
        state (no backend was given) and no search built it yet."""
        if self._state is None:
            return None if self._chain is None else await self._chain.status()
        from mcp_server_web.providers.chain import search_status

        config = self._config
        configured = [n for n in chain_order(config) if why_unconfigured(spec_named(n), config) is None]
        names = tuple(dict.fromkeys([*configured, *self._readers]))
        return await search_status(self._state, names, rps=config.rps, daily_limits=config.daily_limits)

    async def aclose(self) -> None:
        if self._chain is not None:
            await self._chain.aclose()
