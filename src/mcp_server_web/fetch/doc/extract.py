"""HTML -> the page's main content -> Markdown, plain text or cleaned HTML.

The page is parsed once with lxml, made safe (depth-limited) and cleaned (html_tree.py). For the
main content, the page-level navigation, header, footer and sidebars are taken out first, then
readability-lxml reads it (on our cleaned tree) and its output is aligned with the page's blocks of
text (blocks.py, coverage.py). A second vote comes from the block model (block_model.py, learned
from WCXB's development split) and, only where it and readability disagree on an article or part
ways elsewhere (see MODEL_AGREEMENT), from trafilatura (on the page as parsed). selection.py then
decides block by block what the main content is, from the two votes and from the page itself (its
<main>, class names, microdata, repeated cards).
The tree is then cut down to the kept blocks, so headings, lists, tables, code blocks, links and
images come out as they are on the page, and rendered (render.py).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace

import lxml.html
from lxml import etree
from readability.readability import Unparseable

from mcp_server_web.fetch.doc import trafilatura_fast
from mcp_server_web.fetch.doc.block_features import type_inputs
from mcp_server_web.fetch.doc.block_model import model_votes
from mcp_server_web.fetch.doc.blocks import Block, Segmentation, prune, segment
from mcp_server_web.fetch.doc.coverage import coverage
from mcp_server_web.fetch.doc.embedded import PageScripts, page_scripts
from mcp_server_web.fetch.doc.html_tree import (
    HIDDEN,
    body_of,
    clean_tree,
    drop,
    in_tree,
    is_data_table,
    page_title,
    parse_html,
    text_chars,
)
from mcp_server_web.fetch.doc.metadata import page_metadata
from mcp_server_web.fetch.doc.posts import Post, find_posts, write_bylines
from mcp_server_web.fetch.doc.readability_fast import FastDocument
from mcp_server_web.fetch.doc.render import render_element
from mcp_server_web.fetch.doc.sections import drop_emptied_headings, section_words
from mcp_server_web.fetch.doc.selection import (
    VOTE,
    Selection,
    declared_types,
    kinds_of,
    select,
    unvoted_structure,
    vote_agreement,
)
from mcp_server_web.fetch.types import NO_METADATA, OutputFormat, PageMetadata

logger = logging.getLogger(__name__)

MAIN_CONTENT_MAX_ELEMENTS = 25_000
"""Main-content extraction holds several copies of the tree (ours, readability's, trafilatura's)
and costs about 7 KB and 50 us per element: a page with more elements than this (nearly three times the
largest of the 724 benchmark pages, after clean-up) is converted whole, with a warning, so that
one huge page cannot take hundreds of megabytes and seconds of CPU."""

RAW_COPY_MAX_ELEMENTS = 10_000
"""trafilatura reads a copy of the page as parsed (Prepared.raw), made before the clean-up, on every
page, though it runs on few. On a page of more elements than this (more than all but 3 of the
1,502 benchmark pages) none is made, and, if it runs, it reads a copy of the cleaned tree: a long
page's peak memory is then a copy of its tree smaller (9.8 MB of text: 203 -> 176 MB)."""

MODEL_AGREEMENT = 0.8
"""On a page that declares itself an article (schema.org or OpenGraph), trafilatura reads the page
only when the block model's vote and readability's agree on less than this share of the words
either keeps (vote_agreement); on most articles they agree, and the model's vote is then as good as
trafilatura's. On other pages see UNDECLARED_AGREEMENT. On any page it also reads it when the page
holds a block of code or a cell of a data table that neither vote keeps
(selection.unvoted_structure): the model, trained on words, does not learn to keep a table of
figures or a one-line command."""

UNDECLARED_AGREEMENT = 0.2
"""On a page that declares neither an article nor a product, trafilatura reads the page only when
the two votes agree on less than this share of their words; on a product page, never (but for
unvoted structure; both as on an article below SHORT_PAGE_CHARS). Cross-validated by site on
WCXB's development pages, trafilatura's vote there was a coin toss: of the 116 pages it no longer
reads, 38 scored better without it and 22 worse (F1 0.8081 -> 0.8087, products 0.6674 -> 0.6707;
it reads 221 of the 543 pages instead of 337). From 0 to 40 % the figures barely move; at 0 a
news page of zyte that declares no type loses. The median page no longer runs it: a fifth of the
median time."""

