"""Readings of a process and everything it started (its conversion workers), from /proc."""

from __future__ import annotations

import os
import threading
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from tests.support.load import cpu_seconds, status_kib


def parent_of(pid: int) -> int | None:
    """The parent of a living process, or None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descendants(pid: int) -> list[int]:
    """Every living process below pid (children, grandchildren...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = parent_of(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def living(pids: list[int]) -> list[int]:
    """The pids that are still running (a zombie, ended but not yet reaped, is not)."""
    found = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(pid)
    return found


@dataclass(frozen=True)
class TreeReading:
    processes: int
    """The process and its descendants."""
    threads: int
    rss_mib: float
    """Resident memory of all of them, summed (pages shared after a fork count in each)."""
    main_rss_mib: float
    cpu_seconds: float


def read_tree(pid: int) -> TreeReading:
    pids = [pid, *descendants(pid)]
    threads = rss = cpu = 0.0
    alive = 0
    for each in pids:
        count, kib, used = status_kib(each, "Threads"), status_kib(each, "VmRSS"), cpu_seconds(each)
        if count is None or kib is None or used is None:
            continue  # ended between the listing and the reading
        alive += 1
        threads += count
        rss += kib / 1024
        cpu += used
    return TreeReading(alive, int(threads), rss, (status_kib(pid, "VmRSS") or 0) / 1024, cpu)


def command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class PeakMemory:
    """The highest private memory (resident anonymous and shared memory, RssAnon + RssShmem: what
    scripts allocate, without the program's own pages that every process maps) summed over the
    processes below ``root`` whose command line carries ``marker``, sampled every ``interval``
    seconds by a thread of its own (so a busy event loop cannot make it miss a peak) while the
    ``with`` block runs. Read from /proc by the test itself, independently of what the code under
    test measures. Processes in ``others`` (another test's, still there) are left out.
    ``peak_rss_mib`` is the summed VmRSS at its own peak, for the record."""

    def __init__(
        self, root: int, marker: bytes, *, others: Collection[int] = (), interval: float = 0.01
    ) -> None:
        self.root, self.marker, self.interval = root, marker, interval
        self._others = frozenset(others)
        self.peak_mib = 0.0
        self.peak_rss_mib = 0.0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="peak-memory", daemon=True)

    def sample(self) -> tuple[float, float]:
        """(private, resident) memory of the processes now, MiB."""
        private = resident = 0
        for pid in descendants(self.root):
            if pid not in self._others and self.marker in command_line(pid):
                private += (status_kib(pid, "RssAnon") or 0) + (status_kib(pid, "RssShmem") or 0)
                resident += status_kib(pid, "VmRSS") or 0
        return private / 1024, resident / 1024

    def _run(self) -> None:
        while not self._stop.is_set():
            private, resident = self.sample()
            self.peak_mib = max(self.peak_mib, private)
            self.peak_rss_mib = max(self.peak_rss_mib, resident)
            self.samples += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
