"""Parsing and cleaning HTML: the document built as a browser builds it and held as an lxml tree,
never deeper than libxml2 allows, stripped of what is never content (scripts, styles, forms, hidden
elements), with whitespace shortened and links made absolute; plus its title and small helpers on
the tree.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import urljoin, urlsplit

import lxml.html
import turbohtml
from lxml import etree

from mcp_server_web.fetch.doc.charset import without_controls
from mcp_server_web.fetch.doc.permalinks import drop_permalinks

logger = logging.getLogger(__name__)

MAX_DEPTH = 200
"""No element is nested deeper than this (the root is depth 1); deeper subtrees become their text.

Converting to Markdown recurses once per level, and libxml2 silently stops parsing a document at
256 levels, losing everything after that point; 200 leaves room below both.
"""

HIDDEN = "data-hidden-content"
"""Marks an element that is hidden on the page (see clean_tree's ``keep_hidden``)."""

NOSCRIPT_CONTENT_CHARS = 200
"""A <noscript> with at least this much text is page content (see _unwrap_or_drop_noscripts)."""

# Elements that are never content. Form controls go too; <form> itself is handled separately
# because some sites (ASP.NET) wrap the whole page in one.
_DROP_TAGS = frozenset(
    {
        "script", "style", "template", "iframe", "frame", "frameset", "object", "embed",
        "applet", "svg", "canvas", "input", "select", "textarea", "button", "option", "optgroup",
        "datalist", "keygen", "link", "meta", "base", "dialog",
    }
)  # fmt: skip
_HIDDEN_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)", re.I
)
# Elements inside a line of text; a hidden one is never kept (see _drop_hidden).
_INLINE_TAGS = frozenset(
    {
        "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "del", "dfn", "em", "font", "i",
        "img", "ins", "kbd", "label", "mark", "q", "s", "samp", "small", "span", "strike",
        "strong", "sub", "sup", "time", "tt", "u", "var",
    }
)  # fmt: skip
_PREFORMATTED_TAGS = ("pre", "textarea", "listing", "xmp", "plaintext")
# The URL attributes that survive into the output, which are the ones made absolute.
_LINK_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "a": ("href",),
    "area": ("href",),
    "img": ("src",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "source": ("src",),
    "track": ("src",),
    "blockquote": ("cite",),
    "q": ("cite",),
}
_LAZY_SRC_ATTRS = ("data-src", "data-original", "data-lazy-src", "data-url", "data-hi-res-src")
_WHITESPACE = re.compile(r"\s+")
_NEWLINE_RUN = re.compile(r"[ \t\r\n\f]*\n[ \t\r\n\f]*")
_SPACE_RUN = re.compile(r"[ \t\r\f]{2,}")
# Counted by libxml2 without building Python strings: several times faster than itertext().
_STRING_LENGTH = etree.XPath("string-length(string(.))")
_DEEP_ELEMENTS = etree.XPath("/" + "/".join(["*"] * MAX_DEPTH))
_VOID_TAGS = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
        "track", "wbr",
    }
)  # fmt: skip
# Elements whose content libxml2 (2.14+, HTML5 tokenizer) reads as text, not markup.
_RAW_TEXT_TAGS = frozenset(
    {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "plaintext"}
)
# Void elements libxml2's HTML parser does not know as void (it nests what follows inside them),
# and which it does close when written self-closed. Attribute values come escaped (no ">").
_VOIDS_UNKNOWN_TO_LIBXML2 = re.compile(r"<(source|track|wbr)(\s[^>]*)?>")
# libxml2 ends a heading where a paragraph starts inside it; a browser keeps it in the heading.
_PARAGRAPHS_IN_HEADINGS = "h1 p, h2 p, h3 p, h4 p, h5 p, h6 p"
_SELF_CLOSING_SIBLINGS = frozenset({"p", "li", "dt", "dd", "tr", "td", "th", "option"})
_TOKEN = re.compile(r"<!--.*?(?:-->|$)|<(/?)([A-Za-z][^\s/>]*)[^>]*>", re.S)


# --- parsing ---------------------------------------------------------------------------------