SHORT_PAGE_CHARS = 2_000
"""A page of less visible text than this is read as an article is (MODEL_AGREEMENT), whatever it
declares: there trafilatura costs little, and one block the votes part on is much of the page (a
line above a deeply nested one was lost without it)."""


SLIVER_SHARE = 0.2
SLIVER_MIN_CHARS = 1000
"""When the main content is less than SLIVER_SHARE of the visible text of a page holding at least
SLIVER_MIN_CHARS of it, and the extractors disagreed (region mode, or one of them kept twice as
much) or most of the page's text outside links was set aside with its navigation, header, footer
and sidebars, the result says so. (Counting all text set aside there, links included, warned on 7
of the 181 zyte articles: short stories on pages heavy with menus.)"""

LANDMARK_WRAPPER_SHARE = 0.5
"""A page-level <header>, <nav>, <aside>... holding at least this share of the page's text outside
links is not chrome but a wrapper around the page, and stays (sites do that)."""

# Page-level navigation and chrome. <header> and <footer> only count at page level: inside an
# article or section they hold titles and bylines.
# (libxml2 walks the tree once for a bare "//tag", but for "//*[predicate]" it builds a node-set at
# every node: "/descendant::*" with a cheap [@role] filter first makes the role test half the cost.)
_SECTIONING = "ancestor::article or ancestor::aside or ancestor::main or ancestor::nav or ancestor::section"
_LANDMARK_TAGS = f"//nav | //aside | //header[not({_SECTIONING})] | //footer[not({_SECTIONING})]"
_LANDMARK_ROLES = (
    "@role='navigation' or @role='banner' or @role='contentinfo' or @role='complementary' or @role='search'"
)
_LANDMARKS = etree.XPath(f"{_LANDMARK_TAGS} | /descendant::*[@role][{_LANDMARK_ROLES}]")
_LANDMARK = "data-landmark-number"
"""Numbers the page-level landmarks (_LANDMARKS) in the tree as parsed and in its copy."""
# The landmarks, and any element the page itself gave a _LANDMARK attribute, in the same walk.
_LANDMARKS_OR_NUMBERED = etree.XPath(
    f"{_LANDMARK_TAGS} | /descendant::*[@role or @{_LANDMARK}][{_LANDMARK_ROLES} or @{_LANDMARK}]"
)
# Text outside links: the page's text less that of each link (a link in a link counted twice), in
# one evaluation rather than one per link (str:concat is EXSLT's, which lxml provides).
_PROSE_CHARS = etree.XPath(
    "string-length(string(.)) - string-length(str:concat(.//a))",
    namespaces={"str": "http://exslt.org/strings"},
)
_ELEMENT_COUNT = etree.XPath("count(//*)")
_MAIN_ELEMENTS = etree.XPath("//main | /descendant::*[@role][@role='main']")
_HIDDEN_ELEMENTS = etree.XPath(f"/descendant::*[@{HIDDEN}]")
_NUMBERED_LANDMARKS = etree.XPath(f"/descendant::*[@{_LANDMARK}]")
_OUTER_HIDDEN = etree.XPath(f"descendant::*[@{HIDDEN}][not(ancestor::*[@{HIDDEN}])]")


@dataclass(frozen=True, slots=True)
class ExtractResult:
    text: str
    title: str | None
    used_fallback: bool = False
    """The main content is the page's main region (a listing, product or forum page, ...), not an
    article; see selection.py."""
    warnings: tuple[str, ...] = ()
    scripts: PageScripts | None = None
    """The page's scripts as parsed (to tell a JavaScript shell apart, and the data it carries)."""
    visible_chars: int = 0
    """The page's visible text, in characters (before any of it was set aside as not main content)."""
    metadata: PageMetadata = NO_METADATA


