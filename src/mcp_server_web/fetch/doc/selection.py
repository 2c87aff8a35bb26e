"""Which blocks of a page are its main content, from two votes and the page itself.

Two readers each say which text they think is the main content: readability-lxml (the element
with the best-scoring paragraphs, with its siblings), and the block model (block_model.py) or,
where the model and readability disagree, trafilatura (rules over class names and tags, link
density, and its own fallbacks). The extractors' outputs are aligned with the page's blocks
(coverage.py), so every block carries two votes. The page then goes one of two ways:

* Article mode, when the two agree on most of what they keep: a story, a post, a documentation
  page. The content is what they keep inside the element that holds most of it (the container),
  less figure captions and repeats; a block only readability keeps must be more than a line.
* Region mode, when they disagree (listings, product and category pages, forum threads, service
  pages, where readability picks one item of a list and trafilatura another), or when they agree
  on an introduction above a list of linked cards that neither kept, or on a small part of the
  main region while most of its prose is kept by neither (a page's description in an element
  named like a footer, with a promotion both keep). The content is then the page's main region
  (its <main>, else the body less page-level navigation, header, footer and sidebars), less the
  blocks inside elements whose class or id names them as chrome (menus, breadcrumbs, filters,
  sharing, "related", cookie banners...) and less repeats, while whatever either extractor keeps
  stays, except a listing's controls (facets, filters, sorting: _Facts.controls). On a forum or
  Q&A page whose posts carry schema.org microdata (itemprop="text"), the content is those posts.

The page's own metadata counts too (page_kinds): on the page of one product (or of one
ProductGroup, a product in variants; og:type "product.group" is a collection), customer reviews,
questions and purchase options are not the product, even when an extractor keeps them; a page
that says it is an article is never taken for a listing.

Hidden elements (html_tree.HIDDEN) are only ever kept with a vote, and not when they repeat
visible text: collapsed answers and tabs are content, a second layout's copy is not.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import lxml.html

from mcp_server_web.fetch.doc.blocks import Block, Segmentation, trigrams
from mcp_server_web.fetch.doc.html_tree import is_data_table

# The constants below were set by looking at the failures on two page sets (news articles, and
# seven types of pages); round values, each a plain statement about pages rather than a fit.
VOTE = 0.5
"""A block counts as kept by an extractor when this share of its words is in the extractor's output."""
AGREEMENT_FOR_ARTICLE = 0.4
"""Article mode when the words both extractors keep are at least this share of those either keeps."""
CONTAINER_SHARE = 0.7
"""The container is the innermost element holding this share of the words either extractor keeps."""
SHORT_BLOCK_TOKENS = 10
"""In article mode a block only readability keeps must have at least this many words."""
CHROME_MAX_SHARE = 0.5
"""An element named like chrome is only chrome when it holds less than this share of the region's words."""
MAIN_MIN_SHARE = 0.25
"""The page's <main> is its main region unless it holds less than this share of the words outside
page-level navigation, header, footer and sidebars (a <main> left empty for scripts to fill)."""
CAPTION_MAX_TOKENS = 60
"""An element named "caption" holding more words than this is not a caption."""
REPEAT_MIN_TOKENS = 5
"""Repeated blocks shorter than this are not dropped as repeats ("Reply", prices, labels)."""
HIDDEN_MIN_TOKENS = 5
"""A hidden block with fewer words is a label or metadata, not content."""
ITEM_VOTED_SHARE = 0.5
"""In article mode, the rest of a list item (its linked title, its date) is kept with the item when
the extractors kept at least this share of the words of the list's items (see _completed_items)."""
PROSE_TOKENS = 15
"""A block of this many words or more, mostly outside links, is prose."""
PROSE_MAX_LINK_DENSITY = 0.3
MARKED_MIN_TOKENS = 50
MARKED_PROSE_SHARE = 0.5
"""Posts marked up with itemprop="text" are the content when they hold at least MARKED_MIN_TOKENS
words and this share of the region's prose."""
LIST_MIN_ITEMS = 4
LIST_REGION_SHARE = 0.3
LIST_UNVOTED = 0.5
LIST_LINK_SHARE = 0.2
LIST_LINKED_ITEMS = 0.75
"""A list of cards that the extractors missed (see _unvoted_listing): at least LIST_MIN_ITEMS
similar siblings holding LIST_REGION_SHARE of the region's words, of which what no extractor kept
weighs at least LIST_UNVOTED of all they kept; their text at least LIST_LINK_SHARE link text, and
at least LIST_LINKED_ITEMS of them with a link (cards pointing elsewhere, not posts or comments)."""

