"""A cleaned page as a sequence of text blocks, and pruning it down to the blocks that are kept.

A block is a block-level element (a paragraph, list item, heading, table cell, a <div> holding
text...) together with the text that is directly its own: its text, that of its inline
descendants and the tails of its children, but not that of nested block-level elements, which
are blocks of their own. Main-content selection (selection.py) decides block by block what to
keep; this module finds the blocks and their runs of text (``segment``), measures them and cuts
the tree down to the kept ones (``prune``); coverage.py tells which of them another extractor's
output covers.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress, groupby

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
TOKEN_TYPE = "i"
"""The array type of a word's number: a C int, 32 bits (a page has fewer than 2**31 distinct words)."""


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
    tokens: array[int] = field(default_factory=lambda: array(TOKEN_TYPE))
    """Its words, numbered (Segmentation.words), in order."""
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
    tokens: array[int]
    """Its words, numbered (Segmentation.words), in order."""


@dataclass(eq=False, slots=True, weakref_slot=True)
class Segmentation:
    """A tree cut into its blocks and their runs of text (``segment``)."""

    blocks: list[Block]
    """In document order, the root first."""
    runs: list[Run]
    """In document order."""
    words: dict[str, int] = field(default_factory=dict)
    """Each distinct word of the page and its number (0, 1, 2... in order of first occurrence):
    the blocks' and runs' tokens are these numbers, four bytes a word, not a string or a pointer
    to one per occurrence (a 9 MB page's 1.7 million words as strings were a sixth of its
    conversion's peak memory, and as pointers to shared strings a quarter of the segmentation)."""

    def spelled(self, tokens: Iterable[int]) -> list[str]:
        """The words numbered ``tokens``."""
        spelling = list(self.words)
        return [spelling[token] for token in tokens]


def segment(root: lxml.html.HtmlElement) -> Segmentation:
    """The blocks of ``root`` (itself the first) and their runs of text, in document order."""
    top = Block(root, None, 0, 0)
    blocks: list[Block] = [top]
    # The pieces of text in document order, each with its block and whether it is in a link, as
    # three lists rather than a tuple a piece: the garbage collector walks each container as long
    # as it lives, which cost more than the walk itself.
    stream = _Stream([], [], [])
    _walk_children(root, top, False, blocks, stream)

    runs: list[Run] = []
    # Numbered in the order they are first looked up, the numbering done in C (a counter as the
    # default of a missing word).
    words: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    number = words.__getitem__
    several: dict[Block, list[str]] = {}  # the texts of the blocks of more than one run
    links: dict[Block, int] = {}
    start = 0
    # Consecutive pieces of one block's text make a run (a Block is equal only to itself).
    for block, group in groupby(stream.blocks):
        end = start + sum(1 for _ in group)
        text = " ".join("".join(stream.texts[start:end]).split())
        linked = "".join(compress(stream.texts[start:end], stream.linked[start:end]))
        start = end
        if not text:
            continue
        if not block.text:
            block.text = text
        else:
            several.setdefault(block, [block.text]).append(text)
        if linked:
            links[block] = links.get(block, 0) + len(" ".join(linked.split()))
        found = _TOKEN.findall(text.casefold())
        if found:
            tokens = array(TOKEN_TYPE, map(number, found))
            runs.append(Run(block, tokens))
            # Most blocks are one run: they share its array (nothing changes either afterwards).
            block.tokens = block.tokens + tokens if block.tokens else tokens
    for block, parts in several.items():
        block.text = " ".join(parts)
    for block, chars in links.items():
        block.link_chars = min(chars, len(block.text))
    return Segmentation(blocks, runs, dict(words))


@dataclass(slots=True)
class _Stream:
    """The text of a tree, piece by piece in document order (``segment``)."""

    blocks: list[Block]
    texts: list[str]
    linked: list[bool]

    def add(self, block: Block, text: str, in_link: bool) -> None:
        self.blocks.append(block)
        self.texts.append(text)
        self.linked.append(in_link)


def _walk_children(
    element: lxml.html.HtmlElement,
    block: Block,
    in_link: bool,
    blocks: list[Block],
    stream: _Stream,
) -> None:
    for child in element:
        tag = child.tag
        if not isinstance(tag, str):  # comments and processing instructions (normally cleaned away)
            if child.tail:
                stream.add(block, child.tail, in_link)
            continue
        if tag in INLINE_TAGS:
            if tag == "img":
                block.images += 1
            link = in_link or tag == "a"
            if child.text:
                stream.add(block, child.text, link)
            if len(child):
                _walk_children(child, block, link, blocks, stream)
        else:
            inner = Block(
                child, block, len(blocks), block.depth + 1, hidden=block.hidden or HIDDEN in child.attrib
            )
            blocks.append(inner)
            block.children.append(inner)
            if child.text:
                stream.add(inner, child.text, in_link)
            if len(child):
                _walk_children(child, inner, in_link, blocks, stream)
        if child.tail:
            stream.add(block, child.tail, in_link)


def token_chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    """The tokens (as a block's) of the text that ``texts`` make one after the other (nothing
    between them: an element's text, its text nodes as they come), a piece of about ``size``
    characters at a time, cut at whitespace, which no token holds: a long text's words as strings
    would be many times the text, and the text whole is as long again as the page's."""
    pending: list[str] = []
    length = 0
    for text in texts:
        pending.append(text)
        length += len(text)
        if length < size or (length - len(text) >= size and not _WHITESPACE.search(text)):
            # Nowhere to cut yet: the text so far has no whitespace past the size, nor has this one
            # (joined again for every text, a long text of no spaces cost its square).
            continue
        joined = "".join(pending)
        position = 0
        while len(joined) - position > size:
            cut = _WHITESPACE.search(joined, position + size)
            if cut is None:
                break
            yield _TOKEN.findall(joined[position : cut.start()].casefold())
            position = cut.start()
        rest = joined[position:]
        pending, length = [rest], len(rest)
    if length:
        yield _TOKEN.findall("".join(pending).casefold())


# --- pruning ---------------------------------------------------------------------------------


def trigrams(tokens: Sequence[int]) -> list[str]:
    """The word trigrams of ``tokens``, in order, each one string: a string is no container for the
    garbage collector to walk, where millions of tuples made each of its passes cost in proportion
    to the page, and the whole conversion grow faster than the page."""
    return [f"{a} {b} {c}" for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)]


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