def parse_html(html: str) -> lxml.html.HtmlElement | None:
    """Parse a document as a browser does, never deeper than MAX_DEPTH; None if it holds no
    elements at all."""
    if not html.strip():
        return None
    html = without_controls(_CONTROL_REFERENCES.sub(" ", html) if "&#" in html else html)
    source = browser_tree(html)
    root, too_deep = _parse(source)
    if too_deep:
        # libxml2 stops at 256 levels and silently drops the rest of the document: flatten the
        # source first so that nothing is lost. (It is well-formed now, every element closed,
        # so the rough tokenizer of _limit_depth reads it as the parser does.)
        logger.debug("document nested deeper than libxml2 allows; flattening before parsing")
        root, _ = _parse(_limit_depth(source, MAX_DEPTH - 5))
    if root is None:
        return None
    for template in list(root.iter("template")):  # (templates are few: cheaper than an XPath)
        if "shadowrootmode" in template.attrib or "shadowroot" in template.attrib:
            template.drop_tag()  # a browser shows a declarative shadow root's content
    flatten_deep(root)
    bound_table_spans(root)
    return root


def browser_tree(html: str) -> str:
    """The document as a browser builds it (WHATWG tree construction), written out so that
    libxml2 reads back the same tree.

    libxml2's HTML parser builds trees by HTML4-era rules: an end tag arriving while elements
    opened inside are still open (a header's ``<button><div>Menu</button>``) is ignored, and the
    rest of the page, article included, ends up inside that element; an unclosed SVG sprite
    swallows the body; text misplaced in a table stays there. turbohtml builds the tree a
    browser builds, in C, about 0.5 ms for a typical page, with the browsers' cap of 512 open
    elements that keeps pathological nesting linear. Its output has every element closed, which
    libxml2 reads back as written except for what is mended here.
    """
    try:
        document = turbohtml.parse(html, positions=False, allow_declarative_shadow_roots=False)
        for paragraph in document.select(_PARAGRAPHS_IN_HEADINGS):
            paragraph.tag = "div"
        written = document.serialize()
    except Exception:  # a third-party parser failing on odd input must not fail the page
        logger.debug("HTML5 tree construction failed; parsing the page as it is", exc_info=True)
        return html
    return _VOIDS_UNKNOWN_TO_LIBXML2.sub(r"<\1\2/>", written)


# Character references that spell a control character a tree cannot hold: libxml2 puts the
# character in the tree, where any later change to that text fails. (Fetched pages come without
# the raw characters already, see charset.decode_text; parse_html removes them for any str.)
_CONTROL_REFERENCES = re.compile(
    r"&#(?:0*(?:[0-8]|1[124-9]|2[0-9]|3[01]|6553[45])(?![0-9])"
    r"|[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F]|[fF]{3}[eEfF])(?![0-9a-fA-F]));?"
)


# Every element is an lxml.html.HtmlElement, chosen in C. lxml.html's own lookup calls Python for
# each element proxy the code creates (to give forms and inputs their classes, which nothing here
# uses): a tenth of the time of a conversion.
_ELEMENT_CLASSES = etree.ElementDefaultClassLookup(
    element=lxml.html.HtmlElement,
    comment=lxml.html.HtmlComment,
    pi=lxml.html.HtmlProcessingInstruction,
    entity=lxml.html.HtmlEntity,
)


def _parse(html: str) -> tuple[lxml.html.HtmlElement | None, bool]:
    """The parsed document (None if it has no elements), and whether libxml2 hit its depth limit."""
    # Parsing bytes with a fixed encoding makes lxml ignore any <meta charset> or XML declaration
    # in the text, which was decoded already.
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True)
    parser.set_element_class_lookup(_ELEMENT_CLASSES)
    try:
        root = lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser=parser)
    except (etree.ParserError, ValueError):
        return None, False
    return root, any("depth" in entry.message.lower() for entry in parser.error_log)