PART_MAX_SHARE = 0.4
PART_UNVOTED_PROSE = 0.5
"""Region mode, although the extractors agree, when what they keep is less than PART_MAX_SHARE of
the main region's words and at least PART_UNVOTED_PROSE of its prose is kept by neither (see
_agreed_on_a_part); not on a page that says it is an article."""

# Class and id words naming page chrome rather than content. Words that also often name content
# wrappers ("sidebar" in "has-sidebar" layouts, "tag", "search" results, "social" posts,
# "newsletter" articles, "banner" heroes, "widget" in page builders) are left out.
CHROME_WORDS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "menus", "submenu", "megamenu", "breadcrumb",
        "breadcrumbs", "footer", "share", "sharing", "subscribe", "subscription", "signup",
        "cookie", "cookies", "consent", "gdpr", "advert", "advertisement", "ads", "sponsor",
        "related", "recommended", "recommendations", "recommendation", "popular", "trending",
        "login", "signin", "modal", "popup", "overlay", "drawer", "pagination", "pager", "toolbar",
        "cart", "minicart", "basket", "wishlist", "filter", "filters", "facets", "sort", "sorting",
        "upsell", "crosssell", "recently", "masthead", "topbar", "utility", "dropdown", "flyout",
        "checkbox", "controls", "tooltip", "toc", "avatar", "signature", "reactions", "alert",
        "zoom", "countdown", "ratings",
    }
)  # fmt: skip
# On the page of one product, these name what is about the product rather than the product itself.
PRODUCT_CHROME_WORDS = CHROME_WORDS | {"review", "reviews", "rating", "faq", "questions", "options"}
# The controls that narrow or order a listing (facets, filters, sorting): never content, even where
# an extractor keeps them, when they hold no prose and no pictures (see _Facts.controls).
FACET_WORDS = frozenset(
    {
        "facet",
        "facets",
        "filter",
        "filters",
        "refine",
        "refinement",
        "refinements",
        "sort",
        "sorting",
        "sortby",
    }
)
# A list of cards named so is not a listing the extractors missed.
_NOT_LISTING_WORDS = CHROME_WORDS | {"comment", "comments", "review", "reviews", "sidebar", "widget"}
_CAPTION_WORDS = frozenset({"caption", "captions", "figcaption"})
_CURRENT_WORDS = frozenset({"current", "active", "selected"})
CURRENT_ENTRY_LINK_DENSITY = 0.5
"""A block above the title whose text is at least this share link text, marked as the current
entry, is a menu's highlighted entry (see _without_current_entries)."""
_NAME_SPLIT = re.compile(r"[-_\s:/.]+|(?<=[a-z])(?=[A-Z])")
_FIGURE_TAGS = frozenset({"figure", "figcaption"})
_POST_PROPS = frozenset({"text", "articleBody"})
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class Selection:
    kept: list[Block]
    article: bool
    """Article mode (see the module docstring); region mode if False."""


