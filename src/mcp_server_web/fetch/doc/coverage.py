"""Which blocks of a page another extractor's output covers: its text aligned with the page's
runs of text, run by run (see ``coverage``)."""

from __future__ import annotations

import weakref
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from mcp_server_web.fetch.doc.blocks import TOKEN_TYPE, Block, Segmentation, token_chunks

HIDDEN_WEIGHT = 0.5
MAX_GRAM_REPEATS = 8
"""Word trigrams occurring more often than this in an output are too common to place a block.
(50 made repeated text cost the square of the page: 8,000 paragraphs 49x the CPU of 500; now
13x. Neither page set's F1 moved; 4 lost 0.002 on zyte.)"""
COMMON_CREDIT_MIN_TOKENS = 30
"""A run of at least this many words counts the trigrams too common to place it as found, once
its own words place it (see _places); shorter runs are lines every post or card repeats (a
byline, "Reply Quote"), which that would count as kept."""
TOKENIZE_CHARS = 65_536
"""The output is read this many characters at a time."""
_MIN_MATCH = 0.3
"""A block is placed in the output only where at least this share of its trigrams line up."""
WORD = np.dtype(TOKEN_TYPE)
"""A word's number, as the segmentation's arrays hold it (32 bits): half the memory of 64 bits, for
arrays as long as the page's text."""


@dataclass(slots=True)
class _Places:
    """Where runs may go in the output: a place a row, in four arrays (a tuple a place took ten
    times the memory, on a page of repeated text more than the output index), the runs in order
    and each run's places best first."""

    run: npt.NDArray[np.int64]
    """The run's index among the page's runs."""
    start: npt.NDArray[np.int64]
    end: npt.NDArray[np.int64]
    """Where it would go in the output (word positions)."""
    found: npt.NDArray[np.float64]
    """How many of its trigrams were found there."""

    @staticmethod
    def joined(parts: list[_Places]) -> _Places:
        """``parts`` one after the other."""
        if not parts:
            return _NO_PLACES
        return _Places(
            np.concatenate([part.run for part in parts]),
            np.concatenate([part.start for part in parts]),
            np.concatenate([part.end for part in parts]),
            np.concatenate([part.found for part in parts]),
        )

    def in_run_order(self) -> _Places:
        """The same places, runs in order (each run's places in the order they were)."""
        order = np.argsort(self.run, kind="stable")
        return _Places(self.run[order], self.start[order], self.end[order], self.found[order])


_NO_PLACES = _Places(
    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
)


def coverage(segmentation: Segmentation, text: str | Iterable[str]) -> dict[Block, float]:
    """For each block with text, the share of its words that another extractor's output holds:
    ``text``, the output's text, whole or piece by piece (an element's text nodes).

    The output is aligned with the page, run by run (see Run): each run of three words or more
    is placed on the stretch of the output, about as long as the run, where most of its word
    trigrams occur; of the runs that could be placed, the heaviest set whose places follow
    document order without overlapping counts, so that a teaser or a "related" box repeating a
    paragraph does not count as kept when the paragraph itself is. Runs of one or two words
    count when they occur in the output in the gap between their placed neighbours.
    """
    runs = segmentation.runs
    words = _page_words(segmentation)
    # The output's words, numbered as the page's; a word the page does not have is numbered
    # ``vocabulary``, and makes trigrams no run has.
    number = words.ids.__getitem__
    pieces = [
        np.fromiter(map(number, chunk), dtype=WORD, count=len(chunk))
        for chunk in token_chunks((text,) if isinstance(text, str) else text, TOKENIZE_CHARS)
    ]
    output = np.concatenate(pieces) if pieces else np.zeros(0, dtype=WORD)
    del pieces
    found = [0.0] * len(runs)
    if len(output):
        places = _places(segmentation, words, output)
        hidden = np.array([run.block.hidden for run in runs], dtype=bool)[places.run]
        # a hidden copy (a mobile layout, microdata) counts for less than a visible one
        weight = np.where(hidden, places.found * HIDDEN_WEIGHT, places.found)
        chain = _heaviest_chain(places, weight, len(output))
        for k, place_weight, is_hidden in zip(
            places.run[chain].tolist(), weight[chain].tolist(), hidden[chain].tolist(), strict=True
        ):
            hits = place_weight / HIDDEN_WEIGHT if is_hidden else place_weight
            found[k] = len(runs[k].tokens) * hits / (len(runs[k].tokens) - 2)
        _place_short(words, places, chain, output, found)
    totals: dict[Block, list[float]] = {}
    for run, kept in zip(runs, found, strict=True):
        entry = totals.setdefault(run.block, [0.0, 0.0])
        entry[0] += kept
        entry[1] += len(run.tokens)
    return {block: min(kept / size, 1.0) for block, (kept, size) in totals.items()}


