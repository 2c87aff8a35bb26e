"""`make stdio`: stdout is the MCP protocol channel from its first byte, first run included.

A client that launches the server through make reads every line make's process writes to stdout
as JSON-RPC, so make's echo of a command, or pip's output on the first run, would come first and
break the session. The Makefile runs here as a client runs it, with VENV pointed at a directory of
the test's own (the repository's .venv is never touched): one already set up, whose
mcp-server-web is this checkout's server, and one to set up, with a stand-in for python3 that
prints as `python -m venv` and pip do, and builds the same.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "mcp.json.example"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _server_script(bin_dir: Path) -> None:
    _executable(bin_dir / "mcp-server-web", _server_text())


def installed_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    _server_script(venv / "bin")
    (venv / "bin" / ".installed").touch()  # newer than pyproject.toml: nothing to install
    return venv


_NOISY_PYTHON = """#!{python}
import pathlib, sys

bin_dir = pathlib.Path(sys.argv[3]) / "bin"  # python3 -m venv DIR
print("venv noise: creating", bin_dir.parent)
bin_dir.mkdir(parents=True)
(bin_dir / "python").write_text('#!/bin/sh\\necho "pip noise: $*"\\n')
(bin_dir / "mcp-server-web").write_text({server!r})
for name in ("python", "mcp-server-web"):
    (bin_dir / name).chmod(0o755)
"""


def _server_text() -> str:
    return f'#!/bin/sh\nexec "{sys.executable}" -m mcp_server_web "$@"\n'


def noisy_python(tmp_path: Path) -> Path:
    """Stands in for python3 on a first run: `-m venv DIR` makes DIR/bin with a python whose
    `-m pip install` only prints, and this checkout's server; both print to stdout, as the real
    ones do."""
    fake = tmp_path / "python3"
    _executable(fake, _NOISY_PYTHON.format(python=sys.executable, server=_server_text()))
    return fake


def run_make(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "MCP_WEB_LOG_LEVEL": "info", **env}
    for inherited in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # as a client launches it, not a sub-make
        environment.pop(inherited, None)
    return subprocess.run(
        args,
        cwd=cwd,
        input=json.dumps(INITIALIZE) + "\n",
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _message(line: str, out: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    try:
        message: dict[str, Any] = json.loads(line)
    except ValueError:
        pytest.fail(f"not JSON-RPC, on stdout: {line!r}\n--- stderr:\n{out.stderr[-2000:]}")
    return message


def assert_only_protocol(out: subprocess.CompletedProcess[str]) -> None:
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines, out.stderr
    first = _message(lines[0], out)  # the very first line: nothing of make's or pip's before it
    assert first["jsonrpc"] == "2.0" and first["id"] == 1
    assert first["result"]["serverInfo"]["name"] == "mcp-server-web"
    assert all(_message(line, out)["jsonrpc"] == "2.0" for line in lines)


def checkout_entry_args() -> list[str]:
    """mcp.json.example's entry for a checkout run through make, pointed at this checkout."""
    entry = json.loads(EXAMPLE.read_text())["claude_desktop"]["mcpServers"]["web-checkout"]
    assert entry["command"] == "make"
    return ["make", *(str(ROOT) if arg == "/path/to/mcp-server-web" else arg for arg in entry["args"])]


def test_make_stdio_writes_only_the_protocol(tmp_path: Path) -> None:
    assert_only_protocol(run_make(["make", "stdio"], ROOT, VENV=str(installed_venv(tmp_path))))


def test_the_example_checkout_entry_writes_only_the_protocol(tmp_path: Path) -> None:
    # Run from elsewhere, as a client does: make -C prints "Entering directory" on stdout unless
    # told not to, which the entry does.
    out = run_make(checkout_entry_args(), tmp_path, VENV=str(installed_venv(tmp_path)))
    assert_only_protocol(out)


def test_the_first_run_sends_its_set_up_output_to_stderr(tmp_path: Path) -> None:
    venv = tmp_path / "fresh"
    out = run_make(["make", "stdio"], ROOT, VENV=str(venv), PYTHON=str(noisy_python(tmp_path)))
    assert_only_protocol(out)
    assert "venv noise: creating" in out.stderr and "pip noise: -m pip install" in out.stderr
    assert (venv / "bin" / ".installed").exists()
