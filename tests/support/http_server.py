"""The real command-line server over streamable HTTP, as a subprocess on a free loopback port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def terminate(self, timeout: float = 15) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


@contextmanager
def running_http_server(*args: str, **env: str) -> Iterator[RunningServer]:
    """Start `python -m mcp_server_web --transport http` with extra flags and env; wait until it listens."""
    port = free_port()
    environment = {**os.environ, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning", **env}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--port", str(port), *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise AssertionError("HTTP server did not start listening") from None
            time.sleep(0.05)
    try:
        yield RunningServer(process, port)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


@asynccontextmanager
async def http_client(
    url: str,
    token: str | None = None,
    *,
    mode: str = "auto",
    local_address: str | None = None,
    **headers: str,
) -> AsyncIterator[Client]:
    """The SDK's Client over streamable HTTP, optionally with a bearer token; mode is the Client's
    (``legacy``: the initialize handshake; ``auto``: server/discover first). local_address is the
    loopback address its connections come from (another one looks like another machine).

    No session-terminating DELETE on close: the server is stateless, and a test that stops the
    server mid-call must not fail on the client's goodbye.
    """
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    transport = httpx2.AsyncHTTPTransport(local_address=local_address) if local_address else None
    timeout = httpx2.Timeout(30, read=120)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, transport=transport) as http,
        Client(
            streamable_http_client(url, http_client=http, terminate_on_close=False),
            mode=mode,  # type: ignore[arg-type]
        ) as client,
    ):
        yield client


async def healthz_and_doctor(server: RunningServer, env: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The running server's /healthz, and what `doctor` prints about it: a process of its own with
    the same settings, which reads the running server's figures (it must exit 0)."""
    async with httpx2.AsyncClient() as http:
        health: dict[str, Any] = (await http.get(server.base + "/healthz", timeout=5)).json()
    with anyio.fail_after(60):
        doctor = await anyio.run_process(
            [sys.executable, "-m", "mcp_server_web", "doctor"],
            env={**os.environ, **env, "MCP_WEB_TRANSPORT": "http", "MCP_WEB_PORT": str(server.port)},
            check=False,
        )
    assert doctor.returncode == 0, doctor.stderr
    return health, doctor.stdout.decode()
