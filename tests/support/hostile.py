"""Raw-socket servers that misbehave on purpose, on a loopback address, for the hostile-server tests.

``Origin`` speaks HTTP through http.server, which cannot stall before the status line, send a
header block without end or notice that a client hung up while it is waiting. A ``HostileServer``
hands every accepted connection to a behaviour that writes raw bytes, and it records when each
connection ends. A connection only ends when the behaviour finishes or the client closes its
socket, so ``wait_until_idle`` proves the client let go of every socket a hostile server held.

Bodies are generated while they are sent, never built in memory first: a memory bound measured
in the test process would otherwise count the test's own 50 MB.
"""

from __future__ import annotations

import ipaddress
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType

Behaviour = Callable[["Connection"], None]

_SLICE = 0.05
"""Seconds between two checks of the stop flag while a behaviour waits."""
_REQUEST_LIMIT = 64 * 1024


class Connection:
    """One accepted connection, as a behaviour sees it."""

    def __init__(self, sock: socket.socket, stop: threading.Event) -> None:
        self._sock = sock
        self._stop = stop
        self.request = b""
        self.method = ""
        self.path = ""
        self.peer_closed = False
        """True once the client closed its end (EOF or reset seen)."""

    def read_request(self) -> bool:
        """Read the request head (bodies are not expected); False if the client left first."""
        buffer = b""
        while b"\r\n\r\n" not in buffer and len(buffer) < _REQUEST_LIMIT:
            if not self._readable(None):
                return False
            try:
                data = self._sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                self.peer_closed = True
                return False
            buffer += data
        self.request = buffer
        parts = buffer.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        if len(parts) >= 2:
            self.method, self.path = parts[0], parts[1].split("?", 1)[0]
        return True

    def send(self, data: bytes) -> bool:
        """Write raw bytes; False once the client has gone away (or the server is stopping)."""
        if self._stop.is_set() or self.peer_closed:
            return False
        try:
            self._sock.sendall(data)
        except OSError:
            self.peer_closed = True
            return False
        return True

    def pause(self, seconds: float) -> bool:
        """Wait, watching the socket; False as soon as the client closes it or the server stops."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self._readable(min(left, _SLICE)) and self._at_eof():
                return False
            if self._stop.is_set():
                return False
        return True

    def hold(self) -> None:
        """Never answer: wait until the client closes the connection or the server stops."""
        while self.pause(3600):
            pass

    def respond(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8") -> bool:
        """A well-formed answer, after which the connection is closed (no keep-alive to track)."""
        head = (
            f"HTTP/1.1 {status} Hostile\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode("latin-1")
        return self.send(head + body)

    def _readable(self, timeout: float | None) -> bool:
        """Wait until the socket is readable; with no timeout, until then or until the server stops."""
        if timeout is not None:
            readable, _, _ = select.select([self._sock], [], [], timeout)
            return bool(readable)
        while not self._stop.is_set():
            readable, _, _ = select.select([self._sock], [], [], _SLICE)
            if readable:
                return True
        return False

    def _at_eof(self) -> bool:
        try:
            data = self._sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.peer_closed = True
            return True
        return False  # stray bytes from the client (a pipelined request, say): keep going


class HostileServer:
    """A loopback TCP server running ``behaviour`` on every connection, each in its own thread."""

    def __init__(self, behaviour: Behaviour, host: str = "127.0.0.1") -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError("hostile servers bind to loopback addresses only")
        self.host = host
        self.behaviour = behaviour
        self.accepted = 0
        self.paths: list[str] = []
        self.closed_by_client = 0
        """Connections that ended because the client closed its end."""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._live: set[threading.Thread] = set()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None

    def __enter__(self) -> HostileServer:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, 0))
        listener.listen(64)
        listener.settimeout(_SLICE)
        self._listener = listener
        self._acceptor = threading.Thread(target=self._accept_loop, name="hostile-accept", daemon=True)
        self._acceptor.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._acceptor is not None:
            self._acceptor.join(timeout=5)
        if self._listener is not None:
            self._listener.close()
        for thread in self._threads():
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        assert self._listener is not None
        return int(self._listener.getsockname()[1])

    def url(self, path: str = "/") -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    @property
    def open_connections(self) -> int:
        return len(self._threads())

    def wait_until_idle(self, timeout: float) -> bool:
        """True once every accepted connection has ended, within timeout seconds."""
        deadline = time.monotonic() + timeout
        for thread in self._threads():
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        return self.open_connections == 0

    def _threads(self) -> list[threading.Thread]:
        with self._lock:
            return list(self._live)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            thread = threading.Thread(target=self._serve, args=(sock,), name="hostile-conn", daemon=True)
            with self._lock:
                self.accepted += 1
                self._live.add(thread)
            thread.start()

    def _serve(self, sock: socket.socket) -> None:
        connection = Connection(sock, self._stop)
        try:
            self.behaviour(connection)
        finally:
            if connection.path:
                with self._lock:
                    self.paths.append(connection.path)
            sock.close()
            with self._lock:
                if connection.peer_closed:
                    self.closed_by_client += 1
                self._live.discard(threading.current_thread())


# --------------------------------------------------------------------------------------------
# Behaviours
# --------------------------------------------------------------------------------------------


def never_answers(connection: Connection) -> None:
    """Accept, read the request, say nothing until the client gives up."""
    if connection.read_request():
        connection.hold()


def trickles_after_headers(interval: float, content_length: int = 1_000_000) -> Behaviour:
    """A complete, honest header block, then one body byte every ``interval`` seconds."""

    def behaviour(connection: Connection) -> None:
        if not connection.read_request():
            return
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {content_length}\r\n\r\n"
        ).encode("latin-1")
        if not connection.send(head + b"<"):
            return
        while connection.pause(interval) and connection.send(b"p"):
            pass

    return behaviour


def _chunked(piece: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(piece), piece)


def endless_chunked(connection: Connection) -> None:
    """A chunked HTML body that never ends, sent as fast as the client reads."""
    if not connection.read_request():
        return
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = _chunked(b"<p>" + b"endless " * 8000 + b"</p>\n")
    if connection.send(head):
        while connection.send(chunk):
            pass


def single_line_page(total_bytes: int, *, chunked: bool) -> Behaviour:
    """An HTML page of ``total_bytes`` with no line break at all, generated while it is sent."""
    opening, closing = b"<html><body><p>", b"</p></body></html>"
    word = b"word "
    piece = word * (64 * 1024 // len(word))

    def pieces() -> Iterator[bytes]:
        yield opening
        left = total_bytes - len(opening) - len(closing)
        while left > 0:
            yield piece[:left]
            left -= len(piece)
        yield closing

    def behaviour(connection: Connection) -> None:
        if not connection.read_request():
            return
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total_bytes}"
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{framing}\r\n\r\n"
        if not connection.send(head.encode("latin-1")):
            return
        for data in pieces():
            if not connection.send(_chunked(data) if chunked else data):
                return
        if chunked:
            connection.send(b"0\r\n\r\n")

    return behaviour


def huge_header_block(total_bytes: int | None) -> Behaviour:
    """A status line, then header lines: ``total_bytes`` of them before a body, or (None) forever."""

    def behaviour(connection: Connection) -> None:
        if not connection.read_request():
            return
        if not connection.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"):
            return
        sent, number = 0, 0
        while total_bytes is None or sent < total_bytes:
            line = b"X-Filler-%d: %s\r\n" % (number, b"h" * 1000)
            if not connection.send(line):
                return
            sent, number = sent + len(line), number + 1
        body = b"<html><body><p>after the headers</p></body></html>"
        connection.send(b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))

    return behaviour


def with_robots(robots: Behaviour, page: bytes) -> Behaviour:
    """/robots.txt runs the ``robots`` behaviour; every other path gets ``page`` as HTML."""

    def behaviour(connection: Connection) -> None:
        if not connection.read_request():
            return
        if connection.path == "/robots.txt":
            robots(connection)
        else:
            connection.respond(200, page)

    return behaviour


def robots_never_answers(connection: Connection) -> None:
    """For with_robots: the request was read already; say nothing."""
    connection.hold()


def huge_robots(total_bytes: int, head: bytes, filler: bytes, tail: bytes) -> Behaviour:
    """For with_robots: a text/plain robots.txt of ``total_bytes``: head, filler lines, tail."""

    def behaviour(connection: Connection) -> None:
        middle = total_bytes - len(head) - len(tail)
        header = (
            f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {total_bytes}\r\n"
            "Connection: close\r\n\r\n"
        ).encode("latin-1")
        if not connection.send(header + head):
            return
        block = filler * max(1, 64 * 1024 // len(filler))
        while middle > 0:
            if not connection.send(block[:middle]):
                return
            middle -= len(block)
        connection.send(tail)

    return behaviour
