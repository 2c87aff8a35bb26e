"""How a failure reaches the client: an isError result whose text is a stable code and a plain
sentence. Nothing raises into the protocol and no stack trace reaches the client."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import ParamSpec

from mcp_types import CallToolResult, TextContent

from mcp_server_web.errors import WebToolError
from mcp_server_web.server.advice import advised
from mcp_server_web.server.boundary import one_line

logger = logging.getLogger(__name__)
P = ParamSpec("P")

ERROR_TEXT_LIMIT = 1000
"""Most characters of an error's text. Errors are not fenced, yet some quote remote text (a
robots.txt rule, a provider's error message, a content type): kept to one bounded line, such a
quote cannot pass for a block of text of its own."""

INTERNAL_ERROR_TEXT = "internal_error: the {what} failed unexpectedly; the server log has the details."


def error_text(error: WebToolError) -> str:
    """An error as the client reads it: its code, its sentence, and the operator's way out."""
    return one_line(advised(error), ERROR_TEXT_LIMIT)


def error_result(error: WebToolError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=error_text(error))], is_error=True)


def reports_errors(tool: Callable[P, Awaitable[CallToolResult]]) -> Callable[P, Awaitable[CallToolResult]]:
    """Turn every failure of a tool (its arguments' validation included) into an isError result
    with a stable code."""

    @wraps(tool)
    async def run(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            return await tool(*args, **kwargs)
        except WebToolError as error:
            logger.info("%s failed: %s", tool.__name__, error)
            return error_result(error)
        except Exception:
            # The details stay in the server log; the client gets a stable code and a sentence.
            logger.exception("%s crashed", tool.__name__)
            return CallToolResult(
                content=[TextContent(type="text", text=INTERNAL_ERROR_TEXT.format(what="tool"))],
                is_error=True,
            )

    return run
