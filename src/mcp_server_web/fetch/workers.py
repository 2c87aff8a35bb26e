"""Conversion in worker processes that can be stopped.

Converting a hostile page can cost minutes of CPU and gigabytes (a table whose spans make an
extractor build a huge grid, a page of tens of thousands of paragraphs). A thread cannot be
interrupted: once its caller gave up, it ran on, outside every limit, while its slot was handed
to the next call. A process can be killed. So each conversion runs in a worker process, and:

- a call that times out or is cancelled kills its worker at once; the slot it held is free only
  once the worker is gone, so abandoned work never runs uncounted;
- a worker whose memory passes the per-conversion cap is killed mid-way (its RSS is sampled while
  it works), and the call fails with ``too_large``;
- a worker that grew while converting is retired after its job, and every worker is retired after
  ``MAX_JOBS_PER_WORKER`` jobs, so the memory a big page cost is given back to the system rather
  than kept by the allocator; at most one idle worker is kept;
- workers are forked from a server process that has the conversion stack imported already
  (multiprocessing's forkserver), so a new one starts in milliseconds, not the ~0.5 s an import
  of lxml, readability and trafilatura takes.

A worker shares nothing with the server but a pipe: its stdout is pointed at stderr (stdout is
the stdio protocol channel), and it dies with the server on Linux, or at its next read of the pipe
elsewhere: the fork server, its parent, ends when the server does, and the kernel then kills the
worker (PR_SET_PDEATHSIG), busy or not.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import anyio

from mcp_server_web.errors import ExtractionFailed, TooLarge, WebToolError
from mcp_server_web.logs import configure_logging

logger = logging.getLogger(__name__)

MAX_JOBS_PER_WORKER = 200
"""Jobs before a worker is replaced anyway: the allocator's fragmentation only grows."""
RETIRE_GROWTH_BYTES = 64 * 1024 * 1024
"""A worker whose RSS grew more than this over its first job is replaced after the job it is on."""
WORKER_NICENESS = 5
RSS_SAMPLE_INTERVAL = 0.05
"""Seconds between two reads of a busy worker's memory."""
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _context(preload: list[str]) -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        # Imported once in the fork server, so that every worker starts warm.
        context.set_forkserver_preload(preload)
        return context
    return multiprocessing.get_context("spawn")  # Windows


