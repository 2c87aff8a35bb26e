"""Which blocks another extractor's output covers (coverage.py), on pages built to reach the cases
the placing by trigrams cannot settle alone: text of a handful of words, and pages longer than one
batch of trigrams."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mcp_server_web.fetch.doc import coverage as coverage_module
from mcp_server_web.fetch.doc.blocks import Segmentation, segment
from mcp_server_web.fetch.doc.coverage import GRAM_BATCH, MAX_GRAM_REPEATS, coverage
from mcp_server_web.fetch.doc.html_tree import body_of, parse_html


def _paragraphs(count: int, vocabulary: list[str], words: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(count)]


def _segmented(paragraphs: list[str]) -> Segmentation:
    root = parse_html("<html><body>" + "".join(f"<p>{text}</p>" for text in paragraphs) + "</body></html>")
    assert root is not None
    return segment(body_of(root))


def _shares(segmentation: Segmentation, output: str) -> list[float]:
    """Each paragraph's share found in ``output``, in page order."""
    votes = coverage(segmentation, output)
    return [votes.get(block, 0.0) for block in segmentation.blocks if block.element.tag == "p"]


def test_paragraphs_of_a_few_common_words_are_placed() -> None:
    """Five words make 125 trigrams: each recurs dozens of times in the output, too often to place a
    paragraph by (MAX_GRAM_REPEATS). Placed by their 6-grams, those the output holds count and the
    others do not (by trigrams alone, none counted: readability's vote on such a page was empty)."""
    paragraphs = _paragraphs(300, ["the", "of", "and", "to", "in"], 40)
    segmentation = _segmented(paragraphs)
    kept = paragraphs[:150]
    shares = _shares(segmentation, "\n\n".join(kept))
    assert min(shares[:150]) >= 0.9, shares[:150]
    assert max(shares[150:]) < 0.5, shares[150:]
    trigram_counts = len(kept) * 38 / 125
    assert trigram_counts > 4 * MAX_GRAM_REPEATS  # the case the test is about


def test_a_page_longer_than_a_batch_of_trigrams_is_placed_whole() -> None:
    """Runs are placed GRAM_BATCH trigrams at a time: every paragraph of a page several batches long
    counts, whichever batch it falls in, and one left out of the output does not."""
    vocabulary = [f"w{number}" for number in range(3000)]
    paragraphs = _paragraphs(1200, vocabulary, 50)
    trigrams = 1200 * 48
    assert trigrams > 5 * GRAM_BATCH
    segmentation = _segmented(paragraphs)
    left_out = set(range(0, 1200, 97))
    output = "\n\n".join(text for number, text in enumerate(paragraphs) if number not in left_out)
    shares = _shares(segmentation, output)
    assert all(share == 1.0 for number, share in enumerate(shares) if number not in left_out)
    assert all(shares[number] == 0.0 for number in left_out)


def test_a_teaser_repeating_a_paragraph_is_not_counted_twice() -> None:
    """The output holds a paragraph once: the paragraph itself counts, its copy in a teaser further
    down the page does not (the places follow document order without overlapping)."""
    paragraphs = _paragraphs(6, [f"v{number}" for number in range(500)], 30)
    page = [*paragraphs, paragraphs[1]]
    segmentation = _segmented(page)
    shares = _shares(segmentation, "\n\n".join(paragraphs))
    assert shares[:6] == [1.0] * 6
    assert shares[6] == 0.0


def test_batches_of_recurring_trigrams_are_halved_without_changing_what_is_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every trigram of a paragraph of 20 common words recurs in the output: its places are looked at
    OFFSETS_BATCH at a time, the batch halved until they fit. How runs are batched changes nothing."""
    vocabulary = ["the", "of", "and", "to", "in", "a", "is", "that", "for", "it"] * 2
    vocabulary = [f"{word}{number // 10}" for number, word in enumerate(vocabulary)]
    paragraphs = [text + " and the end of it" for text in _paragraphs(400, vocabulary, 30)]
    segmentation = _segmented(paragraphs)
    output = "\n\n".join(paragraphs[::2] + paragraphs[1::4])
    batches: list[int] = []
    batch_places = coverage_module._batch_places

    def counted(*args: Any) -> Any:
        batches.append(1)
        return batch_places(*args)

    monkeypatch.setattr(coverage_module, "_batch_places", counted)
    whole = _shares(segmentation, output)
    whole_batches = len(batches)
    monkeypatch.setattr(coverage_module, "OFFSETS_BATCH", 64)
    halved = _shares(segmentation, output)
    assert len(batches) > 4 * whole_batches  # halved, and halved again
    assert halved == whole
    assert sum(whole[::2]) > 0.8 * len(whole[::2])  # most of what the output holds is found


def test_on_a_page_of_few_distinct_words_the_index_packs_key_and_position() -> None:
    """20 words: every trigram's key fits in 32 bits, so the output index is one packed array; its
    places are the ones the general index gives (here made to take the general way)."""
    vocabulary = [f"v{number}" for number in range(20)]
    paragraphs = _paragraphs(200, vocabulary, 40)
    segmentation = _segmented(paragraphs)
    output = "\n\n".join(paragraphs[:120])
    packed = _shares(segmentation, output)
    narrow = coverage_module._NARROW
    try:
        coverage_module._NARROW = 0  # (no key fits: the general index)
        general = _shares(segmentation, output)
    finally:
        coverage_module._NARROW = narrow
    assert packed == general
    assert min(packed[:120]) >= 0.9 and max(packed[120:]) < 0.5
