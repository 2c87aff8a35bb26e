"""A real redis-server on 127.0.0.1, started and stopped by a test.

No persistence (save "", appendonly no) and a temporary directory of its own, so every start is
empty and nothing is left behind; never the machine's own Redis service. It can be stopped and
started again on the same port (Redis "restarted mid-run"), frozen with SIGSTOP (a Redis that
accepts connections and never answers: the per-operation deadline), given a password
(requirepass) or a memory limit with the noeviction policy (writes refused: "out of memory").

Readiness and ``command()`` speak RESP over a raw socket, so this helper needs no client library.
"""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from tests.support.services import service_or_skip

RespValue = str | int | bytes | list["RespValue"] | None


class RedisReplyError(Exception):
    """An error reply (``-ERR ...``, ``-NOAUTH ...``, ``-OOM ...``) from the server."""


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def restartable_port() -> int:
    """A free 127.0.0.1 port below the kernel's ephemeral range.

    While Redis is stopped its port is free; an outgoing connection (the replicas' own, to
    anything) could be handed it as a local port and block the restart. Ports below the
    ephemeral range are never handed out that way.
    """
    low, _ = _ephemeral_range()
    first = 20000 if low > 21000 else 1024
    for _ in range(200):
        port = random.randrange(first, low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


def _encode(*args: str | bytes | int) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _read_reply(reader: BinaryIO) -> RespValue:
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("connection closed by redis-server")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        return reader.read(size + 2)[:-2]
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [_read_reply(reader) for _ in range(count)]
    raise ConnectionError(f"unexpected reply from redis-server: {line[:80]!r}")


class RedisServer:
    """One redis-server process (at a time) on a fixed loopback port."""

    def __init__(
        self, binary: str, directory: Path, *, password: str | None = None, maxmemory: str | None = None
    ) -> None:
        self.binary = binary
        self.directory = directory
        self.password = password
        self.maxmemory = maxmemory
        self.port = restartable_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """redis://127.0.0.1:PORT/0, without the password (see ``url_with_password``)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def url_with_password(self) -> str:
        if self.password is None:
            return self.url
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _config(self) -> str:
        lines = [
            "bind 127.0.0.1",
            f"port {self.port}",
            "protected-mode yes",
            "daemonize no",
            'save ""',
            "appendonly no",
            f"dir {self.directory}",
            f"logfile {self.log}",
            "loglevel notice",
        ]
        if self.password is not None:
            lines.append(f"requirepass {self.password}")
        if self.maxmemory is not None:
            lines += [f"maxmemory {self.maxmemory}", "maxmemory-policy noeviction"]
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 10) -> None:
        """Start on the same port, empty; return once it answers PING."""
        if self.running:
            raise RuntimeError("redis-server is already running")
        # In a file, not on the command line: the password stays out of the process list.
        config = self.directory / "redis.conf"
        config.write_text(self._config())
        config.chmod(0o600)
        self.process = subprocess.Popen(
            [self.binary, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"redis-server exited ({self.process.returncode}): {self._log_tail()}")
            try:
                if self.command("PING", timeout=0.5) == "PONG":
                    return
            except (OSError, ConnectionError, RedisReplyError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"redis-server did not answer PING in {timeout} s: {self._log_tail()}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Kill it (SIGKILL: a crash, nothing flushed); the port is kept for ``start``."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        """SIGSTOP: connections are still accepted by the kernel, nothing is answered."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def command(self, *args: str | bytes | int, timeout: float = 5, authenticate: bool = True) -> RespValue:
        """One command over a fresh connection (authenticated first when there is a password)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            stream = sock.makefile("rb")
            if self.password is not None and authenticate:
                sock.sendall(_encode("AUTH", self.password))
                _read_reply(stream)
            sock.sendall(_encode(*args))
            return _read_reply(stream)

    def keys(self, pattern: str = "*") -> list[bytes]:
        reply = self.command("KEYS", pattern)
        assert isinstance(reply, list)
        return [key for key in reply if isinstance(key, bytes)]

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"


@contextmanager
def running_redis(*, password: str | None = None, maxmemory: str | None = None) -> Iterator[RedisServer]:
    """A started redis-server (skips, or fails under MCP_WEB_REQUIRE_SERVICES=1, without one)."""
    binary = service_or_skip("redis-server")
    with tempfile.TemporaryDirectory(prefix="redis-test-") as directory:
        server = RedisServer(binary, Path(directory), password=password, maxmemory=maxmemory)
        server.start()
        try:
            yield server
        finally:
            if server.process is not None:
                server.resume()  # a frozen process would not die on SIGTERM; SIGKILL works anyway
            server.stop()
