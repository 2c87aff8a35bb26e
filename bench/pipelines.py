"""Reference extractors for the scorer, run in our .venv: f(html, url) -> str.

Loaded by ``score_extraction.py bench/pipelines.py:NAME`` exactly like every other pipeline, so all
of them are timed and scored by the same code. Defined as in the data set README's reference
figures (shared/bench/extraction/README.md).
"""

from __future__ import annotations

import lxml.html
from markdownify import ATX, markdownify
from readability import Document

from mcp_server_web.fetch.doc.html_tree import parse_html


def readability_markdownify(html: str, url: str) -> str:
    """Plain readability-lxml: its summary straight into markdownify (ATX headings)."""
    return markdownify(Document(html).summary(), heading_style=ATX)


def trafilatura_text(html: str, url: str) -> str:
    """trafilatura with comments off, plain text (its default output)."""
    import trafilatura  # optional: the `bench` extra; imported here so the other pipeline runs without it

    return trafilatura.extract(html, url=url, include_comments=False) or ""


# What building the tree a browser builds costs (issue 11): the whole page's text from the tree
# libxml2 builds alone, and from ours (turbohtml's WHATWG tree construction, read back by
# libxml2, with parse_html's bounds). Their F1 is that of the whole page, text and scripts.


def libxml2_page_text(html: str, url: str) -> str:
    """The body's text, from libxml2's own (HTML4-era) tree building."""
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, huge_tree=True)
    root = lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser=parser)
    body = root.find("body")
    return body.text_content() if body is not None else ""


def browser_tree_page_text(html: str, url: str) -> str:
    """The body's text, from the tree a browser builds (mcp_server_web's parse_html)."""
    root = parse_html(html)
    body = root.find("body") if root is not None else None
    return body.text_content() if body is not None else ""
