"""URL -> clean, paginated document. Knows nothing about MCP; usable as a library.

The names below are the surface the rest of the project (and any other caller) uses; the
modules behind them are private to the package. ``net/`` is the network half (the one outbound
path for user-given URLs), ``doc/`` the document half (bytes to text, no network); the service,
its cache, the pages and the conversion workers sit on top of both. Importing this surface does
not import the conversion stack (lxml, readability, trafilatura): that is loaded by the
conversion workers only.
"""

from mcp_server_web.fetch.config import FetchConfig
from mcp_server_web.fetch.doc.charset import decode_text, without_controls
from mcp_server_web.fetch.doc.sniff import ContentKind, classify, valid_media_type
from mcp_server_web.fetch.net.client import CONTROLLED_HEADERS, REDIRECT_STATUSES, Fetcher
from mcp_server_web.fetch.net.decode import ACCEPT_ENCODING, BodyDecoder, describe_size, too_large
from mcp_server_web.fetch.net.proxy import ProxyRoutes, RoutedTransport
from mcp_server_web.fetch.net.resolution import Resolver
from mcp_server_web.fetch.net.urls import MAX_URL_LENGTH, parse_url
from mcp_server_web.fetch.service import CONVERSION_JOB, FetchService
from mcp_server_web.fetch.types import OUTPUT_FORMATS, SNAPSHOT_LENGTH, FetchResponse, OutputFormat
from mcp_server_web.fetch.workers import ConversionPool, PoolStatus
from mcp_server_web.identity import DEFAULT_USER_AGENT, ROBOTS_TOKEN

__all__ = [
    "ACCEPT_ENCODING",
    "CONTROLLED_HEADERS",
    "CONVERSION_JOB",
    "DEFAULT_USER_AGENT",
    "MAX_URL_LENGTH",
    "OUTPUT_FORMATS",
    "REDIRECT_STATUSES",
    "ROBOTS_TOKEN",
    "SNAPSHOT_LENGTH",
    "BodyDecoder",
    "ContentKind",
    "ConversionPool",
    "FetchConfig",
    "FetchResponse",
    "FetchService",
    "Fetcher",
    "OutputFormat",
    "PoolStatus",
    "ProxyRoutes",
    "Resolver",
    "RoutedTransport",
    "classify",
    "decode_text",
    "describe_size",
    "parse_url",
    "too_large",
    "valid_media_type",
    "without_controls",
]
