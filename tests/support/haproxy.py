"""A real haproxy on 127.0.0.1 in front of loopback backends, with the settings that ship.

The configuration is deploy/haproxy.cfg itself (the one compose.yaml mounts), with three things
changed for a test: it listens on a free 127.0.0.1 port, its servers are the given loopback ports
(named mcp1, mcp2, ... in that order) instead of Docker's DNS names, and it has an admin socket
in its temporary directory, which ``status()`` reads. Every response carries ``X-Served-By``,
the name of the server that answered. haproxy runs in the foreground (-db) as a child process.

Standard library only at import time: scripts/compose-smoke renders the configuration with the
system python3 (``render_config``).
"""

from __future__ import annotations

import csv
import io
import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.services import service_or_skip

DEPLOYED_CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"
SERVED_BY = "X-Served-By"
_SECTION = re.compile(r"^(global|defaults|frontend|backend|listen|resolvers|peers|userlist|program)\b")


def render_config(
    port: int,
    backend_ports: Sequence[int],
    *,
    balance: str = "roundrobin",
    admin_socket: Path | None = None,
    source: Path = DEPLOYED_CONFIG,
) -> str:
    """deploy/haproxy.cfg for loopback: bound to 127.0.0.1:port, servers mcp1.. on backend_ports."""
    out: list[str] = []
    skipping = False
    found = {"bind": 0, "server-template": 0, "balance": 0}
    for line in source.read_text().splitlines():
        stripped = line.strip()
        if _SECTION.match(line):
            # Docker's resolver (127.0.0.11) exists only inside a compose network.
            skipping = line.startswith("resolvers")
            if skipping:
                continue
        if skipping:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        word = stripped.split(" ", 1)[0]
        if word == "bind":
            out.append(f"{indent}bind 127.0.0.1:{port}")
        elif word == "server-template":
            out += [f"{indent}server mcp{i} 127.0.0.1:{p}" for i, p in enumerate(backend_ports, 1)]
        elif word == "balance":
            out.append(f"{indent}balance {balance}")
        else:
            out.append(line)
            if line.startswith("global") and admin_socket is not None:
                out.append(f"    stats socket {admin_socket} mode 600 level admin")
            continue
        found[word] += 1
    if found != {"bind": 1, "server-template": 1, "balance": 1}:
        raise AssertionError(f"{source} no longer has one bind, server-template and balance line: {found}")
    return "\n".join(out) + "\n"


class Balancer:
    """A running haproxy: its port, its servers' names, their health as haproxy sees it."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, backends: Sequence[int], directory: Path):
        self.process = process
        self.port = port
        self.names = {p: f"mcp{i}" for i, p in enumerate(backends, 1)}
        """Server name (what X-Served-By says) by backend port."""
        self.directory = directory

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    @property
    def log(self) -> Path:
        return self.directory / "haproxy.log"

    def admin(self, command: str) -> str:
        """One command on haproxy's admin socket (``show stat``, ``disable server replicas/mcp1``...)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.directory / "admin.sock"))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def status(self) -> dict[str, str]:
        """Each server's state as the health checks left it: "UP", "DOWN", "UP 1/2" (going down)..."""
        table = self.admin("show stat").lstrip("# ")
        return {
            row["svname"]: row["status"]
            for row in csv.DictReader(io.StringIO(table))
            if row.get("pxname") == "replicas" and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def wait_for(self, condition: Callable[[dict[str, str]], bool], timeout: float = 10) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if condition(status):
                return status
            if time.monotonic() > deadline:
                raise AssertionError(f"haproxy servers are {status} after {timeout} s")
            time.sleep(0.05)

    def wait_until_up(self, timeout: float = 10) -> None:
        """Every server UP, having passed a health check."""
        self.wait_for(lambda status: all(state == "UP" for state in status.values()), timeout)

    def wait_until_down(self, port: int, timeout: float = 10) -> None:
        name = self.names[port]
        self.wait_for(lambda status: status.get(name) == "DOWN", timeout)


@contextmanager
def running_haproxy(backend_ports: Sequence[int], *, balance: str = "roundrobin") -> Iterator[Balancer]:
    """haproxy on a free 127.0.0.1 port in front of backend_ports (skips, or fails under
    MCP_WEB_REQUIRE_SERVICES=1, without haproxy). Returns once it listens; health checks may
    still be running (``wait_until_up``)."""
    from tests.support.http_server import free_port  # the MCP SDK's httpx2, not needed above

    binary = service_or_skip("haproxy")
    with tempfile.TemporaryDirectory(prefix="haproxy-test-") as name:
        directory = Path(name)
        port = free_port()
        config = directory / "haproxy.cfg"
        admin = directory / "admin.sock"
        config.write_text(render_config(port, backend_ports, balance=balance, admin_socket=admin))
        with (directory / "haproxy.log").open("wb") as log:
            process = subprocess.Popen(
                [binary, "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT, cwd=directory
            )
        balancer = Balancer(process, port, backend_ports, directory)
        try:
            deadline = time.monotonic() + 10
            while True:
                if process.poll() is not None:
                    log_tail = balancer.log.read_text()[-2000:]
                    raise AssertionError(f"haproxy exited ({process.returncode}): {log_tail}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        pass
                    if admin.exists():
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError("haproxy did not start listening")
                time.sleep(0.02)
            yield balancer
        finally:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