def select(
    segmentation: Segmentation,
    *,
    readability: dict[Block, float],
    second: dict[Block, float],
    main: lxml.html.HtmlElement | None,
    kinds: frozenset[str] = frozenset(),
) -> Selection:
    """The blocks that are the page's main content (see the module docstring).

    ``readability`` and ``second`` give each block's vote: readability's, its share of words found
    in readability's output (coverage.py), and the second reader's, the block model's or
    trafilatura's. ``main`` is the page's one outermost <main> / role=main element if it has one;
    ``kinds`` is what page_kinds says.
    """
    blocks = segmentation.blocks
    facts = _Facts(blocks, main)
    in_r = [readability.get(block, 0.0) >= VOTE for block in blocks]
    in_t = [second.get(block, 0.0) >= VOTE for block in blocks]
    both, either = _agreed_words(blocks, in_r, in_t)
    article = bool(either) and both >= AGREEMENT_FOR_ARTICLE * either
    if (
        article
        and "article" not in kinds
        and (_unvoted_listing(blocks, facts, in_r, in_t) or _agreed_on_a_part(blocks, facts, in_r, in_t))
    ):
        article = False
    if article:
        kept = _with_images(blocks, _without_hidden_copies(_article(blocks, facts, in_r, in_t, kinds)))
    else:
        kept = _without_hidden_copies(_region(blocks, facts, in_r, in_t, kinds))
    return Selection(_without_current_entries(kept), article=article)


def vote_agreement(blocks: list[Block], first: dict[Block, float], second: dict[Block, float]) -> float:
    """The share of the visible words either vote keeps that both keep (0 when neither keeps any)."""
    both, either = _agreed_words(
        blocks,
        [first.get(block, 0.0) >= VOTE for block in blocks],
        [second.get(block, 0.0) >= VOTE for block in blocks],
    )
    return both / either if either else 0.0


_CELL_TAGS = frozenset({"td", "th", "caption"})


def unvoted_structure(blocks: list[Block], first: dict[Block, float], second: dict[Block, float]) -> bool:
    """Whether the page holds a block of code (<pre>) or a cell of a data table with text that
    neither vote keeps: few words, often a page's point (a one-line install command, a product's
    specifications), and what a reader that scores paragraphs (readability) drops."""
    tables: dict[lxml.html.HtmlElement, bool] = {}
    for block in blocks:
        if (
            not block.tokens
            or block.hidden
            or first.get(block, 0.0) >= VOTE
            or second.get(block, 0.0) >= VOTE
        ):
            continue
        tag = block.element.tag
        if tag == "pre":
            return True
        if tag in _CELL_TAGS:
            table = next(block.element.iterancestors("table"), None)
            if table is not None:
                if table not in tables:
                    tables[table] = is_data_table(table)
                if tables[table]:
                    return True
    return False


def _agreed_words(blocks: list[Block], in_a: list[bool], in_b: list[bool]) -> tuple[int, int]:
    """Visible words both votes keep, and words either keeps."""
    both = either = 0
    for block, a, b in zip(blocks, in_a, in_b, strict=True):
        if not block.hidden:
            n = len(block.tokens)
            both += n if a and b else 0
            either += n if a or b else 0
    return both, either


# --- article mode ----------------------------------------------------------------------------


def _article(
    blocks: list[Block], facts: _Facts, in_r: list[bool], in_t: list[bool], kinds: frozenset[str]
) -> list[Block]:
    weights = [len(block.tokens) if r or t else 0 for block, r, t in zip(blocks, in_r, in_t, strict=True)]
    container = _container(blocks, weights, CONTAINER_SHARE)
    inside = {block.index for block in container.descendants()} | {container.index}
    completed = _completed_items(container, weights, facts)
    # On the page of one product, reviews and questions are about the product, not the product,
    # even where both extractors keep them.
    chrome = (
        facts.chrome(CHROME_MAX_SHARE * sum(weights), PRODUCT_CHROME_WORDS) if "product" in kinds else None
    )
    kept: list[Block] = []
    seen: dict[str, Block | None] = {}
    for block in blocks:
        i = block.index
        r, t = in_r[i], in_t[i]
        if i in completed and not (r or t) and not block.hidden and not facts.figure[i]:
            kept.append(block)
            continue
        if not (r or t) or facts.figure[i] or (chrome is not None and chrome[i]):
            continue
        if i in inside:
            if r and not t and len(block.tokens) < SHORT_BLOCK_TOKENS:
                continue  # a credit, a "read more" line, a caption readability kept
        elif not (r and t):
            continue
        if _repeats(block, seen):
            continue
        kept.append(block)
    return _with_heading(blocks, kept)


