"""The front door (issue 10, points 2, 11, 13 and 15a): what reaches the server before any tool runs.

- Idle half-open connections (a request head that never ends) must not starve the HTTP server:
  the real server process runs under a low descriptor limit, more such sockets than the limit
  are opened and held, and /healthz and an authenticated tool call must still answer promptly
  (within 2 s and 10 s, or as many times what they took on the quiet server just before), the
  held sockets must be closed by the request read timeout, and the log must stay small.
- GET on the stateless MCP endpoint is answered 405 instead of opening an endless SSE stream,
  and SIGTERM with such a connection open exits promptly.
- Over stdio, a line that is not JSON (or holds a lone surrogate) is answered with a JSON-RPC
  parse error, and the server keeps answering after it.
- Host and Origin are parsed strictly: host[:port], scheme://host[:port], nothing else.

Traffic stays on 127.0.0.1 (the server, its clients and the page it fetches).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import queue
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest

from mcp_server_web.config import Settings
from mcp_server_web.server.connections import front_door_limits
from tests.server.conftest import fenced_text, text_of
from tests.support.http_server import free_port, http_client
from tests.support.messages import INITIALIZE
from tests.support.origin import Origin
from tests.support.samples import ARTICLE_TITLE, article_html
from tests.support.timing import PATIENCE, allowance, slowest, slowest_sync

logger = logging.getLogger(__name__)

TOKEN = "front-door-test-token"
FD_LIMIT = 256
"""RLIMIT_NOFILE of the server process in the flood tests: low, so a flood can exceed it cheaply."""
READ_TIMEOUT_S = 3.0
"""The server's request read timeout in these tests (the default is longer), to keep them short."""
CLOSE_MARGIN_S = 2.0
"""Seconds past the read timeout a trickled connection may stay open (the trickle's 0.25 s steps,
scheduling); on a busy machine, CLOSE_CONTROLS times /healthz's time on the quiet server, if more."""
CLOSE_CONTROLS = 20
HEALTHZ_S = 2.0
"""Seconds /healthz may take under a flood; on a busy machine, PROMPT_CONTROLS times what it took
on the quiet server just before, if that is more (and the same for an authenticated call, CALL_S)."""
CALL_S = 10.0
PROMPT_CONTROLS = 20
HALF_OPEN_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
ACCEPT_ERROR_MARKERS = ("socket.accept()", "Too many open files")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux descriptor limits")


# --- the real server process -------------------------------------------------------------------


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def accept_error_lines(self) -> int:
        return sum(1 for line in self.log().splitlines() if any(m in line for m in ACCEPT_ERROR_MARKERS))


def _fd_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return apply


