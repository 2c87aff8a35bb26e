"""The capabilities the server declares are the ones it has: tools, and prompts when it has one.

The SDK derives the capabilities it declares (in the initialize answer and in server/discover)
from the request handlers registered on the low-level server, and MCPServer registers handlers
for resources and prompts whatever the server holds: left alone, this server would declare
`resources` (with subscribe and listChanged on 2026-07-28 connections) and `prompts`, and answer
resources/list with an empty list. So the handlers of what it does not have are taken away here:
the capability is not declared, and its methods answer -32601 (Method not found), which is what
JSON-RPC reserves for a method a server does not offer.

Not declared either, because not served: `logging` (the server logs to its own stderr and sends
no log notifications; MCPServer registers no logging/setLevel) and `completions` (no
completion/complete). `listChanged` is false everywhere: the tool and prompt lists never change
while the server runs, so MCPServer is built with subscriptions=False (no subscriptions/listen,
which is where 2026-07-28 connections would wait for change notifications).

The SDK offers no public way to unregister a handler, so the low-level server's handler table is
edited directly; tests/server/test_protocol.py pins the exact capabilities, in both protocol eras,
so an SDK change that breaks this shows up there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import GetPromptRequestParams, PaginatedRequestParams

from mcp_server_web.server.prompts import PromptHandlers, PromptSpec

RESOURCE_METHODS = (
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
)
PROMPT_METHODS = ("prompts/list", "prompts/get")


def serve_only_what_exists(server: MCPServer[Any], prompts: Sequence[PromptSpec]) -> None:
    """Unregister what the server does not have; serve `prompts` (none: no prompts capability)."""
    lowlevel = server._lowlevel_server
    unserved = RESOURCE_METHODS if prompts else (*RESOURCE_METHODS, *PROMPT_METHODS)
    for method in unserved:
        lowlevel._request_handlers.pop(method, None)
    if prompts:
        handlers = PromptHandlers(prompts)
        lowlevel.add_request_handler("prompts/list", PaginatedRequestParams, handlers.list)
        lowlevel.add_request_handler("prompts/get", GetPromptRequestParams, handlers.get)
