"""Slicing a cached document into pages.

Pages are cut at a paragraph or line boundary near `max_length`, so a model never gets half a
sentence when a whole one fits, and every page starts exactly where the previous one ended: the
concatenation of all pages is the document, character for character.
"""

from __future__ import annotations

from dataclasses import dataclass

# A page may end this much earlier than max_length to land on a clean boundary. Past that we
# prefer a full page over a tidy cut.
_MIN_FILL = 0.6
_BOUNDARIES = ("\n\n", "\n", ". ", " ")


@dataclass(frozen=True, slots=True)
class Page:
    text: str
    start_index: int
    total_length: int

    @property
    def end_index(self) -> int:
        return self.start_index + len(self.text)

    @property
    def next_start_index(self) -> int | None:
        return self.end_index if self.end_index < self.total_length else None

    @property
    def remaining(self) -> int:
        return max(0, self.total_length - self.end_index)

    @property
    def truncated(self) -> bool:
        return self.next_start_index is not None


def slice_page(document: str, start_index: int, max_length: int) -> Page:
    """The page of `document` that starts at `start_index` and holds at most `max_length` characters."""
    if start_index < 0 or max_length < 1:
        raise ValueError("start_index must be >= 0 and max_length >= 1")
    total = len(document)
    if start_index >= total:
        return Page("", start_index, total)
    end = min(start_index + max_length, total)
    if end < total:
        end = _clean_cut(document, start_index, end)
    return Page(document[start_index:end], start_index, total)


def _clean_cut(document: str, start: int, end: int) -> int:
    earliest = start + max(1, int((end - start) * _MIN_FILL))
    for boundary in _BOUNDARIES:
        found = document.rfind(boundary, earliest, end)
        if found != -1:
            return found + len(boundary)
    return end
