"""The MCP Inspector's CLI mode drives the real server over stdio and over streamable HTTP.

The Inspector is a Node program, pinned and installed into .inspector/ by scripts/install-inspector;
without it (no Node.js on this machine) these tests are skipped.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_transports import free_port
from tests.support.origin import Origin
from tests.support.samples import ARTICLE_TITLE, article_html

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR = ROOT / ".inspector" / "node_modules" / ".bin" / "mcp-inspector"
INSPECTOR_TIMEOUT = 60.0
SERVER_START_TIMEOUT = 20.0
SERVER_SETTINGS = {"MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning"}
# Every request here goes to 127.0.0.1; a proxy from the environment could only get in the way.
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy"}

pytestmark = [
    pytest.mark.skipif(
        not INSPECTOR.exists(),
        reason=f"MCP Inspector not installed ({INSPECTOR} is missing): run scripts/install-inspector",
    ),
    pytest.mark.skipif(
        shutil.which("node") is None, reason="node is not on PATH; the MCP Inspector needs it"
    ),
]


def run_inspector(target: list[str], *method: str, workdir: Path) -> dict[str, Any]:
    """Run `mcp-inspector --cli <target> <method...>` and return its JSON answer."""
    env = {key: value for key, value in os.environ.items() if key.lower() not in PROXY_VARIABLES}
    env["MCP_CATALOG_PATH"] = str(workdir / "inspector-catalog.json")  # never the user's ~/.mcp-inspector
    command = [str(INSPECTOR), "--cli", *target, *method]
    # A session of its own, so a timeout can end the Inspector, its child processes and the server.
    process = subprocess.Popen(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=INSPECTOR_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"Inspector took over {INSPECTOR_TIMEOUT:.0f} s: {command}") from None
    assert process.returncode == 0, f"Inspector failed ({process.returncode}): {stderr[-3000:]}"
    try:
        answer = json.loads(stdout)
    except json.JSONDecodeError as error:
        raise AssertionError(f"Inspector printed no JSON ({error}): {stdout[-2000:]!r}") from None
    assert isinstance(answer, dict), answer
    return answer


def stdio_target() -> list[str]:
    """The Inspector launches the server itself; -e sets the server's environment."""
    settings = [arg for key, value in SERVER_SETTINGS.items() for arg in ("-e", f"{key}={value}")]
    return [*settings, sys.executable, "-m", "mcp_server_web"]


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"HTTP server did not listen on port {port} within {SERVER_START_TIMEOUT:.0f} s")


def http_target(tmp_path: Path) -> Iterator[list[str]]:
    """Serve MCP over streamable HTTP with a bearer token; yield the Inspector's arguments for it."""
    port = free_port()
    token = secrets.token_urlsafe(24)
    env = {**os.environ, **SERVER_SETTINGS, "MCP_WEB_AUTH_TOKEN": token}
    log = tmp_path / "server.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--port", str(port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_listening(process, port, log)
        url = f"http://127.0.0.1:{port}/mcp"
        yield [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """The Inspector's arguments that name the server, once per transport."""
    if request.param == "stdio":
        yield stdio_target()
    else:
        yield from http_target(tmp_path)


def test_inspector_lists_the_tools(target: list[str], tmp_path: Path) -> None:
    answer = run_inspector(target, "--method", "tools/list", workdir=tmp_path)
    names = {tool["name"] for tool in answer["tools"]}
    assert {"web_fetch", "web_search"} <= names, names


def test_inspector_calls_web_fetch(target: list[str], tmp_path: Path, origin: Origin) -> None:
    url = origin.serve("/article", article_html())
    call = ["--method", "tools/call", "--tool-name", "web_fetch", "--tool-arg", f"url={url}"]
    answer = run_inspector(target, *call, workdir=tmp_path)
    text = "\n".join(part["text"] for part in answer["content"] if part["type"] == "text")
    assert answer.get("isError") is not True, text
    assert f"# {ARTICLE_TITLE}" in text.splitlines(), text[:500]
    assert origin.hits("/article") == 1
