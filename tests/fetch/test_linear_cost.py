"""Converting a page costs CPU in proportion to the page, whatever its text.

Each test converts a page and one sixteen times its size, and bounds the CPU of the larger against
the smaller's, measured in the same test (CPU time: other processes on the machine do not inflate
it): linear cost gives 16-28x (the larger page misses the CPU's caches more, and more so while
other processes run: 12x for 8x the page in a loaded CI run); quadratic cost gives hundreds.
"""

from __future__ import annotations

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
