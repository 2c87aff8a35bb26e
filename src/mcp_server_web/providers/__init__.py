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
    from mcp_server_web.providers.base import TIME_RANGES, TOPICS, SearchQuery, SearchResult
    from mcp_server_web.providers.registry import (
        PROVIDERS,
        LazyChain,
        ProviderSpec,
        chain_order,
        spec_named,
        why_unconfigured,
    )
    from mcp_server_web.providers.results import normalize_domain

_WHERE = {
    "TIME_RANGES": "base",
    "TOPICS": "base",
    "SearchQuery": "base",
    "SearchResult": "base",
    "PROVIDERS": "registry",
    "LazyChain": "registry",
    "ProviderSpec": "registry",
    "chain_order": "registry",
    "spec_named": "registry",
    "why_unconfigured": "registry",
    "normalize_domain": "results",
}

__all__ = [
    "PROVIDERS",
    "TIME_RANGES",
    "TOPICS",
    "LazyChain",
    "ProviderSpec",
    "SearchQuery",
    "SearchResult",
    "chain_order",
    "normalize_domain",
    "spec_named",
    "why_unconfigured",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
