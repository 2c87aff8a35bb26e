"""One-shot commands: fetch, search and doctor, for people at a terminal.

fetch and search run the real server (``build_server``) and call its tools through the SDK's
in-memory Client, so what they print is exactly what a model would be given. Results go to
stdout, tool errors to stderr with exit status 1, configuration errors exit with status 2.
Printing is fine here: this module never runs on the stdio server path.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import replace
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

import anyio
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web import __version__
from mcp_server_web.cli.usage import ServerUsage, read_server_usage, read_shared_usage, usage_lines
from mcp_server_web.config import KNOWN_PROVIDERS, Settings, key_env
from mcp_server_web.errors import ConfigError
from mcp_server_web.server.app import build_server
from mcp_server_web.server.boundary import split_fence, unfenced
from mcp_server_web.server.compose import browser_choice, providers_config
from mcp_server_web.server.contract import FETCH_MAX_LENGTH_LIMIT

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_CONFIG_ERROR = 2
EXIT_INTERRUPTED = 130


class ToolFailed(Exception):
    """A tool answered with an error result; the message is its text (starting with its code)."""


def run_command(command: str, namespace: argparse.Namespace, settings: Settings) -> int:
    """Run one command and return the process exit status."""
    out, err = sys.stdout, sys.stderr
    for stream in (out, err):
        # A terminal or pipe that cannot show some character must not crash a fetch of a page
        # that contains it.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    try:
        _dispatch(command, namespace, settings, out)
    except ToolFailed as failure:
        print(failure, file=err)
        return EXIT_TOOL_ERROR
    except ConfigError as exc:
        print(f"mcp-server-web: configuration error: {exc}", file=err)
        return EXIT_CONFIG_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    out.flush()
    return EXIT_OK


def _dispatch(command: str, namespace: argparse.Namespace, settings: Settings, out: TextIO) -> None:
    try:
        if command == "doctor":
            doctor(settings, out)
        elif command == "fetch":
            anyio.run(_fetch, settings, namespace, out)
        elif command == "search":
            anyio.run(_search, settings, namespace, out)
        else:
            raise ValueError(f"unknown command {command!r}")
    except BaseExceptionGroup as group:
        # The Client's task groups wrap what the command raised inside them; a lone failure is
        # re-raised as itself so it is reported like any other.
        leaf: BaseException = group
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, BaseExceptionGroup):
            raise
        raise leaf from None


def _with_tool(settings: Settings, tool: str) -> Settings:
    """Settings that expose ``tool``: asking for a command is asking for its tool, whatever
    MCP_WEB_TOOLS says the server offers to models."""
    return settings if tool in settings.tools else replace(settings, tools=(*settings.tools, tool))


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise ToolFailed(text_of(result))
    return result


def _write(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")


# --------------------------------------------------------------------------------------------
# fetch
# --------------------------------------------------------------------------------------------


async def _fetch(settings: Settings, namespace: argparse.Namespace, out: TextIO) -> None:
    arguments: dict[str, Any] = {
        "url": namespace.url,
        "format": namespace.format,
        "main_content": not namespace.whole_page,
    }
    async with Client(build_server(_with_tool(settings, "web_fetch"))) as client:
        if namespace.max_length is not None:
            # One page, exactly as a model gets it, continuation line included.
            page = await _call(
                client,
                "web_fetch",
                {**arguments, "start_index": namespace.start_index, "max_length": namespace.max_length},
            )
            _write(out, text_of(page))
            return
        _write(out, await fetch_whole(client, arguments, start_index=namespace.start_index))


async def fetch_whole(client: Client, arguments: dict[str, Any], *, start_index: int = 0) -> str:
    """The whole document from start_index on: every page, continuation lines left out.

    Pages are consecutive slices of one cached snapshot (each call after the first names it), so
    a page's own text is what the tool fenced as untrusted content; the rest is the continuation
    line meant for a model. A person reading the document in a terminal gets it without the fence
    tags.
    """
    parts: list[str] = []
    start = start_index
    snapshot: dict[str, Any] = {}
    while True:
        result = await _call(
            client,
            "web_fetch",
            {**arguments, **snapshot, "start_index": start, "max_length": FETCH_MAX_LENGTH_LIMIT},
        )
        text = text_of(result)
        structured = result.structured_content or {}
        snapshot = {"snapshot": structured["snapshot"]} if structured.get("snapshot") else {}
        following = structured.get("next_start_index")
        if not isinstance(following, int) or following <= start:
            # The last page (or no way forward): no continuation line, and its notes are kept.
            parts.append(unfenced(text))
            return "".join(parts)
        fenced = split_fence(text)
        page = fenced[1] if fenced is not None else text
        parts.append(page[: following - start])
        start = following


# --------------------------------------------------------------------------------------------
# search
# --------------------------------------------------------------------------------------------


async def _search(settings: Settings, namespace: argparse.Namespace, out: TextIO) -> None:
    arguments: dict[str, Any] = {"query": namespace.query}
    for name in ("max_results", "provider", "topic", "time_range"):
        value = getattr(namespace, name)
        if value is not None:
            arguments[name] = value
    async with Client(build_server(_with_tool(settings, "web_search"))) as client:
        result = await _call(client, "web_search", arguments)
    _write(out, unfenced(text_of(result)))


# --------------------------------------------------------------------------------------------
# doctor
# --------------------------------------------------------------------------------------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_MASK = "***"
_UNCLEAR = "*** (a URL that does not parse cleanly; not shown, since it may hold a password)"


def masked_url(value: str) -> str:
    """A setting's value with what a URL can carry in secret masked: the whole userinfo
    (user:password@) and every query value and fragment, the query's names kept.

    A URL whose "@" is not all in its authority (a password with "/", "?" or "#" in it ends the
    authority early, for every URL parser) is not shown at all rather than shown in part.
    Values that are not URLs are returned as they are; a proxy may be written without a scheme
    ("user:pass@proxy:3128"), so any value with "@" and no spaces is read as a URL too.
    """
    has_scheme = _SCHEME.match(value) is not None
    if not has_scheme and ("@" not in value or any(char.isspace() for char in value)):
        return value
    url = value if has_scheme else "http://" + value
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when the authority was cut short
    except ValueError:
        return _UNCLEAR
    if not parts.netloc or url.count("@") != parts.netloc.count("@"):
        return _UNCLEAR
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{_MASK}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{piece.split('=', 1)[0]}={_MASK}" if "=" in piece else _MASK if piece else ""
        for piece in parts.query.split("&")
    )
    fragment = _MASK if parts.fragment else ""
    shown = urlunsplit((parts.scheme, netloc, parts.path, query if parts.query else "", fragment))
    return shown if has_scheme else shown.removeprefix("http://")


def _limits_of(settings: Settings, name: str) -> str:
    """A provider's pace and daily budget, as doctor lists them."""
    limits = []
    if rps := settings.provider_rps.get(name):
        limits.append(f"at most {rps:g} request(s) per second")
    if daily := settings.provider_daily_limits.get(name):
        limits.append(f"{daily} calls per UTC day")
    return f": {', '.join(limits)}" if limits else ""


