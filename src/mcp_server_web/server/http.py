"""The streamable HTTP face: an ASGI app serving MCP at settings.path, stateless, SSE responses.

Stateless, because every tool call here is independent and a stateless server scales behind a
load balancer without sticky sessions; SSE responses (not plain JSON), so progress notifications
and cancellation reach the client while a fetch runs.
"""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

from mcp_server_web.config import Settings

logger = logging.getLogger(__name__)


def build_http_app(server: MCPServer, settings: Settings) -> Starlette:
    return server.streamable_http_app(
        streamable_http_path=settings.path,
        stateless_http=True,
        json_response=False,
        host=settings.host,
    )


async def serve_http(server: MCPServer, settings: Settings) -> None:
    import uvicorn

    app = build_http_app(server, settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=None,  # keep our stderr logging setup; uvicorn's would add its own handlers
        lifespan="on",
        timeout_graceful_shutdown=10,
    )
    logger.info(
        "serving MCP over streamable HTTP at http://%s:%d%s", settings.host, settings.port, settings.path
    )
    await uvicorn.Server(config).serve()