def _with_heading(blocks: list[Block], kept: list[Block]) -> list[Block]:
    """``kept`` and the page's one <h1> when it sits right above the first kept text: the
    extractors leave out a heading they take for the page's title, and a page whose <h1> heads
    its text reads as it does in a browser (``<body><h1>T</h1><p>...``). (Any heading right above
    kept text was tried: it kept section titles of teasers, and lowered the zyte F1 by 0.002.)"""
    if not kept:
        return kept
    first = kept[0]
    h1s = [position for position, block in enumerate(blocks) if block.element.tag == "h1" and block.tokens]
    if len(h1s) != 1:
        return kept
    heading = blocks[h1s[0]]
    if heading.hidden or heading.index >= first.index:
        return kept
    between = blocks[h1s[0] + 1 : first.index]
    if any(block.tokens and not block.hidden for block in between):
        return kept
    return [heading, *kept]


def _completed_items(container: Block, weights: list[int], facts: _Facts) -> set[int]:
    """The blocks inside the items of lists in ``container`` whose items the extractors mostly
    kept: the rest of such an item (its linked title, its date) belongs with it."""
    subtree = facts.subtree_tokens
    voted = list(weights)
    members = [container, *container.descendants()]
    for block in reversed(members):
        if block.parent is not None and block is not container:
            voted[block.parent.index] += voted[block.index]
    completed: set[int] = set()
    for block in members:
        for items in _item_groups(block, subtree):
            mass = sum(subtree[item.index] for item in items)
            if sum(voted[item.index] for item in items) < ITEM_VOTED_SHARE * mass:
                continue
            if _named_like_chrome(items[0].element, _NOT_LISTING_WORDS):
                continue
            for item in items:
                completed.add(item.index)
                completed.update(descendant.index for descendant in item.descendants())
    return completed


def _container(blocks: list[Block], weights: list[int], share: float) -> Block:
    """The innermost block whose subtree holds ``share`` of the total weight."""
    totals = list(weights)
    for block in reversed(blocks):
        if block.parent is not None:
            totals[block.parent.index] += totals[block.index]
    needed = share * totals[0]
    node = blocks[0]
    if needed <= 0:
        return node
    while True:
        heavy = next((child for child in node.children if totals[child.index] >= needed), None)
        if heavy is None:
            return node
        node = heavy


def _with_images(blocks: list[Block], kept: list[Block]) -> list[Block]:
    """``kept`` and the blocks holding only images next to a kept block, inside the kept blocks'
    common ancestor (pictures in an article, not the logo in its header)."""
    if not kept:
        return kept
    chosen = set(kept)
    inside = {block.index for block in _common_ancestor(kept).descendants()}
    extra = []
    previous_text_kept = False
    pending: list[Block] = []
    for block in blocks:
        if block.hidden:
            continue
        if block.tokens:
            now_kept = block in chosen
            if now_kept:
                extra.extend(pending)
            pending = []
            previous_text_kept = now_kept
        elif block.images and block.index in inside:
            if previous_text_kept:
                extra.append(block)
            else:
                pending.append(block)
    if not extra:
        return kept
    return sorted(chosen.union(extra), key=lambda block: block.index)


