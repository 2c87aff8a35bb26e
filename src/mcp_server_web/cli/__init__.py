"""Command line: flags + environment -> Settings -> serve, or run one command and exit.

``mcp-server-web`` (or ``mcp-server-web serve``) serves MCP over stdio or streamable HTTP.
``fetch``, ``search`` and ``doctor`` are one-shot commands for people (see commands.py).

Only argparse and the settings module are imported up front, so ``--help`` answers at once;
the server and its heavy dependencies load after the command is chosen.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import replace

from mcp_server_web import __version__
from mcp_server_web.config import (
    KNOWN_PROVIDERS,
    OPTIONS_BY_ATTR,
    Settings,
    add_setting_flags,
    check_exposure,
    check_fetch_fallback,
    fold_switch_values,
    settings_from_namespace,
)
from mcp_server_web.errors import ConfigError

logger = logging.getLogger("mcp_server_web")

EXIT_CANNOT_LISTEN = 3
"""Serving over HTTP, the address could not be bound (a port in use, a privileged port, an address
this machine does not have). 2 is a setting that cannot be read, as argparse exits with."""

# The values the tools accept; repeated here (not imported from the tool modules) so that
# building the parser stays free of heavy imports.
_FORMATS = ("markdown", "text", "html")
_TOPICS = ("general", "news")
_TIME_RANGES = ("day", "week", "month", "year")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-server-web",
        usage="%(prog)s [settings] [{serve,fetch,search,doctor}] ...",
        description=(
            "MCP server with web_search and web_fetch tools. Serves MCP over stdio by default "
            "(for Claude Desktop, IDEs), or over streamable HTTP with --transport http. The "
            "fetch, search and doctor commands run once and print the result."
        ),
    )
    parser.add_argument("--version", action="version", version=f"mcp-server-web {__version__}")
    add_setting_flags(parser)
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="serve MCP (the default when no command is given)", usage="%(prog)s [settings]"
    )
    _add_setting_flags_to_command(serve)

    fetch = commands.add_parser(
        "fetch",
        usage="%(prog)s URL [--format FORMAT] [--whole-page] [--max-length N] [--start-index N] [settings]",
        help="fetch a URL and print it as the web_fetch tool returns it",
        description=(
            "Fetch a URL through the web_fetch tool and print the result: by default the whole "
            "document (every page), or one page with --max-length."
        ),
    )
    fetch.add_argument("url", help="the http or https URL to fetch")
    fetch.add_argument("--format", choices=_FORMATS, default="markdown", help="output format")
    fetch.add_argument(
        "--whole-page",
        action="store_true",
        help="convert the whole page (menus, footers) instead of only the main content",
    )
    fetch.add_argument(
        "--max-length",
        type=_positive_int,
        metavar="N",
        help="print one page of at most N characters (with the tool's continuation line) instead "
        "of the whole document",
    )
    fetch.add_argument(
        "--start-index", type=_non_negative_int, default=0, metavar="N", help="character offset to start at"
    )
    _add_setting_flags_to_command(fetch)

    search = commands.add_parser(
        "search",
        usage="%(prog)s QUERY [--max-results N] [--provider NAME] [--topic TOPIC] [--time-range RANGE] "
        "[settings]",
        help="search the web and print the results as the web_search tool returns them",
        description="Search through the web_search tool and print the numbered results.",
    )
    search.add_argument("query", help="what to search for")
    search.add_argument("--max-results", type=_positive_int, metavar="N", help="most results (1-20)")
    search.add_argument("--provider", choices=KNOWN_PROVIDERS, help="ask only this provider, no fallback")
    search.add_argument("--topic", choices=_TOPICS, help="general (default) or news")
    search.add_argument("--time-range", choices=_TIME_RANGES, help="only results this recent")
    _add_setting_flags_to_command(search)

    doctor = commands.add_parser(
        "doctor",
        usage="%(prog)s [settings]",
        help="print the effective settings (secrets masked), tools and search providers",
        description="Print the effective configuration; nothing is sent over the network.",
    )
    _add_setting_flags_to_command(doctor)
    return parser


def _add_setting_flags_to_command(command: argparse.ArgumentParser) -> None:
    """The setting flags again, so they also work after the command name.

    SUPPRESS as the default matters: argparse copies a subcommand's defaults over what the main
    parser already read, so a None default here would erase ``--timeout 5 fetch URL``.
    """
    add_setting_flags(command, default=argparse.SUPPRESS)


def parse_arguments(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line read by ``parser``, with yes/no flags written the old way ("--allow-private
    true") read as the switches they mean."""
    try:
        args = fold_switch_values(sys.argv[1:] if argv is None else argv)
    except ConfigError as exc:
        parser.error(str(exc))  # exits with status 2
    return parser.parse_args(args)


def _whole_number(raw: str, minimum: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {raw!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {raw!r}")
    return value


def _non_negative_int(raw: str) -> int:
    return _whole_number(raw, 0)


def _positive_int(raw: str) -> int:
    return _whole_number(raw, 1)


def serve(settings: Settings, listeners: list[socket.socket] | None = None) -> None:
    import anyio

    from mcp_server_web.server.app import build_server

    server = build_server(settings)
    if settings.transport == "http":
        from mcp_server_web.server.http import serve_http

        anyio.run(serve_http, server, settings, listeners)
    else:
        from mcp_server_web.server.stdio import serve_stdio

        anyio.run(serve_stdio, server)


def _one_shot_log_level(namespace: argparse.Namespace, settings: Settings) -> str:
    """The server's info lines would bury a command's output on the terminal: warnings only,
    unless the user asked for a level."""
    option = OPTIONS_BY_ATTR["log_level"]
    asked = getattr(namespace, "setting_log_level", None) is not None or option.env in os.environ
    return settings.log_level if asked else "warning"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    namespace = parse_arguments(parser, argv)
    try:
        settings = settings_from_namespace(namespace)
    except ConfigError as exc:
        parser.error(str(exc))  # exits with status 2
    from mcp_server_web.logs import configure_logging

    command = namespace.command or "serve"
    if command != "doctor":  # doctor explains such a setting instead
        try:
            check_fetch_fallback(settings)
        except ConfigError as exc:
            parser.error(str(exc))
    if command != "serve":
        level = _one_shot_log_level(namespace, settings)
        configure_logging(level)
        if command != "doctor":  # doctor shows the settings a server would run with
            # The server fetch and search run, and its conversion workers, take their level
            # from the settings, not from this process's logging.
            settings = replace(settings, log_level=level)
        from mcp_server_web.cli.commands import run_command

        return run_command(command, namespace, settings)

    try:
        check_exposure(settings)
    except ConfigError as exc:
        parser.error(str(exc))
    configure_logging(settings.log_level)
    listeners = None
    if settings.transport == "http":
        from mcp_server_web.server.listen import CannotListen, bind_listeners

        try:
            listeners = bind_listeners(settings.host, settings.port)
        except CannotListen as exc:
            logger.error("%s", exc)
            return EXIT_CANNOT_LISTEN
    logger.info("mcp-server-web %s starting (%s transport)", __version__, settings.transport)
    try:
        serve(settings, listeners)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
