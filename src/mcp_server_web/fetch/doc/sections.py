"""Headings whose section the main content left empty.

Cutting a page down to its main content can take a section's body and leave its heading: a
product page keeps "## Customer reviews" with no review under it. A heading's section is
everything after it up to the next heading of its level or higher; a heading whose section held
text on the page (MIN_DROPPED_WORDS) and holds none once the page is cut down goes too. Headings
whose section was empty on the page already, and card titles (a heading that is a link), stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import lxml.html
from lxml import etree

_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_DROPPABLE = ("h2", "h3", "h4", "h5", "h6")
_CONTENT_TAGS = frozenset({"img", "picture", "video", "audio", "iframe", "object", "embed", "svg", "canvas"})
_WORD = re.compile(r"[^\W_]+")
MIN_DROPPED_WORDS = 20
"""A heading goes only when its section held at least this many words on the page: a card's
title whose picture or one-line teaser was left out is still the card's content; a section of
reviews, questions or comments that was left out is not."""


def section_words(body: lxml.html.HtmlElement) -> dict[lxml.html.HtmlElement, int]:
    """The words (an image counting as one) in the section of each heading in ``body``; a heading
    that is a link (a card's title) counts as content of its own, and of the sections around it."""
    if next(body.iter(*_DROPPABLE), None) is None:
        return {}  # only <h1>s, which always stay: no walk
    # In one pass forwards, without keeping the page's events: total is the words so far; unended,
    # the headings whose section has not ended yet (at the next heading of their level or higher),
    # with the total where it began, their levels rising.
    total = 0
    unended: list[tuple[int, int]] = []  # (level, position in headings)
    headings: list[lxml.html.HtmlElement] = []
    starts: list[int] = []
    amounts: list[int] = []
    for heading, level, amount in _events(body):
        if heading is None:
            total += amount
            continue
        while unended and unended[-1][0] >= level:  # a heading ends the sections of its level and deeper
            position = unended.pop()[1]
            amounts[position] = total - starts[position]
        unended.append((level, len(headings)))
        headings.append(heading)
        starts.append(total)
        amounts.append(0)
    for _, position in unended:
        amounts[position] = total - starts[position]
    # Last heading first, as the callers have always seen them.
    return dict(zip(reversed(headings), reversed(amounts), strict=True))


def drop_emptied_headings(body: lxml.html.HtmlElement, before: dict[lxml.html.HtmlElement, int]) -> None:
    """Drop the headings whose section held at least MIN_DROPPED_WORDS words on the page
    (``before``, from section_words) and holds none now, in place; not when that would leave no
    text at all, and never an <h1>: the page's title, which a product page may set after, not
    above, the description it keeps."""
    now = section_words(body)
    emptied = [
        heading
        for heading, words in now.items()
        if not words and heading.tag != "h1" and before.get(heading, 0) >= MIN_DROPPED_WORDS
    ]
    if not emptied or not any(heading is None for heading, _, _ in _events(body)):
        return
    for heading in emptied:
        heading.drop_tree()  # its tail, were there one, would have been content


def _events(body: lxml.html.HtmlElement) -> Iterator[tuple[lxml.html.HtmlElement | None, int, int]]:
    """In document order: (a heading, its level, 0) for each heading, (None, 0, words) for content."""
    inside = 0  # depth within a heading, whose own text is not its section's content
    link = 0  # depth within a link
    for event, element in etree.iterwalk(body, events=("start", "end")):
        tag = element.tag
        if not isinstance(tag, str):
            if event == "end" and not inside:
                tail = element.tail
                if tail and not tail.isspace():
                    yield None, 0, len(_WORD.findall(tail))
            continue
        level = _LEVELS.get(tag)
        if event == "start":
            link += tag == "a"
            if level is not None and not inside:
                yield element, level, 0
                if link or element.find(".//a[@href]") is not None:
                    yield None, 0, 1  # a card's title: content itself
            if level is not None or inside:
                inside += 1
                continue
            text = element.text
            if (text and not text.isspace()) or tag in _CONTENT_TAGS:
                yield None, 0, max(len(_WORD.findall(text or "")), 1)
        else:
            link -= tag == "a"
            if level is not None or inside:
                inside -= 1
            if not inside and element is not body:
                tail = element.tail
                if tail and not tail.isspace():
                    yield None, 0, max(len(_WORD.findall(tail)), 1)
