"""The composition root: the libraries' own config objects, built from the server's Settings.

``fetch`` and ``providers`` never see Settings: each takes a small config object of its own, and
this is the one place that knows which setting feeds which field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from mcp_server_web.config import OPTIONS, OPTIONS_BY_ATTR, Settings, check_fetch_fallback
from mcp_server_web.fetch import (
    INSTALL_HINT,
    BrowserChoice,
    BrowserProxy,
    FetchConfig,
    Fetcher,
    RenderConfig,
    Renderer,
    find_browser,
    playwright_installed,
)
from mcp_server_web.providers import ORDER_PARAMETER, ProvidersConfig, key_parameter, url_parameter

if TYPE_CHECKING:
    from mcp_server_web.providers import LazyReadThrough
    from mcp_server_web.state import StateBackend


def fetch_config(settings: Settings) -> FetchConfig:
    """What the Fetcher and the FetchService of a server with these settings run with."""
    return FetchConfig(
        timeout=settings.timeout,
        max_response_bytes=settings.max_response_bytes,
        user_agent=settings.user_agent,
        respect_robots=settings.respect_robots,
        proxy=settings.proxy,
        allow_private=settings.allow_private,
        allow_cidrs=settings.allow_cidrs,
        cache_max_bytes=settings.cache_max_bytes,
        cache_ttl=settings.cache_ttl,
        pdf_max_pages=settings.pdf_max_pages,
    )


def browser_choice(settings: Settings) -> tuple[BrowserChoice | None, str]:
    """The browser renders would use, or None and why not (a sentence that says how to get one)."""
    browser_env = OPTIONS_BY_ATTR["browser"].env
    if settings.render == "off":
        return None, f"rendering is off on this server ({OPTIONS_BY_ATTR['render'].env}=off)"
    if not playwright_installed():
        return None, (
            "Playwright is not installed: install the render extra "
            "('pip install \"mcp-server-web[render]\"') and a browser for it"
        )
    choice = find_browser(settings.browser)
    if choice is None and settings.browser:
        return None, f"{browser_env}={settings.browser} is neither an executable file nor a command on PATH"
    if choice is None:
        return None, f"no browser was found: {INSTALL_HINT} ({browser_env})"
    return choice, ""


def renderer(settings: Settings, fetcher: Fetcher) -> tuple[Renderer | None, str]:
    """The renderer of a server with these settings over this fetcher's address policy and
    proxy routes, or None and why there is none."""
    choice, why_not = browser_choice(settings)
    if choice is None:
        return None, why_not
    proxy = BrowserProxy(policy=fetcher.policy, resolver=fetcher.resolver, routes=fetcher.routes)
    config = RenderConfig(
        executable=choice.executable,
        timeout=settings.render_timeout,
        concurrency=settings.render_concurrency,
        max_memory_bytes=settings.render_max_bytes,
        max_bytes=settings.max_response_bytes,
        user_agent=settings.user_agent,
    )
    return Renderer(config, proxy), ""


def read_through(settings: Settings, http: httpx.AsyncClient, state: StateBackend) -> LazyReadThrough | None:
    """The third parties web_fetch may ask for a page's text, in the operator's order, over the
    providers' client and sharing the search chain's cooldowns (``state``); None when the operator
    listed none. A listed provider without its key is a ConfigError."""
    if not settings.fetch_fallback:
        return None
    check_fetch_fallback(settings)
    from mcp_server_web.providers import LazyReadThrough  # the search library, loaded when used

    return LazyReadThrough(
        providers_config(settings), settings.fetch_fallback, http, state, timeout=settings.timeout
    )


def providers_config(settings: Settings) -> ProvidersConfig:
    """What the search chain of a server with these settings runs with."""
    return ProvidersConfig(
        keys=dict(settings.provider_keys),
        urls=dict(settings.provider_urls),
        order=settings.search_providers,
        user_agent=settings.user_agent,
        provider_timeout=settings.search_timeout,
        deadline=settings.search_deadline,
        cache_ttl=settings.search_cache_ttl,
        mode=settings.search_mode,
        fanout=settings.search_fanout,
        rps=dict(settings.provider_rps),
        daily_limits=dict(settings.provider_daily_limits),
        auth_cooldown=settings.auth_cooldown,
        secrets=tuple(secret for secret in (settings.proxy, settings.auth_token) if secret),
        names=_PROVIDER_SETTING_NAMES,
    )


def _provider_setting_names() -> dict[str, str]:
    """Each ProvidersConfig parameter by the environment variable that feeds it."""
    names = {ORDER_PARAMETER: OPTIONS_BY_ATTR["search_providers"].env}
    for option in OPTIONS:
        if option.provider is not None and option.provider[1] in ("key", "url"):
            provider, which = option.provider
            names[key_parameter(provider) if which == "key" else url_parameter(provider)] = option.env
    return names


_PROVIDER_SETTING_NAMES = _provider_setting_names()


def state_backend(settings: Settings) -> StateBackend:
    """Where a server with these settings keeps the state replicas share: this process's memory,
    or the Redis at MCP_WEB_REDIS_URL (its client imported only then)."""
    from mcp_server_web.state import Codec, MemoryState, redis_state

    if settings.redis_url is None:
        return MemoryState()
    from mcp_server_web.server.shared_types import shared_types

    return redis_state(settings.redis_url, prefix=settings.redis_prefix, codec=Codec(shared_types()))
