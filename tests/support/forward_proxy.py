"""A small real forward proxy on a loopback address that resolves names itself, for tests.

It speaks what HTTP proxies speak: absolute-form requests (``GET http://host:port/path``),
forwarded to the origin with the headers and the body (by Content-Length) as received, and
``CONNECT host:port`` tunnels. Host
names in either are resolved through the DNS server the test gives it (``tests.support.dns``),
the way a real proxy resolves with its own resolver: that is what makes DNS rebinding through a
proxy reproducible. It records every request line, the Host header, where it connected, and for
tunnels the SNI name of the TLS ClientHello that went through.

It only ever connects to loopback addresses: a name that resolves elsewhere gets a 502.
Everything is bounded: 64 KiB request heads, 10-second socket timeouts, 100 requests per
client connection (the origin is asked to close after each, which marks where an answer ends).
"""

from __future__ import annotations

import ipaddress
import select
import socket
import socketserver
import struct
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from tests.support.dns import lookup

_MAX_HEAD = 64 * 1024
_TIMEOUT = 10.0
_MAX_REQUESTS = 100


@dataclass
class ProxySeen:
    method: str
    target: str
    """The request target as received: "http://1.2.3.4:80/path" or "1.2.3.4:443"."""
    host_header: str | None
    proxy_authorization: str | None
    connected_to: str | None = None
    """The address:port the proxy connected to on the client's behalf."""
    sni: str | None = None
    """For CONNECT: the server name in the TLS ClientHello sent through the tunnel."""


class ForwardProxy:
    """Context manager; ``url`` is what MCP_WEB_PROXY / HTTP_PROXY would be set to."""

    def __init__(self, host: str, dns: tuple[str, int]) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError("the test proxy binds to loopback addresses only")
        self.host = host
        self.dns = dns
        self.seen: list[ProxySeen] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ForwardProxy:
        self._server = _Server((self.host, 0), _Handler, self)
        self._thread = threading.Thread(
            target=lambda: self._server.serve_forever(poll_interval=0.02),  # type: ignore[union-attr]
            name="test-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{self.host}:{self._server.server_address[1]}"

    def record(self, seen: ProxySeen) -> None:
        with self._lock:
            self.seen.append(seen)

    def resolve(self, host: str) -> str | None:
        """host as an address, resolved through the test's DNS server when it is a name."""
        try:
            return str(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            addresses = lookup(self.dns, host)
            return addresses[0] if addresses else None


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], proxy: ForwardProxy) -> None:
        self.proxy = proxy
        super().__init__(address, handler)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server
    request: socket.socket

    def handle(self) -> None:
        client = self.request
        client.settimeout(_TIMEOUT)
        for _ in range(_MAX_REQUESTS):  # keep-alive: forwarded requests end when the origin closes
            if not self._one_request(client):
                return

    def _one_request(self, client: socket.socket) -> bool:
        """Serve one request; True when the client connection can carry another."""
        read = _read_head(client)
        if read is None:
            return False
        head, rest = read
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = [*lines[0].split(" "), "", ""][:3]
        headers = [line for line in lines[1:] if line]
        seen = ProxySeen(method, target, _header(headers, "host"), _header(headers, "proxy-authorization"))
        self.server.proxy.record(seen)
        if method == "CONNECT":
            self._tunnel(client, target, seen)
            return False
        return self._forward(client, method, target, headers, rest, seen)

    def _connect(self, host: str, port: int, seen: ProxySeen) -> socket.socket | None:
        address = self.server.proxy.resolve(host)
        if address is None or not ipaddress.ip_address(address).is_loopback:
            return None
        seen.connected_to = f"{address}:{port}"
        try:
            return socket.create_connection((address, port), timeout=_TIMEOUT)
        except OSError:
            return None

    def _forward(
        self,
        client: socket.socket,
        method: str,
        target: str,
        headers: list[str],
        rest: bytes,
        seen: ProxySeen,
    ) -> bool:
        parts = urlsplit(target)
        if parts.scheme != "http" or not parts.hostname:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        if _header(headers, "transfer-encoding") is not None:  # bodies by Content-Length only
            client.sendall(b"HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        body = _read_body(client, rest, int(_header(headers, "content-length") or 0))
        if body is None:
            return False
        upstream = self._connect(parts.hostname, parts.port or 80, seen)
        if upstream is None:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        with upstream:
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            kept = [
                line
                for line in headers
                if not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))
            ]
            request = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""])
            upstream.sendall(request.encode("latin-1") + body)
            _relay(client, upstream)
        return True

    def _tunnel(self, client: socket.socket, target: str, seen: ProxySeen) -> None:
        host, _, port_text = target.rpartition(":")
        if not port_text.isdigit():
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        upstream = self._connect(host, int(port_text), seen)
        if upstream is None:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        with upstream:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            hello = client.recv(_MAX_HEAD)
            seen.sni = _sni(hello)
            upstream.sendall(hello)
            _relay(client, upstream, both_ways=True)


def _header(lines: list[str], name: str) -> str | None:
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip().lower() == name:
            return value.strip()
    return None


def _read_head(sock: socket.socket) -> tuple[bytes, bytes] | None:
    """The request head, and what arrived after it (the start of its body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            return None
        try:
            chunk = sock.recv(4096)
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head, rest


def _read_body(sock: socket.socket, start: bytes, length: int) -> bytes | None:
    """The ``length`` bytes of a request body, of which ``start`` already arrived; None when the
    client closes or stalls first."""
    body = start
    while len(body) < length:
        try:
            chunk = sock.recv(min(65536, length - len(body)))
        except OSError:
            return None
        if not chunk:
            return None
        body += chunk
    return body[:length]  # no pipelining: the client waits for an answer before it sends again


def _relay(client: socket.socket, upstream: socket.socket, both_ways: bool = False) -> None:
    """Copy bytes until either side closes or nothing moves for the timeout."""
    deadline = time.monotonic() + _TIMEOUT
    sources = [client, upstream] if both_ways else [upstream]
    while time.monotonic() < deadline:
        readable, _, _ = select.select(sources, [], [], 0.05)
        for source in readable:
            try:
                chunk = source.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            (upstream if source is client else client).sendall(chunk)


def _sni(hello: bytes) -> str | None:
    """The server_name of a TLS ClientHello record, or None (RFC 8446 4.1.2, RFC 6066 3)."""
    try:
        if hello[0] != 0x16 or hello[5] != 0x01:
            return None
        offset = 5 + 4 + 2 + 32  # record header, handshake header, version, random
        offset += 1 + hello[offset]  # session id
        offset += 2 + struct.unpack("!H", hello[offset : offset + 2])[0]  # cipher suites
        offset += 1 + hello[offset]  # compression methods
        end = offset + 2 + struct.unpack("!H", hello[offset : offset + 2])[0]
        offset += 2
        while offset + 4 <= end:
            kind, length = struct.unpack("!HH", hello[offset : offset + 4])
            offset += 4
            if kind == 0:  # server_name: list length, name type, name length, name
                name_length = struct.unpack("!H", hello[offset + 3 : offset + 5])[0]
                return hello[offset + 5 : offset + 5 + name_length].decode("ascii")
            offset += length
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return None
