"""mcp.json.example: every entry has its client's shape, and the ones we can run here work."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.http_server import http_client, running_http_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "mcp.json.example"
TOKEN = "example-token-3f9a"
CHECKOUT = "/absolute/path/to/mcp-server-web"
"""The placeholder the uvx entries name the checkout by."""
PACKAGE_TOOLS = ROOT / ".package"
"""Where scripts/package-smoke (a CI step, before the tests) installs uv and fills uv's cache."""
UVX = PACKAGE_TOOLS / "tools" / "bin" / "uvx"
MCP_REMOTE = ROOT / ".mcp-remote"
"""Where scripts/install-mcp-remote puts the pinned bridge, so npx finds it without the network."""


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


def uvx_entries() -> list[tuple[str, dict[str, Any]]]:
    config = example()
    return [
        ("claude_desktop", config["claude_desktop"]["mcpServers"]["web"]),
        ("vscode", config["vscode"]["servers"]["web"]),
        ("cursor", config["cursor"]["mcpServers"]["web"]),
    ]


@pytest.mark.parametrize(("client_name", "entry"), uvx_entries(), ids=lambda value: str(value)[:20])
async def test_uvx_entries_start_the_server_from_a_checkout(client_name: str, entry: dict[str, Any]) -> None:
    """Each client's 'web' entry, started as that client starts it: its command, its args (the
    checkout's path put in), its env. uv runs offline from the cache package-smoke filled, so the
    test reaches nothing but this machine."""
    if not UVX.exists() or not (PACKAGE_TOOLS / "uv-cache").is_dir():
        pytest.skip(
            "uv is not installed in .package/ (scripts/package-smoke installs it and fills its cache)"
        )
    assert entry["command"] == "uvx" and CHECKOUT in entry["args"], client_name
    args = [str(ROOT) if arg == CHECKOUT else arg for arg in entry["args"]]
    env = {
        **os.environ,
        **entry.get("env", {}),
        "UV_CACHE_DIR": str(PACKAGE_TOOLS / "uv-cache"),
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    params = StdioServerParameters(command=str(UVX), args=args, env=env)
    with anyio.fail_after(120):
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"web_search", "web_fetch"}


async def test_claude_desktop_remote_entry_goes_through_mcp_remote() -> None:
    """The entry Claude Desktop starts for the Docker service: npx mcp-remote with the header
    written without a space, its value from env (mcp-remote fills ${AUTH_HEADER} in)."""
    if shutil.which("npx") is None or not (MCP_REMOTE / "node_modules" / ".bin" / "mcp-remote").exists():
        pytest.skip("mcp-remote is not installed (scripts/install-mcp-remote; needs Node.js)")
    entry = example()["claude_desktop"]["mcpServers"]["web-remote"]
    assert entry["command"] == "npx" and "Authorization:${AUTH_HEADER}" in entry["args"]
    assert not any(" " in arg for arg in entry["args"]), "an argument with a space is split on Windows"
    assert entry["env"]["AUTH_HEADER"].startswith("Bearer ")
    with running_http_server(MCP_WEB_AUTH_TOKEN=TOKEN) as server:
        args = [arg.replace("http://localhost:8000", server.base) for arg in entry["args"]]
        env = {
            **os.environ,
            **entry["env"],
            "AUTH_HEADER": f"Bearer {TOKEN}",
            # npx then takes the pinned copy in .mcp-remote/ and never asks the registry.
            "npm_config_offline": "true",
        }
        params = StdioServerParameters(command="npx", args=args, env=env, cwd=str(MCP_REMOTE))
        with anyio.fail_after(60):
            async with Client(params) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == {"web_search", "web_fetch"}
