"""http_request: the opt-in general HTTP client tool, for APIs.

It sends through the same guarded ``Fetcher`` as web_fetch (address policy checked at connection
time, every redirect re-vetted, size and time limits), so enabling it opens no second way out.
robots.txt is not consulted: robots rules are for crawlers of pages, and this tool is an API
client the operator chose to enable (MCP_WEB_TOOLS).

Every HTTP status is a normal result, 4xx and 5xx included: an API's error body ("invalid
token", "field x is required") is exactly what the model needs to read to correct its call.
Only failures to get a response at all (refused address, timeout, connection error) are tool
errors, with the same stable codes as web_fetch.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from mcp_server_web.fetch import REDIRECT_STATUSES
from mcp_server_web.server.contract import (
    HTTP_REQUEST_DESCRIPTION,
    HTTP_REQUEST_ICON,
    HttpRequestInput,
    HttpRequestOutput,
)
from mcp_server_web.server.contract.http_arguments import with_params
from mcp_server_web.server.http_request.response import interpret_response, render_response
from mcp_server_web.server.tools import ToolContext, services_of
from mcp_server_web.server.toolspec import ToolSpec

RESPONSE_BODY_LIMIT = 1024 * 1024
"""Most response bytes kept (less if MCP_WEB_MAX_RESPONSE_MB is smaller): an API answer larger
than this is not something a model can read anyway, and structured content holds it whole."""
DEFAULT_ACCEPT = "application/json, text/plain;q=0.9, */*;q=0.8"


async def http_request(
    arguments: HttpRequestInput, *, ctx: ToolContext
) -> Annotated[CallToolResult, HttpRequestOutput]:
    services = services_of(ctx)
    settings = services.settings
    verb = arguments.method
    request_headers, ignored = arguments.sent_headers()
    target = with_params(arguments.url, arguments.params)
    content, default_type = arguments.content
    if default_type is not None and not any(name.lower() == "content-type" for name in request_headers):
        request_headers["Content-Type"] = default_type
    # The operator's limit always wins over the caller's timeout.
    seconds = min(settings.timeout, arguments.timeout or settings.timeout)
    cap = min(settings.max_response_bytes, RESPONSE_BODY_LIMIT)

    response = await services.fetcher.fetch(
        target,
        method=verb,
        headers=request_headers,
        content=content,
        accept=DEFAULT_ACCEPT,  # the caller's own Accept header, if any, replaces this
        # One byte over the cap tells "cut" from "exactly the cap" without a second request.
        max_bytes=cap + 1,
        truncate=True,
        timeout=seconds,
        # No hop_check: robots.txt governs crawling pages, not an operator-enabled API client.
    )
    # Charset detection and JSON parsing of up to a megabyte are CPU work: off the event loop.
    answer = await anyio.to_thread.run_sync(interpret_response, response, verb, cap)
    notes = list(answer.notes)
    if response.status in REDIRECT_STATUSES:
        # The fetcher follows every other redirect (see Fetcher.fetch): this one would resend
        # the body to another origin.
        notes.insert(
            0,
            f"Redirect not followed: following this {response.status} would resend the request body "
            "to another origin. The Location header says where; repeat the request there if you mean to.",
        )
    if ignored:
        notes.insert(0, f"Not sent (set by the client itself): {', '.join(ignored)}.")
    return CallToolResult(
        content=[TextContent(type="text", text=render_response(answer, response, notes))],
        structured_content=answer.output.model_dump(mode="json"),
    )


HTTP_REQUEST_TOOL = ToolSpec(
    fn=http_request,
    name="http_request",
    title="HTTP request",
    description=HTTP_REQUEST_DESCRIPTION,
    input_model=HttpRequestInput,
    output_model=HttpRequestOutput,
    icon=HTTP_REQUEST_ICON,
    annotations=ToolAnnotations(
        read_only_hint=False,
        destructive_hint=True,
        idempotent_hint=False,
        open_world_hint=True,
    ),
)
