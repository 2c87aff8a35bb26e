"""What the figures were measured with: versions of everything compared, and the machine."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from suite.paths import PEER_PYTHON, REPO

_PEER_VERSIONS = r"""
import json, os, sys
from importlib.metadata import version
import readabilipy
out = {name: version(name) for name in ("mcp-server-fetch", "mcp", "readabilipy", "markdownify", "httpx")}
jsdir = os.path.join(os.path.dirname(readabilipy.__file__), "javascript")
for pkg in ("@mozilla/readability", "jsdom"):
    path = os.path.join(jsdir, "node_modules", pkg, "package.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            out[pkg] = json.load(f)["version"]
out["python"] = sys.version.split()[0]
print(json.dumps(out))
"""


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def node_version() -> str | None:
    node = shutil.which("node")
    if not node:
        return None
    done = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def peer_versions(peer_python: Path = PEER_PYTHON) -> dict[str, str] | None:
    if not peer_python.exists():
        return None
    done = subprocess.run(
        [str(peer_python), "-c", _PEER_VERSIONS], capture_output=True, text=True, check=False, timeout=60
    )
    if done.returncode != 0:
        return None
    peer: dict[str, str] = json.loads(done.stdout)
    return peer


def versions() -> dict[str, Any]:
    return {
        "mcp-server-web": _version("mcp-server-web"),
        "mcp": _version("mcp"),
        "readability-lxml": _version("readability-lxml"),
        "markdownify": _version("markdownify"),
        "trafilatura": _version("trafilatura"),
        "python": sys.version.split()[0],
        "node": node_version(),
        "peer": peer_versions(),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": platform.platform(terse=True),
    }


def describe(info: dict[str, Any]) -> str:
    """One line naming the code, the versions and the machine, for the top of every table."""
    v, m = info["versions"], info["machine"]
    peer = v.get("peer") or {}
    ours = f"mcp-server-web {v['mcp-server-web']}"
    if info.get("source"):
        ours += f" ({describe_source(info['source'])})"
    parts = [
        f"{ours}, mcp {v['mcp']}",
        f"mcp-server-fetch {peer.get('mcp-server-fetch', 'n/a')} (mcp {peer.get('mcp', 'n/a')}, "
        f"readabilipy {peer.get('readabilipy', 'n/a')}, "
        f"Readability.js {peer.get('@mozilla/readability', 'n/a')}, jsdom {peer.get('jsdom', 'n/a')})",
        f"readability-lxml {v['readability-lxml']}, markdownify {v['markdownify']}, "
        f"trafilatura {v['trafilatura']}",
        f"Python {v['python']}, Node {v['node'] or 'none'}",
        f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}",
    ]
    return "; ".join(parts)


def _git(*args: str) -> str | None:
    """A read-only git command in the repository; None when git or the repository is missing."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source(snapshot_ref: str | None = None) -> dict[str, Any]:
    """Which code of ours is measured: a commit, and whether src/ had uncommitted changes."""
    if snapshot_ref is not None:
        sha = _git("rev-parse", "--short", snapshot_ref)
        return {"commit": sha, "ref": snapshot_ref, "snapshot": True, "dirty": False}
    head = _git("rev-parse", "--short", "HEAD")
    changed = _git("diff-index", "--name-only", "HEAD", "--", "src") or ""
    untracked = _git("ls-files", "--others", "--exclude-standard", "--", "src") or ""
    files = sorted({line for line in (changed + "\n" + untracked).splitlines() if line.strip()})
    return {"commit": head, "ref": "working tree", "snapshot": False, "dirty": bool(files), "changed": files}


def describe_source(src: dict[str, Any]) -> str:
    if src.get("snapshot"):
        return f"{src['ref']} = {src['commit']} (a snapshot of src/)"
    if src.get("dirty"):
        count = len(src["changed"])
        return f"the working tree at {src['commit']} with uncommitted changes to {count} src/ files"
    return f"commit {src['commit']}"


def tree_digest(root: Path) -> str:
    """A hash of every .py file under root, to tell whether the code changed during a bench."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()


def _cpu_times() -> tuple[int, int] | None:
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields), idle


def _own_cpu_seconds() -> float:
    """CPU time of this process and of every child it has waited for (their children included)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class OtherLoad:
    """Measures the CPU used by everything but this run (and its children) over a stretch of time.

    machine busy time (/proc/stat) minus our own CPU time (os.times, children waited for included),
    as a share of the machine's capacity over the wall time: near 0 on a quiet machine.
    """

    def __init__(self) -> None:
        self._start: tuple[tuple[int, int] | None, float, float] = (None, 0.0, 0.0)

    def start(self) -> None:
        self._start = (_cpu_times(), _own_cpu_seconds(), time.monotonic())

    def share(self) -> float | None:
        before, own_before, wall_before = self._start
        after = _cpu_times()
        if before is None or after is None:
            return None
        hz = os.sysconf("SC_CLK_TCK")
        busy = ((after[0] - after[1]) - (before[0] - before[1])) / hz
        own = _own_cpu_seconds() - own_before
        capacity = (time.monotonic() - wall_before) * (os.cpu_count() or 1)
        return round(max(0.0, busy - own) / capacity, 3) if capacity > 0 else None


def wait_until_quiet(threshold: float, max_wait: float) -> tuple[float | None, float]:
    """Sample the machine until other load is at most threshold, or max_wait seconds have passed.

    Returns (the last share seen, seconds waited). Bounded: at most max_wait plus one sample.
    """
    started = time.monotonic()
    while True:
        share = busy_share(2.0)
        waited = time.monotonic() - started
        if share is None or share <= threshold or waited >= max_wait:
            return share, round(waited, 1)
        time.sleep(min(10.0, max(0.0, max_wait - waited)))


def busy_share(seconds: float = 1.0) -> float | None:
    """Share of the machine's CPU busy over `seconds` while this run is idle: other load."""
    before = _cpu_times()
    time.sleep(seconds)
    after = _cpu_times()
    if before is None or after is None or after[0] == before[0]:
        return None
    total, idle = after[0] - before[0], after[1] - before[1]
    return round(1 - idle / total, 3)
