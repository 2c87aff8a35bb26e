"""Hostile servers, through the real web_fetch tool.

Every case runs the real MCP server in memory behind the SDK's Client, with small configured limits,
against a server on 127.0.0.1 that misbehaves on purpose. Each one must:

* end with a clear outcome: a tool error whose code is stable and whose message is one plain
  sentence (no traceback), or, where the input is not an error by nature, a useful result;
* end within the configured limits: the time limit, plus a margin that grows with an ordinary
  call's time on the quiet server, measured just before (a busy machine slows both alike);
* leave the server serving: a normal page fetched while the hostile call is in flight, and one
  fetched after it, both succeed, the first one within 2 s or as many ordinary calls' time;
* leak nothing: the client lets go of every connection the hostile server accepted, no work keeps
  running once the call has returned (CPU time), file descriptors and asyncio tasks are back to
  where they were once the server is closed, and peak memory stays under a stated bound.

The network backend refuses any address but 127.0.0.1, so nothing here can leave the machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import itertools
import os
import random
import re
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

import brotli
import pytest
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.server.app import build_server, conversion_pool
from tests.server.conftest import error_code, make_settings, text_of
from tests.support import hostile
from tests.support.hostile import HostileServer
from tests.support.netguard import GuardBackend
from tests.support.origin import Origin
from tests.support.samples import (
    ARTICLE_TITLE,
    article_html,
    brotli_bomb,
    deeply_nested_html,
    gzip_bomb,
    gzip_text,
    minimal_pdf,
    pdf_content_bomb,
    pdf_form_bomb,
    png_bytes,
)
from tests.support.timing import PATIENCE, allowance, eventually, slowest, timed

MB = 1024 * 1024
CAP_MB = 4.0
"""MCP_WEB_MAX_RESPONSE_MB for every case: small, so that bombs and huge pages hit it fast."""
STALL_TIMEOUT = 1.0
"""MCP_WEB_TIMEOUT where the server stalls: the call must end at this limit, not before, not much after."""
WORK_TIMEOUT = 5.0
"""MCP_WEB_TIMEOUT where the page is merely big or odd: generous, so a slow CI machine never turns a
useful result into a timeout; the real figures are a fraction of it."""
MARGIN = 0.75
"""Seconds a call may run past its limit (scheduling, thread hand-offs); on a busy machine,
LATE_CONTROLS times an ordinary call's time on the quiet server, if that is more."""
LATE_CONTROLS = 5
DURING_S = 2.0
"""Seconds an ordinary call made while the hostile one runs may take; on a busy machine,
DURING_CONTROLS times an ordinary call's time on the quiet server, if that is more."""
DURING_CONTROLS = 20
MEMORY_BOUND_MB = 64
IDLE_WINDOW = 0.15
"""Seconds of quiet after a call during which the process's CPU time is measured."""


# --------------------------------------------------------------------------------------------
# Measuring
# --------------------------------------------------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class PeakMemory:
    """Peak memory of this process while a call runs, in MB above where it started.

    The kernel's peak resident set (VmHWM, reset through /proc/self/clear_refs) sees everything:
    Python objects, lxml trees, zlib and brotli buffers. Where that file is not writable, the peak
    of Python's own allocations (tracemalloc) stands in, a lower figure.
    """

    def __init__(self) -> None:
        self.source = "rss"
        self._start = 0

    def __enter__(self) -> PeakMemory:
        gc.collect()
        # Free memory that malloc keeps would hide a peak (it is reused without growing the
        # resident set): give it back first.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self._start = self._status("VmRSS")
        except OSError:
            self.source = "tracemalloc"
            tracemalloc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.source == "tracemalloc":
            self.peak_mb = tracemalloc.get_traced_memory()[1] / MB
            tracemalloc.stop()
        else:
            self.peak_mb = (self._status("VmHWM") - self._start) / MB

    @staticmethod
    def _status(name: str) -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
        raise OSError(f"{name} not in /proc/self/status")


@dataclass
class Measured:
    """What one case did, for the assertions and for the report printed with -s."""

    case: str
    outcome: str = ""
    elapsed: float = 0.0
    control: float = 0.0
    """An ordinary call's time on the quiet server, just before the hostile one."""
    during: float = 0.0
    peak_mb: float = 0.0
    memory_source: str = ""
    idle_cpu: float = 0.0
    fds_before: int = 0
    fds_after: int = 0
    connections: int = 0


