"""Serving MCP over stdio, with an answer for every line, even one that is not a JSON-RPC message.

The SDK's stdio transport hands a line it cannot parse to the server as an exception, which the
server only logs: the client that sent it waits forever. Here such a line is answered the way
JSON-RPC 2.0 says: -32700 (parse error) when it is not JSON, or not text JSON can carry (a lone
surrogate escape such as "\\ud800"), -32600 (invalid request) when it is JSON but not a message;
with the request's id when it can be read, null otherwise.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError
from pydantic import ValidationError

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def _request_id(message: Any) -> str | int | None:
    if isinstance(message, dict):
        request_id = message.get("id")
        if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
            return request_id
    return None


def error_for(exc: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering a line the transport could not turn into a message.

    None for a blank line, which asked nothing. The raw line or the parsed object is the input
    pydantic reports with its validation error.
    """
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    raw = errors[0].get("input") if errors else None
    if isinstance(raw, str) and not raw.strip():
        return None
    parsed: Any = raw
    if isinstance(raw, str | bytes):
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
    not_json = not errors or errors[0].get("type") == "json_invalid"
    if not_json:
        code, message = PARSE_ERROR, "Parse error: the line is not valid JSON (or not valid Unicode text)"
    else:
        code, message = INVALID_REQUEST, "Invalid Request: the line is JSON but not a JSON-RPC 2.0 message"
    return JSONRPCError(jsonrpc="2.0", id=_request_id(parsed), error=ErrorData(code=code, message=message))


async def serve_stdio(server: MCPServer) -> None:
    """Serve `server` over stdin/stdout until stdin closes."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, with our reader in between
    async with stdio_server() as (read_stream, write_stream):
        sender, receiver = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def answer_unparseable() -> None:
            async with sender:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await sender.send(item)
                        continue
                    error = error_for(item)
                    if error is not None:
                        logger.debug("answered a malformed stdio line: JSON-RPC error %d", error.error.code)
                        await write_stream.send(SessionMessage(error))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_unparseable)
            await lowlevel.run(receiver, write_stream, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()
