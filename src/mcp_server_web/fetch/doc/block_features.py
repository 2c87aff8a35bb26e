"""What a block model reads about each block of a page: one row of numbers per block with text
(an experiment, see README.md: not used by web_fetch).

Every feature is general: the block's own text (length, links, punctuation), where it sits (tag,
depth, position, the landmarks, sectioning elements, schema.org types and class or id words of
the elements around it), the text around it (how much of the page the elements holding it hold,
and how much of that is links), how often its structure and its text repeat on the page, and what
the page as a whole declares itself to be (JSON-LD, OpenGraph and microdata types). No site, URL
or page is named anywhere.

Computed in one pass over the blocks in document order (a block's parent comes before it) and
one back over them for the sizes of what each holds: linear in the page.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Set
from dataclasses import dataclass
from operator import itemgetter

import lxml.html
import numpy as np
import numpy.typing as npt

from mcp_server_web.fetch.doc.blocks import Block, Segmentation
from mcp_server_web.fetch.doc.selection import declared_types

# Class and id words, in groups. A block's feature for a group is how many levels up the nearest
# element named with one of its words is (0: the block itself), or FAR when none is.
WORD_GROUPS: dict[str, frozenset[str]] = {
    "chrome": frozenset(
        {
            "nav",
            "navbar",
            "navigation",
            "menu",
            "menus",
            "submenu",
            "megamenu",
            "breadcrumb",
            "breadcrumbs",
            "subscribe",
            "subscription",
            "signup",
            "cookie",
            "cookies",
            "consent",
            "gdpr",
            "login",
            "signin",
            "modal",
            "popup",
            "overlay",
            "drawer",
            "pagination",
            "pager",
            "toolbar",
            "cart",
            "minicart",
            "basket",
            "wishlist",
            "dropdown",
            "flyout",
            "tooltip",
            "skip",
            "offcanvas",
            "search",
            "newsletter",
            "topbar",
            "utility",
        }
    ),
    "footer": frozenset({"footer", "foot", "bottom", "copyright", "colophon", "legal"}),
    "header": frozenset({"header", "head", "masthead", "banner", "top", "hero"}),
    "sidebar": frozenset({"sidebar", "aside", "widget", "widgets", "rail", "side", "secondary"}),
    "related": frozenset(
        {
            "related",
            "recommended",
            "recommendations",
            "popular",
            "trending",
            "more",
            "recent",
            "recently",
            "upsell",
            "crosssell",
            "also",
            "similar",
            "next",
            "prev",
            "previous",
        }
    ),
    "social": frozenset({"share", "sharing", "social", "follow", "facebook", "twitter", "reactions"}),
    "ad": frozenset(
        {"ad", "ads", "advert", "advertisement", "sponsor", "sponsored", "promo", "promotion", "dfp"}
    ),
    "content": frozenset(
        {
            "content",
            "article",
            "post",
            "entry",
            "body",
            "text",
            "story",
            "main",
            "blog",
            "prose",
            "markdown",
            "rte",
            "richtext",
            "copy",
            "page",
            "single",
            "detail",
            "details",
            "description",
        }
    ),
    "comment": frozenset({"comment", "comments", "reply", "replies", "respond", "discussion", "thread"}),
    "message": frozenset({"message", "postbit", "answer", "question", "topic", "forum"}),
    "meta": frozenset(
        {"meta", "byline", "author", "date", "time", "posted", "published", "info", "dateline"}
    ),
    "tags": frozenset({"tag", "tags", "category", "categories", "label", "labels", "keywords", "topics"}),
    "card": frozenset(
        {
            "card",
            "cards",
            "item",
            "items",
            "tile",
            "teaser",
            "grid",
            "list",
            "listing",
            "result",
            "results",
            "product",
            "products",
            "collection",
        }
    ),
    "filter": frozenset({"filter", "filters", "facet", "facets", "sort", "sorting", "refine", "refinement"}),
    "product": frozenset(
        {
            "price",
            "sku",
            "buy",
            "add",
            "stock",
            "availability",
            "variant",
            "swatch",
            "quantity",
            "qty",
            "checkout",
            "shipping",
        }
    ),
    "review": frozenset({"review", "reviews", "rating", "ratings", "stars", "testimonial"}),
    "caption": frozenset({"caption", "captions", "figcaption", "credit", "credits"}),
    "hidden": frozenset(
        {"hidden", "hide", "sr", "visually", "collapse", "collapsed", "tab", "tabs", "accordion", "panel"}
    ),
    "faq": frozenset({"faq", "faqs", "questions", "accordion", "service", "services", "feature", "features"}),
}
FAR = 20
"""A word group, landmark or type not found around the block: as if it were this many levels up."""

# Elements around the block, by tag or role; the same "levels up" measure.
LANDMARK_TAGS: dict[str, frozenset[str]] = {
    "main": frozenset({"main"}),
    "article": frozenset({"article"}),
    "nav": frozenset({"nav"}),
    "aside": frozenset({"aside"}),
    "header": frozenset({"header"}),
    "footer": frozenset({"footer"}),
    "section": frozenset({"section"}),
    "list": frozenset({"ul", "ol", "dl"}),
    "table": frozenset({"table"}),
    "figure": frozenset({"figure"}),
    "quote": frozenset({"blockquote"}),
    "form": frozenset({"form", "fieldset", "select"}),
}
ROLES: dict[str, str] = {
    "main": "main",
    "article": "article",
    "navigation": "nav",
    "menubar": "nav",
    "menu": "nav",
    "complementary": "aside",
    "banner": "header",
    "contentinfo": "footer",
    "search": "form",
    "dialog": "form",
}
# schema.org types of the elements around the block (microdata itemtype), in groups.
ITEM_TYPES: dict[str, frozenset[str]] = {
    "item_article": frozenset(
        {
            "Article",
            "NewsArticle",
            "BlogPosting",
            "TechArticle",
            "Report",
            "ScholarlyArticle",
            "WebPageElement",
        }
    ),
    "item_post": frozenset(
        {"DiscussionForumPosting", "Comment", "Answer", "Question", "SocialMediaPosting", "Message", "Review"}
    ),
    "item_product": frozenset({"Product", "ProductGroup", "IndividualProduct", "Offer", "AggregateOffer"}),
    "item_list": frozenset(
        {
            "ItemList",
            "ListItem",
            "BreadcrumbList",
            "SiteNavigationElement",
            "WPSideBar",
            "WPFooter",
            "WPHeader",
        }
    ),
    "item_person": frozenset({"Person", "Organization", "Brand", "Rating", "AggregateRating"}),
}
TEXT_PROPS = frozenset({"articleBody", "text", "description", "reviewBody", "answerText", "mainEntity"})

# What the page declares itself to be (JSON-LD @type, og:type, microdata), in groups.
PAGE_TYPES: dict[str, frozenset[str]] = {
    "page_article": frozenset(
        {
            "Article",
            "NewsArticle",
            "BlogPosting",
            "Report",
            "ReportageNewsArticle",
            "OpinionNewsArticle",
            "AnalysisNewsArticle",
            "LiveBlogPosting",
            "ScholarlyArticle",
            "TechArticle",
            "article",
        }
    ),
    "page_product": frozenset({"Product", "ProductGroup", "IndividualProduct", "product"}),
    "page_list": frozenset(
        {"ItemList", "CollectionPage", "OfferCatalog", "SearchResultsPage", "product.group"}
    ),
    "page_forum": frozenset({"DiscussionForumPosting", "QAPage", "Question", "Answer", "Comment"}),
    "page_faq": frozenset({"FAQPage", "Service", "LocalBusiness", "ProfessionalService", "HowTo"}),
    "page_docs": frozenset({"TechArticle", "APIReference", "SoftwareSourceCode", "SoftwareApplication"}),
    "page_website": frozenset({"WebSite", "WebPage", "website", "Organization"}),
}

# Block tags, as a small category.
TAG_CATEGORY: dict[str, int] = {
    "p": 1,
    "li": 2,
    "h1": 3,
    "h2": 4,
    "h3": 5,
    "h4": 6,
    "h5": 6,
    "h6": 6,
    "td": 7,
    "th": 8,
    "div": 9,
    "pre": 10,
    "blockquote": 11,
    "dt": 12,
    "dd": 13,
    "figcaption": 14,
    "caption": 14,
    "section": 15,
    "article": 15,
    "main": 15,
    "header": 16,
    "footer": 16,
    "nav": 17,
    "aside": 17,
    "button": 18,
    "option": 18,
    "select": 18,
    "address": 19,
    "summary": 20,
    "details": 20,
    "body": 21,
}
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
CHROME_PHRASES = re.compile(
    r"\b(?:copyright|all rights reserved|privacy|cookies?|terms of (?:use|service)|sign ?in|log ?in|"
    r"sign ?up|subscribe|newsletter|follow us|share (?:this|on)|read more|see all|view all|load more|"
    r"skip to|back to top|advertisement|sponsored|related (?:posts|articles|stories)|you may also like)\b",
    re.IGNORECASE,
)
COMMENTS_HEADING = re.compile(
    r"\b(?:comments?|repl(?:y|ies)|responses?|discussion|leave a (?:reply|comment)|join the conversation|"
    r"related|more (?:from|stories|news|articles)|you (?:may|might) also|recommended|popular|trending|"
    r"latest|recent|newsletter|share|follow|tags?|categories|about the author|read next|see also)\b",
    re.IGNORECASE,
)
"""Headings above what is not the page's own text (the comments, what else the site offers)."""
_NAME_SPLIT = re.compile(r"[-_\s:/.]+|(?<=[a-z])(?=[A-Z])")
_SENTENCE_END = re.compile(r"[.!?。！？]")
_DIGITS = re.compile(r"\d")

