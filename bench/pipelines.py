"""Reference extractors for the scorer, run in our .venv: f(html, url) -> str.

Loaded by ``score_extraction.py bench/pipelines.py:NAME`` exactly like every other pipeline, so all
of them are timed and scored by the same code. Defined as in the data set README's reference
figures (shared/bench/extraction/README.md).
"""

from __future__ import annotations

from markdownify import ATX, markdownify
from readability import Document


def readability_markdownify(html: str, url: str) -> str:
    """Plain readability-lxml: its summary straight into markdownify (ATX headings)."""
    return markdownify(Document(html).summary(), heading_style=ATX)


def trafilatura_text(html: str, url: str) -> str:
    """trafilatura with comments off, plain text (its default output)."""
    import trafilatura  # optional: the `bench` extra; imported here so the other pipeline runs without it

    return trafilatura.extract(html, url=url, include_comments=False) or ""
