"""Which blocks another extractor's output covers (coverage.py), on pages built to reach the cases
the placing by trigrams cannot settle alone: text of a handful of words, and pages longer than one
batch of trigrams."""

from __future__ import annotations

import random

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