def extract_html(
    html: str,
    base_url: str,
    *,
    output_format: OutputFormat,
    main_content: bool,
    content_language: str | None = None,
) -> ExtractResult:
    """Convert an HTML document to ``output_format``; only its main content if ``main_content``.

    The document is parsed once; everything below reads or cuts down that one tree (and the
    copies the extractors make of it for themselves). ``content_language`` is the response's
    Content-Language header (the page's language when it declares none itself).
    """
    root = parse_html(html)
    if root is None:
        return ExtractResult(text="", title=None)
    title = page_title(root)
    scripts = page_scripts(root)
    # Before the clean-up, which drops the <meta>, <link> and <script> elements it is read from.
    metadata = page_metadata(root, base_url, content_language=content_language)
    warnings: tuple[str, ...] = ()
    elements = int(_ELEMENT_COUNT(root))
    if main_content and elements > MAIN_CONTENT_MAX_ELEMENTS:
        main_content = False
        warnings = (
            f"The page has {elements:,} HTML elements, too many to pick out its main content "
            f"(at most {MAIN_CONTENT_MAX_ELEMENTS:,}); the whole page was converted.",
        )
    if not main_content:
        clean_tree(root, base_url)
        body = body_of(root)
        text = render_element(body, output_format)
        return ExtractResult(
            text=text,
            title=title,
            warnings=warnings,
            scripts=scripts,
            visible_chars=text_chars(body),
            metadata=metadata,
        )
    reading = _keep_main_content(root, base_url, elements)
    if not reading.kept_any and reading.visible_chars:
        # Nothing was told apart as main content, yet the page has text: the whole page rather
        # than nothing (or an extraction failure). The tree was cut down already; this rare
        # case parses the page a second time.
        whole = extract_html(
            html,
            base_url,
            output_format=output_format,
            main_content=False,
            content_language=content_language,
        )
        note = (
            "No main content could be told apart from the rest of the page "
            f"({reading.visible_chars:,} characters of visible text); the whole page was converted."
        )
        return replace(whole, warnings=(*whole.warnings, note))
    warnings = (*warnings, *_sliver_warning(reading, reading.visible_chars))
    text = render_element(body_of(root), output_format)
    return ExtractResult(
        text=text,
        title=title,
        used_fallback=not reading.article,
        warnings=warnings,
        scripts=scripts,
        visible_chars=reading.visible_chars,
        metadata=metadata,
    )


def _sliver_warning(reading: _Reading, visible: int) -> tuple[str, ...]:
    """The warning that the main content is a small share of the page and may be the wrong part
    (see SLIVER_SHARE), or nothing."""
    if visible < SLIVER_MIN_CHARS or reading.kept_chars >= SLIVER_SHARE * visible:
        return ()
    larger = max(reading.readability_chars, reading.second_chars)
    disagree = not reading.article or larger >= 2 * reading.kept_chars
    if not disagree and reading.chrome_prose < LANDMARK_WRAPPER_SHARE * reading.prose:
        return ()
    share = 100 * reading.kept_chars / visible
    return (
        f"The main content kept is only {share:.0f}% of the page's visible text ({reading.kept_chars:,} "
        f"of {visible:,} characters), and which part is the main content was unclear; fetching it "
        "again with main_content=false returns the whole page.",
    )


def main_content(html: str, url: str) -> str:
    """The page's main content as Markdown (the benchmark scorer's extractor interface)."""
    return extract_html(html, url, output_format="markdown", main_content=True).text


# --- main content -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the main-content reading kept, in characters of visible text, and what else read the page."""

    article: bool
    visible_chars: int
    """The page's visible text (outside hidden elements), before anything was set aside."""
    kept_any: bool
    """Whether any block with text was kept, hidden ones included."""
    kept_chars: int
    readability_chars: int
    second_chars: int
    """What the second vote (the block model's or trafilatura's) keeps."""
    chrome_prose: int
    prose: int
    """Text outside links in the page, and in its page-level navigation, header, footer and
    sidebars set aside (rough_chars: whitespace counted as it is)."""


def _keep_main_content(root: lxml.html.HtmlElement, url: str, elements: int) -> _Reading:
    """Clean the tree (of ``elements`` elements) and cut it down to the main content, in place, and
    say what was kept."""
    page = prepare(root, url, keep_raw=elements <= RAW_COPY_MAX_ELEMENTS)
    before = _visible_chars(root)
    prose_before = page.prose
    segmentation, selection, votes, posts = _choose(root, url, page)
    chrome_prose = max(prose_before - _prose_chars(body_of(root)), 0)

    def chars(blocks: Iterable[Block]) -> int:
        return sum(block.chars for block in blocks if not block.hidden)

    reading = _Reading(
        article=selection.article,
        visible_chars=before,
        kept_any=any(block.chars for block in selection.kept),
        kept_chars=chars(selection.kept),
        readability_chars=chars(b for b, share in votes[0].items() if share >= VOTE),
        second_chars=chars(b for b, share in votes[1].items() if share >= VOTE),
        chrome_prose=chrome_prose,
        prose=prose_before,
    )
    if reading.kept_any:
        sections = section_words(body_of(root))
        prune(segmentation.blocks, selection.kept)
        for element in _HIDDEN_ELEMENTS(root):
            del element.attrib[HIDDEN]
        write_bylines(body_of(root), posts)
        drop_emptied_headings(body_of(root), sections)
    return reading


