"""Which blocks of a page another extractor's output covers: its text aligned with the page's
runs of text, run by run (see ``coverage``)."""

from __future__ import annotations

import heapq
from bisect import bisect_left
from itertools import pairwise

from mcp_server_web.fetch.doc.blocks import Block, Run, Segmentation, tokens_of, trigram_keys

HIDDEN_WEIGHT = 0.5
MAX_GRAM_REPEATS = 8
"""Word trigrams occurring more often than this in an output are too common to place a block.
(50 made repeated text cost the square of the page: 8,000 paragraphs 49x the CPU of 500; now
13x. Neither page set's F1 moved; 4 lost 0.002 on zyte.)"""
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
    page_words = segmentation.words
    tokens = [page_words.get(token, token) for token in tokens_of(text)]
    found = [0.0] * len(runs)
    if tokens:
        # A trigram seen once (nearly all of them in varied text) maps to its position, not to a
        # list: a list per trigram was a container for the garbage collector to walk, hundreds of
        # thousands of them on a long page, and made this grow faster than the page.
        grams: dict[int, int | list[int]] = {}
        for i, gram in enumerate(trigram_keys(tokens)):
            seen = grams.get(gram)
            if seen is None:
                grams[gram] = i
            elif isinstance(seen, int):
                grams[gram] = [seen, i]
            else:
                seen.append(i)
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


def _places(k: int, run: Run, grams: dict[int, int | list[int]]) -> list[Place]:
    """Where in the output a run of three words or more may go: (k, start, end, trigrams found)
    for each stretch of the output where enough of its trigrams line up, best first."""
    n = len(run.tokens)
    if n < 3:
        return []
    needed = _MIN_MATCH * (n - 2)
    offsets: list[int] = []  # output position - run position, per trigram found
    common = 0  # trigrams the output holds too often to place the run by, but holds
    get = grams.get
    # The run's trigrams are made here, one run at a time, rather than kept for every run of the
    # page: they were a tenth of a long page's peak memory.
    for i, gram in enumerate(trigram_keys(run.tokens)):
        found = get(gram)
        if found is None:
            continue
        if isinstance(found, int):
            offsets.append(found - i)
        elif len(found) > MAX_GRAM_REPEATS:
            common += 1
        else:
            offsets += [place - i for place in found]
    # Text repeated all along the output (a long tail every paragraph shares) cannot place a
    # run, but it is in the output: once the run's own words place it, it counts as found, or
    # paragraphs that differ only in a few words would all count as missing.
    if n < COMMON_CREDIT_MIN_TOKENS:
        common = 0
    if not offsets or len(offsets) + common < needed:
        return []
    offsets.sort()
    tolerance = max(3, n // 10)  # what the other extractor inserted or dropped shifts the offset
    # Stretches of offsets no more than ``tolerance`` apart. A text repeated in the output gives
    # up to MAX_GRAM_REPEATS offsets per trigram and hundreds of stretches per run, so each
    # offset and each stretch costs a step of a comprehension, and only the best places are built.
    ends = [last for last, (a, b) in enumerate(pairwise(offsets), 1) if b - a > tolerance]
    ends.append(len(offsets))
    starts = [0, *ends[:-1]]
    cap = n - 2
    hits = [
        h if (h := last - first + common) < cap else cap for first, last in zip(starts, ends, strict=True)
    ]
    best = heapq.nlargest(_MAX_PLACES, range(len(hits)), key=hits.__getitem__)  # ties: first in order
    places: list[Place] = []
    for stretch in best:
        if hits[stretch] >= needed:
            start = offsets[(starts[stretch] + ends[stretch]) // 2]
            places.append((k, start, start + n, hits[stretch]))
    return places


def _place_short(runs: list[Run], placed: list[Place], tokens: list[str], found: list[float]) -> None:
    """Runs of one or two words: found if they occur in the gap between their placed neighbours."""
    if not placed:
        return
    # Where each short run's words occur in the output, in order: a gap can span the whole
    # output, and scanning it once per short run would cost (short runs) x (output).
    wanted = {tuple(run.tokens) for run in runs if 0 < len(run.tokens) < 3}
    where: dict[tuple[str, ...], list[int]] = {key: [] for key in wanted}
    for place, token in enumerate(tokens):
        if (token,) in where:
            where[(token,)].append(place)
    for place, pair in enumerate(pairwise(tokens)):
        if pair in where:
            where[pair].append(place)
    anchor = 0
    previous_end = 0
    for k, run in enumerate(runs):
        while anchor < len(placed) and placed[anchor][0] < k:
            previous_end = placed[anchor][2]
            anchor += 1
        n = len(run.tokens)
        if n >= 3 or n == 0:
            continue
        next_start = placed[anchor][1] if anchor < len(placed) else len(tokens)
        low, high = max(previous_end - 2, 0), min(next_start + 2, len(tokens))
        places = where[tuple(run.tokens)]
        first = bisect_left(places, low)
        if first < len(places) and places[first] <= high - n:
            found[k] = n


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
