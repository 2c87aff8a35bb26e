"""Focused reading of a converted document: the passages most relevant to a question, and its outline.

Pure and synchronous (no network, no model): a lexical ranking, BM25, over the document's
passages. A passage is a block of the document (blank-line separated in markdown and text, a
block element in html) with the blocks that follow it in its section merged in while it stays
short (a list or a table stays with the sentence that introduces it), and a long block split at
sentence ends, so no passage holds more than PASSAGE_MAX characters.

Terms are unicode words (``\\w``, so digits and letters of any script), compared case-insensitively,
minus a small list of English stop words, with a light English stemmer (plural -s/-es/-ies, -ing,
-ed, a final -e, a doubled consonant): "installing" finds "installed" and "install", while a
stemmer as aggressive as Porter's would also merge words a reader keeps apart ("general" and
"generate"). Nothing is done for scripts written without spaces (Chinese, Japanese): there a
whole run of text is one word, so a query matches only a run it spells out in full.

For speed the document is never tokenized as a whole: each query term's stem (less its last
letter when longer than three) is looked for with str.find in the lower-cased text, and only the
words found there are stemmed in Python (about 40 ms for a 1 MB document). Passage lengths for BM25's length
normalization are counted in characters, not words.

Headings: ATX lines (``#`` to ``######``, outside fenced code) in markdown, ``<h1>``-``<h6>`` in html.
Plain text has no heading markers: its passages are its paragraphs with the heading "" and its
outline is empty (the markdown format of the same page has both).
"""

from __future__ import annotations

import html
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from mcp_server_web.fetch.types import OutputFormat

PASSAGE_MAX = 1200
"""Most characters of one passage: a long paragraph is split at sentence ends to stay under it."""
PASSAGE_MIN = 300
"""A passage shorter than this takes in the next block of its section (while under PASSAGE_MAX):
a one-line lead-in stays with its list, and a model is not handed a row of fragments."""
HEADING_PATH_LIMIT = 300
"""Most characters of a heading path (a page can nest six levels of very long headings)."""
HEADING_TEXT_LIMIT = 300
"""Most characters of one heading's text; a longer heading is cut (with "…")."""
HEADING_MARKUP_LIMIT = 4 * HEADING_TEXT_LIMIT
"""Most characters of a heading's markup read for its text (link targets and tags take room)."""
HEADING_WEIGHT = 2.0
"""How much a query word in a passage's heading path counts, against one in its text: a question
that names a section finds that section's passages."""
QUERY_TERMS_LIMIT = 64
"""Most distinct terms of a query that are ranked (a 400-character query holds fewer)."""
_MANY_CANDIDATES = 16
"""Candidates (words starting with a term's prefix) past one per this many characters of text are
counted span by span in C rather than found one by one (see _passage_counts)."""
_SAMPLE = 256 * 1024
"""Characters of a document's start in which its candidates are counted to choose the way."""
_K1 = 1.2
_B = 0.75

# A short list: words that ask rather than name (what, how, which) and glue words.
# fmt: off
STOP_WORDS = frozenset({
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for",
    "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "of", "on", "or",
    "should", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "would",
    "you", "your",
})
# fmt: on