def _common_ancestor(kept: list[Block]) -> Block:
    """The innermost block that holds all of ``kept``."""
    ancestors: list[Block] = []
    node: Block | None = kept[0]
    while node is not None:
        ancestors.append(node)
        node = node.parent
    positions = {id(block): i for i, block in enumerate(ancestors)}
    highest = 0
    for block in kept[1:]:
        node = block
        while node is not None and id(node) not in positions:
            node = node.parent
        if node is not None:
            highest = max(highest, positions[id(node)])
    return ancestors[highest]


# --- region mode -----------------------------------------------------------------------------


def _region(
    blocks: list[Block], facts: _Facts, in_r: list[bool], in_t: list[bool], kinds: frozenset[str]
) -> list[Block]:
    region = [block for block in blocks if block.tokens and facts.in_region[block.index]]
    posts = _marked_posts(region, facts, in_r, in_t)
    if posts is not None:
        return posts
    region_tokens = sum(len(block.tokens) for block in region) or 1
    product = "product" in kinds
    chrome = facts.chrome(CHROME_MAX_SHARE * region_tokens, PRODUCT_CHROME_WORDS if product else CHROME_WORDS)
    facets = facts.controls(CHROME_MAX_SHARE * region_tokens)
    kept = []
    seen: dict[str, Block | None] = {}
    for block in region:
        i = block.index
        if facets[i]:
            continue
        if in_r[i] or in_t[i]:
            if product and chrome[i]:
                continue  # reviews, questions and options an extractor kept on a product page
        elif chrome[i] or block.hidden:
            continue
        if _repeats(block, seen):
            continue
        kept.append(block)
    return kept


def _marked_posts(
    region: list[Block], facts: _Facts, in_r: list[bool], in_t: list[bool]
) -> list[Block] | None:
    """On a forum or Q&A page whose posts are marked up as schema.org items with itemprop="text"
    (or "articleBody"), the posts, what both extractors keep and the page's <h1>; None if the
    page has no such posts, or they are only a small part of its prose (FAQ answers on a
    service page)."""
    marked = sum(len(block.tokens) for block in region if facts.marked[block.index] and not block.hidden)
    if marked < MARKED_MIN_TOKENS:
        return None
    prose = sum(len(block.tokens) for block in region if _is_prose(block))
    if marked < MARKED_PROSE_SHARE * prose:
        return None
    return [
        block
        for block in region
        if (in_r[block.index] and in_t[block.index])
        or (not block.hidden and (facts.marked[block.index] or block.element.tag == "h1"))
    ]


def _is_prose(block: Block) -> bool:
    return len(block.tokens) >= PROSE_TOKENS and block.link_density < PROSE_MAX_LINK_DENSITY


def _unvoted_listing(blocks: list[Block], facts: _Facts, in_r: list[bool], in_t: list[bool]) -> bool:
    """Whether the main region holds a list of similar linked items (cards, rows) that neither
    extractor kept and that weighs as much as what they kept: a listing or category page whose
    introduction they agreed on (see LIST_REGION_SHARE and the constants after it)."""
    subtree = facts.subtree_tokens
    voted = [len(b.tokens) if (in_r[b.index] or in_t[b.index]) else 0 for b in blocks]
    chars = [b.chars for b in blocks]
    link_chars = [b.link_chars for b in blocks]
    for block in reversed(blocks):
        if block.parent is not None:
            parent = block.parent.index
            voted[parent] += voted[block.index]
            chars[parent] += chars[block.index]
            link_chars[parent] += link_chars[block.index]
    region_tokens = sum(len(b.tokens) for b in blocks if facts.in_region[b.index]) or 1
    voted_total = voted[0] or 1
    for block in blocks:
        if not facts.in_region[block.index]:
            continue
        for items in _item_groups(block, subtree):
            mass = sum(subtree[item.index] for item in items)
            unvoted = mass - sum(voted[item.index] for item in items)
            if mass < LIST_REGION_SHARE * region_tokens or unvoted < LIST_UNVOTED * voted_total:
                continue
            item_chars = sum(chars[item.index] for item in items) or 1
            if sum(link_chars[item.index] for item in items) < LIST_LINK_SHARE * item_chars:
                continue  # posts or comments, not cards pointing elsewhere
            if _named_like_chrome(items[0].element, _NOT_LISTING_WORDS):
                continue
            linked = sum(
                1 for item in items if item.element.tag == "a" or item.element.find(".//a") is not None
            )
            if linked >= LIST_LINKED_ITEMS * len(items):
                return True
    return False


