"""What converting a page costs as the page grows: ours against readability + trafilatura.

Usage (from the repository root):

    .venv/bin/python bench/scaling.py            # about 3 min; rewrites the <!-- bench:scaling -->
                                                 # table of bench/README.md
    .venv/bin/python bench/scaling.py --quick    # 500 and 2,000 paragraphs only; writes nothing

Generated articles (tests/support/long_pages.py) of 500, 2,000, 8,000 and 24,000 paragraphs, of
varied text (a vocabulary of 4,000 words) and of repeated text (20 common words, every paragraph
ending in the same sentence). Each page is converted once in a fresh child process (forked, so
the conversion stack is imported once): our main-content conversion (extract_html, Markdown, as
web_fetch runs it), then, on the same page in another child, readability-lxml's summary and
trafilatura's extract one after the other. Per page: CPU seconds of each (the child's own, which
other load does not inflate), their ratio, and our conversion's peak memory over the child's
memory before it (after a small page, as a warm worker has converted), as a multiple of the
page's bytes (VmHWM - VmRSS before). The 24,000-paragraph
page of varied text is 9.8 MB: it must convert within MCP_WEB_TIMEOUT (30 s by default).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import re
import resource
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from tests.support.long_pages import KINDS, long_article  # noqa: E402

from mcp_server_web.config import Settings  # noqa: E402
from mcp_server_web.fetch.doc.extract import extract_html  # noqa: E402  (imported once, before the forks)

README = BENCH / "README.md"
SIZES = (500, 2000, 8000, 24000)
QUICK_SIZES = (500, 2000)


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _ours(html: str) -> tuple[float, float, int]:
    # A small page first, as a warm worker has converted: what the first conversion sets up once
    # (the extractors' caches) is not this page's cost.
    extract_html(
        long_article(20, "varied"), "https://example.com/warm", output_format="markdown", main_content=True
    )
    before = _status_kib("VmRSS")
    started, wall = _cpu(), time.monotonic()
    text = extract_html(html, "https://example.com/long", output_format="markdown", main_content=True).text
    cpu, wall = _cpu() - started, time.monotonic() - wall
    peak = _status_kib("VmHWM")
    return cpu, wall, (peak - before) * 1024 if text else -1


def _theirs(html: str) -> tuple[float, float, int]:
    import trafilatura
    from readability import Document

    from mcp_server_web.fetch.doc import trafilatura_fast

    # This process loaded our extractor, which puts trafilatura_fast's replacements in place:
    # the comparison is with trafilatura as released.
    with trafilatura_fast.originals():
        started, wall = _cpu(), time.monotonic()
        Document(html).summary()
        trafilatura.extract(html)
        return _cpu() - started, time.monotonic() - wall, 0


def _in_child(work: str, html: str) -> tuple[float, float, int]:
    context = multiprocessing.get_context("fork")
    with context.Pool(1, maxtasksperchild=1) as pool:
        result: tuple[float, float, int] = pool.apply(_ours if work == "ours" else _theirs, (html,))
    return result


def measure(sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    rows = []
    for kind in KINDS:
        for paragraphs in sizes:
            html = long_article(paragraphs, kind)
            size = len(html.encode())
            ours_cpu, ours_wall, grew = _in_child("ours", html)
            theirs_cpu, _wall, _ = _in_child("theirs", html)
            row = {
                "kind": kind,
                "paragraphs": paragraphs,
                "bytes": size,
                "ours_cpu": round(ours_cpu, 3),
                "ours_wall": round(ours_wall, 3),
                "theirs_cpu": round(theirs_cpu, 3),
                "ratio": round(ours_cpu / theirs_cpu, 2),
                "memory_x_body": round(grew / size, 1),
            }
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def table(rows: list[dict[str, Any]], timeout: float) -> str:
    lines = [
        "| text | paragraphs | page | ours, CPU s | readability + trafilatura, CPU s | ratio "
        "| ours per paragraph, ms | peak memory / page |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['kind']} | {row['paragraphs']:,} | {row['bytes'] / 1e6:.1f} MB "
            f"| {row['ours_cpu']:.2f} | {row['theirs_cpu']:.2f} | {row['ratio']:.2f}x "
            f"| {1000 * row['ours_cpu'] / row['paragraphs']:.2f} "
            f"| {row['memory_x_body']:.0f}x |"
        )
    big = [r for r in rows if r["paragraphs"] == max(SIZES) and r["kind"] == "varied"]
    if big:
        verdict = "converts" if big[0]["ours_wall"] < timeout else "does NOT convert"
        lines += [
            "",
            f"The {big[0]['bytes'] / 1e6:.1f} MB page ({max(SIZES):,} paragraphs of varied text) {verdict} "
            f"within MCP_WEB_TIMEOUT ({timeout:.0f} s): {big[0]['ours_wall']:.1f} s of wall clock here.",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="two sizes; writes no committed file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    rows = measure(QUICK_SIZES if args.quick else SIZES)
    body = table(rows, Settings().timeout)
    print(body)
    if args.quick:
        return
    (BENCH / "results" / "scaling.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(r"(<!-- bench:scaling -->\n)(.*?)(<!-- /bench:scaling -->)", re.S)
    if pattern.search(text):
        README.write_text(
            pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(3), text), encoding="utf-8"
        )
    else:
        print("bench/README.md has no <!-- bench:scaling --> markers: table not written", file=sys.stderr)


if __name__ == "__main__":
    main()