def _server_usage(settings: Settings, chain: list[str]) -> ServerUsage:
    if settings.redis_url is not None:
        where = masked_url(settings.redis_url)
        return anyio.run(read_shared_usage, settings, tuple(chain), f"the Redis at {where}")
    if settings.transport != "http":
        return ServerUsage(
            "",
            {},
            "as a stdio server keeps them in its own memory while it runs (an HTTP server "
            "reports them at GET /healthz, where doctor reads them)",
        )
    return read_server_usage(settings)


def doctor(settings: Settings, out: TextIO) -> None:
    """Print what the server would run with. The only thing it contacts is the running server these
    settings describe, over HTTP on this machine, for today's search figures."""
    from mcp_server_web.providers import (
        PROVIDERS,
        chain_order,
        no_provider_message,
        spec_named,
        why_unconfigured,
    )

    lines = [f"mcp-server-web {__version__}", "", "Settings (flags and environment; secrets masked):"]
    described = settings.describe()
    width = max(len(name) for name in described)
    lines.extend(f"  {name:<{width}} = {masked_url(value)}" for name, value in described.items())

    lines += ["", f"Tools enabled: {', '.join(settings.tools) or '(none)'}"]

    choice, why_not = browser_choice(settings)
    if choice is None:
        lines += ["", f"Rendering: none; web_fetch reads pages as downloaded, because {why_not}."]
    else:
        where = choice.executable or "Playwright's own Chromium"
        lines += ["", f"Rendering: pages built by JavaScript are loaded in {where} (found: {choice.source})."]

    lines += ["", "Read-through (MCP_WEB_FETCH_FALLBACK):"]
    if not settings.fetch_fallback:
        lines.append("  not set: a page web_fetch cannot read is never sent to a third party.")
    else:
        lines.append(
            "  asked in this order for the text of a page that is a bot wall, refused by bot protection "
            "or a JavaScript shell no browser read (the URL is sent to them):"
        )
        for n, name in enumerate(settings.fetch_fallback, start=1):
            missing = ""
            if not settings.provider_key(name):
                missing = f": no key, set {key_env(name)} (the server refuses to start without it)"
            lines.append(f"  {n}. {name} ({spec_named(name).title}){missing or _limits_of(settings, name)}")

    searching = providers_config(settings)
    reasons = {spec.name: why_unconfigured(spec, searching) for spec in PROVIDERS}
    chain = [name for name in chain_order(searching) if reasons[name] is None]
    explicit = bool(settings.search_providers)
    lines += ["", "Search providers, in the order web_search tries them:"]
    if "web_search" not in settings.tools:
        lines.append("  (web_search is not enabled in MCP_WEB_TOOLS; the order below applies when it is)")
    if chain:
        lines.extend(
            f"  {n}. {name} ({spec_named(name).title}){_limits_of(settings, name)}"
            for n, name in enumerate(chain, start=1)
        )
        # A read counts as a search does: the providers pages are read through are shown too.
        counted = list(dict.fromkeys([*chain, *settings.fetch_fallback]))
        lines.extend(usage_lines(settings, counted, _server_usage(settings, counted)))
    else:
        lines.append(f"  none: web_search would fail with no_provider: {no_provider_message(searching)}")
    off = [name for name in KNOWN_PROVIDERS if name not in chain]
    if off:
        lines += ["", "Not used:"]
    for name in off:
        reason = reasons[name]
        if explicit and name not in settings.search_providers:
            why = "not listed in MCP_WEB_SEARCH_PROVIDERS" + (f"; {reason}" if reason else "")
        elif explicit:
            why = f"listed in MCP_WEB_SEARCH_PROVIDERS but not configured: {reason}"
        else:
            why = reason or "not configured"
        lines.append(f"  {name}: {why}")
    _write(out, "\n".join(lines))