def _agreed_on_a_part(blocks: list[Block], facts: _Facts, in_r: list[bool], in_t: list[bool]) -> bool:
    """Whether what the extractors kept is a small part of the main region (PART_MAX_SHARE of its
    words), with most of the region's prose (PART_UNVOTED_PROSE) kept by neither: they agreed on
    one block (a promotion, an introduction, one post) of a page with more to it."""
    region = voted = prose = unvoted_prose = 0
    for block in blocks:
        if block.hidden or not block.tokens or not facts.in_region[block.index]:
            continue
        n = len(block.tokens)
        kept = in_r[block.index] or in_t[block.index]
        region += n
        voted += n if kept else 0
        if _is_prose(block):
            prose += n
            unvoted_prose += 0 if kept else n
    return voted < PART_MAX_SHARE * region and unvoted_prose >= PART_UNVOTED_PROSE * prose > 0


def _item_groups(block: Block, subtree_tokens: list[int]) -> list[list[Block]]:
    """The lists of items among ``block``'s children: at least LIST_MIN_ITEMS siblings with text
    and the same signature."""
    if len(block.children) < LIST_MIN_ITEMS:
        return []
    groups: dict[str, list[Block]] = {}
    for child in block.children:
        if subtree_tokens[child.index]:
            groups.setdefault(_signature(child.element), []).append(child)
    return [items for items in groups.values() if len(items) >= LIST_MIN_ITEMS]


def _signature(element: lxml.html.HtmlElement) -> str:
    """What makes siblings items of one list: their tag and classes (numbers aside)."""
    return f"{element.tag!s}.{_DIGITS.sub('', element.get('class') or '')}"


# --- both modes ------------------------------------------------------------------------------


def _repeats(block: Block, seen: dict[str, Block | None]) -> bool:
    """Whether ``block`` repeats the text of an earlier kept block held elsewhere on the page (a
    second rendition: mobile and desktop layouts, tabs), recording it if not. Repeats side by side
    in the same element (the same line in two recipes) are content, and so are short ones."""
    if len(block.tokens) < REPEAT_MIN_TOKENS:
        return False
    earlier = seen.get(block.text, False)
    if earlier is False:
        seen[block.text] = block.parent
        return False
    return earlier is not block.parent


def _without_current_entries(kept: list[Block]) -> list[Block]:
    """``kept`` without the highlighted entries of a menu above its first <h1>: a docs sidebar
    marks the page being read (aria-current, "current", "active"), whose name is the page's
    title, so the extractors' copy of the title votes for it too."""
    first_h1 = next((position for position, block in enumerate(kept) if block.element.tag == "h1"), None)
    if not first_h1:
        return kept
    above = [block for block in kept[:first_h1] if not _is_current_entry(block)]
    return above + kept[first_h1:] if len(above) < first_h1 else kept


def _is_current_entry(block: Block) -> bool:
    """Whether ``block`` is mostly a link marked as the current one."""
    if block.link_density < CURRENT_ENTRY_LINK_DENSITY:
        return False
    return any(
        element.get("aria-current") not in (None, "false") or _named_like_chrome(element, _CURRENT_WORDS)
        for element in (*_own_elements(block), *block.element.iterdescendants("a"))
    )


