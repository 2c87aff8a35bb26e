"""The composition root: the libraries' own config objects, built from the server's Settings.

``fetch`` and ``providers`` never see Settings: each takes a small config object of its own, and
this is the one place that knows which setting feeds which field.
"""

from __future__ import annotations

from mcp_server_web.config import Settings
from mcp_server_web.fetch import FetchConfig


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
