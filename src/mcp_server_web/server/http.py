"""The streamable HTTP face: MCP at settings.path, /healthz, and the guards in front of them.

Stateless, because every tool call here is independent and a stateless server scales behind a
load balancer without sticky sessions; SSE responses (not plain JSON), so progress notifications
and cancellation reach the client while a fetch runs.

In front of the MCP endpoint, in this order: the Host and Origin allow-lists (DNS rebinding),
the bearer token, the ?tools= selection check, and GET answered 405 (a stateless server has no
stream to offer there). /healthz needs none of them and says nothing secret. Below the app, the
connection caps and the request read timeout (connections.py) keep idle sockets from taking the
server's descriptors.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import re
import socket
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_server_web import __version__
from mcp_server_web.config import Settings, is_loopback_host
from mcp_server_web.errors import InvalidArgument
from mcp_server_web.fetch import PoolStatus
from mcp_server_web.server.app import converters_of, search_of, state_of
from mcp_server_web.server.listen import bind_listeners
from mcp_server_web.server.middleware import TOOLS_QUERY_PARAMETER, parse_tool_selection

logger = logging.getLogger(__name__)

# As parse_host gives them: an IPv6 address is only ever compared in brackets.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
HEALTH_PATH = "/healthz"


# An authority as Host and Origin carry it: a DNS name or IPv4 address, or an IPv6 address in
# brackets, then optionally a port of digits. Nothing else: no user info, no path, no second colon.
_AUTHORITY = r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)(?::(?P<port>[0-9]{1,5}))?"
_HOST = re.compile(_AUTHORITY, re.IGNORECASE)
_ORIGIN = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://" + _AUTHORITY, re.IGNORECASE)


def _authority(match: re.Match[str] | None) -> tuple[str, str | None] | None:
    """(name, port) of a strictly parsed authority, lower-cased; None when it is malformed."""
    if match is None:
        return None
    name, port = match["name"].lower(), match["port"]
    if name.startswith("["):
        try:
            ipaddress.IPv6Address(name[1:-1])
        except ValueError:
            return None
    if port is not None and not 0 < int(port) <= 65535:
        return None
    return name, None if port is None else str(int(port))


def parse_host(value: str) -> tuple[str, str | None] | None:
    """A Host header as (name, port): host[:port], IPv6 in brackets; None when malformed."""
    return _authority(_HOST.fullmatch(value))


def parse_origin(value: str) -> tuple[str, str, str | None] | None:
    """An Origin header as (scheme, name, port): scheme://host[:port] exactly; None otherwise."""
    match = _ORIGIN.fullmatch(value)
    authority = _authority(match)
    if match is None or authority is None:
        return None
    return (match["scheme"].lower(), *authority)


@dataclass(frozen=True)
class HeaderPolicy:
    """Which Host and Origin values the endpoint accepts; None means "any".

    An entry without a port allows that host on any port. Values are parsed strictly before they
    are compared, so "localhost:evil" or "http://127.0.0.1:1.evil.com" match nothing.
    """

    hosts: tuple[str, ...] | None
    origins: tuple[str, ...] | None

    @classmethod
    def from_settings(cls, settings: Settings) -> HeaderPolicy:
        # On loopback, an unauthenticated server is exactly what DNS rebinding targets, so
        # the checks are on by default. Bound elsewhere a token is required, which a rebinding
        # page cannot know; the lists then apply only when configured (so a Docker or
        # reverse-proxy deployment does not answer "421 Invalid Host" to its own clients).
        local = is_loopback_host(settings.host)
        hosts: tuple[str, ...] | None = settings.allowed_hosts or (LOOPBACK_HOSTS if local else None)
        origins: tuple[str, ...] | None = tuple(o.rstrip("/") for o in settings.allowed_origins) or (
            tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in LOOPBACK_HOSTS)
            if local
            else None
        )
        return cls(None if hosts and "*" in hosts else hosts, None if origins and "*" in origins else origins)

    def host_allowed(self, host: str | None) -> bool:
        if self.hosts is None:
            return True
        parsed = parse_host(host or "")
        if parsed is None:
            return False
        name, port = parsed
        return name in self.hosts or (port is not None and f"{name}:{port}" in self.hosts)

    def origin_allowed(self, origin: str | None) -> bool:
        if self.origins is None or not origin:  # non-browser clients send no Origin
            return True
        parsed = parse_origin(origin)
        if parsed is None:
            return False
        scheme, name, port = parsed
        return f"{scheme}://{name}" in self.origins or (
            port is not None and f"{scheme}://{name}:{port}" in self.origins
        )