def _without_hidden_copies(kept: list[Block]) -> list[Block]:
    """``kept`` without its hidden blocks (html_tree.HIDDEN) that repeat kept visible text (a copy
    for another layout, or for search engines) or are too short to be more than labels."""
    if not any(block.hidden for block in kept):
        return kept
    visible: set[str] = set()
    for block in kept:
        if not block.hidden:
            tokens = block.tokens
            visible.update(trigrams(tokens))
    result = []
    for block in kept:
        if block.hidden:
            tokens = block.tokens
            if len(tokens) < HIDDEN_MIN_TOKENS:
                continue
            grams = trigrams(tokens)
            if sum(1 for gram in grams if gram in visible) >= 0.5 * len(grams):
                continue
        result.append(block)
    return result


class _Facts:
    """Per-block facts about where the block sits, indexed like the blocks."""

    def __init__(self, blocks: list[Block], main: lxml.html.HtmlElement | None) -> None:
        self.blocks = blocks
        n = len(blocks)
        self.in_main = [False] * n
        self.figure = [False] * n
        """In a figure or caption."""
        self.marked = [False] * n
        """In an element with itemprop="text" or "articleBody" (schema.org microdata)."""
        self.subtree_tokens = [len(block.tokens) for block in blocks]
        for block in reversed(blocks):
            if block.parent is not None:
                self.subtree_tokens[block.parent.index] += self.subtree_tokens[block.index]
        for block in blocks:
            i = block.index
            parent = block.parent
            if parent is not None:
                p = parent.index
                self.marked[i] = self.marked[p]
                self.in_main[i] = self.in_main[p]
                self.figure[i] = self.figure[p]
            for element in _own_elements(block):
                if element is main:
                    self.in_main[i] = True
                if element.tag in _FIGURE_TAGS or (
                    self.subtree_tokens[i] <= CAPTION_MAX_TOKENS
                    and _named_like_chrome(element, _CAPTION_WORDS)
                ):
                    self.figure[i] = True
                if element.get("itemprop") in _POST_PROPS:
                    self.marked[i] = True
        self.in_region = [True] * n
        """In the page's main region: its <main> (MAIN_MIN_SHARE), else the whole tree (whose
        page-level navigation, header, footer and sidebars extract.py took out before)."""
        if main is not None:
            main_tokens = sum(len(b.tokens) for b, inside in zip(blocks, self.in_main, strict=True) if inside)
            if main_tokens >= MAIN_MIN_SHARE * sum(len(b.tokens) for b in blocks):
                self.in_region = self.in_main

    def controls(self, max_tokens: float) -> list[bool]:
        """Whether each block sits in an element named like the controls of a listing (FACET_WORDS)
        holding under ``max_tokens`` words, no prose and no pictures: sites also name a grid of
        cards ("plp-filters") or tabs of content ("filter-tabs") so."""
        content = [_is_prose(block) or block.images > 0 for block in self.blocks]
        for block in reversed(self.blocks):
            if content[block.index] and block.parent is not None:
                content[block.parent.index] = True
        return self.chrome(max_tokens, FACET_WORDS, skip=content)

    def chrome(
        self, max_tokens: float, words: frozenset[str], *, skip: list[bool] | None = None
    ) -> list[bool]:
        """Whether each block sits in an element named like chrome holding under ``max_tokens`` words."""
        flags = [False] * len(self.blocks)
        for block in self.blocks:
            i = block.index
            if block.parent is not None and flags[block.parent.index]:
                flags[i] = True
                continue
            if self.subtree_tokens[i] >= max_tokens or (skip is not None and skip[i]):
                continue
            for element in _own_elements(block):
                if _named_like_chrome(element, words):
                    flags[i] = True
                    break
        return flags


def _own_elements(block: Block) -> list[lxml.html.HtmlElement]:
    """The block's element and the (inline) elements between it and its parent block's element."""
    elements = [block.element]
    stop = block.parent.element if block.parent is not None else None
    node = block.element.getparent()
    while node is not None and node is not stop:
        elements.append(node)
        node = node.getparent()
    return elements


