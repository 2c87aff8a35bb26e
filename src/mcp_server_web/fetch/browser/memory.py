"""The browser's memory while it renders: a thread samples its processes and stops what passes the
allowance, at once rather than after the render.

The script heap's cap (``--max-old-space-size``) bounds neither ArrayBuffers nor WebAssembly
memory, and each Web Worker has a heap of its own: only the processes' memory tells what a page
takes. A thread of its own samples it, so a busy event loop cannot delay the stop. Past the
allowance, the page process holding the most (a renderer: one page's context, its workers and its
buffers) is killed, which crashes that page alone and leaves the others' renders running; when
the most is held by another of the browser's processes, the whole browser is killed, to be
started again by the next render.
"""

from __future__ import annotations

import logging
import threading

from mcp_server_web.fetch.browser.processes import kill, kill_tree, private_memory, process_kind, process_tree

logger = logging.getLogger(__name__)

_MB = 1024 * 1024
SAMPLE_INTERVAL = 0.025
"""Seconds between two samples while a render runs. Pages that allocate as fast as they can take
1-2 GB/s together here: a sample every 25 ms keeps what they get past the allowance to tens of
MB, for about 1.3 ms of /proc reading each time (5 % of a core, only while rendering)."""
_IDLE_WAIT = 1.0


class MemoryWatch:
    """Samples the process tree below ``pid`` every ``interval`` seconds while ``rendering`` is on,
    and stops what passes ``allowance`` bytes of private memory (processes.private_memory)."""

    def __init__(self, pid: int, allowance: int, *, interval: float = SAMPLE_INTERVAL) -> None:
        self.pid = pid
        self.allowance = allowance
        self.interval = interval
        self.stopped_pages = 0
        """Page processes killed for their memory so far."""
        self.stopped_browser = False
        """Whether the browser itself was killed for its memory."""
        self._killed: set[int] = set()
        self._rendering = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def rendering(self, active: bool) -> None:
        """Sample while renders run (started on the first), rest while none does."""
        if active:
            if self._thread is None and not self._closed.is_set():
                self._thread = threading.Thread(
                    target=self._run, name=f"browser-memory-{self.pid}", daemon=True
                )
                self._thread.start()
            self._rendering.set()
        else:
            self._rendering.clear()

    def close(self) -> None:
        """Stop sampling; the thread ends within one interval."""
        self._closed.set()
        self._rendering.set()

    def check(self) -> None:
        """One sample, and the stop it calls for."""
        usage = {member: private_memory(member) for member in process_tree(self.pid)}
        total = sum(usage.values())
        self._killed &= usage.keys()
        if total <= self.allowance or self.stopped_browser:
            return
        # A process killed at the last sample may still be giving its memory back.
        living = {member: used for member, used in usage.items() if member not in self._killed}
        if sum(living.values()) <= self.allowance:
            return
        largest = max(living, key=lambda member: living[member])
        kind = process_kind(largest)  # read now: a page process takes its name a moment after it starts
        if kind == "renderer":
            kill(largest)
            self._killed.add(largest)
            self.stopped_pages += 1
            logger.warning(
                "the browser's processes hold %d MB, over the %d MB allowance: stopped the page process "
                "holding %d MB",
                total // _MB,
                self.allowance // _MB,
                living[largest] // _MB,
            )
        else:
            kill_tree(self.pid)
            self.stopped_browser = True
            logger.warning(
                "the browser's processes hold %d MB, over the %d MB allowance, the most in its %s "
                "process: stopped the browser",
                total // _MB,
                self.allowance // _MB,
                kind,
            )

    def _run(self) -> None:
        while not self._closed.is_set():
            if not self._rendering.wait(_IDLE_WAIT):
                continue
            if self._closed.is_set():
                return
            try:
                self.check()
            except Exception:  # a /proc oddity must not end the watch
                logger.exception("sampling the browser's memory failed")
            self._closed.wait(self.interval)
