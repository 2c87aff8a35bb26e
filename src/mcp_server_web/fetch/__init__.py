"""URL -> clean, paginated document. Knows nothing about MCP; usable as a library.

The names below are the surface the rest of the project (and any other caller) uses; the
modules behind them are private to the package. ``net/`` is the network half (the one outbound
path for user-given URLs), ``doc/`` the document half (bytes to text, no network); the service,
its cache, the pages and the conversion workers sit on top of both. Importing this surface does
not import the conversion stack (lxml, readability, trafilatura): that is loaded by the
conversion workers only, nor Playwright: that is loaded by the first render.

``browser/`` is the other way of getting a document: a headless Chromium (Playwright) whose every
connection goes through a vetting, pinning proxy inside the process.
"""

from mcp_server_web.fetch.browser.launch import (
    INSTALL_HINT,
    BrowserChoice,
    find_browser,
    playwright_installed,
)
from mcp_server_web.fetch.browser.proxy import BrowserProxy
from mcp_server_web.fetch.browser.renderer import RenderConfig, RenderedPage, Renderer, RendererStatus
from mcp_server_web.fetch.browser.slots import on_behalf_of
from mcp_server_web.fetch.config import FetchConfig
from mcp_server_web.fetch.doc.charset import decode_text, without_controls
from mcp_server_web.fetch.doc.sniff import ContentKind, classify, valid_media_type
from mcp_server_web.fetch.net.client import CONTROLLED_HEADERS, REDIRECT_STATUSES, Fetcher
from mcp_server_web.fetch.net.decode import ACCEPT_ENCODING, BodyDecoder, describe_size, too_large
from mcp_server_web.fetch.net.proxy import ProxyRoutes, RoutedTransport
from mcp_server_web.fetch.net.resolution import Resolver
from mcp_server_web.fetch.net.urls import MAX_URL_LENGTH, parse_url
from mcp_server_web.fetch.passages import OutlineEntry, Passage, outline, rank_passages
from mcp_server_web.fetch.readthrough import ExtractedText, ReadThrough, ReadThroughFailed
from mcp_server_web.fetch.service import CONVERSION_JOB, CONVERSION_PRELOAD, FetchService
from mcp_server_web.fetch.types import (
    METADATA_DESCRIPTION_LIMIT,
    METADATA_NAME_LIMIT,
    OUTPUT_FORMATS,
    RENDER_MODES,
    SNAPSHOT_LENGTH,
    Document,
    FetchResponse,
    OutputFormat,
    PageMetadata,
    RenderMode,
    Via,
)
from mcp_server_web.fetch.workers import ConversionPool, PoolStatus
from mcp_server_web.identity import DEFAULT_USER_AGENT, ROBOTS_TOKEN

__all__ = [
    "ACCEPT_ENCODING",
    "CONTROLLED_HEADERS",
    "CONVERSION_JOB",
    "CONVERSION_PRELOAD",
    "DEFAULT_USER_AGENT",
    "INSTALL_HINT",
    "MAX_URL_LENGTH",
    "METADATA_DESCRIPTION_LIMIT",
    "METADATA_NAME_LIMIT",
    "OUTPUT_FORMATS",
    "REDIRECT_STATUSES",
    "RENDER_MODES",
    "ROBOTS_TOKEN",
    "SNAPSHOT_LENGTH",
    "BodyDecoder",
    "BrowserChoice",
    "BrowserProxy",
    "ContentKind",
    "ConversionPool",
    "Document",
    "ExtractedText",
    "FetchConfig",
    "FetchResponse",
    "FetchService",
    "Fetcher",
    "OutlineEntry",
    "OutputFormat",
    "PageMetadata",
    "Passage",
    "PoolStatus",
    "ProxyRoutes",
    "ReadThrough",
    "ReadThroughFailed",
    "RenderConfig",
    "RenderMode",
    "RenderedPage",
    "Renderer",
    "RendererStatus",
    "Resolver",
    "RoutedTransport",
    "Via",
    "classify",
    "decode_text",
    "describe_size",
    "find_browser",
    "on_behalf_of",
    "outline",
    "parse_url",
    "playwright_installed",
    "rank_passages",
    "too_large",
    "valid_media_type",
    "without_controls",
]
