"""Time limits judged so that they hold on a busy machine and still fail when really broken.

A bound in seconds of wall clock is a coin toss on two cores shared with other suites: an ordinary
page took 3 s there against a 2 s bound. Each kind of limit is judged its own way:

* **Work.** A limit on what computing something costs is a limit on CPU time, which other
  processes do not inflate: ``cpu_time`` (this process), ``least_cpu_time`` (the least of a few
  runs), ``least_cpu_times`` (a control and its work, run in turn), ``child_cpu_time`` (a command
  run to its end), and ``proctree.read_tree(pid).cpu_seconds``
  (a server and its conversion workers).
* **Responsiveness.** "An ordinary call is answered promptly while an attack runs" is judged
  against the same ordinary call on the quiet server, measured in the same test just before
  (``slowest``): the bound is ``allowance(floor, control, times)``, the floor being the bound an
  idle machine meets. A machine three times slower makes the control three times slower too; a
  real stall (tens of seconds) fails either way.
* **A timeout that must fire near its limit.** The lower bound stays (not before the limit); the
  margin above grows with a control, an ordinary call measured just before: what runs past the
  timer (the call's own round trip, thread hand-offs) is the same work, slowed the same way.
  A timeout that does not fire runs on for as long as the stall it should cut, which each test
  makes far longer than its bound.
* **Waiting for something to be released** (a process to end, a connection to close): polled
  until it happens, up to ``PATIENCE`` seconds, a deadline that is not what the test is about.
"""

from __future__ import annotations

import gc
import math
import resource
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")

PATIENCE = 30.0
"""Seconds a test waits for something to be released before it calls it never released: far past
the fraction of a second it takes, even on a busy machine."""


# --- CPU time --------------------------------------------------------------------------------------


def cpu_time(work: Callable[[], T]) -> tuple[T, float]:
    """work's value, and the CPU seconds this process spent while it ran (every thread)."""
    started = time.process_time()
    value = work()
    return value, time.process_time() - started


def least_cpu_time(work: Callable[[], object], runs: int = 3) -> float:
    """The least CPU seconds of ``runs`` runs of work, each with the cyclic garbage collector held
    off: what a collection costs depends on everything earlier tests left in this process's heap,
    not on the work (late in a full run, a 3 ms reading of JSON-LD measured 20 ms once)."""
    return least_cpu_times(work, runs=runs)[0]


def least_cpu_times(*works: Callable[[], object], runs: int = 5) -> list[float]:
    """``least_cpu_time`` of each work, the works run in turn ``runs`` times over, so that a
    control and what it controls share the machine's moments: measured one after the other, a
    burst of load on the other core in the second half (CPU time grows with a contended cache)
    once made a 6 ms reading of JSON-LD measure 16.6 ms against its control's 2.5 ms."""
    gc.collect()
    least = [math.inf] * len(works)
    for _ in range(runs):
        for index, work in enumerate(works):
            gc.disable()
            try:
                least[index] = min(least[index], cpu_time(work)[1])
            finally:
                gc.enable()
    return least


def child_cpu_time(run: Callable[[], T]) -> tuple[T, float]:
    """run's value, and the CPU seconds of the child processes it waited for (a command run to
    its end: ``subprocess.run``)."""

    def used() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    before = used()
    value = run()
    return value, used() - before


# --- wall clock against a control ------------------------------------------------------------------


async def timed(call: Callable[[], Awaitable[T]]) -> tuple[T, float]:
    """call's value, and the wall-clock seconds it took."""
    started = time.monotonic()
    value = await call()
    return value, time.monotonic() - started


async def slowest(call: Callable[[], Awaitable[object]], runs: int = 3) -> float:
    """The control: wall-clock seconds of the slowest of ``runs`` calls, one after the other,
    after one more that is not counted (the first of a kind pays for imports and connections,
    which the calls it controls do not).

    Taken on the quiet system just before what it controls, so it is as slow as the machine is
    busy now; the slowest, not the mean, as a bound on a busy machine has to be.
    """
    await call()
    times = [(await timed(call))[1] for _ in range(runs)]
    return max(times)


def slowest_sync(call: Callable[[], object], runs: int = 3) -> float:
    """``slowest`` for a call that blocks."""
    call()
    times = []
    for _ in range(runs):
        started = time.monotonic()
        call()
        times.append(time.monotonic() - started)
    return max(times)


def allowance(floor: float, control: float, times: float) -> float:
    """The bound: ``floor`` seconds, or ``times`` controls on a machine too busy for that."""
    if not math.isfinite(control) or control < 0:
        raise ValueError(f"not a control: {control!r}")
    return max(floor, times * control)


# --- waiting for a release -------------------------------------------------------------------------


async def eventually(check: Callable[[], bool], within: float = PATIENCE, every: float = 0.05) -> bool:
    """Poll check until it holds (True) or ``within`` seconds have passed (False)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(every)
    return True
