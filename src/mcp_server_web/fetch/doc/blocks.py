"""A cleaned page as a sequence of text blocks, and pruning it down to the blocks that are kept.

A block is a block-level element (a paragraph, list item, heading, table cell, a <div> holding
text...) together with the text that is directly its own: its text, that of its inline
descendants and the tails of its children, but not that of nested block-level elements, which
are blocks of their own. Main-content selection (selection.py) decides block by block what to
keep; this module finds the blocks and their runs of text (``segment``), measures them, tells
which of them another extractor's output covers (``coverage``), and cuts the tree down to the
kept ones (``prune``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import lxml.html

from mcp_server_web.fetch.doc.html_tree import HIDDEN

# Elements that do not start a block of their own: their text belongs to the enclosing block.
INLINE_TAGS = frozenset(
    {
        "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del",
        "dfn", "em", "font", "i", "img", "ins", "kbd", "label", "mark", "math", "meter", "nobr",
        "picture", "q", "rp", "rt", "ruby", "s", "samp", "small", "source", "span", "strike",
        "strong", "sub", "sup", "time", "tt", "u", "var", "video", "audio", "wbr",
    }
)  # fmt: skip
_TOKEN = re.compile(r"[^\W_]+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(eq=False, slots=True)
class Block:
    """One block-level element and the text that is its own (see the module docstring)."""

    element: lxml.html.HtmlElement
    parent: Block | None
    index: int
    """Position in document order (of the element's start)."""
    depth: int
    """Nesting depth among blocks (the root block is 0)."""
    images: int = 0
    hidden: bool = False
    """Inside an element hidden on the page (html_tree.HIDDEN)."""
    text: str = ""
    tokens: list[str] = field(default_factory=list)
    link_chars: int = 0
    children: list[Block] = field(default_factory=list)

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def link_density(self) -> float:
        return self.link_chars / len(self.text) if self.text else 0.0

    def descendants(self) -> Iterator[Block]:
        stack = list(reversed(self.children))
        while stack:
            block = stack.pop()
            yield block
            stack.extend(reversed(block.children))


@dataclass(eq=False, slots=True)
class Run:
    """A stretch of one block's own text not interrupted by a nested block."""

    block: Block
    tokens: list[str]
    grams: list[tuple[str, str, str]] = field(default_factory=list)
    """Its word trigrams, in order."""


@dataclass(eq=False, slots=True)
class Segmentation:
    """A tree cut into its blocks and their runs of text (``segment``)."""

    blocks: list[Block]
    """In document order, the root first."""
    runs: list[Run]
    """In document order."""


def segment(root: lxml.html.HtmlElement) -> Segmentation:
    """The blocks of ``root`` (itself the first) and their runs of text, in document order."""
    top = Block(root, None, 0, 0)
    blocks: list[Block] = [top]
    stream: list[tuple[Block, str, bool]] = []
    _walk_children(root, top, False, blocks, stream)

    # Consecutive pieces of one block's text make a run.
    grouped: list[tuple[Block, list[str], list[str]]] = []
    current: tuple[Block, list[str], list[str]] | None = None
    for block, text, in_link in stream:
        if current is None or current[0] is not block:
            current = (block, [], [])
            grouped.append(current)
        current[1].append(text)
        if in_link:
            current[2].append(text)
    runs: list[Run] = []
    texts: dict[Block, list[str]] = {}
    links: dict[Block, int] = {}
    for block, pieces, link_pieces in grouped:
        text = " ".join("".join(pieces).split())
        if not text:
            continue
        texts.setdefault(block, []).append(text)
        if link_pieces:
            links[block] = links.get(block, 0) + len(" ".join("".join(link_pieces).split()))
        tokens = _TOKEN.findall(text.casefold())
        if tokens:
            runs.append(Run(block, tokens, list(zip(tokens, tokens[1:], tokens[2:], strict=False))))
            block.tokens.extend(tokens)
    for block, parts in texts.items():
        block.text = parts[0] if len(parts) == 1 else " ".join(parts)
        block.link_chars = min(links.get(block, 0), len(block.text))
    return Segmentation(blocks, runs)


def _walk_children(
    element: lxml.html.HtmlElement,
    block: Block,
    in_link: bool,
    blocks: list[Block],
    stream: list[tuple[Block, str, bool]],
) -> None:
    for child in element:
        tag = child.tag
        if not isinstance(tag, str):  # comments and processing instructions (normally cleaned away)
            if child.tail:
                stream.append((block, child.tail, in_link))
            continue
        if tag in INLINE_TAGS:
            if tag == "img":
                block.images += 1
            link = in_link or tag == "a"
            if child.text:
                stream.append((block, child.text, link))
            if len(child):
                _walk_children(child, block, link, blocks, stream)
        else:
            inner = Block(child, block, len(blocks), block.depth + 1)
            inner.hidden = block.hidden or HIDDEN in child.attrib
            blocks.append(inner)
            block.children.append(inner)
            if child.text:
                stream.append((inner, child.text, in_link))
            if len(child):
                _walk_children(child, inner, in_link, blocks, stream)
        if child.tail:
            stream.append((block, child.tail, in_link))


def tokens_of(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


# --- coverage by another extractor's output -------------------------------------------------

HIDDEN_WEIGHT = 0.5
MAX_GRAM_REPEATS = 50
"""Word trigrams occurring more often than this in an output are too common to place a block."""
COMMON_CREDIT_MIN_TOKENS = 30
"""A run of at least this many words counts the trigrams too common to place it as found, once
its own words place it (see _places); shorter runs are lines every post or card repeats (a
byline, "Reply Quote"), which that would count as kept."""
_MIN_MATCH = 0.3
"""A block is placed in the output only where at least this share of its trigrams line up."""
Place = tuple[int, int, int, float]
"""Where a run may go in the output: (run index, start, end, trigrams found), the count weighed
down (HIDDEN_WEIGHT) for a hidden run's places."""


def coverage(segmentation: Segmentation, text: str) -> dict[Block, float]:
    """For each block with text, the share of its words that another extractor's ``text`` holds.

    The output is aligned with the page, run by run (see Run): each run of three words or more
    is placed on the stretch of the output, about as long as the run, where most of its word
    trigrams occur; of the runs that could be placed, the heaviest set whose places follow
    document order without overlapping counts, so that a teaser or a "related" box repeating a
    paragraph does not count as kept when the paragraph itself is. Runs of one or two words
    count when they occur in the output in the gap between their placed neighbours.
    """
    runs = segmentation.runs
    tokens = tokens_of(text)
    found = [0.0] * len(runs)
    if tokens:
        grams: dict[tuple[str, str, str], list[int]] = {}
        for i in range(len(tokens) - 2):
            grams.setdefault((tokens[i], tokens[i + 1], tokens[i + 2]), []).append(i)
        options = [places for k, run in enumerate(runs) if (places := _places(k, run, grams))]
        for places in options:
            if runs[places[0][0]].block.hidden:
                # a hidden copy (a mobile layout, microdata) counts for less than a visible one
                places[:] = [(k, start, end, hits * HIDDEN_WEIGHT) for k, start, end, hits in places]
        placed = _heaviest_chain(options, len(tokens))
        for k, _start, _end, weight in placed:
            hits = weight / HIDDEN_WEIGHT if runs[k].block.hidden else weight
            found[k] = len(runs[k].tokens) * hits / (len(runs[k].tokens) - 2)
        _place_short(runs, placed, tokens, found)
    totals: dict[Block, list[float]] = {}
    for run, words in zip(runs, found, strict=True):
        entry = totals.setdefault(run.block, [0.0, 0.0])
        entry[0] += words
        entry[1] += len(run.tokens)
    return {block: min(words / size, 1.0) for block, (words, size) in totals.items()}


_MAX_PLACES = 4
"""At most this many places are considered for one run (text repeated on the page or in the output)."""


def _places(k: int, run: Run, grams: dict[tuple[str, str, str], list[int]]) -> list[Place]:
    """Where in the output a run of three words or more may go: (k, start, end, trigrams found)
    for each stretch of the output where enough of its trigrams line up, best first."""
    n = len(run.tokens)
    if n < 3:
        return []
    needed = _MIN_MATCH * (n - 2)
    offsets: list[int] = []  # output position - run position, per trigram found
    common = 0  # trigrams the output holds too often to place the run by, but holds
    get = grams.get
    for i, gram in enumerate(run.grams):
        found = get(gram)
        if found is None:
            continue
        if len(found) > MAX_GRAM_REPEATS:
            common += 1
        elif len(found) == 1:
            offsets.append(found[0] - i)
        else:
            offsets.extend(place - i for place in found)
    # Text repeated all along the output (a long tail every paragraph shares) cannot place a
    # run, but it is in the output: once the run's own words place it, it counts as found, or
    # paragraphs that differ only in a few words would all count as missing.
    if n < COMMON_CREDIT_MIN_TOKENS:
        common = 0
    if not offsets or len(offsets) + common < needed:
        return []
    offsets.sort()
    tolerance = max(3, n // 10)  # what the other extractor inserted or dropped shifts the offset
    places: list[Place] = []
    first = 0
    for last in range(1, len(offsets) + 1):
        if last == len(offsets) or offsets[last] - offsets[last - 1] > tolerance:
            hits = min(last - first + common, n - 2)
            if hits >= needed:
                start = offsets[(first + last) // 2]
                places.append((k, start, start + n, hits))
            first = last
    places.sort(key=lambda place: -place[3])
    return places[:_MAX_PLACES]


def _place_short(runs: list[Run], placed: list[Place], tokens: list[str], found: list[float]) -> None:
    """Runs of one or two words: found if they occur in the gap between their placed neighbours."""
    if not placed:
        return
    anchor = 0
    previous_end = 0
    for k, run in enumerate(runs):
        while anchor < len(placed) and placed[anchor][0] < k:
            previous_end = placed[anchor][2]
            anchor += 1
        words = run.tokens
        n = len(words)
        if n >= 3:
            continue
        next_start = placed[anchor][1] if anchor < len(placed) else len(tokens)
        low, high = max(previous_end - 2, 0), min(next_start + 2, len(tokens))
        for place in range(low, high - n + 1):
            if tokens[place] == words[0] and tokens[place : place + n] == words:
                found[k] = n
                break


def _heaviest_chain(options: list[list[Place]], size: int) -> list[Place]:
    """One place or none for each run (``options`` in run order) such that the places do not
    overlap and follow run order, with the most trigrams found in all: a weighted longest
    increasing subsequence, with a Fenwick tree of prefix maxima over output positions."""
    slack = 2
    tree_size = size + slack + 2
    tree_value: list[float] = [0] * (tree_size + 1)
    tree_item = [-1] * (tree_size + 1)
    chosen: list[Place] = []
    score: list[float] = []
    previous: list[int] = []

    def query(position: int) -> tuple[float, int]:
        position = min(max(position, 0), tree_size)
        value: float = 0
        item = -1
        while position > 0:
            if tree_value[position] > value:
                value, item = tree_value[position], tree_item[position]
            position -= position & -position
        return value, item

    def update(position: int, value: float, item: int) -> None:
        position = min(max(position, 1), tree_size)
        while position <= tree_size:
            if value > tree_value[position]:
                tree_value[position], tree_item[position] = value, item
            position += position & -position

    for places in options:
        pending = []
        for place in places:
            value, item = query(place[1] + slack + 1)  # chains ending at or before its start
            chosen.append(place)
            score.append(value + place[3])
            previous.append(item)
            pending.append(len(chosen) - 1)
        for item in pending:  # after all of a run's places, so that no chain holds two of them
            update(chosen[item][2] + 1, score[item], item)
    if not chosen:
        return []
    item = max(range(len(chosen)), key=score.__getitem__)
    chain = []
    while item != -1:
        chain.append(chosen[item])
        item = previous[item]
    chain.reverse()
    return chain


# --- pruning ---------------------------------------------------------------------------------


def prune(blocks: list[Block], keep: Iterable[Block]) -> None:
    """Cut the tree down to the kept blocks, in place.

    A block that is not kept loses its own text and inline content; its element goes entirely
    unless some block inside it is kept, in which case that block stays where it is (with the
    element around it, so that lists stay lists and tables stay tables).
    """
    kept = set(keep)
    needed: set[Block] = set()  # kept blocks and every block around one
    for block in kept:
        node: Block | None = block
        while node is not None and node not in needed:
            needed.add(node)
            node = node.parent
    # Innermost first, so that dropping an element never hides a block still to be visited.
    for block in reversed(blocks):
        if block in kept:
            continue
        if block not in needed:
            if block.parent is not None:
                _drop(block.element)
            else:
                _strip_own(block.element)
            continue
        _strip_own(block.element)


def _drop(element: lxml.html.HtmlElement) -> None:
    if element.getparent() is not None:
        # The tail stays: it is the enclosing block's own text, which goes with that block.
        element.drop_tree()


def _strip_own(element: lxml.html.HtmlElement) -> None:
    """Remove an element's own text: its text, its inline children and its children's tails.

    Inline children that still contain block-level elements (an <a> around a card) keep those.
    """
    element.text = None
    for child in list(element):
        child.tail = None
        tag = child.tag
        if isinstance(tag, str) and tag in INLINE_TAGS:
            if _has_block(child):
                _strip_own(child)
            else:
                element.remove(child)


def _has_block(element: lxml.html.HtmlElement) -> bool:
    return any(
        isinstance(node.tag, str) and node.tag not in INLINE_TAGS for node in element.iterdescendants()
    )
