"""Check main-content extraction on the zyte article set: no empty outputs, rare fallbacks, speed.

Runs mcp_server_web.fetch.extract.extract_html (Markdown, main_content=True) on every page and,
in the same run and on the same pages, plain readability-lxml -> markdownify as a speed
reference. Quality (F1) is measured by the shared scorer, not here:

    .venv/bin/python ../shared/bench/score_extraction.py mcp_server_web.fetch.extract:main_content

Usage (from the repository root):
    .venv/bin/python bench/zyte_check.py [DATA_DIR]

DATA_DIR defaults to ../shared/bench/extraction/zyte (relative to the repository root) and must
hold pages/*.html.gz. Exits 1 if any page comes out empty.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

from markdownify import ATX, markdownify
from readability import Document

from mcp_server_web.fetch.extract import extract_html

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "extraction" / "zyte"


def plain(html: str) -> str:
    """The reference pipeline: readability's summary straight into markdownify."""
    return markdownify(Document(html).summary(), heading_style=ATX)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "data", nargs="?", type=Path, default=DEFAULT_DATA, help="folder with pages/*.html.gz"
    )
    args = parser.parse_args(argv)

    paths = sorted((args.data / "pages").glob("*.html.gz"))
    if not paths:
        print(f"no pages/*.html.gz under {args.data}", file=sys.stderr)
        return 2

    ours: list[float] = []
    reference: list[float] = []
    empty: list[str] = []
    fallbacks: list[str] = []
    # One untimed call first, so imports and caches are not charged to the first page.
    warm = gzip.decompress(paths[0].read_bytes()).decode("utf-8", errors="replace")
    extract_html(warm, "https://example.com/", output_format="markdown", main_content=True)
    plain(warm)

    for path in paths:
        page_id = path.name.removesuffix(".html.gz")
        html = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        url = f"https://example.com/{page_id}"

        started = time.perf_counter()
        result = extract_html(html, url, output_format="markdown", main_content=True)
        ours.append(time.perf_counter() - started)

        started = time.perf_counter()
        plain(html)
        reference.append(time.perf_counter() - started)

        if not result.text.strip():
            empty.append(page_id)
        if result.used_fallback:
            fallbacks.append(page_id)

    ours_median = statistics.median(ours)
    reference_median = statistics.median(reference)
    print(f"pages                 {len(paths)}")
    print(f"empty outputs         {len(empty)}{'  ' + ', '.join(empty) if empty else ''}")
    print(f"fell back             {len(fallbacks)}{'  ' + ', '.join(fallbacks) if fallbacks else ''}")
    print(
        f"extract_html          median {ours_median * 1000:.1f} ms"
        f"   p90 {percentile(ours, 0.9) * 1000:.1f} ms   max {max(ours) * 1000:.1f} ms"
    )
    print(
        f"readability+markdownify median {reference_median * 1000:.1f} ms"
        f"   (ours / plain = {ours_median / reference_median:.2f}x)"
    )
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
