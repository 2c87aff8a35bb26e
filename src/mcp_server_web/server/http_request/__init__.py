"""http_request: the opt-in general HTTP client tool, for APIs (see tool.py)."""

from mcp_server_web.server.contract import TEXT_LIMIT, HttpRequestOutput
from mcp_server_web.server.contract.http_arguments import HTTP_METHODS
from mcp_server_web.server.http_request.response import interpret_response, render_response
from mcp_server_web.server.http_request.tool import DEFAULT_ACCEPT, HTTP_REQUEST_TOOL

__all__ = [
    "DEFAULT_ACCEPT",
    "HTTP_METHODS",
    "HTTP_REQUEST_TOOL",
    "TEXT_LIMIT",
    "HttpRequestOutput",
    "interpret_response",
    "render_response",
]
