"""The long-lived objects a running server shares between tool calls, opened in its lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_server_web.config import Settings
from mcp_server_web.fetch import Fetcher, FetchService
from mcp_server_web.providers import LazyChain


@dataclass(frozen=True)
class Services:
    settings: Settings
    fetcher: Fetcher
    fetch: FetchService
    search: LazyChain
