"""The stdio servers compared, spawned the same way through the SDK's Client, and their tools."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from suite.extraction import clean_env, path_with_node, path_without_node
from suite.paths import OUR_PYTHON, PEER_PYTHON

_FETCH_NEXT = re.compile(r"Content truncated\. Call the fetch tool with a start_index of (\d+)")


@dataclass(frozen=True)
class Fetched:
    text: str
    next_start: int | None
    error: bool = False


@dataclass(frozen=True)
class StdioServer:
    key: str
    label: str
    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def is_ours(self) -> bool:
        return self.key == "ours"

    def params(self) -> StdioServerParameters:
        return StdioServerParameters(command=self.command, args=self.args, env=clean_env(**self.env))

    async def fetch(self, client: Client, url: str, start_index: int, max_length: int) -> Fetched:
        """One page: its text, the next start_index (None at the end) and whether it was an isError."""
        if self.is_ours:
            result = await client.call_tool(
                "web_fetch", {"url": url, "start_index": start_index, "max_length": max_length}
            )
        else:
            result = await client.call_tool(
                "fetch", {"url": url, "start_index": start_index, "max_length": max_length}
            )
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            return Fetched(text, None, error=True)
        if self.is_ours:
            structured: dict[str, Any] = result.structured_content or {}
            return Fetched(text, structured.get("next_start_index"))
        found = _FETCH_NEXT.search(text)
        return Fetched(text, int(found.group(1)) if found else None)


def ours() -> StdioServer:
    return StdioServer(
        "ours",
        "mcp-server-web",
        str(OUR_PYTHON),
        ["-m", "mcp_server_web"],
        env={
            "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32",
            "MCP_WEB_RESPECT_ROBOTS": "false",
            "MCP_WEB_LOG_LEVEL": "warning",
        },
    )


def fetch_server(node: bool) -> StdioServer:
    return StdioServer(
        "fetch-node" if node else "fetch-nonode",
        f"mcp-server-fetch, {'with' if node else 'without'} Node",
        str(PEER_PYTHON),
        ["-m", "mcp_server_fetch", "--ignore-robots-txt", "--allow-private-ips"],
        env={"PATH": path_with_node() if node else path_without_node(), "PYTHONPATH": ""},
    )


def compared(with_peer: bool, with_node: bool) -> list[StdioServer]:
    servers = [ours()]
    if with_peer and PEER_PYTHON.exists():
        if with_node and shutil.which("node"):
            servers.append(fetch_server(node=True))
        servers.append(fetch_server(node=False))
    return servers


@asynccontextmanager
async def connect(server: StdioServer, errlog: IO[str]) -> AsyncIterator[Client]:
    """Spawn the server over stdio and connect the SDK Client (no client-side response cache)."""
    async with Client(stdio_client(server.params(), errlog=errlog), cache=None) as client:
        yield client
