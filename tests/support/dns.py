"""A tiny real DNS server on loopback, for DNS-rebinding tests, and clients that ask it.

``RebindingDNS`` answers A queries over UDP from a table in which each name has a sequence of
answers, one per query (the last one repeats), all with TTL 0: exactly what an attacker's
authoritative server does to make "check" and "connect" see different addresses. Every party of
a test (our Fetcher through ``DNSResolver``, a test proxy through ``lookup``) asks the same
server, so they all see one shared sequence, as they would in the real attack.

AAAA and other queries get an empty NOERROR answer and do not advance the sequence; unknown
names get NXDOMAIN. Loopback only; the serving loop is bounded by a stop flag and a 50 ms
receive timeout.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
import struct
import threading
from collections.abc import Mapping, Sequence

import anyio

from mcp_server_web.errors import HTTPStatusError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_TYPE_A = 1
_CLASS_IN = 1


class RebindingDNS:
    """A UDP DNS server on 127.0.0.1 answering A queries from a per-name sequence. Context manager."""

    def __init__(self, table: Mapping[str, Sequence[str]] | None = None) -> None:
        self._lock = threading.Lock()
        self._table: dict[str, list[str]] = {}
        self._served: dict[str, int] = {}
        self.queries: list[tuple[str, str]] = []
        """(name, address answered) for every A query, in order."""
        for name, answers in (table or {}).items():
            self.set(name, *answers)
        self._socket: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def set(self, name: str, *answers: str) -> None:
        """Answer name's A queries with these addresses, one per query, the last one repeating."""
        with self._lock:
            self._table[name.lower().rstrip(".")] = [str(ipaddress.IPv4Address(a)) for a in answers]
            self._served[name.lower().rstrip(".")] = 0

    def __enter__(self) -> RebindingDNS:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.05)
        self._socket = sock
        self._thread = threading.Thread(target=self._serve, name="test-dns", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None and self._socket is not None
        self._thread.join(timeout=5)
        self._socket.close()

    @property
    def address(self) -> tuple[str, int]:
        assert self._socket is not None
        host, port = self._socket.getsockname()[:2]
        return host, port

    def answers_for(self, name: str) -> list[str]:
        with self._lock:
            return [answer for queried, answer in self.queries if queried == name]

    def _serve(self) -> None:
        assert self._socket is not None
        while not self._stop.is_set():
            try:
                packet, client = self._socket.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            reply = self._reply(packet)
            if reply is not None:
                self._socket.sendto(reply, client)

    def _reply(self, packet: bytes) -> bytes | None:
        if len(packet) < 12:
            return None
        query_id = packet[:2]
        name, end = _read_name(packet, 12)
        if name is None or end + 4 > len(packet):
            return None
        qtype, qclass = struct.unpack("!HH", packet[end : end + 4])
        question = packet[12 : end + 4]
        with self._lock:
            answers = self._table.get(name)
            if answers is None:
                return query_id + struct.pack("!HHHHH", 0x8183, 1, 0, 0, 0) + question  # NXDOMAIN
            if qtype != _TYPE_A or qclass != _CLASS_IN:
                return query_id + struct.pack("!HHHHH", 0x8180, 1, 0, 0, 0) + question
            index = min(self._served[name], len(answers) - 1)
            self._served[name] += 1
            address = answers[index]
            self.queries.append((name, address))
        record = struct.pack("!HHHIH", 0xC00C, _TYPE_A, _CLASS_IN, 0, 4) + socket.inet_aton(address)
        return query_id + struct.pack("!HHHHH", 0x8180, 1, 1, 0, 0) + question + record


def _read_name(packet: bytes, offset: int) -> tuple[str | None, int]:
    labels: list[str] = []
    for _ in range(128):  # a name has at most 127 labels
        if offset >= len(packet):
            return None, offset
        length = packet[offset]
        offset += 1
        if length == 0:
            return ".".join(labels).lower(), offset
        if length > 63:
            return None, offset  # compression pointers never appear in a question we accept
        labels.append(packet[offset : offset + length].decode("ascii", errors="replace"))
        offset += length
    return None, offset


def lookup(server: tuple[str, int], name: str, timeout: float = 2.0) -> list[str]:
    """Ask server for name's A records (blocking); [] when it has none."""
    query_id = secrets.token_bytes(2)
    question = b"".join(bytes([len(label)]) + label.encode("ascii") for label in name.rstrip(".").split("."))
    packet = query_id + struct.pack("!HHHHH", 0x0100, 1, 0, 0, 0) + question + b"\x00"
    packet += struct.pack("!HH", _TYPE_A, _CLASS_IN)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(packet, server)
        reply, _ = sock.recvfrom(512)
    if reply[:2] != query_id or reply[3] & 0x0F:
        return []
    answer_count = struct.unpack("!H", reply[6:8])[0]
    offset = 12 + len(question) + 1 + 4
    addresses: list[str] = []
    for _ in range(answer_count):
        offset += 2  # the name, always a compression pointer in our server's answers
        rtype, _, _, length = struct.unpack("!HHIH", reply[offset : offset + 10])
        offset += 10
        if rtype == _TYPE_A and length == 4:
            addresses.append(socket.inet_ntoa(reply[offset : offset + 4]))
        offset += length
    return addresses


class DNSResolver:
    """The Fetcher's Resolver seam, answered by a RebindingDNS server over real UDP."""

    def __init__(self, server: tuple[str, int]) -> None:
        self.server = server
        self.calls: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        addresses = await anyio.to_thread.run_sync(lookup, self.server, host)
        if not addresses:
            raise HTTPStatusError(f"could not resolve host {host}: no addresses found.")
        return [ipaddress.ip_address(address) for address in addresses]
