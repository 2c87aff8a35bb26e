"""The one way this backend reaches Redis: a connection pool built from MCP_WEB_REDIS_URL.

Built here for the backend and, without connecting, for the settings check (``check_url``), so a
URL that could never give a connection is refused at start-up, in a sentence, not at the first
call in a traceback.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from redis.asyncio import BlockingConnectionPool

SCHEMES = ("redis", "rediss")
"""What the README promises (TLS or not, a password in the URL)."""
MAX_CONNECTIONS = 128
"""Connections to Redis at most, per replica. Each call in flight holds at most one at a time, and
each caller waiting on another replica's work one more (its subscription): with the default 32
calls at once that is under 64; one asked for beyond the bound waits, within the deadline."""


def connection_pool(url: str, *, timeout: float) -> BlockingConnectionPool:
    """The pool of connections to the Redis at url; ValueError when url is not a redis:// or
    rediss:// URL the client can read (nothing is connected here)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in SCHEMES:
        shown = re.sub(r"[^a-z0-9+.-]", "?", scheme[:20])
        raise ValueError(
            f"expected a redis:// or rediss:// URL, got {f'a {shown}:// one' if shown else 'no scheme'}"
        )
    return BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=timeout,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
    )


def check_url(url: str) -> None:
    """Return quietly when url gives a connection as the backend makes it (none is opened);
    else ValueError, whose sentence never repeats the URL's user name or password."""
    try:
        # A connection is built from the URL's options only when it is first needed: built here,
        # an option the client does not take fails now, not at the first call.
        connection_pool(url, timeout=1.0).make_connection()  # type: ignore[no-untyped-call]
    except (ValueError, TypeError) as exc:
        raise ValueError(_without_credentials(_sentence(exc), url)) from None


def _sentence(exc: ValueError | TypeError) -> str:
    text = str(exc)
    unknown = re.search(r"unexpected keyword argument '([^']{1,60})'", text)
    if unknown is not None:
        return f"the Redis client takes no option {unknown.group(1)!r} (in the URL's query)"
    return text[:200].rstrip(".")


def _without_credentials(text: str, url: str) -> str:
    try:
        parts = urlsplit(url)
        secrets = [parts.password, parts.username]
    except ValueError:
        secrets = []
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***").replace(unquote(secret), "***")
    return text
