"""State that replicas will share, behind one async port (port.py), and its in-memory backend.

Imported by ``fetch`` and ``providers``; imports neither (nor the server, the CLI or MCP). A
composition root chooses the backend (``MemoryState``, or ``redis_state``) and passes it to the
services, which use only the port: they cannot tell which backend they have.
"""

import time
from collections.abc import Callable

from mcp_server_web.state.codec import Codec, CorruptEntry, Unencodable, encode_key, key_text
from mcp_server_web.state.memory import MemoryState
from mcp_server_web.state.port import (
    CooldownBook,
    CooldownRecord,
    Counters,
    Key,
    KeyValueStore,
    Pacer,
    SingleFlight,
    StateBackend,
    StoreUsage,
)

__all__ = [
    "Codec",
    "CooldownBook",
    "CooldownRecord",
    "CorruptEntry",
    "Counters",
    "Key",
    "KeyValueStore",
    "MemoryState",
    "Pacer",
    "SingleFlight",
    "StateBackend",
    "StoreUsage",
    "Unencodable",
    "check_redis_url",
    "encode_key",
    "key_text",
    "redis_state",
]


def redis_state(
    url: str, *, prefix: str, codec: Codec, clock: Callable[[], float] = time.time
) -> StateBackend:
    """State shared with every replica through the Redis at url (redis:// or rediss://, a
    password in the URL), keys under prefix; this replica's memory while Redis fails. clock is
    the wall clock every replica reads (a test passes one it moves by hand)."""
    # Imported here: the redis client takes ~90 ms to import, which a server without it skips.
    from mcp_server_web.state.redis import RedisState

    return RedisState(url, prefix=prefix, codec=codec, clock=clock)


def check_redis_url(url: str) -> None:
    """Return quietly when ``redis_state`` can be built from url (nothing is connected); else
    ValueError, a sentence that never repeats the URL's password: an unknown scheme, a bad port,
    an option the Redis client does not take."""
    from mcp_server_web.state.redis.connect import check_url  # the client, imported only with a URL

    check_url(url)
