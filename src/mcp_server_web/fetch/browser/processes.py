"""The browser's processes, read from Linux's /proc: which one is the browser, what runs below it,
what each is, how much memory they hold, and ending them. Elsewhere these find nothing and do
nothing (no process, no memory), so rendering works without the memory watch.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

_PROC = Path("/proc")
_Children = Callable[[int], list[int]]


def browser_pid(marker: str) -> int | None:
    """The browser's main process: the innermost program whose command line carries this launch's
    marker. A distribution's launcher script (e.g. Debian's) runs the browser as its child, and
    for a moment each helper process the browser starts is a fork of it, the same program with
    the same command line: a process is the browser only when its parent runs another program."""
    carrying = set()
    for entry in _proc_entries():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                carrying.add(int(entry.name))
        except OSError:
            continue
    tree = _all_children() if len(carrying) > 1 else {}
    parents = {child: parent for parent, children in tree.items() for child in children}
    carrying = {
        pid for pid in carrying if parents.get(pid) not in carrying or _program(parents[pid]) != _program(pid)
    }
    innermost = [pid for pid in carrying if not carrying.intersection(tree.get(pid, ()))]
    return min(innermost) if innermost else None


def _program(pid: int) -> str | None:
    """The executable pid runs (None when that cannot be read)."""
    try:
        return os.readlink(_PROC / str(pid) / "exe")
    except OSError:
        return None


def process_tree(pid: int) -> list[int]:
    """pid and every process below it."""
    found, stack = [], [pid]
    children = _children_of if _PER_TASK_CHILDREN else _children_from(_all_children())
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children(current))
    return found


def private_memory(pid: int) -> int:
    """Bytes of process pid's private resident memory: anonymous and shared memory (RssAnon +
    RssShmem), what its scripts and buffers take. The program's own file pages are left out:
    every process of the browser maps them, so a plain RSS would count them once per process.
    0 for a process that is gone (or a zombie, which holds none)."""
    try:
        status = (_PROC / str(pid) / "status").read_bytes()
    except OSError:
        return 0
    total = 0
    for line in status.splitlines():
        if line.startswith((b"RssAnon:", b"RssShmem:")):
            total += int(line.split()[1]) * 1024
    return total


def tree_memory(pid: int) -> int:
    """Private resident bytes of pid and every process below it, summed (see private_memory)."""
    return sum(private_memory(member) for member in process_tree(pid))


def process_kind(pid: int) -> str:
    """Chromium's kind of process ("renderer", "gpu-process", "utility", "zygote"...), from the
    --type switch it runs with; "browser" for the main process (and any other without one)."""
    try:
        command = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return "gone"
    # Chromium rewrites its children's command lines as one string, spaces between the switches.
    for part in command.replace(b"\0", b" ").split():
        if part.startswith(b"--type="):
            return part[len(b"--type=") :].decode("ascii", "replace")
    return "browser"


def lower_priority(pid: int, niceness: int) -> None:
    """Give every thread of pid and of the processes below it at least this niceness. Processes
    and threads started later inherit it from the thread that starts them (Chromium forks its page
    processes from its single-threaded zygote), so once, right after launch, covers them too."""
    for member in process_tree(pid):
        try:
            threads = os.listdir(_PROC / str(member) / "task")
        except OSError:
            continue
        for thread in threads:
            try:
                current = os.getpriority(os.PRIO_PROCESS, int(thread))
                if current < niceness:
                    os.setpriority(os.PRIO_PROCESS, int(thread), niceness)
            except OSError:  # gone, or not ours to change
                continue


def kill(pid: int) -> None:
    """SIGKILL pid; nothing if it is gone already."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def kill_tree(pid: int) -> None:
    """SIGKILL pid and everything below it, the lowest first."""
    for member in reversed(process_tree(pid)):
        kill(member)


def _proc_entries() -> list[Path]:
    if not _PROC.is_dir():
        return []
    return [entry for entry in _PROC.iterdir() if entry.name.isdigit()]


def _all_children() -> dict[int, list[int]]:
    """Every process's children, from one pass over /proc (the fallback: costs one read per
    process on the machine)."""
    tree: dict[int, list[int]] = {}
    for entry in _proc_entries():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces: the fields follow the last ")".
        fields = stat[stat.rfind(")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _children_from(tree: dict[int, list[int]]) -> _Children:
    return lambda pid: tree.get(pid, [])


def _children_of(pid: int) -> list[int]:
    """pid's children, from the kernel's per-thread lists: a few reads per process of the tree
    rather than one per process on the machine, which matters when it is sampled many times a
    second."""
    try:
        tasks = os.listdir(_PROC / str(pid) / "task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            listed = (_PROC / str(pid) / "task" / task / "children").read_bytes()
        except OSError:
            continue
        found.extend(int(child) for child in listed.split())
    return found


def _has_per_task_children() -> bool:
    """Whether this kernel keeps the children lists (CONFIG_PROC_CHILDREN, on in common kernels)."""
    return (_PROC / "self" / "task" / str(os.getpid()) / "children").exists()


_PER_TASK_CHILDREN = _has_per_task_children()
