"""The one way this backend reaches Redis: a connection pool built from MCP_WEB_REDIS_URL.

Built here for the backend and, without connecting, for the settings check (``check_url``), so a
URL that could never give a connection is refused at start-up, in a sentence, not at the first
call in a traceback.

Every reply is read by ``BoundedParser``, RESP2 (pinned: redis-py 8 asks for RESP3 unless told):
what a Redis answers is not trusted to be small or shallow. A reply larger than the largest value
a replica stores, an array longer or deeper than any command here gets, a line without end or a
length that is not a number is refused before it is read, as ``InvalidResponse`` (a RedisError:
the connection is dropped, the call is answered from memory).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlsplit

from redis._parsers import _AsyncRESP2Parser
from redis.asyncio import BlockingConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse

from mcp_server_web.state.redis.store import MAX_SHARED_ENTRY

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
        protocol=2,
        parser_class=BoundedParser,
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


MAX_REPLY_BYTES = MAX_SHARED_ENTRY + 64 * 1024
"""Bytes of bulk strings in one reply at most: the largest value stored (or a flight's result,
behind its token), with room for the rest."""
MAX_REPLY_ITEMS = 64
"""Elements of one array at most: the longest reply a command here gets has 3 (a pub/sub message,
a transaction's results)."""
MAX_REPLY_DEPTH = 4
"""Arrays within arrays at most: replies here nest 1 deep."""


class BoundedParser(_AsyncRESP2Parser):
    """redis-py's RESP2 parser, refusing what no command here is answered with (see the module)."""

    __slots__ = ("_left",)

    def __init__(self, socket_read_size: int) -> None:
        super().__init__(socket_read_size)
        self._left = MAX_REPLY_BYTES

    async def read_response(self, disable_decoding: bool = False) -> Any:
        self._left = MAX_REPLY_BYTES
        return await super().read_response(disable_decoding=disable_decoding)

    async def _read_response(self, disable_decoding: bool = False, depth: int = 0) -> Any:
        try:
            raw = await self._readline()
        except ValueError:  # asyncio's line limit: a line without end
            raise InvalidResponse("a reply line longer than the client reads") from None
        kind, rest = raw[:1], raw[1:]
        if kind == b"-":
            return self._error(rest)
        if kind == b"+":
            return rest
        if kind == b":":
            return _number(rest)
        if kind == b"$":
            length = _number(rest)
            if length == -1:
                return None
            if not 0 <= length <= self._left:
                raise InvalidResponse(f"a bulk string of {length} bytes, past the {MAX_REPLY_BYTES} allowed")
            self._left -= length
            return await self._read(length)
        if kind == b"*":
            count = _number(rest)
            if count == -1:
                return None
            if not 0 <= count <= MAX_REPLY_ITEMS or depth >= MAX_REPLY_DEPTH:
                raise InvalidResponse("an array longer or deeper than any reply a command here gets")
            return [await self._read_response(disable_decoding, depth + 1) for _ in range(count)]
        raise InvalidResponse(f"not a RESP2 reply (it starts with {kind!r})")

    def _error(self, text: bytes) -> Any:
        error = self.parse_error(text[:500].decode("utf-8", errors="replace"))  # type: ignore[no-untyped-call]
        if isinstance(error, RedisConnectionError):
            self._clear()  # type: ignore[no-untyped-call]
            raise error
        return error


def _number(text: bytes) -> int:
    if not re.fullmatch(rb"-?[0-9]{1,19}", text):
        raise InvalidResponse("a reply's number is not a number")
    return int(text)
