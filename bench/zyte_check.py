"""Check main-content extraction on the benchmark sets: no empty outputs, and speed.

Runs mcp_server_web.fetch.doc.extract.extract_html (Markdown, main_content=True) on every page and,
in the same run and on the same pages, plain readability-lxml -> markdownify as a speed
reference (the two alternate page by page, so that load on the machine hits both alike).
Reports empty outputs, how many pages were taken as a main region rather than an article
(used_fallback), and the time per page. Quality (F1) is measured by the shared scorer, not here:

    .venv/bin/python ../shared/bench/score_extraction.py mcp_server_web.fetch.doc.extract:main_content
    .venv/bin/python ../shared/bench/score_extraction.py mcp_server_web.fetch.doc.extract:main_content \\
        --data ../shared/bench/extraction/wcxb-dev

Usage (from the repository root):
    .venv/bin/python bench/zyte_check.py [DATA_DIR ...] [--wcxb]

DATA_DIR defaults to ../shared/bench/extraction/zyte (relative to the repository root); --wcxb
adds ../shared/bench/extraction/wcxb-dev. Each folder holds pages/*.html.gz or html/*.html.gz.
Exits 1 if a page of the first folder comes out empty, if the median time exceeds MAX_RATIO
times plain readability's, or if a page takes more than MAX_SECONDS.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from markdownify import ATX, markdownify
from readability import Document

from mcp_server_web.fetch.doc.extract import extract_html

REPO = Path(__file__).resolve().parent.parent
EXTRACTION = REPO.parent / "shared" / "bench" / "extraction"
DEFAULT_DATA = EXTRACTION / "zyte"
WCXB_DATA = EXTRACTION / "wcxb-dev"
MAX_RATIO = 2.0
"""The median time per page may be at most this many times plain readability's."""
MAX_SECONDS = 1.0
"""No page may take longer than this."""


def plain(html: str) -> str:
    """The reference pipeline: readability's summary straight into markdownify."""
    return markdownify(Document(html).summary(), heading_style=ATX)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


@dataclass
class SetReport:
    name: str
    ours: list[float] = field(default_factory=list)
    reference: list[float] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    regions: int = 0

    @property
    def ratio(self) -> float:
        return statistics.median(self.ours) / statistics.median(self.reference)

    def print(self) -> None:
        pages = len(self.ours)
        empty = f"{len(self.empty)}{'  ' + ', '.join(self.empty) if self.empty else ''}"
        print(f"{self.name}")
        print(f"  pages                   {pages}")
        print(f"  empty outputs           {empty}")
        print(f"  taken as a main region  {self.regions} ({self.regions / pages:.0%})")
        print(
            f"  extract_html            median {statistics.median(self.ours) * 1000:.1f} ms"
            f"   p90 {percentile(self.ours, 0.9) * 1000:.1f} ms   max {max(self.ours) * 1000:.1f} ms"
        )
        print(
            f"  readability+markdownify median {statistics.median(self.reference) * 1000:.1f} ms"
            f"   max {max(self.reference) * 1000:.1f} ms   (ours / plain = {self.ratio:.2f}x)"
        )


def page_paths(data: Path) -> list[Path]:
    return sorted((data / "pages").glob("*.html.gz")) or sorted((data / "html").glob("*.html.gz"))


def check(data: Path) -> SetReport:
    paths = page_paths(data)
    report = SetReport(data.name)
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
        report.ours.append(time.perf_counter() - started)

        started = time.perf_counter()
        plain(html)
        report.reference.append(time.perf_counter() - started)

        if not result.text.strip():
            report.empty.append(page_id)
        report.regions += result.used_fallback
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", nargs="*", type=Path, help="folders with pages/*.html.gz or html/*.html.gz")
    parser.add_argument("--wcxb", action="store_true", help=f"also check {WCXB_DATA}")
    args = parser.parse_args(argv)
    folders = list(args.data) or [DEFAULT_DATA]
    if args.wcxb:
        folders.append(WCXB_DATA)
    for folder in folders:
        if not page_paths(folder):
            print(f"no pages/*.html.gz or html/*.html.gz under {folder}", file=sys.stderr)
            return 2

    failed = False
    for position, folder in enumerate(folders):
        report = check(folder)
        report.print()
        if position == 0 and report.empty:
            failed = True
        if report.ratio > MAX_RATIO or max(report.ours) > MAX_SECONDS:
            print(f"  too slow: over {MAX_RATIO}x plain readability, or a page over {MAX_SECONDS} s")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