ANCESTOR_LEVELS = 3
"""Sizes of the elements holding the block are read this many levels up."""


def _feature_names() -> tuple[str, ...]:
    own = (
        "tag",
        "tokens",
        "chars",
        "link_density",
        "images",
        "hidden",
        "sentence_ends",
        "commas",
        "ends_sentence",
        "digit_share",
        "capital_share",
        "mean_token_chars",
        "chrome_phrases",
        "in_link",
        "children",
    )
    where = (
        "position",
        "chars_before",
        "depth",
        "after_h1",
        "in_text_prop",
        "under_comments_heading",
    )
    around = tuple(
        name
        for level in range(1, ANCESTOR_LEVELS + 1)
        for name in (
            f"up{level}_share",
            f"up{level}_link_density",
            f"up{level}_blocks",
            f"up{level}_prose_share",
        )
    )
    repeats = ("siblings", "same_shape_siblings", "same_shape_page", "same_text_page", "subtree_share")
    container = ("in_prose_half", "in_prose_most", "prose_container_depth")
    neighbours = ("prev_tokens", "prev_link_density", "next_tokens", "next_link_density")
    # No count of the page's blocks or words, nor of blocks between a block and a heading: a model
    # reading them learned that text 200 blocks below the <h1> is rarely content, and cut long
    # articles short (their cost then grew with the page, as trafilatura was asked too).
    page = ("page_link_density", "page_h1s", *PAGE_TYPES)
    return (
        *own,
        *where,
        *(f"word_{group}" for group in WORD_GROUPS),
        *(f"in_{name}" for name in LANDMARK_TAGS),
        *ITEM_TYPES,
        *around,
        *repeats,
        *container,
        *neighbours,
        *page,
    )