def _visible_chars(root: lxml.html.HtmlElement) -> int:
    """Characters of text in the body outside hidden elements (html_tree.HIDDEN)."""
    body = body_of(root)
    hidden = sum(text_chars(element) for element in _OUTER_HIDDEN(body))
    return max(text_chars(body) - hidden, 0)


@dataclass(frozen=True, slots=True)
class Prepared:
    """What is read from the page as parsed, before its clean-up (prepare)."""

    kinds: frozenset[str]
    """What the page says it is (selection.page_kinds)."""
    types: frozenset[str]
    """The schema.org and OpenGraph types it declares (block_features.type_inputs)."""
    raw: lxml.html.HtmlElement | None
    """A copy of the tree as parsed (less what trafilatura removes first anyway), for trafilatura:
    its rules look at forms, hidden elements, styles and the like, which the clean-up changes
    (given the cleaned tree instead, it kept less on product pages: wcxb-dev's products 0.669 ->
    0.657). None on a page of more than RAW_COPY_MAX_ELEMENTS elements."""
    prose: int
    """The text outside links in the cleaned tree."""
    landmarks: tuple[lxml.html.HtmlElement, ...] | None = None
    """The page-level landmarks numbered (_LANDMARKS), in document order; the clean-up may have
    dropped some (see _landmarks_in). None when the page numbers elements itself: they are then
    found by their numbers (_NUMBERED_LANDMARKS), as the page's are."""


def prepare(root: lxml.html.HtmlElement, url: str, *, keep_raw: bool = True) -> Prepared:
    """Read what the page declares, number its page-level landmarks (_LANDMARKS) and clean it
    (html_tree.clean_tree, its hidden elements kept and marked), in place; with ``keep_raw``, keep
    a copy of it as parsed for trafilatura (Prepared.raw)."""
    found = _LANDMARKS_OR_NUMBERED(root)
    landmarks: tuple[lxml.html.HtmlElement, ...] | None = tuple(found)
    if any(element.get(_LANDMARK) is not None for element in found):
        landmarks, found = None, _LANDMARKS(root)  # (a page of ours, read again: by its numbers)
    for number, element in enumerate(found):
        element.set(_LANDMARK, str(number))
    schema, og_types = declared_types(root)
    raw = None
    if keep_raw:
        # What trafilatura would remove first anyway, and copy several times before it does, is
        # not copied (the clean-up drops it too; the JSON-LD stays: it tells forum threads apart).
        etree.strip_elements(root, "style", "svg", "template", with_tail=False)
        for script in list(root.iter("script")):
            if (script.get("type") or "").strip().lower() != "application/ld+json":
                drop(script)
        raw = copy.deepcopy(root)
    clean_tree(root, url, keep_hidden=True)
    return Prepared(
        kinds=kinds_of(schema, og_types),
        types=type_inputs(schema, og_types),
        raw=raw,
        prose=_prose_chars(body_of(root)),
        landmarks=landmarks,
    )


@dataclass(frozen=True, slots=True)
class FirstReading:
    """The page as readability alone reads it, and what else the votes and the selection need."""

    segmentation: Segmentation
    readability: dict[Block, float]
    """Each block's share of words in readability's output (coverage.py)."""
    summary: lxml.html.HtmlElement | None
    """readability's output, handed to trafilatura if it runs (see trafilatura_fast.main_text)."""
    posts: list[Post]
    main: lxml.html.HtmlElement | None
    """The page's one outermost <main> / role=main element, if it has one."""
    chrome: frozenset[str]
    """The numbers of the page-level landmarks set aside as chrome (see _chrome_landmarks)."""


