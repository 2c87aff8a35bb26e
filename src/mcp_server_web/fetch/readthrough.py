"""The read-through port: a third party asked for a page's text when we cannot read it ourselves.

A page behind a bot wall, refused by bot protection, or built by scripts no browser here could
run, can still be read by a service that fetches pages for a living (Tavily's extract, Exa's
contents). The fetch library knows nothing of those services: it holds this port, and the
composition root fills it with an adapter (providers/extract.py) when the operator listed
providers in the fallback setting. Without one, no URL ever leaves for a third party.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from mcp_server_web.fetch.types import Via


@dataclass(frozen=True, slots=True)
class ExtractedText:
    """A page's text as a third party read it."""

    url: str
    """The URL the provider says it read (the one asked for when it says none)."""
    text: str
    title: str | None
    via: Via
    """Which provider read it ("tavily", "exa")."""
    provider: str
    """Its human name, for the note that says a third party fetched the page."""
    content_type: str = "text/markdown"
    """What kind of text ``text`` is: text/markdown or text/plain."""


class ReadThroughFailed(Exception):
    """Every provider asked failed (or was cooling down); ``reasons`` says how, one per provider."""

    def __init__(self, reasons: tuple[str, ...]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


class NotShared(ReadThroughFailed):
    """The URL was not handed to any third party: its destination is not public (``reasons``
    holds the one phrase that says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__((reason,))


class ReadThrough(Protocol):
    """Asks third parties, in the operator's order, for the text of one page."""

    async def read(self, url: str, *, markdown: bool) -> ExtractedText:
        """The text of url (Markdown when ``markdown``, else plain text), from the first provider
        that has it; ReadThroughFailed naming each provider's reason when none does."""
        ...