FEATURES: tuple[str, ...] = _feature_names()
"""The names of the features, in the order of each row."""
CATEGORICAL: frozenset[str] = frozenset({"tag"})
"""Features that name a category rather than measure something."""


def page_types(root: lxml.html.HtmlElement) -> frozenset[str]:
    """The schema.org and OpenGraph types the page declares (call before its scripts go)."""
    return type_inputs(*declared_types(root))


def type_inputs(schema: list[str], og_types: list[str]) -> frozenset[str]:
    """page_types, from the types the page declares (selection.declared_types)."""
    return frozenset((*schema, *og_types))


@dataclass(slots=True)
class _Around:
    """What a block inherits from the elements around it: the block level (Block.depth) of the
    nearest element of each word group, landmark and item type (NONE: none), shared with the
    parent block when the block itself adds none."""

    marks: tuple[int, ...]
    in_text_prop: int


NONE = -(10**6)
"""The level of a kind of element not found around the block (far above the page's root)."""


def _names(element: lxml.html.HtmlElement) -> frozenset[str]:
    classes = element.get("class")
    identifier = element.get("id")
    if not classes and not identifier:
        return _NO_NAMES
    return _name_words(f"{classes or ''} {identifier or ''}")


_NO_NAMES: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=4096)
def _name_words(value: str) -> frozenset[str]:
    """The words of a class and id (pages repeat the same ones on many elements)."""
    return frozenset(part.lower() for part in _NAME_SPLIT.split(value) if part)