_WORD = re.compile(r"\w+")
# Every pattern here runs in time linear in the text it scans: no two adjacent runs can take the
# same characters (a heading pattern with `(.*?)[ \t]*(?:[ \t]#+)?[ \t]*$` took 42 s on one line of
# 3,500 spaces), and a run never crosses the character that ends or restarts its construct (a
# link's text stops at any bracket, a tag's body at any angle bracket), so a line of 50,000 "["
# or "<" is one scan, not one scan per character.
_HEADING_START = re.compile(r"^(#{1,6})[ \t]", re.MULTILINE)
_FENCE_LINE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_GAP = re.compile(r"\n(?:[ \t]*\n)+")
_CONTENT = re.compile(r"\S")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+|\n")
# A link's target may hold one level of balanced parentheses (Wikipedia's "Foo_(bar)").
_LINK = re.compile(r"\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_EMPHASIS = re.compile(r"[*_`]+")
_TAG = re.compile(r"<[^<>]*>")
_HTML_HEADING_TAG = re.compile(r"<(/?)h([1-6])\b[^<>]*>", re.IGNORECASE)
_HTML_BLOCK_TAG = re.compile(
    r"<(/?)(p|h[1-6]|pre|ul|ol|dl|table|blockquote|figure|li|div|section|article)\b[^<>]*>", re.IGNORECASE
)
_HTML_CONTAINERS = frozenset({"pre", "ul", "ol", "dl", "table", "blockquote", "figure"})
_HTML_BLOCK_STARTS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", *_HTML_CONTAINERS})


@dataclass(frozen=True, slots=True)
class Passage:
    start_index: int
    """Offset of the passage in the document text."""
    length: int
    """Characters of the document the passage covers."""
    heading: str
    """Its section's heading path, e.g. "Install > From source" ("" before the first heading)."""
    score: float
    """BM25 score: higher is more relevant."""
    text: str
    """The passage's text, exactly document[start_index:start_index + length]."""


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    heading: str
    """The heading's text, markup removed."""
    level: int
    """1 for a top-level heading (h1, #) to 6."""
    start_index: int
    """Offset of the heading in the document: reading from here starts with the heading."""
    length: int
    """Characters of its section: up to the next heading of the same or a higher level."""


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    text: str
    start: int
    end: int
    """Where the heading's own markup ends (the section's body follows)."""


@dataclass(slots=True)
class _Block:
    start: int
    end: int
    section: int
    """Index of the heading this block is under, -1 before the first."""
    is_heading: bool = False


# --- the document's structure --------------------------------------------------------------


def outline(document: str, output_format: OutputFormat = "markdown") -> list[OutlineEntry]:
    """The document's headings, in document order, each with its section's extent.

    Plain text (output_format "text") has no heading markers: its outline is empty.
    """
    headings = _headings(document, output_format, _code_ranges(document, output_format))
    entries: list[OutlineEntry] = []
    ends = [len(document)] * len(headings)
    open_sections: list[int] = []  # indexes of headings whose section has not ended yet
    for index, heading in enumerate(headings):
        while open_sections and headings[open_sections[-1]].level >= heading.level:
            ends[open_sections.pop()] = heading.start
        open_sections.append(index)
    for heading, end in zip(headings, ends, strict=True):
        entries.append(OutlineEntry(heading.text, heading.level, heading.start, end - heading.start))
    return entries


def _headings(document: str, output_format: OutputFormat, code: list[tuple[int, int]]) -> list[_Heading]:
    if output_format == "html":
        return _html_headings(document)
    if output_format == "text":
        return []
    return _markdown_headings(document, code)


def _html_headings(document: str) -> list[_Heading]:
    """Each <hN> with the next </hN> that closes it; an <hN> left open gives way to the next one.

    One pass over the heading tags (a lazy `<h1>(.*?)</h1>` scans to the end of the document from
    every unclosed <h1>: 6 s for 50,000 characters of them).
    """
    headings: list[_Heading] = []
    opened: re.Match[str] | None = None
    for tag in _HTML_HEADING_TAG.finditer(document):
        if not tag.group(1):
            opened = tag
        elif opened is not None and opened.group(2) == tag.group(2):
            markup = document[opened.end() : min(tag.start(), opened.end() + HEADING_MARKUP_LIMIT)]
            headings.append(_Heading(int(opened.group(2)), _html_text(markup), opened.start(), tag.end()))
            opened = None
    return headings


def _code_ranges(document: str, output_format: OutputFormat) -> list[tuple[int, int]]:
    """[start, end) of each fenced code block of markdown, fences included (an unclosed one runs to
    the end)."""
    if output_format != "markdown":
        return []
    ranges: list[tuple[int, int]] = []
    opening: re.Match[str] | None = None
    for fence in _FENCE_LINE.finditer(document):
        if opening is None:
            opening = fence
        elif (
            fence.group(1)[0] == opening.group(1)[0]
            and len(fence.group(1)) >= len(opening.group(1))
            and not fence.group(2).strip()  # a closing fence carries no info string
        ):
            ranges.append((opening.start(), fence.end()))
            opening = None
    if opening is not None:
        ranges.append((opening.start(), len(document)))
    return ranges


def _inside(ranges: list[tuple[int, int]], position: int) -> bool:
    if not ranges:
        return False
    found = bisect_right(ranges, (position, len(ranges) + 2**62)) - 1
    return found >= 0 and ranges[found][0] < position < ranges[found][1]


def _markdown_headings(document: str, code: list[tuple[int, int]]) -> list[_Heading]:
    """The ATX heading lines outside fenced code: the opening #s and a space, then the text up to
    the line's end, less an optional closing run of #s (CommonMark's rule), read with str methods."""
    headings = []
    for match in _HEADING_START.finditer(document):
        if _inside(code, match.start()):
            continue
        line_end = document.find("\n", match.end())
        line_end = len(document) if line_end == -1 else line_end
        text = document[match.end() : line_end].strip(" \t")
        closed = text.rstrip("#")
        if closed != text and (not closed or closed[-1] in " \t"):
            text = closed.rstrip(" \t")
        headings.append(
            _Heading(len(match.group(1)), _plain(text[:HEADING_MARKUP_LIMIT]), match.start(), line_end)
        )
    return headings


def _bounded(text: str) -> str:
    return text if len(text) <= HEADING_TEXT_LIMIT else text[: HEADING_TEXT_LIMIT - 1] + "…"


def _plain(markdown: str) -> str:
    """A heading's words without link targets and emphasis marks."""
    return _bounded(" ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", markdown)).split()))


def _html_text(fragment: str) -> str:
    return _bounded(" ".join(html.unescape(_TAG.sub(" ", fragment)).split()))


def _blocks(
    document: str, output_format: OutputFormat, headings: list[_Heading], code: list[tuple[int, int]]
) -> list[_Block]:
    """The document's blocks in order: text between blank lines (not those inside fenced code); a
    heading is a block of its own."""
    if output_format == "html":
        return _html_blocks(document, headings)
    events: list[tuple[int, int, int]] = [  # (start, end, heading index or -1 for a blank gap)
        (gap.start(), gap.end(), -1) for gap in _GAP.finditer(document) if not _inside(code, gap.start())
    ]
    events.extend((heading.start, heading.end, index) for index, heading in enumerate(headings))
    events.sort()
    blocks: list[_Block] = []
    section = -1
    position = 0
    for start, end, heading in [*events, (len(document), len(document), -1)]:
        if start < position:
            continue  # a gap inside a heading's line ending, already passed
        text = _CONTENT.search(document, position, start)
        if text is not None:
            blocks.append(_Block(text.start(), start, section))
        if heading >= 0:
            section = heading
            blocks.append(_Block(start, end, section, is_heading=True))
        position = end
    return blocks


def _html_blocks(document: str, headings: list[_Heading]) -> list[_Block]:
    """Blocks of cleaned html: each starts at a block element outside any list, table or <pre>."""
    starts: list[int] = []
    depth = 0
    for match in _HTML_BLOCK_TAG.finditer(document):
        closing, name = match.group(1), match.group(2).lower()
        if name in _HTML_CONTAINERS:
            if closing:
                depth = max(0, depth - 1)
                continue
            depth += 1
            if depth > 1:
                continue
        elif closing or depth or name not in _HTML_BLOCK_STARTS:
            continue
        starts.append(match.start())
    heading_starts = {heading.start: index for index, heading in enumerate(headings)}
    blocks: list[_Block] = []
    section = -1
    bounds = [0, *starts, len(document)] if not starts or starts[0] != 0 else [*starts, len(document)]
    for start, end in pairwise(bounds):
        if start >= end:
            continue
        if start in heading_starts:
            section = heading_starts[start]
            # The heading alone: what follows it up to the next block is the section's body.
            heading_end = min(end, headings[section].end)
            blocks.append(_Block(start, heading_end, section, is_heading=True))
            if heading_end < end and document[heading_end:end].strip():
                blocks.append(_Block(heading_end, end, section))
            continue
        blocks.append(_Block(start, end, section))
    return blocks


# --- passages ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Span:
    start: int
    end: int
    section: int
    heading_only: bool


def _passages(document: str, blocks: list[_Block]) -> list[_Span]:
    """Blocks grouped into passages of at most PASSAGE_MAX characters; a heading starts one."""
    spans: list[_Span] = []
    current: _Span | None = None
    for block in blocks:
        if block.is_heading:
            current = _Span(block.start, block.end, block.section, heading_only=True)
            spans.append(current)
            continue
        if (
            current is not None
            and current.section == block.section
            and (current.end - current.start < PASSAGE_MIN or current.heading_only)
            and block.end - current.start <= PASSAGE_MAX
        ):
            current.end = block.end
            current.heading_only = False
            continue
        pieces = list(_split_long(document, block.start, block.end))
        for piece_start, piece_end in pieces:
            current = _Span(piece_start, piece_end, block.section, heading_only=False)
            spans.append(current)
    return spans


def _split_long(document: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """[start, end) cut at sentence ends (or, failing those, spaces) into pieces of <= PASSAGE_MAX."""
    while end - start > PASSAGE_MAX:
        limit = start + PASSAGE_MAX
        cut = -1
        for boundary in _SENTENCE_END.finditer(document, start + PASSAGE_MAX // 3, limit):
            cut = boundary.end()
        if cut == -1:
            space = document.rfind(" ", start + PASSAGE_MAX // 3, limit)
            cut = space + 1 if space != -1 else limit
        yield start, cut
        start = cut
    if document[start:end].strip():
        yield start, end


# --- ranking -----------------------------------------------------------------------------------


def stem(word: str) -> str:
    """A light English stem of a lower-cased word (see the module's note)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def query_terms(query: str) -> list[str]:
    """The stems a query is ranked by: its words minus stop words (all of them if that leaves none)."""
    words = [word.lower() for word in _WORD.findall(query)]
    kept = [word for word in words if word not in STOP_WORDS] or words
    terms: list[str] = []
    for word in kept:
        term = stem(word)
        if term not in terms:
            terms.append(term)
    return terms[:QUERY_TERMS_LIMIT]


def _matcher(terms: list[str]) -> re.Pattern[str]:
    # A word whose stem is a term starts with the term less its last letter ("library" <- "librar-ies",
    # "make" <- "mak-ing"): the pattern finds candidates, stem() decides.
    prefixes = sorted({term[:-1] if len(term) > 3 else term for term in terms}, key=len, reverse=True)
    alternatives = "|".join(re.escape(prefix) for prefix in prefixes)
    return re.compile(rf"(?<!\w)(?:{alternatives})\w*", re.IGNORECASE)


def _passage_counts(
    text: str, spans: list[_Span], terms: list[str], index: dict[str, int], pattern: re.Pattern[str]
) -> list[dict[int, int]]:
    """For each span, how often each query term occurs as the stem of a word that starts in it.

    Two ways to the same counts, chosen by how many candidates (words that start with a term's
    prefix) the start of the text holds, counted by str.count in C before any Python loop runs.
    Few (the usual query's words): str.find jumps from candidate to candidate, several times
    faster than a regular expression scan. Many (one- and two-letter terms find most words of a
    page): one Python step per candidate would be millions of them on a large page (4.8 s on
    9 MB), so each span's candidates are collected by the pattern and counted in C, and Python
    sees each distinct word of a span once.
    """
    lowered = text.lower()
    if len(lowered) != len(text):
        # A few letters (such as "İ") lower to two characters: offsets into the lowered text would
        # shift, so the case-blind pattern scans the text itself.
        return _counts_by_span(text, spans, _TermOf(index), pattern)
    prefixes = {term[:-1] if len(term) > 3 else term for term in terms}
    sample = min(len(lowered), _SAMPLE)
    if sum(lowered.count(prefix, 0, sample) for prefix in prefixes) * _MANY_CANDIDATES > sample:
        # On the lowered text the pattern need not ignore case, which makes its scan twice as fast.
        return _counts_by_span(lowered, spans, _TermOf(index), re.compile(pattern.pattern))
    return _counts_by_find(lowered, spans, prefixes, _TermOf(index))


class _TermOf:
    """A word's query term (its index, -1 for none), each distinct word stemmed once."""

    def __init__(self, index: dict[str, int]) -> None:
        self._index = index
        self._known: dict[str, int] = {}

    def __call__(self, word: str) -> int:
        found = self._known.get(word)
        if found is None:
            found = self._known[word] = self._index.get(stem(word.lower()), -1)
        return found


def _counts_by_span(
    text: str, spans: list[_Span], term_of: _TermOf, pattern: re.Pattern[str]
) -> list[dict[int, int]]:
    counts: list[dict[int, int]] = [{} for _ in spans]
    for found, span in zip(counts, spans, strict=True):
        for word, times in Counter(pattern.findall(text, span.start, span.end)).items():
            term = term_of(word)
            if term >= 0:
                found[term] = found.get(term, 0) + times
    return counts


def _counts_by_find(
    lowered: str, spans: list[_Span], prefixes: set[str], term_of: _TermOf
) -> list[dict[int, int]]:
    counts: list[dict[int, int]] = [{} for _ in spans]
    starts = [span.start for span in spans]
    for prefix in prefixes:
        position = lowered.find(prefix)
        while position != -1:
            number = bisect_right(starts, position) - 1
            before = lowered[position - 1] if position else " "
            if number >= 0 and position < spans[number].end and not (before.isalnum() or before == "_"):
                word = _WORD.match(lowered, position, spans[number].end)
                # A shorter prefix finds the words a longer one does: each word is counted once, by
                # the longest prefix it starts with (the one the pattern's alternation takes).
                if word is not None and _longest(prefixes, word.group()) == prefix:
                    term = term_of(word.group())
                    if term >= 0:
                        counts[number][term] = counts[number].get(term, 0) + 1
            position = lowered.find(prefix, position + 1)
    return counts


def _longest(prefixes: set[str], word: str) -> str:
    return max((prefix for prefix in prefixes if word.startswith(prefix)), key=len)


def _counts(pattern: re.Pattern[str], text: str, index: dict[str, int]) -> dict[int, int]:
    found: dict[int, int] = {}
    for match in pattern.finditer(text):
        term = index.get(stem(match.group().lower()))
        if term is not None:
            found[term] = found.get(term, 0) + 1
    return found


def rank_passages(
    document: str, query: str, *, max_chars: int, output_format: OutputFormat = "markdown"
) -> list[Passage]:
    """The most relevant passages, best first picked until max_chars is used, returned in document order.

    Only passages that share a term with the query are returned; none when the query has no words.
    When even the best passage is longer than max_chars, its first max_chars characters are returned.
    """
    terms = query_terms(query)
    if not terms or max_chars < 1 or not document.strip():
        return []
    code = _code_ranges(document, output_format)
    headings = _headings(document, output_format, code)
    spans = [
        span
        for span in _passages(document, _blocks(document, output_format, headings, code))
        if not span.heading_only
    ]
    if not spans:
        return []
    index = {term: position for position, term in enumerate(terms)}
    pattern = _matcher(terms)
    scan = _TAG.sub(lambda tag: " " * len(tag.group()), document) if output_format == "html" else document
    body = _passage_counts(scan, spans, terms, index, pattern)
    paths = _heading_paths(headings)
    in_heading = [_counts(pattern, path, index) for path in paths]
    document_frequency = [0] * len(terms)
    for span, counts in zip(spans, body, strict=True):
        heading_counts = in_heading[span.section] if span.section >= 0 else {}
        for term in set(counts) | set(heading_counts):
            document_frequency[term] += 1
    total = len(spans)
    idf = [math.log(1 + (total - df + 0.5) / (df + 0.5)) for df in document_frequency]
    average = sum(span.end - span.start for span in spans) / total
    scored: list[tuple[float, int]] = []
    for number, (span, counts) in enumerate(zip(spans, body, strict=True)):
        heading_counts = in_heading[span.section] if span.section >= 0 else {}
        if not counts and not heading_counts:
            continue
        norm = _K1 * (1 - _B + _B * (span.end - span.start) / average)
        score = 0.0
        for term in set(counts) | set(heading_counts):
            frequency = counts.get(term, 0) + HEADING_WEIGHT * heading_counts.get(term, 0)
            score += idf[term] * frequency * (_K1 + 1) / (frequency + norm)
        scored.append((score, number))
    scored.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[tuple[int, float, int]] = []  # (span number, score, characters)
    used = 0
    for score, number in scored:
        span = spans[number]
        size = span.end - span.start
        if used + size <= max_chars:
            chosen.append((number, score, size))
            used += size
        elif not chosen:
            chosen.append((number, score, max_chars))  # the best passage, cut to what fits
            used = max_chars
        if used >= max_chars:
            break
    passages = []
    for number, score, size in sorted(chosen):
        span = spans[number]
        path = paths[span.section] if span.section >= 0 else ""
        passages.append(
            Passage(span.start, size, path, round(score, 4), document[span.start : span.start + size])
        )
    return passages


def _heading_paths(headings: list[_Heading]) -> list[str]:
    """Each heading's path from the top level, e.g. "Install > From source"."""
    paths: list[str] = []
    stack: list[tuple[int, str]] = []
    for heading in headings:
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        path = " > ".join(text for _, text in stack)
        paths.append(path if len(path) <= HEADING_PATH_LIMIT else path[: HEADING_PATH_LIMIT - 1] + "…")
    return paths
