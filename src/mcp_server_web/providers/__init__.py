"""Web search: one port (base.py), one small adapter per provider, one declaration per provider
(registry.py), and the fallback chain.

The names below are the surface the rest of the project uses. They are loaded on first use:
config.py reads the provider declarations at start-up, and importing the adapters (the Tavily
and Exa SDKs take most of a second) or the chain then would cost every start, and would import
fetch from inside config's own import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_server_web.providers.base import (
        PAGE_LIMIT,
        SAFESEARCH_LEVELS,
        TIME_RANGES,
        TOPICS,
        SafeSearch,
        SearchQuery,
        SearchResult,
        TimeRange,
        Topic,
    )
    from mcp_server_web.providers.chain import Attempt, SearchAnswer, SearchMode, search_status
    from mcp_server_web.providers.config import (
        ORDER_PARAMETER,
        ProvidersConfig,
        key_parameter,
        url_parameter,
    )
    from mcp_server_web.providers.extract import LazyReadThrough
    from mcp_server_web.providers.registry import (
        PROVIDERS,
        READERS,
        LazyChain,
        ProviderSpec,
        chain_order,
        no_provider_message,
        spec_named,
        why_unconfigured,
    )
    from mcp_server_web.providers.results import normalize_domain

_WHERE = {
    "PAGE_LIMIT": "base",
    "SAFESEARCH_LEVELS": "base",
    "SafeSearch": "base",
    "Attempt": "chain",
    "SearchAnswer": "chain",
    "SearchMode": "chain",
    "TIME_RANGES": "base",
    "TOPICS": "base",
    "SearchQuery": "base",
    "SearchResult": "base",
    "TimeRange": "base",
    "Topic": "base",
    "ORDER_PARAMETER": "config",
    "ProvidersConfig": "config",
    "key_parameter": "config",
    "url_parameter": "config",
    "PROVIDERS": "registry",
    "READERS": "registry",
    "LazyReadThrough": "extract",
    "LazyChain": "registry",
    "ProviderSpec": "registry",
    "chain_order": "registry",
    "no_provider_message": "registry",
    "spec_named": "registry",
    "why_unconfigured": "registry",
    "normalize_domain": "results",
    "search_status": "chain",
}

__all__ = [
    "ORDER_PARAMETER",
    "PAGE_LIMIT",
    "PROVIDERS",
    "READERS",
    "SAFESEARCH_LEVELS",
    "TIME_RANGES",
    "TOPICS",
    "Attempt",
    "LazyChain",
    "LazyReadThrough",
    "ProviderSpec",
    "ProvidersConfig",
    "SafeSearch",
    "SearchAnswer",
    "SearchMode",
    "SearchQuery",
    "SearchResult",
    "TimeRange",
    "Topic",
    "chain_order",
    "key_parameter",
    "no_provider_message",
    "normalize_domain",
    "search_status",
    "spec_named",
    "url_parameter",
    "why_unconfigured",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