_MAX_PLACES = 4
"""At most this many places are considered for one run (text repeated on the page or in the output)."""


def _places(segmentation: Segmentation, words: _PageWords, output: npt.NDArray[np.int32]) -> _Places:
    """Where in the output (``output``, its words numbered) each run of three words or more may
    go: for each run that may go somewhere, in run order, its places (see _Places), best first,
    one for each stretch of the output where enough of its trigrams line up.

    Computed in arrays, for many runs at once (GRAM_BATCH trigrams at a time): a trigram of the
    output is looked up in its sorted keys, not in a dict of hundreds of thousands of entries, and
    each run's trigrams found give offsets (output position - run position) that are sorted and
    cut into stretches together. A run whose trigrams are all too common in the output to place
    it by (MAX_GRAM_REPEATS: text of a small vocabulary) is placed by its LONG_GRAM-grams instead.
    """
    places, blocked = _placed_by(words.trigrams, words.vocabulary, output)
    long_runs = [k for k in blocked if len(segmentation.runs[k].tokens) >= LONG_GRAM]
    if not long_runs:
        return places
    grams = _run_grams(segmentation, words.vocabulary, long_runs, LONG_GRAM)
    more, _ = _placed_by(grams, words.vocabulary, output)
    return _Places.joined([places, more]).in_run_order()  # (no run is in both)


LONG_GRAM = 6
"""The n-gram that places a run whose trigrams the output holds too often: a run of common words
(a vocabulary of 20 words has 8,000 trigrams, but 64 million 6-grams)."""


def _placed_by(grams: _RunGrams, vocabulary: int, output: npt.NDArray[np.int32]) -> tuple[_Places, list[int]]:
    """_places by the n-grams of ``grams``, and the runs left unplaced only because their n-grams
    are too common in the output."""
    if len(output) < grams.size or not grams.count:
        return _NO_PLACES, []
    index = _OutputIndex(output, vocabulary + 1, grams.size)
    options: list[_Places] = []
    blocked: list[int] = []
    # Batches of whole runs: each run's stretches are found within its batch.
    bounds = np.searchsorted(grams.gram_starts, np.arange(0, grams.count, GRAM_BATCH)).tolist()
    bounds.append(len(grams.lengths))
    for low, high in pairwise(bounds):
        if high > low:
            placed, unplaced = _batch_places(grams, index, low, high)
            options.append(placed)
            blocked.extend(unplaced)
    return _Places.joined(options), blocked


OFFSETS_BATCH = 8_192
"""At most about this many places of the n-grams of a batch's runs in the output are looked at
together: a page whose n-grams all recur in the output (text of a small vocabulary) has its
batches halved until they fit. Its arrays took 3 MB whatever the page's size, 26 times a page of
0.1 MB."""
GRAM_BATCH = 8_192
"""Trigrams of the page's runs placed together: a batch's arrays (up to MAX_GRAM_REPEATS offsets a
trigram) take a megabyte or two, where all the trigrams of a long page at once took over a
hundred, and a page of repeated text of 0.1 MB took 70 times its size."""


