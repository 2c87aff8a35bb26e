"""Finding the browser among its processes (fetch/browser/processes.py), on real processes."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_server_web.fetch.browser.processes import browser_pid, process_tree
from tests.support.proctree import descendants

# A "browser" that forks a child which has not yet exec'd: for that moment the child runs the same
# program with the same command line, marker included (Chromium starts its helper processes so).
_FORKS = "import os, sys, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\ntime.sleep(30)\n"


@pytest.fixture
def launched() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    if not Path("/proc/self/task").is_dir():
        pytest.skip("needs Linux's /proc")
    marker = f"--mcp-server-web-render={uuid.uuid4().hex}"
    # As Debian launches it: a shell script that runs the browser as its child, marker and all.
    wrapper = subprocess.Popen(
        ["/bin/sh", "-c", f'"{sys.executable}" -c "$0" "$@"; true', _FORKS, marker],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while len(descendants(wrapper.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        yield marker, wrapper
    finally:
        for pid in reversed(process_tree(wrapper.pid)):
            subprocess.run(["kill", "-9", str(pid)], check=False)
        wrapper.wait()


def test_the_browser_is_the_program_the_launcher_ran_not_a_child_it_forked(
    launched: tuple[str, subprocess.Popen[bytes]],
) -> None:
    marker, wrapper = launched
    below = descendants(wrapper.pid)
    assert len(below) == 2, below  # the "browser" and its forked child
    (browser,) = [pid for pid in below if _parent(pid) == wrapper.pid]
    (child,) = [pid for pid in below if pid != browser]
    found = browser_pid(marker)
    assert found == browser, (
        f"found {found}: the launcher is {wrapper.pid}, the browser {browser}, its child {child}"
    )


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