def _limit_depth(html: str, limit: int) -> str:
    """Drop the tags (keeping the text) of elements nested deeper than ``limit``.

    A rough tokenizer, good enough for the pathological documents this is used on: it tracks
    open elements, ignores void elements, skips raw-text elements and comments, and closes
    elements the way a parser does, up to the matching open tag.
    """
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (tag name, tag was kept)
    open_counts: dict[str, int] = {}
    position = 0
    raw_text_end: re.Pattern[str] | None = None
    while position < len(html):
        if raw_text_end is not None:
            end = raw_text_end.search(html, position)
            stop = end.start() if end else len(html)
            out.append(html[position:stop])
            position = stop
            raw_text_end = None
            continue
        match = _TOKEN.search(html, position)
        if match is None:
            out.append(html[position:])
            break
        out.append(html[position : match.start()])
        position = match.end()
        closing, name = match.group(1), (match.group(2) or "").lower()
        if not name:  # a comment
            continue
        if closing:
            if open_counts.get(name):
                while stack:
                    top, kept = stack.pop()
                    open_counts[top] -= 1
                    if top == name:
                        out.append(match.group(0) if kept else " ")
                        break
            continue
        if name in _VOID_TAGS or match.group(0).endswith("/>"):
            out.append(match.group(0) if len(stack) < limit else " ")
            continue
        if name in _SELF_CLOSING_SIBLINGS and stack and stack[-1][0] == name:
            # <p><p> and <li><li> are siblings, not nesting: the parser closes the first.
            open_counts[name] -= 1
            stack.pop()
        kept = len(stack) < limit
        out.append(match.group(0) if kept else " ")
        stack.append((name, kept))
        open_counts[name] = open_counts.get(name, 0) + 1
        if name in _RAW_TEXT_TAGS:
            raw_text_end = re.compile(rf"</{re.escape(name)}\s*>", re.I)
    return "".join(out)


def flatten_deep(root: lxml.html.HtmlElement) -> None:
    """Replace every element at depth MAX_DEPTH by an element holding just its text."""
    for element in _DEEP_ELEMENTS(root):
        text = " ".join(piece.strip() for piece in element.itertext() if piece.strip())
        element.clear(keep_tail=True)
        element.text = text


# --- tables ---------------------------------------------------------------------------------

ROW_GROUPS = frozenset({"thead", "tbody", "tfoot"})
MAX_SPAN_GRID_PER_CELL = 4
"""A table's spans may make its grid (the sum of rowspan x colspan over its cells) at most this many
times its real cells, plus SPAN_GRID_ALLOWANCE; past that its spans are dropped."""
SPAN_GRID_ALLOWANCE = 1000
_ASCII_DIGITS = re.compile(r"[0-9]+")


def bound_table_spans(root: lxml.html.HtmlElement) -> None:
    """Bound what table spans can make an extractor build, before any extractor sees the tree.

    Extractors lay tables out as grids: a cell with rowspan=65534 colspan=1000 costs them a grid
    cell per slot it covers, so 14 KB of such cells cost trafilatura ~35 s and 265 MB. Browsers
    end a span at its table's last row; here it also ends at the table's widest row (there are
    no columns to span past it), and a table whose spans would still make its grid more than a
    few times its real cells loses its spans: it is not laying out data, and its cells all stay.
    Linear in the number of rows and cells.
    """
    for table in root.iter("table"):
        rows = list(table_rows(table))
        cells_by_row = [row_cells(row) for row in rows]
        width = max((len(cells) for cells in cells_by_row), default=0)
        real = sum(len(cells) for cells in cells_by_row)
        grid = 0
        for index, cells in enumerate(cells_by_row):
            rows_left = len(rows) - index
            for cell in cells:
                grid += _clamp_span(cell, "rowspan", rows_left) * _clamp_span(cell, "colspan", width)
        if grid > MAX_SPAN_GRID_PER_CELL * real + SPAN_GRID_ALLOWANCE:
            for cells in cells_by_row:
                for cell in cells:
                    cell.attrib.pop("rowspan", None)
                    cell.attrib.pop("colspan", None)


def _clamp_span(cell: lxml.html.HtmlElement, name: str, most: int) -> int:
    raw = cell.get(name)
    if raw is None:
        return 1
    span = attribute_number(raw, 1, most)
    if span == 0:
        # rowspan=0 reaches the end of the table (HTML); colspan=0 is invalid, so 1.
        span = most if name == "rowspan" else 1
    span = max(1, min(span, most))
    if str(span) != raw:
        cell.set(name, str(span))
    return span


def is_data_table(table: lxml.html.HtmlElement) -> bool:
    """A table of data, not one for page layout: header cells or a grid, and no nested tables."""
    if table.get("role") == "presentation" or table.find(".//table") is not None:
        return False
    if table.find(".//th") is not None:
        return True
    rows = table.findall(".//tr")
    return len(rows) >= 2 and any(len(row.findall("td")) >= 2 for row in rows)