async def settle(check: Callable[[], bool]) -> bool:
    """Poll until check() holds, collecting garbage in between: sockets and tasks are released
    asynchronously."""

    def collected() -> bool:
        gc.collect()
        return check()

    return check() or await eventually(collected)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass
class Servers:
    """The servers a case starts; closed when the case ends."""

    stack: ExitStack
    hostile: list[HostileServer] = field(default_factory=list)

    def raw(self, behaviour: hostile.Behaviour) -> HostileServer:
        server = self.stack.enter_context(HostileServer(behaviour))
        self.hostile.append(server)
        return server

    def origin(self) -> Origin:
        return self.stack.enter_context(Origin("127.0.0.1"))


@dataclass(frozen=True)
class Case:
    id: str
    serve: Callable[[Servers], str]
    """Start the hostile server(s); return the URL to fetch."""
    expect: str
    """The error code, or "ok" for a useful result."""
    check: Callable[[CallToolResult], None] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    timeout: float = WORK_TIMEOUT
    ends_at_timeout: bool = False
    """The call must end because the time limit ran out (not before it)."""
    memory_mb: float = MEMORY_BOUND_MB


def contains(*needles: str, absent: tuple[str, ...] = ()) -> Callable[[CallToolResult], None]:
    def check(result: CallToolResult) -> None:
        text = text_of(result)
        for needle in needles:
            assert needle in text, f"{needle!r} missing from: {text[:600]}"
        for needle in absent:
            assert needle not in text, f"{needle!r} present in: {text[:600]}"

    return check


def matches(pattern: str) -> Callable[[CallToolResult], None]:
    def check(result: CallToolResult) -> None:
        assert re.search(pattern, text_of(result)), text_of(result)[:600]

    return check


# --- content served by an ordinary origin -----------------------------------------------------


def serving(
    body: bytes | str | Callable[[], bytes],
    content_type: str | None = "text/html; charset=utf-8",
    **headers: str,
) -> Callable[[Servers], str]:
    """An origin answering with body (built only when the case runs, if it is a function)."""

    def serve(servers: Servers) -> str:
        content = body() if callable(body) else body
        return servers.origin().serve("/hostile", content, content_type=content_type, headers=headers)

    return serve


def redirect_loop(servers: Servers) -> str:
    origin = servers.origin()
    origin.redirect("/a", "/b")
    origin.redirect("/b", "/a")
    return origin.url("/a")


def redirect_chain(hops: int) -> Callable[[Servers], str]:
    def serve(servers: Servers) -> str:
        origin = servers.origin()
        for hop in range(hops):
            origin.redirect(f"/hop{hop}", f"/hop{hop + 1}", status=301 if hop % 2 else 302)
        origin.serve(f"/hop{hops}", article_html())
        return origin.url("/hop0")

    return serve


def raw(behaviour: hostile.Behaviour, path: str = "/page") -> Callable[[Servers], str]:
    def serve(servers: Servers) -> str:
        return servers.raw(behaviour).url(path)

    return serve


# --- documents --------------------------------------------------------------------------------

FRENCH = "Les rivières creusent les vallées ; l'érosion et le dépôt façonnent leur lit, été comme hiver."