def first_reading(root: lxml.html.HtmlElement, page: Prepared) -> FirstReading:
    """Set the page-level navigation, header, footer and sidebars aside from ``root`` (the tree
    ``prepare`` cleaned), read it with readability and cut it into blocks."""
    landmarks = _NUMBERED_LANDMARKS(root) if page.landmarks is None else _landmarks_in(root, page.landmarks)
    chrome = frozenset(element.get(_LANDMARK) or "" for element in _chrome_landmarks(landmarks, page.prose))
    _drop_chrome(landmarks, chrome)
    summary = _readability_summary(root)
    posts = find_posts(body_of(root), page.kinds)  # their bylines go into what is kept, once cut down
    segmentation = segment(body_of(root))
    mains = _MAIN_ELEMENTS(root)
    outermost = [element for element in mains if not any(a in mains for a in element.iterancestors())]
    return FirstReading(
        segmentation=segmentation,
        # (its text nodes as they come: the text whole would be another copy of the page's)
        readability=coverage(segmentation, summary.itertext() if summary is not None else ""),
        summary=summary,
        posts=posts,
        main=outermost[0] if len(outermost) == 1 else None,
        chrome=chrome,
    )


def _choose(
    root: lxml.html.HtmlElement, url: str, page: Prepared
) -> tuple[Segmentation, Selection, tuple[dict[Block, float], dict[Block, float]], list[Post]]:
    """The page's blocks, the selection of its main content, the two votes (readability's, then the
    block model's or trafilatura's), and the posts of the page if it is a thread.

    ``root`` is the tree ``prepare`` cleaned; it loses its page-level navigation, header, footer
    and sidebars here, which are never main content, and which would only cost the extractors
    and the selection time.
    """
    first = first_reading(root, page)
    segmentation = first.segmentation
    second = model_votes(segmentation, first.readability, page.types)
    blocks = segmentation.blocks
    needed = _agreement_needed(page.kinds, sum(block.chars for block in blocks if not block.hidden))
    if vote_agreement(blocks, first.readability, second) < needed or unvoted_structure(
        blocks, first.readability, second
    ):
        tree = _for_trafilatura(page.raw, first.chrome) if page.raw is not None else copy.deepcopy(root)
        trafilatura_text = _trafilatura_text(tree, url, first.summary)
        second = coverage(segmentation, trafilatura_text)
    selection = select(
        segmentation,
        readability=first.readability,
        second=second,
        main=first.main,
        kinds=page.kinds,
    )
    return segmentation, selection, (first.readability, second), first.posts


def _agreement_needed(kinds: frozenset[str], chars: int) -> float:
    """The agreement of the two votes below which trafilatura reads a page of these kinds and of
    ``chars`` characters of visible text (MODEL_AGREEMENT, UNDECLARED_AGREEMENT, SHORT_PAGE_CHARS)."""
    if "article" in kinds or chars < SHORT_PAGE_CHARS:
        return MODEL_AGREEMENT
    return 0.0 if "product" in kinds else UNDECLARED_AGREEMENT


def _for_trafilatura(raw: lxml.html.HtmlElement, chrome: frozenset[str]) -> lxml.html.HtmlElement:
    """The tree as parsed (Prepared.raw), less its page-level chrome."""
    _drop_chrome(_NUMBERED_LANDMARKS(raw), chrome)
    return raw


def _landmarks_in(
    root: lxml.html.HtmlElement, landmarks: Iterable[lxml.html.HtmlElement]
) -> list[lxml.html.HtmlElement]:
    """Those of the page-level landmarks prepare numbered that are still in ``root``'s tree, in
    document order: what _NUMBERED_LANDMARKS finds there, without walking the whole tree."""
    return [element for element in landmarks if in_tree(element, root)]


def _drop_chrome(landmarks: Iterable[lxml.html.HtmlElement], chrome: frozenset[str]) -> None:
    """Drop the page-level ``landmarks`` numbered in ``chrome`` (all those numbered in the cleaned
    tree or in the copy as parsed: both carry the numbers prepare gave), and the numbers of the others."""
    for element in landmarks:
        if element.get(_LANDMARK) in chrome:
            drop(element)
        else:
            del element.attrib[_LANDMARK]


