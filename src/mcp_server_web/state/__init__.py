"""State that replicas will share, behind one async port (port.py), and its in-memory backend.

Imported by ``fetch`` and ``providers``; imports neither (nor the server, the CLI or MCP). A
composition root chooses the backend (today ``MemoryState``) and passes it to the services, which
use only the port: they cannot tell which backend they have.
"""

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
    "encode_key",
    "key_text",
]
