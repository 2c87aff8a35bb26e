"""Generated long articles, for what conversion costs as a page grows (tests and bench/scaling.py).

Two kinds of text, both deterministic:

* **varied**: words drawn from a vocabulary of 4,000, so a word trigram almost never repeats;
* **repeated**: words drawn from 20 common ones, each paragraph ending in the same 25-word
  sentence, so every trigram occurs hundreds or thousands of times in the page (the case where
  placing a paragraph by its trigrams compares it with every other paragraph).

A paragraph is 57 (varied) or 65 (repeated) words; 24,000 paragraphs of varied text make a page
of about 9.8 MB.
"""

from __future__ import annotations

import random

KINDS = ("varied", "repeated")
_COMMON = ("the", "of", "and", "to", "in", "a", "is", "that", "for", "it")
_COMMON += ("as", "was", "with", "be", "by", "on", "not", "he", "this", "are")


def long_article(paragraphs: int, kind: str, seed: int = 7) -> str:
    """An article page of ``paragraphs`` paragraphs of ``kind`` text (see the module docstring)."""
    rng = random.Random(seed)
    if kind == "varied":
        vocabulary = [f"w{rng.getrandbits(20):05x}" for _ in range(4000)]
    elif kind == "repeated":
        vocabulary = list(_COMMON)
    else:
        raise ValueError(f"unknown kind of text: {kind}")
    # Varied text has no shared sentence; repeated text ends every paragraph with the same one.
    tail = " " + " ".join(vocabulary[i % len(vocabulary)] for i in range(25)) if kind == "repeated" else ""
    own = 40 if kind == "repeated" else 57
    parts = ["<!DOCTYPE html><html><head><title>A long article</title></head><body><article>"]
    parts.append("<h1>A long article</h1>\n")
    for _ in range(paragraphs):
        words = " ".join(rng.choice(vocabulary) for _ in range(own))
        parts.append(f"<p>{words}{tail}.</p>\n")
    parts.append("</article></body></html>")
    return "".join(parts)


def short_lines_article(lines: int) -> str:
    """An article of ``lines`` distinct two-word paragraphs between two long ones: runs too short
    to be placed by their trigrams, looked up between their placed neighbours."""
    items = "".join(f"<p>item{i} note</p>\n" for i in range(lines))
    first = " ".join(f"opening{i}" for i in range(300))
    last = " ".join(f"closing{i}" for i in range(300))
    return (
        "<!DOCTYPE html><html><head><title>A long article</title></head><body><article>"
        f"<h1>A long article</h1>\n<p>{first}</p>\n{items}<p>{last}</p></article></body></html>"
    )