def _json_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class EndpointGuard:
    """ASGI wrapper around the MCP endpoint: header allow-lists, bearer token, ?tools= check."""

    def __init__(self, app: ASGIApp, settings: Settings, enabled_tools: Collection[str]) -> None:
        self._app = app
        self._policy = HeaderPolicy.from_settings(settings)
        self._token = settings.auth_token.encode() if settings.auth_token else None
        self._enabled = frozenset(enabled_tools)
        self._path = settings.path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        refusal = self._refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        try:
            await self._app(scope, receive, send)
        except ClientDisconnect:
            # The client hung up before its request body was read: what a call cancelled at once
            # looks like. Nobody is left to answer, and uvicorn would log it as "Exception in ASGI
            # application" with a traceback at ERROR, once per cancelled call under load.
            logger.debug("client disconnected before sending its whole request to %s", scope.get("path"))

    def _refusal(self, request: Request) -> Response | None:
        headers = request.headers
        if not self._policy.host_allowed(headers.get("host")):
            return _json_error(
                421, f"Host {headers.get('host')!r} is not allowed; add it to MCP_WEB_ALLOWED_HOSTS."
            )
        if not self._policy.origin_allowed(headers.get("origin")):
            return _json_error(
                403, f"Origin {headers.get('origin')!r} is not allowed; add it to MCP_WEB_ALLOWED_ORIGINS."
            )
        if self._token is not None and not self._authorized(headers.get("authorization")):
            return _json_error(
                401,
                "missing or invalid bearer token",
                {"WWW-Authenticate": 'Bearer realm="mcp-server-web", error="invalid_token"'},
            )
        try:
            parse_tool_selection(request.query_params.get(TOOLS_QUERY_PARAMETER), self._enabled)
        except InvalidArgument as exc:
            return _json_error(400, exc.message)
        if request.method == "GET" and request.url.path.rstrip("/") == self._path:
            # The SDK would open a server-to-client SSE stream that, on a stateless server, never
            # carries anything and never ends (and holds SIGTERM for the whole grace period).
            # The transport's answer for "no such stream" is 405.
            return _json_error(
                405,
                "this server is stateless and offers no stream on GET; POST JSON-RPC requests here.",
                {"Allow": "POST"},
            )
        return None

    def _authorized(self, header: str | None) -> bool:
        assert self._token is not None
        scheme, _, presented = (header or "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        # Constant time, so response timing does not leak how much of a guess was right.
        return hmac.compare_digest(presented.strip().encode(), self._token)


@dataclass
class Readiness:
    ready: bool = False


def converter_health(status: PoolStatus) -> dict[str, Any]:
    """The conversion workers' share of /healthz: counts, and "degraded" while calls queue for them.

    Still HTTP 200 when degraded: the server answers every other call, and one saturated by a
    burst of heavy pages recovers by itself within MCP_WEB_TIMEOUT (stuck work is killed).
    """
    health: dict[str, Any] = {
        "converters": {
            "capacity": status.capacity,
            "busy": status.busy,
            "waiting": status.waiting,
            "killed": status.killed,
        }
    }
    if status.saturated:
        health["degraded"] = [
            f"all {status.capacity} page converters are busy and {status.waiting} calls are waiting for one"
        ]
    return health


def build_http_app(server: MCPServer, settings: Settings, enabled_tools: Collection[str]) -> Starlette:
    """The ASGI app: MCP at settings.path behind the guards, and /healthz."""
    mcp_app = server.streamable_http_app(
        streamable_http_path=settings.path,
        stateless_http=True,
        json_response=False,
        # Host/Origin are checked by EndpointGuard, with settings and messages of our own; the
        # SDK still validates Content-Type.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=settings.host,
    )
    readiness = Readiness()
    converters = converters_of(server)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # Mounted apps' lifespans are not run by Starlette, so the session manager is run here.
        async with server.session_manager.run():
            readiness.ready = True
            try:
                yield
            finally:
                readiness.ready = False

    async def healthz(_: Request) -> Response:
        body: dict[str, Any] = {
            "status": "ok" if readiness.ready else "starting",
            "version": __version__,
            "ready": readiness.ready,
        }
        search = search_of(server)
        if search is not None and (status := await search.status()) is not None:
            # Today's calls, limits and benched keys: only the running server knows them (doctor
            # runs in a process of its own).
            body["search"] = status
        state = state_of(server)
        if state is not None and (shared := state.shared_status) is not None:
            # Degraded still serves every call (from this replica's memory): status, not readiness.
            body["shared_state"] = shared
            if shared != "ok" and readiness.ready:
                body["status"] = "degraded"
        if converters is not None:
            body.update(converter_health(converters.status()))
            if body.get("degraded") and readiness.ready:
                body["status"] = "degraded"
        return Response(
            json.dumps(body), status_code=200 if readiness.ready else 503, media_type="application/json"
        )

    return Starlette(
        routes=[
            Route(HEALTH_PATH, healthz, methods=["GET", "HEAD"]),
            Mount("/", app=EndpointGuard(mcp_app, settings, enabled_tools)),
        ],
        lifespan=lifespan,
    )


async def serve_http(
    server: MCPServer, settings: Settings, listeners: list[socket.socket] | None = None
) -> None:
    """Serve until SIGTERM, on ``listeners`` (bound by the caller, see listen.py) or on sockets
    bound here to settings.host and settings.port."""
    import uvicorn
    from sse_starlette.sse import AppStatus

    from mcp_server_web.server.connections import (
        ConnectionGate,
        FrontDoorServer,
        front_door_limits,
        guarded_protocol,
        open_file_limit,
        throttled_accept_errors,
    )

    # sse-starlette ends every open SSE response the moment SIGTERM arrives, which would cut off
    # tool calls in flight. Each of our SSE responses ends with its call's result, so uvicorn's
    # own graceful shutdown (stop accepting, let open requests finish) is the drain we want.
    AppStatus.disable_automatic_graceful_drain()
    if listeners is None:
        listeners = bind_listeners(settings.host, settings.port)
    if not is_loopback_host(settings.host) and not settings.auth_token:
        # load_settings only lets this through with MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE=true.
        logger.warning(
            "SERVING WITHOUT AUTHENTICATION on %s: anyone who can reach this port can make this server "
            "fetch URLs for them (MCP_WEB_ALLOW_UNAUTHENTICATED_REMOTE=true).",
            settings.host,
        )
    app = build_http_app(server, settings, settings.tools)
    limits = front_door_limits(settings, open_file_limit())
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        log_config=None,  # keep our stderr logging setup; uvicorn's would add its own handlers
        lifespan="on",
        # On SIGTERM uvicorn stops accepting, lets in-flight calls finish (up to this), then exits.
        # (uvicorn annotates int, but the value goes straight to asyncio.wait_for: seconds, any number)
        timeout_graceful_shutdown=max(5.0, settings.timeout + 5.0),  # type: ignore[arg-type]
        server_header=False,
        # h11 with the caps and read timeout of connections.py, whatever else is installed
        # (httptools would be picked otherwise); nothing here speaks WebSocket.
        http=guarded_protocol(ConnectionGate(limits.total, limits.per_client), settings.request_read_timeout),
        ws="none",
        backlog=limits.accept_batch,
    )
    logger.info(
        "serving MCP over streamable HTTP at http://%s:%d%s (at most %d connections, %d per client "
        "address; requests read within %g s)",
        settings.host,
        listeners[0].getsockname()[1],  # the port chosen, when settings.port is 0
        settings.path,
        limits.total,
        limits.per_client,
        settings.request_read_timeout,
    )
    with throttled_accept_errors(asyncio.get_running_loop()):
        await FrontDoorServer(config).serve(sockets=listeners)
