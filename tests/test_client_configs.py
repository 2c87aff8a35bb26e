"""mcp.json.example: every entry has its client's shape, and the ones we can run here work."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.support.http_server import http_client, running_http_server

EXAMPLE = Path(__file__).resolve().parent.parent / "mcp.json.example"
TOKEN = "example-token-3f9a"


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


def test_each_client_block_has_its_shape() -> None:
    config = example()
    assert set(config) >= {"claude_desktop", "vscode", "cursor"}
    for name, entry in config["claude_desktop"]["mcpServers"].items():
        assert isinstance(entry["command"], str) and isinstance(entry["args"], list), name
    vscode = config["vscode"]["servers"]
    assert {entry["type"] for entry in vscode.values()} == {"stdio", "http"}
    input_ids = {item["id"] for item in config["vscode"]["inputs"]}
    for entry in vscode.values():
        for value in [*entry.get("env", {}).values(), *entry.get("headers", {}).values()]:
            if "${input:" in value:
                assert value.split("${input:", 1)[1].split("}", 1)[0] in input_ids
    cursor = config["cursor"]["mcpServers"]
    assert "command" in cursor["web"] and "url" in cursor["web-remote"]


async def test_local_install_entry_starts_the_server() -> None:
    entry = example()["claude_desktop"]["mcpServers"]["web-local"]
    command = str(Path(sys.executable).parent / entry["command"])
    params = StdioServerParameters(command=command, args=entry["args"], env={**os.environ, **entry["env"]})
    with anyio.fail_after(30):
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"web_search", "web_fetch"}


async def test_remote_entries_reach_the_http_service() -> None:
    vscode = example()["vscode"]["servers"]
    cursor = example()["cursor"]["mcpServers"]["web-remote"]
    with running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN) as server:
        for entry, expected in (
            (vscode["web-remote"], {"web_search", "web_fetch"}),
            (vscode["web-fetch-only"], {"web_fetch"}),
            (cursor, {"web_search", "web_fetch"}),
        ):
            url = entry["url"].replace("http://localhost:8000", server.base)
            authorization = entry["headers"]["Authorization"]
            assert authorization.startswith("Bearer ")
            async with http_client(url, TOKEN) as client:
                assert {tool.name for tool in (await client.list_tools()).tools} == expected
