"""The server's prompts: today one, `fetch`, a user-initiated fetch of one URL for clients that
show prompts (a slash command, a menu entry).

Like the official fetch server's prompt: one required argument, `url`, and the page comes back as
one user message. Unlike it, the page goes through exactly web_fetch's path (tools.read_page):
the address policy, robots.txt, the size and time caps, the cache, and the untrusted-content
fence. The official server skips robots.txt for its prompt; here MCP_WEB_RESPECT_ROBOTS is one
policy for every fetch this server makes, so an operator decides it once.

What comes back:
- The first page of the document (web_fetch's default length), ending with web_fetch's line on
  how to read on when more remains: a long page does not flood the conversation, and the model
  continues with the tool.
- A fetch that fails is not a protocol error. As the official server does, the result is a user
  message saying why (the same code and sentence web_fetch's error would give, e.g.
  ``blocked_address: ...``), described as "Failed to fetch <url>": the person who asked sees the
  reason in their client, and nothing raises into the protocol.
- Protocol errors, JSON-RPC -32602 (Invalid params), only for what the request got wrong: a name
  that is not a prompt here, or a required argument missing or blank.

A prompt takes a tool's path, so it exists only where that tool does: a server without web_fetch
has no fetch prompt (and so declares no prompts, see capabilities.py), and an HTTP connection
whose ?tools= leaves web_fetch out does not see it (middleware.ToolSelection).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    TextContent,
)

from mcp_server_web.errors import WebToolError
from mcp_server_web.fetch import MAX_URL_LENGTH
from mcp_server_web.server.boundary import one_line
from mcp_server_web.server.failures import INTERNAL_ERROR_TEXT, error_text
from mcp_server_web.server.services import Services
from mcp_server_web.server.tools import WEB_FETCH_TOOL, Progress, read_page

logger = logging.getLogger(__name__)

PromptRender = Callable[[Services, Mapping[str, str], Progress], Awaitable[GetPromptResult]]


@dataclass(frozen=True)
class PromptSpec:
    """A prompt as listed, the tool whose path it takes (it is offered only with that tool), and
    what renders it from its checked arguments."""

    prompt: Prompt
    tool: str
    render: PromptRender

    @property
    def name(self) -> str:
        return self.prompt.name

    def required(self) -> list[str]:
        return [argument.name for argument in self.prompt.arguments or () if argument.required]


def user_message(text: str, description: str) -> GetPromptResult:
    return GetPromptResult(
        description=description,
        messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
    )


def failed_fetch(url: str, text: str) -> GetPromptResult:
    """The answer when the page could not be read: why, in the words web_fetch's error uses."""
    return user_message(text, f"Failed to fetch {one_line(url, MAX_URL_LENGTH)}")


async def render_fetch(
    services: Services, arguments: Mapping[str, str], progress: Progress
) -> GetPromptResult:
    url = arguments["url"].strip()
    try:
        text, _ = await read_page(services, url, progress=progress)
    except WebToolError as error:
        logger.info("fetch prompt failed: %s", error)
        return failed_fetch(url, error_text(error))
    except Exception:
        # As for a tool: the details stay in the server log; the client gets a code and a sentence.
        logger.exception("fetch prompt crashed")
        return failed_fetch(url, INTERNAL_ERROR_TEXT.format(what="fetch"))
    return user_message(text, f"Contents of {one_line(url, MAX_URL_LENGTH)}")


FETCH_PROMPT = PromptSpec(
    prompt=Prompt(
        name="fetch",
        title="Fetch a web page",
        description=(
            "Fetch a URL and add its main content, as Markdown, to the conversation (the first "
            "page of a long document; the model reads on with web_fetch)."
        ),
        arguments=[PromptArgument(name="url", description="The http or https URL to fetch", required=True)],
    ),
    tool=WEB_FETCH_TOOL.name,
    render=render_fetch,
)

PROMPTS: tuple[PromptSpec, ...] = (FETCH_PROMPT,)
"""Every prompt the server has, in the order of prompts/list; each is offered with its tool."""


class PromptHandlers:
    """prompts/list and prompts/get for the given prompts, with JSON-RPC errors of the right kind.

    The SDK's own prompts/get answers an unknown name or a missing argument with a ValueError,
    which reaches the client as error code 0 (not a JSON-RPC code) or -32603; the MCP
    specification asks for -32602 (Invalid params) for both.
    """

    def __init__(self, prompts: Sequence[PromptSpec]) -> None:
        self._prompts = {spec.name: spec for spec in prompts}

    async def list(
        self, ctx: ServerRequestContext[Services, Any], params: PaginatedRequestParams
    ) -> ListPromptsResult:
        return ListPromptsResult(prompts=[spec.prompt for spec in self._prompts.values()])

    async def get(
        self, ctx: ServerRequestContext[Services, Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        spec = self._prompts.get(params.name)
        if spec is None:
            known = ", ".join(self._prompts)
            raise MCPError(
                INVALID_PARAMS, f"Unknown prompt: {one_line(params.name, 100)!r}; this server has: {known}."
            )
        arguments = params.arguments or {}
        taken = [argument.name for argument in spec.prompt.arguments or ()]
        unknown = [name for name in arguments if name not in taken]
        if unknown:
            raise MCPError(
                INVALID_PARAMS,
                f"Prompt {spec.name!r} has no argument named "
                f"{', '.join(repr(one_line(name, 60)) for name in unknown)}; it takes: {', '.join(taken)}.",
            )
        missing = [name for name in spec.required() if not arguments.get(name, "").strip()]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"Missing required argument of prompt {spec.name!r}: {', '.join(missing)}."
            )

        async def progress(fraction: float, message: str) -> None:
            await ctx.session.report_progress(fraction, 1.0, message)

        return await spec.render(ctx.lifespan_context, arguments, progress)