def _chrome_landmarks(landmarks: list[lxml.html.HtmlElement], prose: int) -> list[lxml.html.HtmlElement]:
    """The page-level navigation, header, footer and sidebars among ``landmarks`` (those numbered
    in the tree, in document order), except a wrapper around the page (see
    LANDMARK_WRAPPER_SHARE); ``prose`` is the page's text outside links."""
    if not landmarks:
        return []
    limit = LANDMARK_WRAPPER_SHARE * prose
    chrome: list[lxml.html.HtmlElement] = []
    inside_chrome: set[lxml.html.HtmlElement] = set()
    for element in landmarks:  # in document order: a landmark comes before those inside it
        if inside_chrome and any(ancestor in inside_chrome for ancestor in element.iterancestors()):
            continue  # goes with the landmark around it
        if _prose_chars(element) < limit:
            chrome.append(element)
            inside_chrome.add(element)
    return chrome


def _prose_chars(element: lxml.html.HtmlElement) -> int:
    """About how much text an element holds outside links (whitespace counted as it is)."""
    return int(_PROSE_CHARS(element))


# --- readability ---------------------------------------------------------------------------------


def _readability_summary(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """readability's main content, as the element it built (it works on its own copy of the tree)."""
    reader = _Readability(root)
    try:
        summary = reader.summary(html_partial=True)
    except Unparseable:
        logger.debug("readability could not parse the page", exc_info=True)
        return None
    element = reader.summary_element
    if not summary.strip() or element is None or element.tag == "html":
        # (The whole document is what readability returns for a page that is only a <head>.)
        return None
    return element


class _Readability(FastDocument):
    """readability-lxml (readability_fast's equivalent of it), except that data tables and code
    blocks in the article survive its clean-up.

    readability removes any table or <div> with under 25 characters of text or a low score, which
    loses small but important data tables and one-line code samples (``pip install x`` in a
    highlighting wrapper). Those inside the chosen article, with wrappers that hold little else,
    are kept as they are. (Doing the same for short lists was tried: it kept more "tags" and
    "share" lists than real bullet points, and lowered the zyte F1 by 0.004.)
    """

    summary_element: lxml.html.HtmlElement | None = None
    """The main content readability chose, as the element it built (see get_clean_html)."""

    def get_clean_html(self) -> str:
        # summary() writes its result out as text only to measure it (to decide whether to try
        # again, less ruthlessly); the element is kept, so it is never parsed back from that text.
        self.summary_element = self.html
        text: str = super().get_clean_html()
        return text

    def _parse(self, input: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
        # Our tree is cleaned already (scripts, styles, javascript: links) and its links are
        # absolute: skip readability's own lxml Cleaner pass, a third of its time. It mutates the
        # tree, and may start over on a fresh one: always a copy, without the hidden elements
        # our tree keeps for the selection (readability drops those itself).
        tree = copy.deepcopy(input)
        for element in _HIDDEN_ELEMENTS(tree):
            drop(element)
        return tree

    def get_preserved_elements(self, node: lxml.html.HtmlElement) -> dict[lxml.html.HtmlElement, bool]:
        allowed: dict[lxml.html.HtmlElement, bool] = super().get_preserved_elements(node)
        kept_code: set[lxml.html.HtmlElement] = set()
        for block in node.iter("table", "pre"):  # in document order: outer blocks first
            if block.tag == "table" and not is_data_table(block):
                continue
            if block.tag == "pre":
                # A <pre> inside a kept <pre> is kept with it; measuring it again for every
                # level made nested code blocks cost the cube of their depth.
                if kept_code and any(ancestor in kept_code for ancestor in block.iterancestors("pre")):
                    continue
                kept_code.add(block)
            allowed[block] = True
            limit = text_chars(block) + 100
            for wrapper in block.iterancestors():
                # (A wrapper is often the whole article: read only as far as the limit.)
                if wrapper is node or text_chars(wrapper, past=limit) > limit:
                    break
                allowed[wrapper] = True
        return allowed


# --- trafilatura ---------------------------------------------------------------------------------


def _trafilatura_text(raw: lxml.html.HtmlElement, url: str, readability: lxml.html.HtmlElement | None) -> str:
    """The text of trafilatura's main content (comments left out, tables and images kept) in
    ``raw``, a tree of its own; ``readability`` is readability's on the same page, which
    trafilatura compares its own with: handed over rather than run a second time."""
    try:
        return trafilatura_fast.main_text(raw, url, readability)
    except Exception:  # a third-party extractor failing on odd input must not fail the page
        logger.debug("trafilatura failed on the page", exc_info=True)
        return ""


# trafilatura's costliest steps, redone with the same results (trafilatura_fast.py).
trafilatura_fast.install()