_GROUPS = tuple(WORD_GROUPS.values())
_WORD_GROUP_INDEX: dict[str, tuple[int, ...]] = {
    word: tuple(i for i, group in enumerate(_GROUPS) if word in group) for group in _GROUPS for word in group
}
"""For each class or id word, the word groups it is in."""
_LANDMARK_GROUPS = tuple(LANDMARK_TAGS.items())
_LANDMARK_INDEX = {name: i for i, name in enumerate(LANDMARK_TAGS)}
_ITEM_GROUPS = tuple(ITEM_TYPES.values())
_TAG_LANDMARKS: dict[str, tuple[int, ...]] = {
    tag: tuple(len(_GROUPS) + i for i, (_, tags) in enumerate(_LANDMARK_GROUPS) if tag in tags)
    for _, tags in _LANDMARK_GROUPS
    for tag in tags
}
"""For each tag, the marks (after the word groups) of the landmark groups it is in."""
_MARKS = len(_GROUPS) + len(_LANDMARK_GROUPS) + len(_ITEM_GROUPS)
_NO_MARKS = (NONE,) * _MARKS


@functools.lru_cache(maxsize=4096)
def _word_marks(names: frozenset[str]) -> tuple[int, ...]:
    """The marks of the word groups of class and id words (the same few sets on every element)."""
    return tuple(i for name in names for i in _WORD_GROUP_INDEX.get(name, ()))


def _around(block: Block, parent: _Around | None, inline_names: Set[str]) -> _Around:
    element = block.element
    inherited = parent.marks if parent is not None else _NO_MARKS
    in_text_prop = parent.in_text_prop if parent is not None else 0
    # The same mark twice is set once: the element's and the inline elements' words need no union.
    found = list(_word_marks(_names(element)))
    for name in inline_names:
        found.extend(_WORD_GROUP_INDEX.get(name, ()))
    # A parsed tree's tags are str; types-lxml types them as anything one may set by hand.
    tag: str = element.tag  # type: ignore[assignment]
    offset = len(_GROUPS)
    found.extend(_TAG_LANDMARKS.get(tag, ()))
    role = element.get("role")
    if role and role.strip().lower() in ROLES:
        found.append(offset + _LANDMARK_INDEX[ROLES[role.strip().lower()]])
    itemtype = element.get("itemtype")
    if itemtype:
        declared = {value.rstrip("/").rsplit("/", 1)[-1] for value in itemtype.split()}
        offset += len(_LANDMARK_GROUPS)
        found.extend(offset + i for i, group in enumerate(_ITEM_GROUPS) if not declared.isdisjoint(group))
    if element.get("itemprop") in TEXT_PROPS:
        in_text_prop = 1
    if not found:
        if parent is not None and parent.in_text_prop == in_text_prop:
            return parent  # nothing new: share the parent's
        return _Around(inherited, in_text_prop)
    marks = list(inherited)
    for i in found:
        marks[i] = block.depth
    return _Around(tuple(marks), in_text_prop)