@contextmanager
def served(*args: str, fd_limit: int | None = None, **env: str) -> Iterator[Served]:
    """The real server over HTTP; stderr goes to a file (a pipe nobody reads could fill and
    block the server, and the log's size is one of the things measured)."""
    port = free_port()
    environment = {
        **os.environ,
        "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32",
        "MCP_WEB_LOG_LEVEL": "warning",
        "MCP_WEB_AUTH_TOKEN": TOKEN,
        **env,
    }
    with tempfile.TemporaryDirectory() as tmp:
        stderr_path = Path(tmp) / "stderr.log"
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "mcp_server_web", "--transport", "http", "--port", str(port), *args],
                env=environment,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                preexec_fn=_fd_limit(fd_limit) if fd_limit else None,
            )
        running = Served(process, port, stderr_path)
        try:
            _wait_listening(running)
            yield running
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def _wait_listening(running: Served) -> None:
    deadline = time.monotonic() + 20
    while True:
        if running.process.poll() is not None:
            raise AssertionError(f"server exited: {running.log()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", running.port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError("HTTP server did not start listening") from None
            time.sleep(0.05)


def _healthz_seconds(base: str, timeout: float = 5.0) -> float | None:
    """Seconds /healthz took to answer 200, or None when it did not answer in time."""
    started = time.monotonic()
    try:
        response = httpx.get(base + "/healthz", timeout=timeout)
    except httpx.HTTPError:
        return None
    return time.monotonic() - started if response.status_code == 200 else None


def _healthz_control(base: str) -> float:
    """The control: the slowest of three /healthz answers on the quiet server, now."""

    def answered() -> None:
        assert _healthz_seconds(base) is not None, "/healthz did not answer on the quiet server"

    return slowest_sync(answered)


async def _authenticated_fetch(url: str, page: str) -> float | None:
    """Seconds an authenticated web_fetch took, or None when it did not finish within 20 s."""
    started = time.monotonic()
    with anyio.move_on_after(20) as scope:
        async with http_client(url, TOKEN) as client:
            result = await client.call_tool("web_fetch", {"url": page})
    if scope.cancelled_caught:
        return None
    assert not result.is_error, text_of(result)
    assert f"# {ARTICLE_TITLE}" in fenced_text(result)
    return time.monotonic() - started


async def _call_control(url: str, page: str) -> float:
    """The control: the slower of two authenticated web_fetch calls on the quiet server (after
    one that warms it up), each of a page not yet cached."""
    pages = itertools.count()

    async def one() -> None:
        assert await _authenticated_fetch(url, f"{page}?quiet={next(pages)}") is not None

    return await slowest(one, runs=2)


# --- idle half-open connections ------------------------------------------------------------------


@dataclass
class Flood:
    """Sockets that each send the start of a request head and then nothing, kept open.

    A background thread tops the count back up when the server closes some (an attacker would
    reconnect), until stopped; every loop is bounded.
    """

    port: int
    size: int
    source: str = "127.0.0.1"
    opened: int = 0
    failed_sends: int = 0
    sockets: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _open_one(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(2)
        try:
            sock.bind((self.source, 0))
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(HALF_OPEN_HEAD)
        except OSError:
            self.failed_sends += 1
            sock.close()
            return
        sock.setblocking(False)
        self.opened += 1
        self.sockets.append(sock)

    def fill(self, at_most: int | None = None) -> None:
        for _ in range(min(self.size - len(self.sockets), self.size if at_most is None else at_most)):
            if self._stop.is_set():
                return
            self._open_one()

    def prune(self) -> int:
        """Drop the sockets the server has closed; how many."""
        alive = [sock for sock in self.sockets if not _closed_by_peer(sock)]
        for sock in self.sockets:
            if sock not in alive:
                sock.close()
        dropped = len(self.sockets) - len(alive)
        self.sockets = alive
        return dropped

    def start(self) -> None:
        self.fill()

        def top_up() -> None:
            for _ in range(400):  # at most 400 rounds of 50 ms
                if self._stop.wait(0.05):
                    return
                self.prune()
                self.fill(at_most=50)  # at most 1,000 new connections a second

        self._thread = threading.Thread(target=top_up, daemon=True)
        self._thread.start()

    def stop_topping_up(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def wait_all_closed(self, timeout: float) -> int:
        """Wait until the server closed every held socket; how many are still open at the end."""
        deadline = time.monotonic() + timeout
        selector = selectors.DefaultSelector()
        for sock in self.sockets:
            selector.register(sock, selectors.EVENT_READ)
        open_ = set(self.sockets)
        while open_ and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=max(0.0, min(0.5, deadline - time.monotonic()))):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if _closed_by_peer(sock):
                    selector.unregister(sock)
                    open_.discard(sock)
        selector.close()
        return len(open_)

    def close(self) -> None:
        self.stop_topping_up()
        for sock in self.sockets:
            sock.close()
        self.sockets = []


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the server closed `sock` (a non-blocking socket: this must not wait)."""
    assert sock.gettimeout() == 0.0, "a socket with a timeout would wait in recv"
    try:
        data = sock.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True  # reset by the server
    if data:  # the server answered something (e.g. 408) before closing: read it and look again
        try:
            sock.recv(4096, socket.MSG_DONTWAIT)
        except OSError:
            return True
        return _closed_by_peer(sock)
    return True


@pytest.mark.timeout(150)
def test_idle_half_open_flood_leaves_the_server_healthy(origin: Origin) -> None:
    # Two floods, each of twice the server's descriptor limit: one held from the address the real
    # client also uses (127.0.0.1, as behind a reverse proxy), one from 127.0.0.2 that reconnects
    # whatever the server closes, up to 1,000 connections a second, while the checks run.
    page = origin.serve("/article", article_html())
    with served(fd_limit=FD_LIMIT, MCP_WEB_REQUEST_READ_TIMEOUT=str(READ_TIMEOUT_S)) as server:
        health_control = _healthz_control(server.base)
        call_control = anyio.run(_call_control, server.base + "/mcp", page)
        held = Flood(server.port, size=2 * FD_LIMIT)
        storm = Flood(server.port, size=2 * FD_LIMIT, source="127.0.0.2")
        try:
            held.fill()
            storm.start()
            time.sleep(0.5)  # let the server take the floods in
            health = [_healthz_seconds(server.base) for _ in range(5)]
            call_s = anyio.run(_authenticated_fetch, server.base + "/mcp", page)
            storm.stop_topping_up()
            wait_s = READ_TIMEOUT_S + PATIENCE
            still_open = held.wait_all_closed(wait_s) + storm.wait_all_closed(wait_s)
            log = server.log()
            accept_errors = server.accept_error_lines()
            logger.warning(
                "half-open floods under RLIMIT_NOFILE %d: held %d from 127.0.0.1 (%d sends failed), "
                "%d opened from 127.0.0.2 (%d sends failed): /healthz %s s (quiet %.3f s), "
                "authenticated web_fetch %s s (quiet %.3f s), "
                "%d sockets still open %.0f s after the flood stopped, stderr %d lines / %d bytes, "
                "%d accept-error lines",
                FD_LIMIT,
                held.opened,
                held.failed_sends,
                storm.opened,
                storm.failed_sends,
                [None if h is None else round(h, 3) for h in health],
                health_control,
                None if call_s is None else round(call_s, 2),
                call_control,
                still_open,
                wait_s,
                len(log.splitlines()),
                len(log.encode()),
                accept_errors,
            )
        finally:
            held.close()
            storm.close()
        health_bound = allowance(HEALTHZ_S, health_control, PROMPT_CONTROLS)
        assert all(h is not None and h < health_bound for h in health), (health, health_control)
        assert call_s is not None and call_s < allowance(CALL_S, call_control, PROMPT_CONTROLS), (
            call_s,
            call_control,
        )
        assert still_open == 0
        assert accept_errors == 0, log[-2000:]
        assert len(log.encode()) < 20_000, log[-2000:]
        assert _healthz_seconds(server.base) is not None


@pytest.mark.timeout(120)
def test_accept_errors_are_logged_once_per_interval_and_the_server_recovers() -> None:
    # A connection cap set above the descriptor limit lets accept() itself fail (EMFILE): the
    # error is then logged once per interval with a count, not once per failed accept.
    with served(
        fd_limit=FD_LIMIT,
        MCP_WEB_MAX_CONNECTIONS="5000",
        MCP_WEB_MAX_CONNECTIONS_PER_CLIENT="5000",
        MCP_WEB_REQUEST_READ_TIMEOUT=str(READ_TIMEOUT_S),
    ) as server:
        flood = Flood(server.port, size=2 * FD_LIMIT)
        try:
            flood.fill()
            time.sleep(READ_TIMEOUT_S + 2)
            still_open = flood.wait_all_closed(PATIENCE)
            recovered = _healthz_seconds(server.base)
            log = server.log()
            accept_errors = server.accept_error_lines()
            logger.warning(
                "accept() under EMFILE: %d accept-error lines, stderr %d lines / %d bytes, %d sockets "
                "still open, /healthz after %s",
                accept_errors,
                len(log.splitlines()),
                len(log.encode()),
                still_open,
                recovered,
            )
        finally:
            flood.close()
        assert 1 <= accept_errors <= 3, log[-3000:]
        assert len(log.encode()) < 20_000, log[-2000:]
        assert still_open == 0
        assert recovered is not None, log[-4000:]


@pytest.mark.parametrize(
    ("fd_limit", "settings", "expected"),
    [
        # (server-wide cap, per-client cap, accept batch): a quarter of the descriptors (128 at
        # least) stays free of client connections, and the accept batch is a quarter of that.
        (256, Settings(), (128, 64, 32)),
        (1024, Settings(), (768, 64, 64)),
        (4096, Settings(), (3072, 64, 256)),
        (1_048_576, Settings(), (4096, 64, 2048)),
        (None, Settings(), (4096, 64, 2048)),
        (1024, Settings(max_connections=100, max_connections_per_client=500), (100, 100, 231)),
        (256, Settings(max_connections=5000), (5000, 64, 16)),
    ],
)
def test_connection_caps_follow_the_open_file_limit(
    fd_limit: int | None, settings: Settings, expected: tuple[int, int, int]
) -> None:
    limits = front_door_limits(settings, fd_limit)
    assert (limits.total, limits.per_client, limits.accept_batch) == expected


def _seconds_until_closed(sock: socket.socket, trickle: bytes, limit: float) -> float | None:
    """Send `trickle` one byte per 0.25 s; seconds until the server closed the connection, or None."""
    started = time.monotonic()
    for index in range(int(limit / 0.25)):
        if _closed_by_peer(sock):
            return time.monotonic() - started
        try:
            sock.send(trickle[index % len(trickle) : index % len(trickle) + 1])
        except OSError:
            return time.monotonic() - started
        time.sleep(0.25)
    return None


def test_a_trickled_request_head_is_closed_at_the_read_timeout() -> None:
    # Bytes that keep arriving do not restart the clock: the whole head is due within the timeout.
    with served(MCP_WEB_REQUEST_READ_TIMEOUT=str(READ_TIMEOUT_S)) as server:
        late = allowance(CLOSE_MARGIN_S, _healthz_control(server.base), CLOSE_CONTROLS)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.setblocking(False)
            closed_after = _seconds_until_closed(sock, HALF_OPEN_HEAD, READ_TIMEOUT_S + PATIENCE)
        logger.warning(
            "a head trickled byte by byte was closed after %s s (allowed %.2f s)", closed_after, late
        )
        assert closed_after is not None
        assert READ_TIMEOUT_S - 0.5 <= closed_after <= READ_TIMEOUT_S + late


def test_a_body_trickled_after_an_early_refusal_is_closed_at_the_read_timeout() -> None:
    # The token is checked before the body is read: the 401 comes at once, and a client that then
    # keeps trickling the body it announced must not hold the connection open forever.
    with served(MCP_WEB_REQUEST_READ_TIMEOUT=str(READ_TIMEOUT_S)) as server:
        late = allowance(CLOSE_MARGIN_S, _healthz_control(server.base), CLOSE_CONTROLS)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n{"
            )
            answer = sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 401"), answer
            sock.setblocking(False)
            closed_after = _seconds_until_closed(sock, b'"a": 1, ', READ_TIMEOUT_S + PATIENCE)
        logger.warning(
            "a body trickled after a 401 was closed after %s s (allowed %.2f s)", closed_after, late
        )
        assert closed_after is not None
        assert closed_after <= READ_TIMEOUT_S + late


def test_the_server_wide_cap_closes_the_longest_waiting_connection_for_a_newcomer() -> None:
    # Eight idle connections from eight addresses fill a cap of eight; a ninth client is served,
    # and the connection that had waited longest is the one closed to make room for it.
    with served(MCP_WEB_MAX_CONNECTIONS="8", MCP_WEB_REQUEST_READ_TIMEOUT="60") as server:
        idle = []
        for index in range(8):
            sock = socket.socket()
            sock.bind((f"127.0.0.{index + 2}", 0))
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(HALF_OPEN_HEAD)
            sock.setblocking(False)
            idle.append(sock)
            time.sleep(0.05)  # a clear order of arrival
        try:
            assert not any(_closed_by_peer(sock) for sock in idle)
            assert _healthz_seconds(server.base) is not None
            time.sleep(0.2)
            closed = [index for index, sock in enumerate(idle) if _closed_by_peer(sock)]
        finally:
            for sock in idle:
                sock.close()
        assert closed == [0]


# --- GET on the stateless endpoint ----------------------------------------------------------------


def test_get_on_the_mcp_endpoint_is_405_not_an_endless_stream() -> None:
    with served() as server:
        headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/event-stream"}
        with (
            httpx.Client(timeout=httpx.Timeout(5.0)) as client,
            client.stream("GET", server.base + "/mcp", headers=headers) as response,
        ):
            status = response.status_code
            allow = response.headers.get("allow")
        assert status == 405
        assert allow is not None and "POST" in allow
        # Unauthenticated, the token is asked for first, as for any other request.
        assert httpx.get(server.base + "/mcp", timeout=5).status_code == 401


def test_sigterm_with_a_get_open_exits_promptly() -> None:
    with served() as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        try:
            sock.sendall(
                b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                + f"Authorization: Bearer {TOKEN}\r\n\r\n".encode()
            )
            first = sock.recv(4096)
            assert first.startswith(b"HTTP/1.1 "), first
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            try:
                code = server.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pytest.fail(f"still running 10 s after SIGTERM with a GET open (answered {first[:12]!r})")
            logger.warning("SIGTERM with a GET open: exited in %.2f s", time.monotonic() - started)
        finally:
            sock.close()
        assert code == -signal.SIGTERM  # uvicorn re-raises the signal once it has drained


# --- stdio: lines that are not JSON-RPC ----------------------------------------------------------


class StdioServer:
    def __init__(self) -> None:
        env = {**os.environ, "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32", "MCP_WEB_LOG_LEVEL": "warning"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_server_web"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)

    def send(self, raw: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(raw + b"\n")
        stdin.flush()

    def reply(self, timeout: float = 10.0) -> dict[str, Any]:
        try:
            return json.loads(self._lines.get(timeout=timeout))
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout} s") from None

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def stdio_server() -> Iterator[StdioServer]:
    server = StdioServer()
    server.send(json.dumps(INITIALIZE).encode())
    assert server.reply(30)["id"] == 1
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    try:
        yield server
    finally:
        server.close()


def _tools_list(server: StdioServer, request_id: int) -> None:
    server.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}).encode())
    reply = server.reply()
    assert reply["id"] == request_id
    assert "web_fetch" in [tool["name"] for tool in reply["result"]["tools"]]


@pytest.mark.parametrize(
    ("line", "expected_id"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":7,"method":"tools/list"', None, id="truncated"),
        pytest.param(b"this is not json", None, id="not-json"),
        pytest.param(b"\xff\xfe{}", None, id="not-utf8"),
        pytest.param(
            b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"web_fetch",'
            b'"arguments":{"url":"http://127.0.0.1/\\ud800"}}}',
            8,
            id="lone-surrogate",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":"s-9","method":"ping","params":"\\udfff"}', "s-9", id="lone-low"
        ),
    ],
)
def test_stdio_answers_a_parse_error_and_keeps_serving(
    stdio_server: StdioServer, line: bytes, expected_id: object
) -> None:
    stdio_server.send(line)
    reply = stdio_server.reply()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == expected_id
    assert reply["error"]["code"] == -32700, reply
    assert "result" not in reply
    _tools_list(stdio_server, 20)


def test_stdio_answers_a_message_that_is_json_but_not_json_rpc(stdio_server: StdioServer) -> None:
    stdio_server.send(b'{"id": 31, "what": "no method, no jsonrpc"}')
    reply = stdio_server.reply()
    assert reply["id"] == 31
    assert reply["error"]["code"] == -32600, reply
    _tools_list(stdio_server, 32)


# --- Host and Origin ------------------------------------------------------------------------------


def _status(base: str, **headers: str) -> int:
    """Status of an authenticated MCP ping with the given headers (Host among them), raw over TCP
    so that the Host header is sent exactly as given."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    lines = [
        "POST /mcp HTTP/1.1",
        f"Authorization: Bearer {TOKEN}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items()),
    ]
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + body)
        head = sock.recv(64)
    return int(head.split(b" ", 2)[1])


