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

from mcp_server_web.errors import WebToolError
from mcp_server_web.fetch.net.urls import parse_url
from mcp_server_web.fetch.types import Via

TITLE_MAX_CHARS = 300
"""The most characters of a third party's title kept: what the tools show of any title. A page's
own title is bounded by its page; a provider's answer may hold megabytes of one."""


@dataclass(frozen=True, slots=True)
class ExtractedText:
    """A page's text as a third party read it."""

    url: str
    """The URL the provider says it read (the one asked for when it says none): its word only,
    see ``source_url``."""
    text: str
    title: str | None
    via: Via
    """Which provider read it ("tavily", "exa")."""
    provider: str
    """Its human name, for the note that says a third party fetched the page."""
    content_type: str = "text/markdown"
    """What kind of text ``text`` is: text/markdown or text/plain."""
    author: str | None = None
    published: str | None = None
    """What the provider says of the page's author and date (Exa does, Tavily does not): its
    word, held to a page's bounds (``bounded_line``, mcp_server_web.dates) before it is kept."""


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


def source_url(requested: str, said: str) -> str:
    """The URL a third party's text is said to come from: the provider's, when it is an http(s)
    URL on the requested one's site (a redirect there: https for http, the ``www.`` host of the
    same name, a canonical path); else the requested one.

    The provider's answer is its word, not a fetch of ours: text in its place (prose, a fence
    tag) or another site's URL would stand as the page's origin, in final_url and the fence.
    """
    try:
        theirs = parse_url(said)
    except WebToolError:
        return requested
    return str(theirs) if _site(theirs.host) == _site(parse_url(requested).host) else requested


def bounded_title(title: str | None) -> str | None:
    """A third party's title held to a page title's bounds (see ``bounded_line``), at most
    TITLE_MAX_CHARS characters."""
    return bounded_line(title, TITLE_MAX_CHARS)


def bounded_line(text: str | None, limit: int) -> str | None:
    """A third party's string as one printable line (controls, line breaks, invisible and lone
    surrogate characters become spaces, runs of them one), at most ``limit`` characters."""
    if text is None:
        return None
    line = " ".join("".join(char if char.isprintable() else " " for char in text[: limit * 4]).split())
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line or None


def _site(host: str) -> str:
    """A host as the same site sees it: no trailing dot, no leading ``www.``."""
    return host.rstrip(".").removeprefix("www.")
