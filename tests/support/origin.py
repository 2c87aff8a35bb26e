"""A real HTTP/1.1 origin server on a loopback address, for tests.

It runs in its own thread (independent of the test's event loop), answers from a route table of
handlers that write raw bytes to the socket (so a test can trickle, stall, lie about lengths or
send bombs), and records every request it sees, so tests can prove what did or did not reach
the origin. Loopback only: it refuses to bind anywhere else.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    client: str


@dataclass
class Reply:
    """A plain answer: status, headers and body, with Content-Length set unless headers say otherwise."""

    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/html; charset=utf-8"

    def encoded_body(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


Handler = Callable[["RequestContext"], None]


class RequestContext:
    """What a handler gets: the request and the raw socket file to write the answer to."""

    def __init__(self, handler: BaseHTTPRequestHandler, origin: Origin) -> None:
        self._handler = handler
        self.origin = origin
        self.method = handler.command
        self.path = handler.path
        self.headers = {k.lower(): v for k, v in handler.headers.items()}
        self.wfile = handler.wfile

    def send(self, reply: Reply) -> None:
        body = reply.encoded_body()
        self._handler.send_response(reply.status)
        headers = dict(reply.headers)
        if reply.content_type is not None and "Content-Type" not in headers:
            headers["Content-Type"] = reply.content_type
        if "Content-Length" not in headers and "Transfer-Encoding" not in headers:
            headers["Content-Length"] = str(len(body))
        for name, value in headers.items():
            self._handler.send_header(name, value)
        self._handler.end_headers()
        if self.method != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_head(self, status: int, headers: dict[str, str]) -> None:
        self._handler.send_response(status)
        for name, value in headers.items():
            self._handler.send_header(name, value)
        self._handler.end_headers()
        self.wfile.flush()

    def write(self, data: bytes) -> bool:
        """Write raw bytes; False once the client has gone away."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, OSError):
            return False

    def close_connection(self) -> None:
        self._handler.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 stalls bursts of concurrent clients by seconds.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], origin: Origin) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.origin = origin
        super().__init__(address, _RequestHandler)

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hung up mid-answer is what many tests provoke on purpose; anything else
        # is a bug in a test handler and is still reported.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without TCP_NODELAY the client's delayed ACK
    # adds ~40 ms to every answer, which would distort any timing a test or benchmark reads.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return

    def _dispatch(self) -> None:
        origin = self.server.origin
        ctx = RequestContext(self, origin)
        origin._record(SeenRequest(self.command, self.path, ctx.headers, self.client_address[0]))
        path_only = self.path.split("?", 1)[0]
        handler = origin.routes.get(path_only)
        if handler is None:
            ctx.send(Reply(404, "not found", content_type="text/plain"))
            return
        handler(ctx)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch


class Origin:
    """A loopback HTTP origin with a route table. Use as a context manager."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError("test origins bind to loopback addresses only")
        self.host = host
        self.routes: dict[str, Handler] = {}
        self.requests: list[SeenRequest] = []
        self.disconnects: list[str] = []
        """Paths whose client went away before the answer was complete."""
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Origin:
        self._server = _Server((self.host, 0), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="test-origin", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + path

    def _record(self, seen: SeenRequest) -> None:
        with self._lock:
            self.requests.append(seen)

    def note_disconnect(self, path: str) -> None:
        with self._lock:
            self.disconnects.append(path)

    def hits(self, path: str) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.path.split("?", 1)[0] == path)

    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler

    def serve(
        self,
        path: str,
        body: bytes | str,
        content_type: str | None = "text/html; charset=utf-8",
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> str:
        """Serve a fixed reply at path; returns the full URL."""
        reply = Reply(status=status, body=body, content_type=content_type, headers=headers or {})
        self.routes[path] = lambda ctx: ctx.send(reply)
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        return self.serve(path, b"", content_type=None, status=status, headers={"Location": location})


def trickle(chunks: Iterable[bytes], delay: float) -> Handler:
    """A handler that sends a 200 chunked body one piece at a time with a pause between pieces."""

    def handler(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Type": "text/html; charset=utf-8", "Transfer-Encoding": "chunked"})
        for chunk in chunks:
            if not ctx.write(b"%x\r\n%s\r\n" % (len(chunk), chunk)):
                ctx.origin.note_disconnect(ctx.path)
                return
            time.sleep(delay)
        ctx.write(b"0\r\n\r\n")

    return handler