@pytest.fixture(scope="module")
def header_server() -> Iterator[Served]:
    with served() as server:
        yield server


@pytest.mark.parametrize(
    "host",
    [
        "localhost:evil",
        "127.0.0.1:1@evil.com",
        "127.0.0.1:99999",
        "127.0.0.1:",
        "[::1]x",
        "evil.com:8000",
        "127.0.0.1:8000/x",
        "127.0.0.1 :80",
        "localhost:80:80",
    ],
)
def test_malformed_or_foreign_host_is_refused(header_server: Served, host: str) -> None:
    assert _status(header_server.base, Host=host) == 421


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost", "[::1]:8000", "LOCALHOST:1", "[::1]"])
def test_legitimate_host_is_accepted(header_server: Served, host: str) -> None:
    assert _status(header_server.base, Host=host) == 200


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:1.evil.com",
        "http://localhost:evil",
        "http://127.0.0.1:1@evil.com",
        "http://localhost/path",
        "http://localhost:6274/",
        "http://evil.com",
        "null",
        "localhost",
        "http://localhost:6274?x",
        "ftp://localhost",
        "http://user@localhost",
    ],
)
def test_malformed_or_foreign_origin_is_refused(header_server: Served, origin: str) -> None:
    assert _status(header_server.base, Host="127.0.0.1", Origin=origin) == 403


@pytest.mark.parametrize(
    "origin", ["http://localhost:6274", "http://127.0.0.1", "https://[::1]:8443", "HTTP://LOCALHOST:6274"]
)
def test_legitimate_origin_is_accepted(header_server: Served, origin: str) -> None:
    assert _status(header_server.base, Host="127.0.0.1", Origin=origin) == 200