def rss_bytes(pid: int) -> int | None:
    """Resident memory of process pid, or None where /proc cannot tell (not Linux, or gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


# --- inside the worker ---------------------------------------------------------------------------


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _release_the_fork_server() -> None:
    """Let go of the descriptor that keeps the fork server alive.

    The fork server ends when the write end of its "alive" pipe is closed everywhere, and every
    process it forks inherits that end (so that a child may start processes of its own). Held by a
    worker, it kept the fork server running after the server was killed, so the worker's parent
    never died and PR_SET_PDEATHSIG never fired: a busy worker converted on, outside every limit,
    until its page was done (up to MCP_WEB_TIMEOUT of CPU) and only then found the server gone. A
    worker starts no process, so it needs none of it.
    """
    from multiprocessing import forkserver

    server = forkserver._forkserver
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int):
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None  # type: ignore[attr-defined]


def _worker_main(conn: Connection, log_level: int) -> None:
    """Run jobs from conn until the server closes it."""
    _die_with_parent()
    # Only now: until here this worker's hold keeps its parent alive, so the signal cannot be missed.
    _release_the_fork_server()
    # A library that prints must not write into the stdio protocol stream.
    os.dup2(2, 1)
    # Ctrl-C in the terminal reaches the whole process group: the server decides, not the worker.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The server's event loop answers every call, health checks and cached pages included; a
    # burst of heavy pages must not take the CPU from it.
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)
    # The server's set-up, so the libraries converting the page log at the server's level.
    configure_logging(log_level)
    while True:
        try:
            target, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            module, _, name = target.partition(":")
            function = getattr(importlib.import_module(module), name)
            outcome: tuple[str, Any] = ("ok", function(*args, **kwargs))
        except WebToolError as error:
            outcome = ("error", error)
        except MemoryError:
            outcome = ("error", TooLarge("converting this page needs more memory than a conversion may use."))
        except Exception as error:  # reported, never raised into the server
            logging.getLogger(__name__).exception("conversion failed")
            failure = ExtractionFailed(f"the converter failed on this page ({type(error).__name__}).")
            outcome = ("error", failure)
        try:
            conn.send(outcome)
        except (OSError, ValueError):
            return


# --- in the server -------------------------------------------------------------------------------


class _Worker:
    def __init__(self, context: multiprocessing.context.BaseContext, log_level: int) -> None:
        ours, theirs = context.Pipe(duplex=True)
        self.process = context.Process(  # type: ignore[attr-defined]
            target=_worker_main, args=(theirs, log_level), name="mcp-web-converter", daemon=True
        )
        self.process.start()
        theirs.close()
        self.conn = ours
        self.jobs = 0
        self.baseline_rss: int | None = None

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    async def call(self, job: tuple[str, tuple[Any, ...], dict[str, Any]]) -> tuple[str, Any]:
        """Send a job and wait for its outcome.

        The worker is idle and reading, so the send goes at memory speed. The wait is on the
        pipe itself (no thread held while a page converts); where the event loop cannot watch a
        pipe (Windows), a thread waits instead.
        """
        self.conn.send(job)
        if os.name == "posix":
            await anyio.wait_readable(self.conn.fileno())
            # The outcome is written whole as soon as it is ready: reading it takes milliseconds.
            outcome: tuple[str, Any] = self.conn.recv()
            return outcome
        outcome = await anyio.to_thread.run_sync(self.conn.recv, abandon_on_cancel=True)
        return outcome

    def kill(self) -> None:
        """End the worker now, whatever it is doing. Never blocks the event loop.

        SIGKILL cannot be ignored: once it is sent the worker runs no more code. Reaping it (the
        kernel unmapping a big worker's memory takes ~20 ms) is left to a short-lived thread.
        """
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.process.kill()
        self.conn.close()
        threading.Thread(target=_reap, args=(self.process,), name="converter-reaper", daemon=True).start()


def _reap(process: multiprocessing.process.BaseProcess) -> None:
    """Wait for a killed worker, then close its process handle: the descriptor the fork server
    reports its exit on stays open until then (or until the garbage collector finds the handle,
    which a traceback holding the worker can delay for a long time)."""
    process.join()
    with contextlib.suppress(ValueError):
        process.close()


@dataclass(frozen=True)
class PoolStatus:
    capacity: int
    busy: int
    waiting: int
    killed: int
    """Workers killed so far because their call gave up or their memory passed the cap."""

    @property
    def saturated(self) -> bool:
        return self.busy >= self.capacity and self.waiting > 0


class ConversionPool:
    """At most ``size`` conversions at once, each in a worker process that can be killed.

    ``memory_limit`` bounds one conversion's worker (resident bytes, sampled while it works;
    only where /proc can be read). Use ``run`` inside the caller's deadline: waiting for a free
    worker counts against it, and a deadline that passes mid-conversion kills the worker.
    """

    def __init__(
        self,
        size: int,
        *,
        memory_limit: int,
        preload: tuple[str, ...] = (),
        log_level: int = logging.WARNING,
    ) -> None:
        self.size = size
        self._preload = list(preload)
        self.memory_limit = memory_limit
        self._log_level = log_level
        self._limiter = anyio.CapacityLimiter(size)
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._context: multiprocessing.context.BaseContext | None = None
        self._start_lock = threading.Lock()
        self._killed = 0
        self._forked = False
        self._closed = False

    def status(self) -> PoolStatus:
        return PoolStatus(
            capacity=self.size,
            busy=len(self._busy),
            waiting=int(self._limiter.statistics().tasks_waiting),
            killed=self._killed,
        )

    def busy_pids(self) -> list[int]:
        return [worker.pid for worker in self._busy]

    def idle_pids(self) -> list[int]:
        return [worker.pid for worker in self._idle]

    async def warm_up(self) -> None:
        """Start the fork server and one worker ahead of the first page; never fails.

        A failure here (out of descriptors or processes) only costs the first page the start,
        where it is reported as that page's error: the server must come up either way.
        """
        if self._idle or self._busy or self._closed:
            return
        try:
            worker = await anyio.to_thread.run_sync(self._start)
        except ExtractionFailed as error:
            logger.warning("could not start a page converter ahead of time: %s", error.message)
            return
        self._idle.append(worker)

    async def run(self, target: str, /, *args: Any, **kwargs: Any) -> Any:
        """``target(*args, **kwargs)`` in a worker process; its WebToolError re-raised here.

        ``target`` names the function as "module:function": only the worker imports it, so the
        server itself never loads the conversion stack (lxml, readability, trafilatura).
        """
        self._closed = False
        async with self._limiter:
            worker = self._idle.pop() if self._idle else await self._new_worker()
            self._busy.add(worker)
            try:
                status, value = await self._call(worker, (target, args, kwargs))
            except BaseException:
                # Cancelled, timed out, over its memory, or crashed: the worker may be mid-job,
                # so it is killed before its slot is given back.
                self._busy.discard(worker)
                self._killed += 1
                worker.kill()
                raise
            self._busy.discard(worker)
            self._keep_or_retire(worker)
        if status == "error":
            raise value
        return value

    async def _call(self, worker: _Worker, job: tuple[Any, ...]) -> tuple[str, Any]:
        outcome: list[tuple[str, Any]] = []
        over_limit: list[int] = []

        async def converse() -> None:
            # A worker that dies mid-job (killed for its memory, or crashed) closes the pipe.
            with contextlib.suppress(EOFError, OSError):
                outcome.append(await worker.call(job))
            tasks.cancel_scope.cancel()

        async def watch_memory() -> None:
            while (rss := rss_bytes(worker.pid)) is not None:
                if rss > self.memory_limit:
                    over_limit.append(rss)
                    worker.process.kill()
                    return
                await anyio.sleep(RSS_SAMPLE_INTERVAL)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(converse)
            tasks.start_soon(watch_memory)
        if over_limit:
            raise TooLarge(
                f"converting this page needs more than {self.memory_limit // (1024 * 1024)} MB of memory, "
                "the memory_limit for one page.",
                parameters=("memory_limit",),
            )
        if not outcome:
            raise ExtractionFailed("the converter stopped while reading this page.")
        return outcome[0]

    async def _new_worker(self) -> _Worker:
        if not self._forked:
            # The first start launches the fork server and its imports (a fraction of a second),
            # and one may be under way in the warm-up, holding the lock: not on the event loop.
            return await anyio.to_thread.run_sync(self._start)
        # Later ones are a fork of the warm fork server: about 2 ms, not worth a thread.
        return self._start()

    def _start(self) -> _Worker:
        try:
            with self._start_lock:
                if self._context is None:
                    self._context = _context(self._preload)
                worker = _Worker(self._context, self._log_level)
        except (OSError, EOFError, ValueError) as error:
            # Out of descriptors or processes (EMFILE, EAGAIN), or the fork server died.
            reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
            raise ExtractionFailed(
                f"no page converter could be started ({reason}); the server may be out of file "
                "descriptors or processes."
            ) from None
        worker.baseline_rss = rss_bytes(worker.pid)
        self._forked = True
        return worker

    def _keep_or_retire(self, worker: _Worker) -> None:
        worker.jobs += 1
        rss = rss_bytes(worker.pid)
        start = worker.baseline_rss
        grew = rss is not None and start is not None and rss - start > RETIRE_GROWTH_BYTES
        # One idle worker is kept warm; more would only hold memory until the next burst, and a
        # new one forks from the warm fork server in milliseconds.
        spare = self._idle and not self._limiter.statistics().tasks_waiting
        if self._closed or grew or spare or worker.jobs >= MAX_JOBS_PER_WORKER:
            logger.debug("retiring converter %d after %d jobs", worker.pid, worker.jobs)
            worker.kill()
        else:
            self._idle.append(worker)

    def close(self) -> None:
        """Stop every worker; a later ``run`` starts new ones."""
        self._closed = True
        for worker in self._idle:
            worker.kill()
        for worker in list(self._busy):
            worker.kill()
        self._idle.clear()
