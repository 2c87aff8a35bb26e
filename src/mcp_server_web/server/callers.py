"""Who is calling: the name under which a call's renders share the browser with other clients'.

Over streamable HTTP a client is its network address, as the HTTP server sees it. The server is
stateless, so there is no MCP session to tell calls apart by; the bearer token is one for every
caller, so it tells nobody apart; and a client's calls at once go over several connections, so a
connection is no client either. The address is what the per-client connection caps count too
(connections.py). Behind a reverse proxy every call has the proxy's address, and they share as
one client (no worse than no sharing), unless the proxy forwards the caller's address in
X-Forwarded-For and the server trusts it (uvicorn's FORWARDED_ALLOW_IPS). Over stdio and in
memory there is one client: its calls are named nothing, and nothing limits its share.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from mcp_server_web.fetch import on_behalf_of


def caller_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The calling client's address over HTTP; None over stdio and in memory (one client)."""
    client = getattr(ctx.request, "client", None)  # Starlette's Request over HTTP: (host, port)
    host = getattr(client, "host", None)
    return host if isinstance(host, str) and host else None


class NamedCallers:
    """Runs each tool call and prompt fetch on behalf of its caller (fetch's on_behalf_of)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        caller = caller_of(ctx) if ctx.method in ("tools/call", "prompts/get") else None
        if caller is None:
            return await call_next(ctx)
        with on_behalf_of(caller):
            return await call_next(ctx)