def damaged_utf8_page() -> bytes:
    """A French article declared UTF-8, with truncated, stray and overlong sequences in some lines."""
    junk = (b"\xff", b"\xc3", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80")
    lines = []
    for number in range(40):
        line = f"<p>{number}: {FRENCH}</p>".encode()
        if number % 4 == 0:
            line = line.replace(b"vall", b"vall" + junk[number // 4 % len(junk)], 1)
        lines.append(line)
    return (
        b"<html><head><title>Rivi\xc3\xa8res</title></head><body><article>"
        + b"".join(lines)
        + (b"</article></body></html>")
    )


def mixed_encodings_page() -> bytes:
    """Declared UTF-8; paragraphs in UTF-8, then windows-1252, then Shift_JIS: three encodings."""
    utf8 = "".join(f"<p>UTF-8 {n}: {FRENCH} 東京と大阪。</p>" for n in range(20)).encode()
    latin = "".join(f"<p>Latin {n}: café, naïve, Zürich.</p>" for n in range(5)).encode("cp1252")
    japanese = "".join(f"<p>SJIS {n}: 川と谷。</p>" for n in range(5)).encode("shift_jis")
    return (
        b"<html><head><title>Mixed</title></head><body><article>"
        + utf8
        + latin
        + japanese
        + (b"</article></body></html>")
    )


def control_characters_page() -> bytes:
    """An ordinary article with the control characters that turn up in pasted text."""
    paragraphs = "".join(
        f"<p>Paragraph {n}: rivers\x0bcarry sediment\x0cdownstream,\x01 cutting\x1b into rock.</p>"
        for n in range(20)
    )
    page = f"<html><head><title>Controls</title></head><body><article>{paragraphs}</article></body></html>"
    return page.encode()


def random_bytes_without_nuls() -> bytes:
    """200 KB of noise with no signature and no NUL byte: only its control bytes give it away."""
    noise = random.Random(20240601).randbytes(200_000)
    return noise.replace(b"\0", b"\x01")


def pdf_with_page_tree_loop() -> bytes:
    body = minimal_pdf(["one", "two", "three"])
    return body.replace(b"/Kids [3 0 R 5 0 R 7 0 R]", b"/Kids [2 0 R 2 0 R]")


@cache
def thousands_of_pages() -> bytes:
    return minimal_pdf([f"Words on page {n}" for n in range(1, 3001)])


@cache
def slow_pages() -> bytes:
    return pdf_form_bomb(20, 10, pages=1000)


@cache
def gzip_64mb() -> bytes:
    return gzip_bomb(64)


def gzip_inside_brotli() -> bytes:
    return brotli.compress(gzip_64mb())


ROBOTS_HEAD = b"User-agent: *\nDisallow: /private/\n"
ROBOTS_TAIL = b"\nUser-agent: *\nDisallow: /late/\n"


def huge_robots(path: str) -> Callable[[Servers], str]:
    behaviour = hostile.with_robots(
        hostile.huge_robots(10 * MB, ROBOTS_HEAD, b"Disallow: /*x*y*$\n", ROBOTS_TAIL),
        article_html().encode(),
    )
    return raw(behaviour, path)


# --------------------------------------------------------------------------------------------
# The table. Where the input is not an error by nature, the decision is written next to it.
# --------------------------------------------------------------------------------------------

STALLING = {"timeout": STALL_TIMEOUT, "ends_at_timeout": True}

CASES = [
    Case(
        "accepts-and-never-answers",
        raw(hostile.never_answers),
        "timeout",
        matches(r"took longer than the 1-second limit\. Raise MCP_WEB_TIMEOUT"),
        **STALLING,
    ),
    # A byte every 0.3 s beats any per-read timeout: only the deadline of the whole fetch ends it.
    Case(
        "headers-then-a-byte-every-0.3s",
        raw(hostile.trickles_after_headers(0.3)),
        "timeout",
        matches(r"1-second limit"),
        **STALLING,
    ),
    Case(
        "headers-then-a-byte-every-2s",
        raw(hostile.trickles_after_headers(2.0)),
        "timeout",
        matches(r"1-second limit"),
        **STALLING,
    ),
    Case(
        "endless-chunked-body",
        raw(hostile.endless_chunked),
        "too_large",
        contains("larger than the 4 MB limit", "MCP_WEB_MAX_RESPONSE_MB"),
    ),
    Case(
        "gzip-bomb-64MB",
        serving(gzip_64mb, **{"Content-Encoding": "gzip"}),
        "too_large",
        contains("4 MB limit"),
    ),
    Case(
        "brotli-bomb-1GB",
        serving(partial(brotli_bomb, 1024), **{"Content-Encoding": "br"}),
        "too_large",
        contains("4 MB limit"),
    ),
    Case(
        "gzip-inside-brotli-bomb",
        serving(gzip_inside_brotli, **{"Content-Encoding": "gzip, br"}),
        "too_large",
        contains("4 MB limit"),
    ),
    # 50 MB on one line: too_large, not a page cut at the cap. web_fetch returns whole documents
    # (the cut text would be cached and paginated as if it were the page), and the code tells the
    # caller exactly which setting would let it through.
    Case(
        "50MB-single-line-with-length",
        raw(hostile.single_line_page(50 * MB, chunked=False)),
        "too_large",
        contains("4 MB limit"),
    ),
    Case(
        "50MB-single-line-chunked",
        raw(hostile.single_line_page(50 * MB, chunked=True)),
        "too_large",
        contains("4 MB limit"),
    ),
    Case("redirect-loop", redirect_loop, "http_error", contains("too many redirects (more than 5)")),
    Case(
        "30-hop-redirect-chain",
        redirect_chain(30),
        "http_error",
        contains("too many redirects (more than 5)"),
    ),
    # 100,000 nested elements: a useful result. The nesting is flattened below libxml2's depth
    # limit, so the text inside is kept.
    Case(
        "100000-nested-elements",
        serving(lambda: deeply_nested_html(100_000).encode()),
        "ok",
        contains("deep inner text"),
        memory_mb=128,  # the 1.1 MB document is parsed, flattened and parsed again: ~40 MB
    ),
    # Damaged UTF-8: a useful result. The valid text decodes as UTF-8 and each bad sequence becomes
    # one U+FFFD; guessing another encoding would garble every accented letter instead.
    Case(
        "invalid-utf8",
        serving(damaged_utf8_page()),
        "ok",
        contains("Les rivières creusent", "l'érosion et le dépôt façonnent", "\ufffd", absent=("Ã",)),
    ),
    # Three encodings under one UTF-8 label: a useful result. The declared encoding is right for most
    # of the page and is kept; the other parts' non-ASCII letters become U+FFFD, their ASCII stays.
    Case(
        "mixed-encodings",
        serving(mixed_encodings_page()),
        "ok",
        contains("東京と大阪", "façonnent", "Latin 4: caf\ufffd, na\ufffdve", "SJIS 4: ", absent=("Ã",)),
    ),
    # Control characters in text: a useful result, without them (lxml cannot hold them).
    Case(
        "control-characters-in-text",
        serving(control_characters_page()),
        "ok",
        contains("rivers carry sediment downstream, cutting into rock", absent=("\x01", "\x0b", "\x1b")),
    ),
    # Binary labelled text/html: unsupported_content_type, whatever the label says. The bytes are
    # never decoded and shown as text.
    Case(
        "png-labelled-html",
        serving(png_bytes()),
        "unsupported_content_type",
        contains("image/png is not text"),
    ),
    Case(
        "gzip-file-labelled-html",
        serving(gzip_text(article_html())),
        "unsupported_content_type",
        contains("application/gzip is not text"),
    ),
    Case(
        "noise-without-nul-labelled-html",
        serving(random_bytes_without_nuls),
        "unsupported_content_type",
        contains("application/octet-stream is not text"),
    ),
    Case(
        "endless-header-block",
        raw(hostile.huge_header_block(None)),
        "http_error",
        contains("more than 100 KB of response headers"),
    ),
    Case(
        "1MB-header-block",
        raw(hostile.huge_header_block(MB)),
        "http_error",
        contains("more than 100 KB of response headers"),
    ),
    # A 10 MB robots.txt is read up to 500 KiB (RFC 9309 section 2.5): the rule at its start is
    # obeyed, the one past 500 KiB is never seen.
    Case(
        "robots-10MB-rule-at-start",
        huge_robots("/private/page"),
        "robots_disallowed",
        contains("Disallow: /private/"),
        settings={"respect_robots": True},
    ),
    Case(
        "robots-10MB-rule-past-500KiB",
        huge_robots("/late/page"),
        "ok",
        contains(ARTICLE_TITLE),
        settings={"respect_robots": True},
    ),
    Case(
        "robots-never-answers",
        raw(hostile.with_robots(hostile.robots_never_answers, article_html().encode())),
        "timeout",
        matches(r"/robots\.txt did not answer within 0\.\d+ seconds .*MCP_WEB_RESPECT_ROBOTS=false"),
        settings={"respect_robots": True},
        **STALLING,
    ),
    Case(
        "pdf-garbage-after-header",
        serving(b"%PDF-1.4\n" + b"garbage " * 1000, "application/pdf"),
        "extraction_failed",
        contains("could not be read"),
    ),
    Case(
        "pdf-truncated",
        serving(minimal_pdf(["a page of words"] * 3)[:400], "application/pdf"),
        "extraction_failed",
        contains("could not be read"),
    ),
    Case(
        "pdf-page-tree-loop",
        serving(pdf_with_page_tree_loop(), "application/pdf"),
        "extraction_failed",
        contains("list of pages cannot be read"),
    ),
    # 60 KB that inflate to 24 MB of text operators: pypdf's stream limit stops it at once.
    Case(
        "pdf-content-stream-bomb",
        serving(partial(pdf_content_bomb, 24), "application/pdf"),
        "extraction_failed",
        contains("No text could be read from the PDF"),
    ),
    # 3 KB that draw one 5,000-line form 5,000 times: without a deadline inside the page, pypdf
    # would keep a worker thread busy for many minutes after the call returned. The reading's
    # budget is half of MCP_WEB_TIMEOUT, a page is abandoned at 1.5 times that, and the
    # conversion's own deadline comes 1.5 s later: on a busy machine, half a second was not
    # always enough for the PDF's deadline to be the one that ends it.
    Case(
        "pdf-form-drawn-5000-times",
        serving(partial(pdf_form_bomb, 5000, 5000), "application/pdf"),
        "extraction_failed",
        matches(r"No text could be read from the PDF within 3 seconds"),
        timeout=6.0,
    ),
    # Thousands of pages: bounded text. The first MCP_WEB_PDF_MAX_PAGES (100) pages, and a note.
    Case(
        "pdf-3000-pages",
        serving(thousands_of_pages, "application/pdf"),
        "ok",
        contains(
            "Words on page 100",
            "[Note: Only pages 1-100 of 3000 were converted: the limit is 100 pages.]",
            absent=("Words on page 101",),
        ),
    ),
    # A thousand pages and a page limit above them: the time budget (half of MCP_WEB_TIMEOUT)
    # cuts the text instead, with a note. Each page draws a 20-line form ten times: quick to
    # open (0.1 s of CPU), 8 s of CPU to read to the end, so the budget cuts it on an idle
    # machine and a busy one alike (3,000 one-line pages, 0.2 s to open and 1.2 s in all, could
    # not be opened within the budget on a busy machine).
    Case(
        "pdf-1000-slow-pages-time-budget",
        serving(slow_pages, "application/pdf"),
        "ok",
        matches(
            r"\[Note: Only pages 1-\d+ of 1000 were converted: reading it took longer than 1 seconds\.\]"
        ),
        settings={"pdf_max_pages": 5000},
        timeout=2.0,
    ),
]


# --------------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------------


@asynccontextmanager
async def web_server(**settings: Any) -> AsyncIterator[tuple[Client, GuardBackend]]:
    backend = GuardBackend(permitted=("127.0.0.1",))
    async with Client(build_server(make_settings(**settings), network_backend=backend)) as client:
        yield client, backend


async def fetch_ok(client: Client, url: str) -> None:
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)[:600]
    assert ARTICLE_TITLE in text_of(result)


def assert_clear_error(result: CallToolResult, code: str) -> None:
    text = text_of(result)
    assert error_code(result) == code, text[:600]
    message = text.split(":", 1)[1].strip()
    # One plain sentence: no traceback, no exception repr, no second line.
    assert message.endswith("."), text
    assert "\n" not in text and len(text) < 400, text
    assert not re.search(r"Traceback|File \"|Error\(|Exception\(|<[a-z_.]+ object at", text), text


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_hostile_server(case: Case) -> None:
    settings: dict[str, Any] = {
        "respect_robots": False,
        "max_response_mb": CAP_MB,
        **case.settings,
        "timeout": case.timeout,
    }
    measured = Measured(case.id)
    try:
        await run_case(case, settings, measured)
    finally:
        # Shown with -s: the figures behind the bounds asserted.
        print(
            f"\n{measured.case:34} {measured.outcome:26} {measured.elapsed:6.2f} s"
            f"  ordinary {measured.control:.3f} s quiet, {measured.during:.3f} s during"
            f"  peak {measured.peak_mb:6.1f} MB ({measured.memory_source})"
            f"  idle cpu {measured.idle_cpu:.2f} s  fds {measured.fds_before}->{measured.fds_after}"
            f"  hostile connections {measured.connections}"
        )


@pytest.fixture(autouse=True, scope="module")
def conversion_process_singletons() -> None:
    """Start multiprocessing's fork server and resource tracker before any baseline is taken.

    They are process-wide and live as long as the test process (two descriptors between them);
    whichever case started them first would otherwise count them as descriptors it leaked.
    """
    pool = conversion_pool(make_settings())
    try:
        asyncio.run(pool.warm_up())
    finally:
        pool.close()


async def run_case(case: Case, settings: dict[str, Any], measured: Measured) -> None:
    gc.collect()
    measured.fds_before = open_fds()
    tasks_before = asyncio.all_tasks()

    with ExitStack() as stack:
        servers = Servers(stack)
        good = servers.origin()
        for path in ("/warm", "/during", "/after"):
            good.serve(path, article_html())
        url = case.serve(servers)

        async with web_server(**settings) as (client, backend):
            await fetch_ok(client, good.url("/warm"))  # connections and imports in place first
            quiet = itertools.count()
            measured.control = await slowest(
                lambda: fetch_ok(client, good.url(f"/during?quiet={next(quiet)}"))
            )

            with PeakMemory() as memory:
                call = asyncio.create_task(timed(lambda: client.call_tool("web_fetch", {"url": url})))
                # Leave the server serving: an ordinary call made while the hostile one is in
                # flight is answered (and is not held up by it).
                await asyncio.sleep(0.05)
                _, measured.during = await timed(lambda: fetch_ok(client, good.url("/during")))
                result, measured.elapsed = await call
            measured.peak_mb, measured.memory_source = memory.peak_mb, memory.source
            measured.outcome = "ok" if not result.is_error else error_code(result)

            # No work keeps running once the call has returned: an abandoned worker thread
            # would show up here as CPU time.
            cpu_before = time.process_time()
            await asyncio.sleep(IDLE_WINDOW)
            measured.idle_cpu = time.process_time() - cpu_before

            await fetch_ok(client, good.url("/after"))
            # The client let go of every connection the hostile servers accepted.
            for server in servers.hostile:
                measured.connections += server.accepted
                assert server.wait_until_idle(PATIENCE), (
                    f"{server.open_connections} connection(s) to the hostile server still open"
                )
        assert backend.violations == []

    # -- the outcome ------------------------------------------------------------------------
    if case.expect == "ok":
        assert not result.is_error, text_of(result)[:600]
    else:
        assert_clear_error(result, case.expect)
    if case.check is not None:
        case.check(result)

    # -- within the limits ------------------------------------------------------------------
    # A fetch may use its whole limit downloading and, for a document to convert, as much again
    # converting it (the conversion has a deadline of its own).
    limit = case.timeout * (2 if case.expect == "ok" or case.expect == "extraction_failed" else 1)
    late = allowance(MARGIN, measured.control, LATE_CONTROLS)
    assert measured.elapsed <= limit + late, (
        f"{measured.elapsed:.2f} s for a {case.timeout:g} s limit; ordinary calls {measured.control:.2f} s"
    )
    if case.ends_at_timeout:
        assert measured.elapsed >= case.timeout * 0.9, f"ended after {measured.elapsed:.2f} s"
    during_bound = max(allowance(DURING_S, measured.control, DURING_CONTROLS), measured.elapsed + late)
    assert measured.during < during_bound, (
        f"an ordinary call took {measured.during:.2f} s meanwhile, {measured.control:.2f} s when quiet"
    )

    # -- nothing leaked -----------------------------------------------------------------------
    assert measured.peak_mb < case.memory_mb, f"peak {measured.peak_mb:.1f} MB over {case.memory_mb} MB"
    assert measured.idle_cpu < IDLE_WINDOW * 0.5, f"{measured.idle_cpu:.2f} s of CPU after the call returned"
    assert await settle(lambda: open_fds() <= measured.fds_before), (
        f"file descriptors: {measured.fds_before} before, {open_fds()} after"
    )
    measured.fds_after = open_fds()
    assert await settle(lambda: asyncio.all_tasks() <= tasks_before), (
        f"tasks left running: {asyncio.all_tasks() - tasks_before}"
    )