def _named_like_chrome(element: lxml.html.HtmlElement, words: frozenset[str]) -> bool:
    """Whether the element's class or id holds one of ``words`` (as a word: "site-footer",
    "mainNav" and "share_bar" name a footer, a navigation and sharing)."""
    attributes = element.attrib
    names = attributes.get("class")
    identifier = attributes.get("id")
    if identifier:
        names = f"{names} {identifier}" if names else identifier
    if not names:
        return False
    return _names_hold(names, words)


@functools.lru_cache(maxsize=4096)
def _names_hold(names: str, words: frozenset[str]) -> bool:
    return any(word.lower() in words for word in _NAME_SPLIT.split(names) if word)


# --- what kind of page it is, from its own metadata ---------------------------------------------

_LD_TYPE = re.compile(r'"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")')
_QUOTED = re.compile(r'"([^"]+)"')
_PRODUCT_TYPES = frozenset({"Product", "ProductGroup", "IndividualProduct"})
_ARTICLE_TYPES = frozenset(
    {
        "Article", "NewsArticle", "BlogPosting", "Report", "ReportageNewsArticle", "OpinionNewsArticle",
        "AnalysisNewsArticle", "LiveBlogPosting", "ScholarlyArticle",
    }
)  # fmt: skip
_LIST_TYPES = frozenset({"ItemList", "CollectionPage", "OfferCatalog", "SearchResultsPage"})
MAX_PRODUCTS = 3
"""A page describing more products than this is a category or a listing, not a product page."""


def _og_kind(og_type: str) -> str:
    """The schema.org type an og:type stands for: "product.group" (and "product:group") is a
    group of products, the page of a category or collection, not of one product."""
    if "product" in og_type:
        return "ItemList" if "group" in og_type else "Product"
    return "Article" if og_type == "article" else ""


def declared_types(root: lxml.html.HtmlElement) -> tuple[list[str], list[str]]:
    """The types the page declares: schema.org's (JSON-LD @type and microdata itemtype, in that
    order, one entry per declaration) and its og:type values. Call before the scripts go."""
    schema: list[str] = []
    og_types: list[str] = []
    for element in root.iter("script", "meta"):  # one walk of the tree (the walk is the cost)
        if element.tag == "script":
            if (element.get("type") or "").strip().lower() == "application/ld+json" and element.text:
                for match in _LD_TYPE.finditer(element.text):
                    schema.extend(_QUOTED.findall(match.group(1)))
        elif (element.get("property") or element.get("name") or "").lower() == "og:type":
            og_types.append((element.get("content") or "").strip().lower())
    # ("/descendant::*[...]" is "//*[...]" without a node-set built at every node.)
    for element in root.xpath("/descendant::*[@itemtype]"):
        schema.append((element.get("itemtype") or "").rstrip("/").rsplit("/", 1)[-1])
    return schema, og_types


def page_kinds(root: lxml.html.HtmlElement) -> frozenset[str]:
    """What the page says it is, from JSON-LD, og:type and microdata: "product" for the page of
    one product, "article" for a story or post (and not a list of them). Call before scripts go."""
    return kinds_of(*declared_types(root))


def kinds_of(schema: list[str], og_types: list[str]) -> frozenset[str]:
    """page_kinds, from the types the page declares (declared_types)."""
    types = [*schema, *map(_og_kind, og_types)]
    kinds = set()
    listed = any(name in _LIST_TYPES for name in types)
    # A ProductGroup is one product in several variants (sizes, colours), each a Product of its
    # own: the page of one product, however many variants it lists.
    groups = sum(1 for name in types if name == "ProductGroup")
    products = groups or sum(1 for name in types if name in _PRODUCT_TYPES)
    if products and products <= MAX_PRODUCTS and not listed:
        kinds.add("product")
    if any(name in _ARTICLE_TYPES for name in types) and not listed:
        kinds.add("article")
    return frozenset(kinds)
