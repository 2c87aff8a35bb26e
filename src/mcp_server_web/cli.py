"""Command line: flags + environment -> Settings -> serve over stdio or streamable HTTP.

Only argparse and the settings module are imported up front, so `mcp-server-web --help`
answers at once; the server and its heavy dependencies load when it starts serving.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from mcp_server_web import __version__
from mcp_server_web.config import ConfigError, Settings, add_setting_flags, settings_from_namespace

logger = logging.getLogger("mcp_server_web")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-server-web",
        description=(
            "MCP server with web_search and web_fetch tools. Serves MCP over stdio by default "
            "(for Claude Desktop, IDEs), or over streamable HTTP with --transport http."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mcp-server-web {__version__}")
    add_setting_flags(parser)
    return parser


def serve(settings: Settings) -> None:
    import anyio

    from mcp_server_web.server.app import build_server

    server = build_server(settings)
    if settings.transport == "http":
        from mcp_server_web.server.http import serve_http

        anyio.run(serve_http, server, settings)
    else:
        anyio.run(server.run_stdio_async)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    namespace = parser.parse_args(argv)
    try:
        settings = settings_from_namespace(namespace)
    except ConfigError as exc:
        parser.error(str(exc))
    from mcp_server_web.logs import configure_logging

    configure_logging(settings.log_level)
    logger.info("mcp-server-web %s starting (%s transport)", __version__, settings.transport)
    try:
        serve(settings)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