class _OutputIndex:
    """An output's n-grams by key, and where each occurs (positions in 32 bits: an output is the
    page's text, at most a few million words).

    Where every key fits in 32 bits (a page of few distinct words: (words + 1) ** n < 2 ** 32),
    one array of key and position packed in 64 bits, sorted in place: eight bytes an n-gram at
    most, where the general case takes twenty while it sorts (the keys, their order as it comes
    out of the sort, and that order in 32 bits), and twelve afterwards. Such a page is the one
    whose words are shortest, and the most of them a byte.
    """

    __slots__ = ("_keys", "_order", "_packed")

    def __init__(self, output: npt.NDArray[np.int32], base: int, size: int) -> None:
        keys = _keys(output, base, size)
        self._packed: npt.NDArray[np.uint64] | None = None
        self._keys: npt.NDArray[np.int64] | None = None
        self._order: npt.NDArray[np.int32] | None = None
        if base**size < _NARROW:  # (every key, and the key after it, shifted, fits in 64 bits)
            packed = keys.view(np.uint64)  # (the same array: the keys are shifted and sorted in place)
            packed <<= np.uint64(32)
            for low in range(0, len(packed), _PACK_PIECE):  # (positions a piece at a time: no second array)
                high = min(low + _PACK_PIECE, len(packed))
                packed[low:high] |= np.arange(low, high, dtype=np.uint64)
            packed.sort()
            self._packed = packed
        else:
            self._order = np.argsort(keys, kind="stable").astype(np.int32)
            keys.sort()  # in place: the same keys as in ``order``'s order
            self._keys = keys

    def find(self, keys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """For each of ``keys``, where its positions start (see ``positions``) and how many there are."""
        if self._packed is not None:
            low = keys.astype(np.uint64) << np.uint64(32)
            first = np.searchsorted(self._packed, low, side="left")
            return first, np.searchsorted(self._packed, low + np.uint64(_NARROW), side="left") - first
        assert self._keys is not None
        first = np.searchsorted(self._keys, keys, side="left")
        return first, np.searchsorted(self._keys, keys, side="right") - first

    def positions(self, at: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
        """The output positions at ``at`` in the index (as ``find`` counts them: a key's are together)."""
        if self._packed is not None:
            return (self._packed[at] & np.uint64(_NARROW - 1)).astype(np.int64)
        assert self._order is not None
        return self._order[at].astype(np.int64)


_NARROW = 2**32
_PACK_PIECE = 1 << 16


def _batch_places(grams: _RunGrams, index: _OutputIndex, low: int, high: int) -> tuple[_Places, list[int]]:
    """_placed_by for the runs numbered ``low`` to ``high`` (as in grams.run_index)."""
    lengths = grams.lengths[low:high]
    per_run_grams = lengths - (grams.size - 1)
    span = slice(int(grams.gram_starts[low]), int(grams.gram_starts[high - 1] + per_run_grams[-1]))
    keys = grams.keys(low, high)
    # Each n-gram's run (numbered from ``low``) and position in it.
    run_of = np.repeat(np.arange(len(lengths)), per_run_grams)
    position = np.arange(len(keys)) - np.repeat(grams.gram_starts[low:high] - span.start, per_run_grams)
    first, count = index.find(keys)
    common = np.bincount(run_of[count > MAX_GRAM_REPEATS], minlength=len(lengths))
    needed = _MIN_MATCH * per_run_grams
    # Runs that only n-grams too common in the output could have placed.
    too_common = common >= needed
    # Text repeated all along the output (a long tail every paragraph shares) cannot place a
    # run, but it is in the output: once the run's own words place it, it counts as found, or
    # paragraphs that differ only in a few words would all count as missing.
    common[lengths < COMMON_CREDIT_MIN_TOKENS] = 0

    usable = (count > 0) & (count <= MAX_GRAM_REPEATS)
    repeats = count[usable]
    if high - low > 1 and int(repeats.sum()) > OFFSETS_BATCH:
        # Text repeated within the output: each n-gram found several times over. The runs in two
        # halves, each with arrays of half the size (how the runs are batched changes nothing).
        # This batch's arrays are let go first: kept through the halvings, they added up to the
        # peak of a small page of repeated text (18 times its size).
        del keys, run_of, position, first, count, common, needed, too_common, usable, repeats
        middle = (low + high) // 2
        (one, one_blocked), (two, two_blocked) = (
            _batch_places(grams, index, low, middle),
            _batch_places(grams, index, middle, high),
        )
        return _Places.joined([one, two]), [*one_blocked, *two_blocked]
    starts = np.repeat(first[usable], repeats)
    within = np.arange(len(starts)) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    offset_run = np.repeat(run_of[usable], repeats)
    offsets = index.positions(starts + within) - np.repeat(position[usable], repeats)
    per_run = np.bincount(offset_run, minlength=len(lengths))
    candidate = (per_run > 0) & (per_run + common >= needed)
    keep = candidate[offset_run]
    offset_run, offsets = offset_run[keep], offsets[keep]
    if not len(offsets):
        return _NO_PLACES, grams.run_index[low + np.flatnonzero(too_common)].tolist()

    # Stretches of offsets no more than a tolerance apart, run by run: what the other extractor
    # inserted or dropped shifts the offset.
    sort = np.lexsort((offsets, offset_run))
    offset_run, offsets = offset_run[sort], offsets[sort]
    tolerance = np.maximum(3, lengths // 10)
    breaks = (
        np.flatnonzero((offset_run[1:] != offset_run[:-1]) | (np.diff(offsets) > tolerance[offset_run[1:]]))
        + 1
    )
    stretch_start = np.concatenate(([0], breaks))
    stretch_end = np.concatenate((breaks, [len(offsets)]))
    stretch_run = offset_run[stretch_start]
    hits = np.minimum(stretch_end - stretch_start + common[stretch_run], per_run_grams[stretch_run])
    # The best _MAX_PLACES stretches of each run, ties first in order.
    best = np.lexsort((np.arange(len(hits)), -hits, stretch_run))
    ranked_run = stretch_run[best]
    group_start = np.flatnonzero(np.concatenate(([True], ranked_run[1:] != ranked_run[:-1])))
    rank = np.arange(len(best)) - np.repeat(group_start, np.diff(np.concatenate((group_start, [len(best)]))))
    chosen = best[(rank < _MAX_PLACES) & (hits[best] >= needed[ranked_run])]
    centre = offsets[(stretch_start[chosen] + stretch_end[chosen]) // 2]

    chosen_run = stretch_run[chosen]
    chosen_hits = hits[chosen].astype(np.float64)
    if grams.size != 3:  # as many trigrams as the share of n-grams found
        chosen_hits = chosen_hits * (lengths[chosen_run] - 2) / per_run_grams[chosen_run]
    options = _Places(grams.run_index[low + chosen_run], centre, centre + lengths[chosen_run], chosen_hits)
    placed = np.zeros(len(lengths), dtype=bool)
    placed[stretch_run[chosen]] = True
    blocked = grams.run_index[low + np.flatnonzero(too_common & ~placed)].tolist()
    return options, blocked


@dataclass(slots=True)
class _RunGrams:
    """The word n-grams of some of a page's runs, made from the runs' own arrays of words a batch
    of runs at a time (``keys``). All the n-grams' keys at once took twice the memory of the
    words, for as long as the page was read, and a copy of the words as much as the words."""

    size: int
    """n: 3, or LONG_GRAM."""
    base: int
    """The number of words the page has, plus one (see _keys)."""
    run_index: npt.NDArray[np.int64]
    """For each run, its index among all the page's runs."""
    lengths: npt.NDArray[np.int64]
    """Each run's length in words (at least ``size``)."""
    tokens: list[array[int]]
    """Each run's words (Run.tokens)."""
    gram_starts: npt.NDArray[np.int64]
    """Where each run's n-grams start, counting the n-grams of the runs before it."""
    count: int
    """How many n-grams the runs have."""

    def keys(self, low: int, high: int) -> npt.NDArray[np.int64]:
        """The key of each n-gram of the runs numbered ``low`` to ``high`` (excluded), in order."""
        words = np.frombuffer(b"".join(self.tokens[low:high]), dtype=WORD)  # (the arrays' bytes: C ints)
        keys = _keys(words, self.base, self.size)
        # Less the n-grams that span two runs: the last size - 1 starts of every run but the last.
        within = np.ones(len(keys), dtype=bool)
        ends = np.cumsum(self.lengths[low : high - 1])
        for back in range(1, self.size):
            within[ends - back] = False
        return keys[within]


@dataclass(slots=True)
class _PageWords:
    """A page's words numbered, and its runs' trigrams and short runs, made once per page (every
    extractor's output is placed against them)."""

    ids: _Ids
    vocabulary: int
    trigrams: _RunGrams
    """Of every run of three words or more."""
    short_index: npt.NDArray[np.int64]
    short_lengths: npt.NDArray[np.int64]
    short_keys: npt.NDArray[np.int64]
    """For each run of one or two words: its index among all the runs, its length and its key (its
    word's number, or its bigram's in base vocabulary + 1)."""


class _Ids(dict[str, int]):
    """Each distinct word of a page and its number (Segmentation.words); any other word is
    numbered ``vocabulary``."""

    def __init__(self, words: dict[str, int]) -> None:
        super().__init__(words)
        self.vocabulary = len(self)

    def __missing__(self, word: str) -> int:
        return self.vocabulary


_WORDS: weakref.WeakKeyDictionary[Segmentation, _PageWords] = weakref.WeakKeyDictionary()
"""Each page's, while its segmentation lives (readability's output and the second vote's are both
placed against them)."""


def _page_words(segmentation: Segmentation) -> _PageWords:
    cached = _WORDS.get(segmentation)
    if cached is not None:
        return cached
    ids = _Ids(segmentation.words)
    vocabulary = ids.vocabulary
    long_runs = [k for k, run in enumerate(segmentation.runs) if len(run.tokens) >= 3]
    short_runs = [(k, run.tokens) for k, run in enumerate(segmentation.runs) if 0 < len(run.tokens) < 3]
    base = vocabulary + 1
    short_keys = [tokens[0] if len(tokens) == 1 else tokens[0] * base + tokens[1] for _, tokens in short_runs]
    words = _PageWords(
        ids,
        vocabulary,
        _run_grams(segmentation, vocabulary, long_runs, 3),
        short_index=np.array([k for k, _ in short_runs], dtype=np.int64),
        short_lengths=np.array([len(tokens) for _, tokens in short_runs], dtype=np.int64),
        short_keys=np.array(short_keys, dtype=np.int64),
    )
    _WORDS[segmentation] = words
    return words


def _run_grams(segmentation: Segmentation, vocabulary: int, runs: list[int], size: int) -> _RunGrams:
    """The ``size``-grams of the runs numbered ``runs`` (each at least ``size`` words long)."""
    run_tokens = [segmentation.runs[k].tokens for k in runs]
    lengths = np.array([len(tokens) for tokens in run_tokens], dtype=np.int64)
    # A run's n-grams start at each of its words but its last size - 1.
    grams_per_run = lengths - (size - 1)
    gram_starts = np.cumsum(grams_per_run) - grams_per_run
    return _RunGrams(
        size,
        vocabulary + 1,
        np.array(runs, dtype=np.int64),
        lengths,
        run_tokens,
        gram_starts,
        int(grams_per_run.sum()),
    )


def _keys(words: npt.NDArray[np.int32], base: int, size: int) -> npt.NDArray[np.int64]:
    """The key of each ``size``-gram of ``words`` (numbers below ``base``), in order: the numbers
    in base ``base`` (wrapping past 2**64 on a page of millions of distinct words, or for long
    n-grams, where two n-grams may then share a key, as two hashes may)."""
    if len(words) < size:
        return np.zeros(0, dtype=np.int64)
    unsigned = words.view(np.uint32)  # the same numbers (none is negative), not a copy
    b = np.uint64(base)
    count = len(words) - size + 1
    keys = unsigned[:count].astype(np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(1, size):
            keys *= b
            keys += unsigned[offset : offset + count]
    return keys.view(np.int64)


def _place_short(
    grams: _PageWords,
    places: _Places,
    chain: npt.NDArray[np.intp],
    output: npt.NDArray[np.int32],
    found: list[float],
) -> None:
    """Runs of one or two words: found if they occur in the gap between their placed neighbours
    (the places numbered ``chain``)."""
    if not len(chain) or not len(grams.short_index):
        return
    size = len(output)
    placed_run, placed_start, placed_end = places.run[chain], places.start[chain], places.end[chain]
    # The gap each short run sits in: from the end of the placed run before it to the start of
    # the placed run after it (a little wider: the placing is approximate).
    after = np.searchsorted(placed_run, grams.short_index)
    previous_end = np.where(after > 0, placed_end[np.maximum(after - 1, 0)], 0)
    next_start = np.where(after < len(chain), placed_start[np.minimum(after, len(chain) - 1)], size)
    low = np.maximum(previous_end - 2, 0)
    last = np.minimum(next_start + 2, size) - grams.short_lengths  # the latest start that fits
    base = grams.vocabulary + 1
    for length in (1, 2):
        mine = grams.short_lengths == length
        if not mine.any() or size < length:
            continue
        keys = output if length == 1 else output[:-1].astype(np.int64) * base + output[1:]
        # Each key's positions in order, as one sorted array of (key's rank, position) numbers, in
        # which a run's first occurrence at or after ``low`` is one binary search away.
        unique, rank = np.unique(keys, return_inverse=True)
        numbered = np.sort(rank.astype(np.int64) * (size + 1) + np.arange(len(keys)))
        wanted = grams.short_keys[mine]
        where = np.minimum(np.searchsorted(unique, wanted), len(unique) - 1)
        known = unique[where] == wanted
        lowest = where * (size + 1) + low[mine]
        first = np.minimum(np.searchsorted(numbered, lowest), len(numbered) - 1)
        hit = known & (numbered[first] >= lowest) & (numbered[first] <= where * (size + 1) + last[mine])
        for k in grams.short_index[mine][hit].tolist():
            found[k] = length


def _heaviest_chain(places: _Places, weight: npt.NDArray[np.float64], size: int) -> npt.NDArray[np.intp]:
    """One place or none for each run (``places``, with each place's ``weight``) such that the
    places do not overlap and follow run order, with the most weight in all: a weighted longest
    increasing subsequence, with a Fenwick tree of prefix maxima over output positions. The
    chosen places' numbers, in run order."""
    slack = 2
    tree_size = size + slack + 2
    # The tree holds, at each node, the chain (its last place) of the highest score among those it
    # covers: the place's number only, its score being in ``score`` (a node's own copy of it took
    # twice the memory of the numbers). A flat array of machine numbers, not a list: a list holds
    # an object per position set.
    tree = array("i", [-1]) * (tree_size + 1)
    count = len(places.run)
    score = array("d", bytes(8 * count))
    previous = array("i", [-1]) * count

    def query(position: int) -> tuple[float, int]:
        position = min(max(position, 0), tree_size)
        value = 0.0
        item = -1
        while position > 0:
            here = tree[position]
            if here >= 0 and score[here] > value:
                value, item = score[here], here
            position -= position & -position
        return value, item

    def update(position: int, value: float, item: int) -> None:
        position = min(max(position, 1), tree_size)
        while position <= tree_size:
            here = tree[position]
            if value > (score[here] if here >= 0 else 0.0):
                tree[position] = item
            position += position & -position

    # A run's places are updated after all of them are scored, so that no chain holds two of them.
    pending: list[int] = []
    run = -1
    for start in range(0, count, _CHAIN_PIECE):  # (as Python numbers a piece at a time)
        stop = min(start + _CHAIN_PIECE, count)
        pieces = zip(
            range(start, stop),
            places.run[start:stop].tolist(),
            places.start[start:stop].tolist(),
            weight[start:stop].tolist(),
            strict=True,
        )
        for item, place_run, place_start, place_weight in pieces:
            if place_run != run:
                for done in pending:
                    update(int(places.end[done]) + 1, score[done], done)
                pending.clear()
                run = place_run
            value, before = query(place_start + slack + 1)  # chains ending at or before its start
            score[item] = value + place_weight
            previous[item] = before
            pending.append(item)
    if not count:
        return np.zeros(0, dtype=np.intp)
    item = max(range(count), key=score.__getitem__)
    chain = []
    while item != -1:
        chain.append(item)
        item = previous[item]
    chain.reverse()
    return np.array(chain, dtype=np.intp)


_CHAIN_PIECE = 4_096
