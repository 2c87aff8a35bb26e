"""What the loopback origin serves: real pages from the data sets, as-is, and one long document.

Pages are the data sets' HTML files, decompressed and served byte for byte as
``text/html; charset=utf-8`` (every file in both sets is UTF-8). A query string never changes the
answer, so ``/page?run=3`` is a URL neither server has cached but the same page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from suite import data
from suite.paths import DATASETS, ensure_repo_on_path

ensure_repo_on_path()
from tests.support.origin import Origin  # noqa: E402

CONTENT_TYPE = "text/html; charset=utf-8"
LONG_TARGET_CHARS = 120_000
"""Text in the long document: about 15 pages at our default max_length of 8000 characters."""


@dataclass(frozen=True)
class Page:
    path: str
    dataset: str
    page_id: str
    page_type: str | None
    body: bytes


def real_pages(zyte: int, wcxb_per_type: int) -> list[Page]:
    """A fixed choice of real pages: zyte ids evenly spaced, and wcxb_per_type of each wcxb-dev type."""
    chosen: list[Page] = []
    counts = {"zyte": zyte, "wcxb-dev": wcxb_per_type * 7}
    for dataset in DATASETS:
        if counts[dataset] <= 0:
            continue
        by_id = {row["id"]: row for row in data.items(dataset)}
        for page_id in data.subset(dataset, counts[dataset]):
            row = by_id[page_id]
            chosen.append(
                Page(
                    f"/{dataset}/{page_id}.html", dataset, page_id, row["type"], data.page_bytes(row["path"])
                )
            )
    return chosen


def all_real_pages() -> list[Page]:
    """Every page of both sets (for filling the cache in the HTTP bench), in a fixed order."""
    return [
        Page(f"/{dataset}/{row['id']}.html", dataset, row["id"], row["type"], data.page_bytes(row["path"]))
        for dataset in DATASETS
        for row in data.items(dataset)
    ]


def long_document(target_chars: int = LONG_TARGET_CHARS) -> bytes:
    """One long article made of the zyte ground-truth texts, inside a page with site chrome.

    Real prose (in id order) as <h2> + <p> sections until target_chars of text, with a menu,
    a sidebar of links and a footer around it, so extraction has real work to do.
    """
    truth = json.loads((DATASETS["zyte"] / "ground-truth.json").read_text(encoding="utf-8"))
    sections: list[str] = []
    size = 0
    for number, page_id in enumerate(sorted(truth), start=1):
        paragraphs = [line.strip() for line in truth[page_id]["articleBody"].splitlines() if line.strip()]
        sections.append(f"<h2>Part {number}</h2>")
        sections.extend(f"<p>{html.escape(text)}</p>" for text in paragraphs)
        size += sum(len(text) for text in paragraphs)
        if size >= target_chars:
            break
    menu = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(30))
    sidebar = "".join(f'<li><a href="/story/{i}">Related story number {i}</a></li>' for i in range(40))
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>A long read</title>"
        "<style>body{font-family:serif}</style><script>var analytics = 1;</script></head><body>"
        f"<header><nav><ul>{menu}</ul></nav></header>"
        "<main><article><h1>A long read</h1>" + "".join(sections) + "</article></main>"
        f"<aside><h3>Related</h3><ul>{sidebar}</ul></aside>"
        "<footer><p>Copyright. All rights reserved.</p><a href='/privacy'>Privacy</a></footer>"
        "</body></html>"
    )
    return page.encode("utf-8")


WARMUP_HTML = (
    "<!DOCTYPE html><html><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1>"
    + "<p>A short page fetched once before timing, so lazy imports are not timed.</p>" * 10
    + "</article></body></html>"
).encode()


@contextmanager
def serving(pages: list[Page], long_body: bytes | None = None) -> Iterator[Origin]:
    """An Origin on 127.0.0.1 serving the pages, /long.html and /warmup.html."""
    with Origin("127.0.0.1") as origin:
        for page in pages:
            origin.serve(page.path, page.body, content_type=CONTENT_TYPE)
        if long_body is not None:
            origin.serve("/long.html", long_body, content_type=CONTENT_TYPE)
        origin.serve("/warmup.html", WARMUP_HTML, content_type=CONTENT_TYPE)
        origin.serve("/robots.txt", b"User-agent: *\nAllow: /\n", content_type="text/plain")
        yield origin