def table_rows(table: lxml.html.HtmlElement) -> Iterator[lxml.html.HtmlElement]:
    """A table's own rows, in order (not those of tables nested in its cells)."""
    for child in table:
        if child.tag == "tr":
            yield child
        elif child.tag in ROW_GROUPS:
            yield from child.iterchildren("tr")


def row_cells(row: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    return [cell for cell in row if cell.tag in ("td", "th")]


def attribute_number(value: str | None, default: int, maximum: int) -> int:
    """An attribute's non-negative number, at most ``maximum``; ``default`` unless it is one.

    Only ASCII digits: str.isdigit() also takes "²" or "①", which int() refuses.
    """
    value = (value or "").strip()
    if not _ASCII_DIGITS.fullmatch(value):
        return default
    value = value.lstrip("0") or "0"
    return maximum if len(value) > len(str(maximum)) else min(int(value), maximum)


# --- cleaning ---------------------------------------------------------------------------------


def page_title(root: lxml.html.HtmlElement) -> str | None:
    """The document's title: <title>, else og:title / twitter:title, else the first <h1>."""
    # Generators, so that the search stops at the first title found (most often in the <head>).
    candidates: Iterable[str] = itertools.chain(
        (
            title.text_content()
            for title in root.iter("title")
            if next(title.iterancestors("svg"), None) is None
        ),
        _meta_contents(root, "og:title"),
        _meta_contents(root, "twitter:title"),
        (heading.text_content() for heading in root.iter("h1")),
    )
    for text in candidates:
        title = collapse(text)
        if title:
            return title
    return None


def _meta_contents(root: lxml.html.HtmlElement, name: str) -> Iterator[str]:
    """The content of each <meta> whose property or name is ``name``, in document order."""
    for meta in root.iter("meta"):
        if meta.get("property") == name or meta.get("name") == name:
            content = meta.get("content")
            if content is not None:
                yield content


def clean_tree(root: lxml.html.HtmlElement, base_url: str, *, keep_hidden: bool = False) -> None:
    """Remove what is never content, shorten whitespace and make links absolute, in place.

    Hidden elements go too, unless ``keep_hidden``: then they stay, marked with the HIDDEN
    attribute (collapsed FAQ answers and tabs are content; main-content selection decides).

    One pass over the elements does everything that can be done element by element; this is a
    good part of the cost of a conversion.
    """
    preformatted: set[lxml.html.HtmlElement] = set()
    preformatted_roots: set[lxml.html.HtmlElement] = set()
    base_element = None
    for pre in root.iter("base", *_PREFORMATTED_TAGS):  # one walk for both (the walk is the cost)
        if pre.tag == "base":
            if base_element is None and "href" in pre.attrib and pre is not root:
                base_element = pre
            continue
        preformatted.update(pre.iter())
        preformatted_roots.add(pre)
    resolve = _url_resolver(base_element, base_url)
    doomed: list[lxml.html.HtmlElement] = []
    hidden: list[lxml.html.HtmlElement] = []
    javascript_links: list[lxml.html.HtmlElement] = []
    noscripts: list[lxml.html.HtmlElement] = []
    forms: list[lxml.html.HtmlElement] = []
    page = base_url.split("#", 1)[0]
    in_page_links: list[tuple[lxml.html.HtmlElement, str]] = []

    for element in root.iter(etree.Element):
        # A parsed tree's tags are str; types-lxml types them as anything one may set by hand.
        tag: str = element.tag  # type: ignore[assignment]
        # Rendering collapses whitespace anyway, but a whitespace regex over a long run can be
        # quadratic, and long runs make every later pass slower: shorten them once, here (not in
        # what is dropped below, such as a long <script>; its tail stays).
        text = element.text
        if (
            text
            and len(text) > 1
            and tag not in _DROP_TAGS
            and (not preformatted or element not in preformatted)
        ):
            element.text = _shorten_whitespace(text)
        tail = element.tail
        if (
            tail
            and len(tail) > 1
            and (not preformatted or element not in preformatted or element in preformatted_roots)
        ):
            element.tail = _shorten_whitespace(tail)

        if tag in _DROP_TAGS:
            doomed.append(element)
            continue
        if tag == "noscript":
            noscripts.append(element)
        elif tag == "form":
            forms.append(element)
        attrib = element.attrib
        if not attrib:
            if tag == "img":
                doomed.append(element)
            continue
        names = attrib.keys()
        style = attrib.get("style")
        if "hidden" in attrib or (style and _HIDDEN_STYLE.search(style)):
            hidden.append(element)
        # Most elements have none of these: a test in C first (attribute names hold no spaces).
        if style is not None or "title" in names or " on" in " " + " ".join(names):
            for name in [name for name in names if name.startswith("on") or name in ("style", "title")]:
                del attrib[name]
        if tag == "img":
            _unlazy_image(element)
            if not attrib.get("src") or attrib["src"].startswith("data:"):
                doomed.append(element)  # nothing to link to, or inline data: no use and maybe huge
                continue
        for name in _LINK_ATTRIBUTES.get(tag, ()):
            value = attrib.get(name)
            if value is None:
                continue
            if tag == "a" and value.strip().lower().startswith("javascript:"):
                javascript_links.append(element)
                continue
            url = resolve(value)
            if url is None:
                del attrib[name]
            else:
                attrib[name] = url
                if tag == "a" and (value.startswith("#") or url.startswith(page + "#")):
                    in_page_links.append((element, url.partition("#")[2]))

    for element in doomed:
        drop(element)
    _drop_hidden(root, hidden, keep_hidden)
    for element in javascript_links:
        if element.getparent() is not None:  # not itself dropped as hidden
            element.drop_tag()  # keep the link text, lose the script
    _unwrap_or_drop_noscripts(noscripts)
    _drop_forms(root, [form for form in forms if in_tree(form, root)])
    drop_permalinks((link, fragment) for link, fragment in in_page_links if link.getparent() is not None)


def _drop_hidden(root: lxml.html.HtmlElement, hidden: list[lxml.html.HtmlElement], mark: bool) -> None:
    """Drop (or ``mark`` with HIDDEN) elements hidden by ``hidden`` or an inline display:none /
    visibility:hidden.

    Except one that holds most of the page's text: some sites hide the whole page until their
    JavaScript has run, and the text is still the content.
    """
    if not hidden:
        return
    body_chars = rough_chars(body_of(root))
    for element in hidden:
        if body_chars and rough_chars(element) >= body_chars / 2:
            element.attrib.pop("hidden", None)
        elif mark and element.tag not in _INLINE_TAGS:
            element.set(HIDDEN, "")
        else:
            drop(element)


def rough_chars(element: lxml.html.HtmlElement) -> int:
    """About how much text an element holds (whitespace counted as it is): cheaper than text_chars,
    good enough to compare two elements of the same tree."""
    return int(_STRING_LENGTH(element))


def _unwrap_or_drop_noscripts(noscripts: list[lxml.html.HtmlElement]) -> None:
    """Keep <noscript> content that is a real page, drop the rest.

    We are a browser without JavaScript, so <noscript> is what we are meant to see. Usually it is
    a tracking pixel, a duplicate lazy-loaded image or "please enable JavaScript", and goes; but
    some sites (Discourse forums, for one) put the whole page there for clients like us.
    """
    for noscript in noscripts:
        if noscript.getparent() is None:
            continue
        if text_chars(noscript) >= NOSCRIPT_CONTENT_CHARS:
            noscript.drop_tag()
        else:
            drop(noscript)


def _url_resolver(base_element: lxml.html.HtmlElement | None, base_url: str) -> Callable[[str], str | None]:
    """A function making a URL absolute against the page's URL and its first <base href>
    (``base_element``), as a browser does."""
    base = base_url
    if base_element is not None:
        with contextlib.suppress(ValueError):  # a <base href> too broken to join with is ignored
            base = urljoin(base_url, base_element.get("href", "").strip())

    origin = ""
    with contextlib.suppress(ValueError):
        parts = urlsplit(base)
        if parts.scheme in ("http", "https") and parts.netloc:
            origin = f"{parts.scheme}://{parts.netloc}"

    def resolve(url: str) -> str | None:
        url = url.strip().replace(" ", "%20")  # a space would end a Markdown link target
        if not base or url.startswith(("https://", "http://")):
            return url
        if origin and url.startswith("/") and not url.startswith("//") and "/." not in url:
            return origin + url  # the common case, without urljoin's cost
        try:
            return urljoin(base, url)
        except ValueError:  # e.g. a malformed IPv6 host
            return None

    return resolve


def _shorten_whitespace(text: str) -> str:
    """Each run of whitespace a newline if it holds one, else a space (runs of one character
    other than a tab or a newline stay as they are)."""
    if text.isspace():  # most often: indentation between tags
        return "\n" if "\n" in text else " "
    if "\n" in text:
        text = _NEWLINE_RUN.sub("\n", text)
    if "  " in text or "\t" in text or "\r" in text or "\f" in text:
        text = _SPACE_RUN.sub(" ", text)
    return text


def _unlazy_image(image: lxml.html.HtmlElement) -> None:
    src = image.get("src", "")
    if src and not src.startswith("data:"):
        return
    for name in _LAZY_SRC_ATTRS:
        lazy = image.get(name, "").strip()
        if lazy and not lazy.startswith("data:"):
            # some sites put a srcset ("a.jpg 500w, b.jpg 1000w") there: its first URL
            image.set("src", lazy.split()[0] if " " in lazy else lazy)
            return


def _drop_forms(root: lxml.html.HtmlElement, forms: list[lxml.html.HtmlElement]) -> None:
    """Drop ``forms`` (search boxes, sign-ups, comment forms: those of the page, in document order)
    but keep a form that wraps the page."""
    if not forms:
        return
    body_chars = rough_chars(body_of(root))
    for form in forms:  # the parser never nests forms
        if body_chars and rough_chars(form) >= body_chars / 2:
            form.drop_tag()
        else:
            drop(form)


# --- shared helpers -------------------------------------------------------------------------


def body_of(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """The document's <body>, or the root if it has none."""
    body = root.find("body")
    return body if body is not None else root


def in_tree(element: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    """Whether ``element`` is in ``root``'s tree (or is ``root``): not dropped, nor inside what was."""
    ancestors = list(element.iterancestors())
    return (ancestors[-1] if ancestors else element) is root


def serialise(element: lxml.html.HtmlElement) -> str:
    """An element as an HTML fragment (a <body> comes out as a <div>)."""
    if element.tag != "body":
        return lxml.html.tostring(element, encoding="unicode")
    element.tag = "div"  # a fragment of content, not a second <body>
    try:
        return lxml.html.tostring(element, encoding="unicode")
    finally:
        element.tag = "body"


def text_chars(element: lxml.html.HtmlElement, *, past: int | None = None) -> int:
    """How many characters of text an element holds, whitespace collapsed: its words' characters
    and one space between each two words (counted text by text, never a copy of all of it).

    With ``past``, counting stops as soon as the count is past it (what is returned is then more
    than ``past``, and at most the whole count): enough to tell whether an element holds more
    than so much text without reading all of a long one."""
    if past is None:
        return _counted_in_pieces(element.itertext())
    chars = 0
    words = 0
    for text in element.itertext():
        parts = text.split()
        words += len(parts)
        chars += sum(map(len, parts))
        if chars + words - 1 > past:
            break
    return chars + words - 1 if words else 0


COUNT_PIECE_CHARS = 65_536
"""text_chars splits at most about this many characters of text at a time."""
COUNT_TEXTS = 256
"""text_chars joins at most this many text nodes at a time."""


def _counted_in_pieces(texts: Iterable[str]) -> int:
    """text_chars of an element's whole text, ``texts``: the splitting and summing done in C, on
    COUNT_TEXTS text nodes joined with a space between them (so that words in adjacent texts stay
    apart) at a time, cut at whitespace past COUNT_PIECE_CHARS. The words of all the text at once,
    each a string, took ten times the text: the peak of a long page's whole conversion."""
    chars = words = 0
    texts = iter(texts)
    while batch := list(itertools.islice(texts, COUNT_TEXTS)):
        joined = " ".join(batch)
        start = 0
        while start < len(joined):
            end = len(joined)
            if end - start > COUNT_PIECE_CHARS:
                cut = _WHITESPACE.search(joined, start + COUNT_PIECE_CHARS)
                end = cut.start() if cut else end
            parts = joined[start:end].split() if start or end < len(joined) else joined.split()
            words += len(parts)
            chars += sum(map(len, parts))
            start = end
    return chars + words - 1 if words else 0


def collapse(text: str) -> str:
    """``text`` with whitespace runs made single spaces and the ends stripped."""
    return _WHITESPACE.sub(" ", text).strip()


def drop(element: lxml.html.HtmlElement) -> None:
    """Remove an element and everything in it, unless it is the root."""
    if element.getparent() is not None:
        element.drop_tree()  # keeps the tail text, which belongs to the parent
