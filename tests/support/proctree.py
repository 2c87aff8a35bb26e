"""Readings of a process and everything it started (its conversion workers), from /proc."""

from __future__ import annotations

import os
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