def _inline_names(block: Block) -> set[str]:
    """Class and id words of inline elements between a block and its parent block (an <a class="card">
    around a card's <div>s)."""
    names: set[str] = set()
    parent = block.parent.element if block.parent is not None else None
    element = block.element.getparent()
    while element is not None and element is not parent:
        names |= _names(element)
        element = element.getparent()
    return names


def _shape(block: Block) -> str:
    element = block.element
    parent = element.getparent()
    parent_part = f"{parent.tag!s}.{parent.get('class') or ''}" if parent is not None else ""
    return f"{parent_part}>{element.tag!s}.{element.get('class') or ''}"


def block_features(
    segmentation: Segmentation, declared: frozenset[str], *, spare: int = 0
) -> tuple[list[Block], npt.NDArray[np.float64]]:
    """The blocks with text (not the page's root) and a row of FEATURES for each, followed by
    ``spare`` columns left for the caller (NaN): a page of many blocks had its rows copied
    whole to add a column, twice their memory at once."""
    blocks = segmentation.blocks
    n = len(blocks)
    # Sizes of what each block holds (its own text and its descendants'), innermost first.
    sub_tokens = [len(block.tokens) for block in blocks]
    sub_links = [block.link_chars for block in blocks]
    sub_chars = [len(block.text) for block in blocks]
    own_tokens = np.array(sub_tokens, dtype=np.float64)
    own_links = np.array(sub_links, dtype=np.float64)
    own_chars = np.array(sub_chars, dtype=np.float64)
    sub_prose = [len(block.tokens) if _is_prose(block) else 0 for block in blocks]
    sub_blocks = [1 if block.tokens else 0 for block in blocks]
    for block in reversed(blocks):
        parent = block.parent
        if parent is not None:
            i, j = block.index, parent.index
            sub_tokens[j] += sub_tokens[i]
            sub_links[j] += sub_links[i]
            sub_chars[j] += sub_chars[i]
            sub_prose[j] += sub_prose[i]
            sub_blocks[j] += sub_blocks[i]
    page_tokens = max(sub_tokens[0], 1)
    page_prose = max(sub_prose[0], 1)
    page_chars = max(sub_chars[0], 1)
    # The innermost elements holding half and most of the page's prose (readability's idea of the
    # article's container, measured rather than scored).
    parents = [block.parent.index if block.parent is not None else -1 for block in blocks]
    depths = [block.depth for block in blocks]
    prose = [float(size) for size in sub_prose]
    half = _innermost_holding(depths, prose, 0.5 * page_prose)
    most = _innermost_holding(depths, prose, 0.8 * page_prose)
    inside_half = _inside(parents, half)
    inside_most = _inside(parents, most)

    # Of each distinct word of the page (the tokens are their numbers): its length, and whether
    # it holds a digit.
    word_chars = [len(word) for word in segmentation.words]
    word_digits = [0 if word.isalpha() or _DIGITS.search(word) is None else 1 for word in segmentation.words]

    shapes = [_shape(block) for block in blocks]
    shape_counts = Counter(shapes)
    text_counts = Counter(block.text for block in blocks if block.tokens)
    sibling_shapes: Counter[tuple[int, str]] = Counter()
    for block in blocks:
        if block.parent is not None:
            sibling_shapes[block.parent.index, shapes[block.index]] += 1

    # What needs each block's own text, tree or place in the walk is read in the walk; the rest
    # is arithmetic on whole columns afterwards (the same divisions of the same numbers).
    arounds: list[_Around | None] = [None] * n
    text_blocks: list[Block] = []
    # NaN until set: a feature left out reads as missing (the tests check none is). What the walk
    # reads goes into the rows ROW_CHUNK blocks at a time.
    rows = np.full(
        (sum(1 for block in blocks if block.tokens and block.parent is not None), len(FEATURES) + spare),
        np.nan,
    )
    read: list[tuple[float, ...]] = []
    marks: list[tuple[int, ...]] = []

    def write_read() -> None:
        """Put what the walk read of the last blocks into their rows; and how many block levels
        up the nearest element of each word group, landmark and item type is (FAR when none is,
        or it is further)."""
        done = len(text_blocks) - len(read)
        where = slice(done, len(text_blocks))
        rows[where, _READ_COLUMNS] = np.array(read, dtype=np.float64).reshape(len(read), len(_READ))
        up = np.array([block.depth for block in text_blocks[where]], dtype=np.int64).reshape(len(read), 1)
        up = up - np.array(marks, dtype=np.int64).reshape(len(read), _MARKS)
        rows[where, _FIRST_MARK : _FIRST_MARK + _MARKS] = np.minimum(up, FAR)
        read.clear()
        marks.clear()

    first_h1: int | None = None
    h1s = 0
    heading_other = 0.0
    for block in blocks:
        parent = block.parent
        if parent is None:
            around = _around(block, None, _NO_NAMES)
        else:
            around = _around(block, arounds[parent.index], _inline_names(block))
        arounds[block.index] = around
        tokens = block.tokens
        if not tokens:
            continue
        tag = block.element.tag
        if tag in HEADINGS:
            if tag == "h1":
                h1s += 1
                if first_h1 is None:
                    first_h1 = block.index
            heading_other = 1.0 if len(tokens) <= 8 and COMMENTS_HEADING.search(block.text) else 0.0
        if parent is None:
            continue
        text = block.text
        count = len(tokens)
        words = text.split()
        shape = shapes[block.index]
        read.append(
            (
                TAG_CATEGORY.get(str(tag), 0),
                block.images,
                1.0 if block.hidden else 0.0,
                len(_SENTENCE_END.findall(text)),
                text.count(","),
                1.0 if text.rstrip()[-1:] in ".!?:。！？" else 0.0,
                sum(map(word_digits.__getitem__, tokens)) if _DIGITS.search(text) else 0,
                sum(map(str.isupper, map(itemgetter(0), words))) / max(len(words), 1),
                sum(map(word_chars.__getitem__, tokens)),
                len(CHROME_PHRASES.findall(text)) if count < 40 else 0,
                1.0 if _in_link(block) else 0.0,
                len(block.children),
                around.in_text_prop,
                heading_other,
                len(parent.children),
                sibling_shapes[parent.index, shape],
                shape_counts[shape],
                text_counts[text],
            )
        )
        text_blocks.append(block)
        marks.append(around.marks)
        if len(read) == ROW_CHUNK:
            write_read()
    write_read()
    del arounds  # (what the walk needed)

    def put(name: str, values: npt.ArrayLike) -> None:
        rows[:, _COLUMN[name]] = values

    at = np.array([block.index for block in text_blocks], dtype=np.intp)
    tokens_at = own_tokens[at]
    for name in _PER_TOKEN:
        put(name, rows[:, _COLUMN[name]] / tokens_at)
    chars_at = own_chars[at]
    link_density = np.where(chars_at > 0, own_links[at] / np.maximum(chars_at, 1.0), 0.0)
    put("tokens", tokens_at)
    put("chars", chars_at)
    put("link_density", link_density)
    put("position", at / n)
    chars_before = np.cumsum(chars_at) - chars_at
    put("chars_before", chars_before / page_chars)
    depth_all = np.array(depths, dtype=np.intp)
    depth_at = depth_all[at]
    put("depth", depth_at)
    put("after_h1", at >= first_h1 if first_h1 is not None else 0.0)

    # The elements holding the block, ANCESTOR_LEVELS up; above the root, the whole page.
    share_all = np.array(sub_tokens, dtype=np.float64) / page_tokens
    links_all = np.array(sub_links, dtype=np.float64) / np.maximum(np.array(sub_chars, dtype=np.float64), 1.0)
    blocks_all = np.array(sub_blocks, dtype=np.float64)
    prose_all = np.array(sub_prose, dtype=np.float64) / page_prose
    parent_all = np.array(parents, dtype=np.intp)
    ancestor = at
    for level in range(1, ANCESTOR_LEVELS + 1):
        ancestor = np.where(ancestor >= 0, parent_all[np.maximum(ancestor, 0)], -1)
        above = ancestor < 0
        known = np.maximum(ancestor, 0)
        put(f"up{level}_share", np.where(above, 1.0, share_all[known]))
        put(f"up{level}_link_density", np.where(above, sub_links[0] / page_chars, links_all[known]))
        put(f"up{level}_blocks", np.where(above, float(sub_blocks[0]), blocks_all[known]))
        put(f"up{level}_prose_share", np.where(above, 1.0, prose_all[known]))
    put("subtree_share", share_all[at])
    put("in_prose_half", np.array(inside_half, dtype=np.float64)[at])
    put("in_prose_most", np.array(inside_most, dtype=np.float64)[at])
    put("prose_container_depth", depth_at - depths[half] if half >= 0 else -1.0)
    # The blocks with text before and after the block.
    put("prev_tokens", np.concatenate(([0.0], tokens_at[:-1]))[: len(at)])
    put("prev_link_density", np.concatenate(([0.0], link_density[:-1]))[: len(at)])
    put("next_tokens", np.concatenate((tokens_at[1:], [0.0]))[: len(at)])
    put("next_link_density", np.concatenate((link_density[1:], [0.0]))[: len(at)])

    put("page_link_density", sub_links[0] / page_chars)
    put("page_h1s", float(h1s))
    for name, group in PAGE_TYPES.items():
        put(name, 0.0 if declared.isdisjoint(group) else 1.0)
    return text_blocks, rows


