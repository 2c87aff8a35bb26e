"""The HTTP listening sockets, bound before anything else starts.

uvicorn binds its port only after the app's start-up has run, and reports a busy port after
its own "startup complete" lines (and ours saying where we serve). Binding first means a port
another process holds is one line and an exit, before any worker process or import is paid for.
Light on purpose: only the socket module, so the failure is as quick as the check.
"""

from __future__ import annotations

import errno
import os
import socket

_REASONS = {
    errno.EADDRINUSE: "address already in use (another process listens there; choose another port with "
    "--port or MCP_WEB_PORT)",
    errno.EACCES: "permission denied (ports below 1024 need privileges; choose another with --port or "
    "MCP_WEB_PORT)",
    errno.EADDRNOTAVAIL: "this machine has no such address (check --host or MCP_WEB_HOST)",
}


class CannotListen(Exception):
    """The address cannot be served on; the message says where and why, in one line."""


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind_listeners(host: str, port: int) -> list[socket.socket]:
    """Sockets bound (not yet listening) to ``port`` on every address ``host`` resolves to, as
    asyncio's create_server would bind them; uvicorn serves on them."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        reason = f"{exc.strerror} (check --host or MCP_WEB_HOST)"
        raise CannotListen(f"cannot listen on {_where(host, port)}: {reason}") from exc
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            listener = socket.socket(family, kind, proto)
            bound.append(listener)
            if os.name == "posix":
                # As asyncio does: a restart need not wait for the last run's connections to time out.
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                # Each family on its own socket, as asyncio binds "localhost" or "".
                listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listener.bind(address)
    except OSError as exc:
        for listener in bound:
            listener.close()
        reason = _REASONS.get(exc.errno or 0, exc.strerror or str(exc))
        raise CannotListen(f"cannot listen on {_where(host, port)}: {reason}") from exc
    return bound
