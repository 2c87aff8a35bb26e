"""Headings whose section the main content left empty.

Cutting a page down to its main content can take a section's body and leave its heading: a
product page keeps "## Customer reviews" with no review under it. A heading's section is
everything after it up to the next heading of its level or higher; a heading whose section held
text or an image on the page and holds none once the page is cut down goes too. Headings whose
section was empty on the page already (a listing of cards that are only titles) stay.
"""

from __future__ import annotations

from collections.abc import Iterator

import lxml.html
from lxml import etree

_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CONTENT_TAGS = frozenset({"img", "picture", "video", "audio", "iframe", "object", "embed", "svg", "canvas"})


def headings_with_content(body: lxml.html.HtmlElement) -> set[lxml.html.HtmlElement]:
    """The headings in ``body`` whose section holds text or an image."""
    full: set[lxml.html.HtmlElement] = set()
    # Walking backwards, seen[level] says whether content came after this point and before the
    # next heading of that level or higher.
    seen = [False] * 7
    for heading, level in reversed(list(_events(body))):
        if heading is None:
            seen = [True] * 7
            continue
        if seen[level]:
            full.add(heading)
        for deeper in range(level, 7):  # a heading ends the sections of its level and deeper
            seen[deeper] = False
    return full


def drop_emptied_headings(body: lxml.html.HtmlElement, had_content: set[lxml.html.HtmlElement]) -> None:
    """Drop the headings of ``had_content`` whose section is now empty, in place; not when that
    would leave no heading and no text at all."""
    now = headings_with_content(body)
    emptied = [heading for heading in had_content if heading not in now and _in_tree(heading, body)]
    if not emptied or (not now and not _has_content(body)):
        return
    for heading in emptied:
        heading.drop_tree()  # its tail, were there one, would have been content


def _events(body: lxml.html.HtmlElement) -> Iterator[tuple[lxml.html.HtmlElement | None, int]]:
    """In document order: (a heading, its level) for each heading, (None, 0) for content."""
    inside = 0  # depth within a heading, whose own text is not its section's content
    for event, element in etree.iterwalk(body, events=("start", "end")):
        tag = element.tag
        if not isinstance(tag, str):
            if event == "end" and not inside and (element.tail or "").strip():
                yield None, 0
            continue
        level = _LEVELS.get(tag)
        if event == "start":
            if level is not None and not inside:
                yield element, level
            if level is not None or inside:
                inside += 1
                continue
            if (element.text or "").strip() or tag in _CONTENT_TAGS:
                yield None, 0
        else:
            if level is not None or inside:
                inside -= 1
            if not inside and element is not body and (element.tail or "").strip():
                yield None, 0


def _has_content(body: lxml.html.HtmlElement) -> bool:
    return any(heading is None for heading, _ in _events(body))


def _in_tree(element: lxml.html.HtmlElement, body: lxml.html.HtmlElement) -> bool:
    return element is body or body in element.iterancestors()
