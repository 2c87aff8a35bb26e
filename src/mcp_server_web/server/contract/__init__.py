"""The published contract of each tool, declared once: one module per tool holding its
description, its input model (from which its inputSchema is generated, and which coerces what a
model sends) and its output model (its outputSchema). lenient.py has the coercion shared by all,
model.py the base of every input model."""

from mcp_server_web.server.contract.fetch import (
    FETCH_MAX_LENGTH_DEFAULT,
    FETCH_MAX_LENGTH_LIMIT,
    OutlineEntryOut,
    PassageOut,
    WebFetchInput,
    WebFetchOutput,
    web_fetch_description,
)
from mcp_server_web.server.contract.http_request import (
    HTTP_REQUEST_DESCRIPTION,
    MIN_TIMEOUT,
    TEXT_LIMIT,
    HttpRequestInput,
    HttpRequestOutput,
)
from mcp_server_web.server.contract.icons import FETCH_ICON, HTTP_REQUEST_ICON, SEARCH_ICON, SERVER_ICON
from mcp_server_web.server.contract.limits import SNIPPET_LIMIT, TITLE_LIMIT
from mcp_server_web.server.contract.model import ToolInput
from mcp_server_web.server.contract.search import (
    WEB_SEARCH_DESCRIPTION,
    AttemptOut,
    ContentError,
    SearchResultOut,
    WebSearchInput,
    WebSearchOutput,
)

__all__ = [
    "FETCH_ICON",
    "FETCH_MAX_LENGTH_DEFAULT",
    "FETCH_MAX_LENGTH_LIMIT",
    "HTTP_REQUEST_DESCRIPTION",
    "HTTP_REQUEST_ICON",
    "MIN_TIMEOUT",
    "SEARCH_ICON",
    "SERVER_ICON",
    "SNIPPET_LIMIT",
    "TEXT_LIMIT",
    "TITLE_LIMIT",
    "WEB_SEARCH_DESCRIPTION",
    "AttemptOut",
    "ContentError",
    "HttpRequestInput",
    "HttpRequestOutput",
    "OutlineEntryOut",
    "PassageOut",
    "SearchResultOut",
    "ToolInput",
    "WebFetchInput",
    "WebFetchOutput",
    "WebSearchInput",
    "WebSearchOutput",
    "web_fetch_description",
]
