"""Converting a page costs CPU and memory in proportion to the page, whatever its text.

Each time test converts a page and one sixteen times its size, and bounds the CPU of the larger
against the smaller's, measured in the same test (CPU time: other processes on the machine do not
inflate it): linear cost gives 16-28x (the larger page misses the CPU's caches more, and more so
while other processes run: 12x for 8x the page in a loaded CI run); quadratic cost gives hundreds.
Each memory test converts a long page in a child process of its own, after a small one (as a warm
worker has), and bounds the child's peak memory over what it held before, as a multiple of the page.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from mcp_server_web.fetch.doc.extract import main_content
from tests.support.long_pages import long_article, short_lines_article
from tests.support.timing import least_cpu_time

URL = "https://example.com/long"
SCALE = 16
GROWTH_ALLOWED = 2.5 * SCALE


def test_short_lines_cost_linear_time() -> None:
    """Thousands of distinct two-word lines between two paragraphs. Lines too short to be placed
    in an extractor's output by their trigrams were each looked for by scanning the output from
    the paragraph before them: 1,000 -> 8,000 lines cost 35x the CPU before (0.08 -> 2.9 s),
    9x after (0.04 -> 0.40 s); 1,000 -> 16,000 lines cost 21x after (0.045 -> 0.93 s)."""
    small, large = short_lines_article(1000), short_lines_article(1000 * SCALE)
    assert "item7 note" in main_content(small, URL)
    control = least_cpu_time(lambda: main_content(small, URL))
    measured = least_cpu_time(lambda: main_content(large, URL), runs=2)
    growth = measured / control
    assert growth <= GROWTH_ALLOWED, (
        f"1,000 lines {control:.3f} s CPU, {1000 * SCALE:,} lines {measured:.3f} s: {growth:.0f}x"
    )


def test_repeated_text_costs_linear_time() -> None:
    """Paragraphs drawn from a small vocabulary: every trigram recurs all over the extractors'
    outputs. Each was compared with up to 50 places: 500 -> 8,000 paragraphs cost 49x the CPU
    (0.16 -> 8.0 s). At most 8 places now (MAX_GRAM_REPEATS; the F1 on zyte and wcxb-dev did not
    move), and 13x (0.14 -> 1.76 s)."""
    small, large = long_article(500, "repeated"), long_article(500 * SCALE, "repeated")
    control = least_cpu_time(lambda: main_content(small, URL))
    measured = least_cpu_time(lambda: main_content(large, URL), runs=1)
    growth = measured / control
    assert growth <= GROWTH_ALLOWED, (
        f"500 paragraphs {control:.3f} s CPU, {500 * SCALE:,} paragraphs {measured:.3f} s: {growth:.0f}x"
    )


MEMORY_PER_PAGE_BYTE = 20
"""Peak memory of a conversion over the worker's, at most this many times the page (issue 26),
whatever its text: text of 3-letter words from a vocabulary of 20 has twice the words a byte of
varied text has, and was 32x (57x before the placing of outputs and the block features were
redone in arrays of 32-bit numbers; 18x now)."""


def _status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/self/status")


def _peak_over_start(html: str, results: multiprocessing.Queue[int]) -> None:
    main_content(long_article(20, "varied"), URL)
    before = _status_bytes("VmRSS")
    assert main_content(html, URL)
    results.put(_status_bytes("VmHWM") - before)


def _conversion_peak(html: str) -> int:
    """The peak memory converting ``html`` adds to a warm worker's, in bytes (in a forked child)."""
    context = multiprocessing.get_context("fork")
    results: multiprocessing.Queue[int] = context.Queue()
    child = context.Process(target=_peak_over_start, args=(html, results))
    child.start()
    try:
        return results.get(timeout=120)
    finally:
        child.join()


def test_a_long_page_converts_within_twenty_times_its_size() -> None:
    """16,000 paragraphs of varied text, 6.5 MB: 12x its size (36-40x before: the placing of the
    extractors' outputs held every trigram in a dict, the block model evaluated every block's 150
    trees at once, and trafilatura's copy of the tree was made on every page)."""
    html = long_article(16_000, "varied")
    size = len(html.encode())
    peak = _conversion_peak(html)
    assert peak <= MEMORY_PER_PAGE_BYTE * size, f"{peak / size:.1f}x the page's {size:,} bytes"


def test_a_long_page_of_repeated_text_converts_within_twenty_times_its_size() -> None:
    """8,000 paragraphs of 3-letter words, 1.9 MB: 18x."""
    html = long_article(8_000, "repeated")
    size = len(html.encode())
    peak = _conversion_peak(html)
    assert peak <= MEMORY_PER_PAGE_BYTE * size, f"{peak / size:.1f}x the page's {size:,} bytes"
