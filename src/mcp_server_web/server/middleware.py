"""MCP-level middleware: per-connection tool narrowing and the cap on concurrent tool calls (and
prompt fetches)."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    ListPromptsResult,
    ListToolsResult,
    PromptMessage,
    TextContent,
)

from mcp_server_web.errors import InvalidArgument, RateLimited, WebToolError

logger = logging.getLogger(__name__)

TOOLS_QUERY_PARAMETER = "tools"
REFUSAL_LOG_INTERVAL_S = 10.0
"""Seconds between two warnings about calls refused by the concurrency cap."""


def parse_tool_selection(raw: str | None, enabled: Collection[str]) -> frozenset[str] | None:
    """The tools a connection asked for with ?tools=a,b; None when it did not narrow.

    A connection can only narrow the server's set, never widen it: a name the server does not
    expose is an error (at connect, not silence), so a sub-agent's typo does not quietly leave
    it without the tool it expected.
    """
    if raw is None:
        return None
    names = [name.strip() for name in raw.split(",") if name.strip()]
    if not names:
        raise InvalidArgument("?tools= is empty; name at least one tool, or leave the parameter out.")
    unknown = [name for name in names if name not in enabled]
    if unknown:
        raise InvalidArgument(
            f"?tools= names {', '.join(unknown)}, which this server does not expose; "
            f"available: {', '.join(sorted(enabled))}."
        )
    return frozenset(names)


def _selection_of(ctx: ServerRequestContext[Any, Any], enabled: Collection[str]) -> frozenset[str] | None:
    request = ctx.request
    query_params = getattr(request, "query_params", None)
    if query_params is None:  # stdio and in-memory connections have no URL to narrow with
        return None
    return parse_tool_selection(query_params.get(TOOLS_QUERY_PARAMETER), enabled)


def _error(error: WebToolError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)


class ToolSelection:
    """Hides and refuses the tools a connection's ?tools= left out, and the prompts that take
    those tools' paths (`prompt_tools`: prompt name -> its tool)."""

    def __init__(self, enabled: Collection[str], prompt_tools: Mapping[str, str] | None = None) -> None:
        self._enabled = frozenset(enabled)
        self._prompt_tools = dict(prompt_tools or {})

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in ("tools/list", "tools/call", "prompts/list", "prompts/get"):
            return await call_next(ctx)
        selection = _selection_of(ctx, self._enabled)
        if selection is None:
            return await call_next(ctx)
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            if name not in selection:
                return _error(
                    InvalidArgument(f"tool {name!r} is not available on this connection (?tools=).")
                )
            return await call_next(ctx)
        if ctx.method == "prompts/get":
            name = (ctx.params or {}).get("name")
            tool = self._prompt_tools.get(name) if isinstance(name, str) else None
            if tool is not None and tool not in selection:
                raise MCPError(
                    INVALID_PARAMS,
                    f"prompt {name!r} is not available on this connection (?tools= leaves out {tool}).",
                )
            return await call_next(ctx)
        listed = await call_next(ctx)
        if ctx.method == "prompts/list":
            return _narrowed(listed, "prompts", lambda name: self._prompt_tools.get(name) in selection)
        return _narrowed(listed, "tools", lambda name: name in selection)


def _narrowed(listed: HandlerResult, key: str, keep: Callable[[Any], bool]) -> HandlerResult:
    """A tools/list or prompts/list answer with only the entries `keep` accepts."""
    # Handlers may answer with the result model or with its wire dict; narrow either.
    if isinstance(listed, ListToolsResult | ListPromptsResult):
        entries = getattr(listed, key)
        return listed.model_copy(update={key: [entry for entry in entries if keep(entry.name)]})
    if isinstance(listed, dict) and isinstance(listed.get(key), list):
        return {**listed, key: [entry for entry in listed[key] if keep(entry.get("name"))]}
    return listed


class ConcurrencyLimit:
    """At most `limit` tool calls run at once; past that a call is refused at once, not queued.

    Refusing beats queueing for an agent: a clear rate_limited error lets it back off or do
    something else, where a queue would turn a burst into timeouts for everyone.
    """

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._limiter = anyio.CapacityLimiter(limit)
        self.limit = limit
        self._clock = clock
        self._next_log = -math.inf
        self._unlogged = 0

    @property
    def in_use(self) -> int:
        return int(self._limiter.borrowed_tokens)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # A prompt fetch does a tool's work (prompts.py), so it counts against the same cap.
        if ctx.method not in ("tools/call", "prompts/get"):
            return await call_next(ctx)
        token = object()
        try:
            self._limiter.acquire_on_behalf_of_nowait(token)
        except anyio.WouldBlock:
            self._log_refusal()
            refusal = RateLimited(
                f"the server is already running {self.limit} tool calls (MCP_WEB_MAX_CONCURRENCY); "
                "try again in a moment."
            )
            if ctx.method == "prompts/get":
                # A prompt's failures are its answer, as for a failed fetch (prompts.py).
                return GetPromptResult(
                    description="Refused: the server is busy",
                    messages=[
                        PromptMessage(role="user", content=TextContent(type="text", text=str(refusal)))
                    ],
                )
            return _error(refusal)
        try:
            return await call_next(ctx)
        finally:
            self._limiter.release_on_behalf_of(token)

    def _log_refusal(self) -> None:
        # One warning per interval, counting the refusals in between: under sustained overload a
        # line per refused call would grow the log as fast as clients retry.
        now = self._clock()
        if now < self._next_log:
            self._unlogged += 1
            return
        since, self._unlogged = self._unlogged, 0
        self._next_log = now + REFUSAL_LOG_INTERVAL_S
        logger.warning(
            "refusing a tool call: %d calls already running (MCP_WEB_MAX_CONCURRENCY)%s",
            self.limit,
            f"; {since} more refused since the last warning" if since else "",
        )