ROW_CHUNK = 1024
"""What is read in the walk goes into the rows this many blocks at a time: a page of tens of
thousands of blocks held as Python numbers was tens of megabytes, and as arrays beside the rows
a third of them again."""
_READ = (
    "tag",
    "images",
    "hidden",
    "sentence_ends",
    "commas",
    "ends_sentence",
    "digit_share",
    "capital_share",
    "mean_token_chars",
    "chrome_phrases",
    "in_link",
    "children",
    "in_text_prop",
    "under_comments_heading",
    "siblings",
    "same_shape_siblings",
    "same_shape_page",
    "same_text_page",
)
"""What the walk reads for each block with text, in order: the features, or for _PER_TOKEN the
counts they are per token of."""
_PER_TOKEN = frozenset({"sentence_ends", "commas", "digit_share", "mean_token_chars"})
_COLUMN = {name: i for i, name in enumerate(FEATURES)}
_READ_COLUMNS = np.array([_COLUMN[name] for name in _READ], dtype=np.intp)
_FIRST_MARK = FEATURES.index(f"word_{next(iter(WORD_GROUPS))}")
"""Where the distances (word groups, then landmarks, then item types) sit among FEATURES."""


PROSE_TOKENS = 10
PROSE_MAX_LINK_DENSITY = 0.3


def _is_prose(block: Block) -> bool:
    return len(block.tokens) >= PROSE_TOKENS and block.link_density <= PROSE_MAX_LINK_DENSITY


def _in_link(block: Block) -> bool:
    """Whether a link holds the block (a card whose whole body is one <a>)."""
    stop = block.parent.element if block.parent is not None else None
    element = block.element.getparent()
    while element is not None and element is not stop:
        if element.tag == "a":
            return True
        element = element.getparent()
    return False


def _innermost_holding(depths: list[int], sizes: list[float], least: float) -> int:
    """The deepest block whose subtree holds at least ``least`` of ``sizes`` (those that do are
    nested in one another); -1 if none does."""
    best = -1
    for i, size in enumerate(sizes):
        if size >= least and (best < 0 or depths[i] > depths[best]):
            best = i
    return best


def _inside(parents: list[int], container: int) -> list[bool]:
    """For each block, whether it is ``container`` or inside it (parents come before children)."""
    inside = [False] * len(parents)
    if container < 0:
        return inside
    inside[container] = True
    for i in range(container + 1, len(parents)):
        j = parents[i]
        if j >= 0 and inside[j]:
            inside[i] = True
    return inside
