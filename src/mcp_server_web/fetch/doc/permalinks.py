"""Permalink anchors in headings: the links a heading carries to itself.

Documentation engines end (or start) each heading with a link to the heading's own address:
Sphinx's and MkDocs' ``¶`` (``<a class="headerlink" href="#id">``), GitHub's link icon
(``<a class="anchor" href="#id"><svg>``), Docusaurus' zero-width "hash-link", a ``#``. Left in,
every heading reads "Settings¶" or "[#](…#settings) Settings", in the text, in the outline and in
the heading paths of passages. Such a link goes: with its text when that is only a symbol, and
keeping its words when the heading's whole text is the link ("<h2 id=x><a href=#x>Install</a>").
A heading that links elsewhere, into the page included, keeps its link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import islice

import lxml.html

_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "dt"})
"""Headings, and the terms of definition lists, where Sphinx puts each API entry's headerlink."""
_GITHUB_PREFIX = "user-content-"
"""GitHub prefixes the ids in rendered Markdown; its script maps #install to user-content-install."""
_WORD = re.compile(r"[^\W_]")
_NEAR = 3
"""A permalink sits in its heading or a few levels in, and a heading's id is on it, on the
section right around it or on an anchor at its start: looking no further keeps the cost linear."""
_INSIDE = 20
"""The elements inside a heading looked at for its id."""


def drop_permalinks(links: Iterable[tuple[lxml.html.HtmlElement, str]]) -> None:
    """Drop the permalink anchors among ``links``: (an <a>, the fragment its href points at in
    this page, without the "#"), in place. Call before the tree is cut down to its main content,
    so that the sections around a heading still carry their ids."""
    for link, fragment in links:
        heading = _heading_of(link)
        if heading is None or not _points_at(fragment, heading, link):
            continue
        if _WORD.search(_collapse(link.text_content())):
            link.drop_tag()  # the heading's own words, no longer a link
        else:
            link.drop_tree()  # a ¶, a #, an icon: keeps the tail, the heading's text after it


def _heading_of(link: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The heading ``link`` is in, or the heading right before it when the link stands alone
    beside one (GitHub's newer markup: <div><h2>Usage</h2><a class="anchor" href="#usage">)."""
    for ancestor in islice(link.iterancestors(), _NEAR):
        if ancestor.tag in _HEADING_TAGS:
            return ancestor
    previous = link.getprevious()
    if (
        previous is not None
        and previous.tag in _HEADING_TAGS
        and not (previous.tail or "").strip()
        and not _collapse(link.text_content())
    ):
        return previous
    return None


def _points_at(fragment: str, heading: lxml.html.HtmlElement, link: lxml.html.HtmlElement) -> bool:
    """Whether ``fragment`` names the heading: "#" alone (the top), its id, the id of an element
    around it (Sphinx's <section id>) or of an anchor inside it (<a id=user-content-x>)."""
    if not fragment:
        return True
    wanted = {fragment, _GITHUB_PREFIX + fragment}
    near = (heading, *islice(heading.iterancestors(), _NEAR), *islice(heading.iterdescendants(), _INSIDE))
    for element in near:
        if element.get("id") in wanted or element.get("name") in wanted:
            return True
    # Else by its slug, the heading's id being set by a script (GitHub, "#" anchors).
    words = _collapse(heading.text_content())
    if heading in islice(link.iterancestors(), _NEAR):
        words = words.replace(_collapse(link.text_content()), "", 1)
    return _slug(fragment) == _slug(words)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _slug(text: str) -> str:
    return re.sub(r"[^\w-]+", "", text.strip().casefold().replace(" ", "-")).strip("-")
