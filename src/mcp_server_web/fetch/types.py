"""Values passed between the stages of the fetch path (client -> convert -> cache -> pages)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, fields
from typing import Literal

OutputFormat = Literal["markdown", "text", "html"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("markdown", "text", "html")
RenderMode = Literal["auto", "always", "never"]
RENDER_MODES: tuple[RenderMode, ...] = ("auto", "always", "never")
Via = Literal["direct", "browser", "tavily", "exa"]
"""How a document's text was obtained: a plain download, the DOM a browser built, or a third
party's extraction (see readthrough.py)."""

SNAPSHOT_LENGTH = 12
"""Hex digits of a document's snapshot id (48 bits: versions of one URL never collide in practice)."""

# Called with (bytes received so far, expected total or None) while a body downloads.
DownloadProgress = Callable[[int, int | None], Awaitable[None]]
# Called with each URL about to be requested (the first one and every redirect hop),
# after the address policy accepted it; raises to stop the request (robots.txt uses it).
HopCheck = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """One HTTP response, body complete, content-encoding already removed."""

    url: str
    """The URL that was asked for."""
    final_url: str
    """The URL that answered, after redirects."""
    status: int
    headers: dict[str, str]
    """Response headers, names lower-cased (repeated headers joined with ', ')."""
    media_type: str
    """Content-Type without parameters, lower-cased; '' when the origin sent none."""
    charset: str | None
    """The charset parameter of Content-Type, if any (not validated)."""
    body: bytes
    redirects: tuple[str, ...] = ()
    """Every URL that answered with a redirect, in order."""

    @property
    def size(self) -> int:
        return len(self.body)


METADATA_NAME_LIMIT = 200
"""Characters of a page's author (names joined) or site name."""
METADATA_DESCRIPTION_LIMIT = 500
"""Characters of a page's description."""


@dataclass(frozen=True, slots=True)
class PageMetadata:
    """Who wrote a page and when, as the page itself declares it (doc/metadata.py reads it).

    Each value is one line of text, bounded in length (the limits above, a URL's, a language
    tag's), or None when
    the page declares nothing. Dates are ISO 8601 with a zone (mcp_server_web.dates). Declared
    here, not in doc/, because the server process holds documents but never imports the
    conversion stack that reads HTML.
    """

    author: str | None = None
    published: str | None = None
    modified: str | None = None
    site_name: str | None = None
    language: str | None = None
    """A language tag (BCP 47), e.g. en or pt-BR."""
    description: str | None = None
    canonical_url: str | None = None
    """The URL the page names as its own (<link rel=canonical>), absolute, http(s)."""


NO_METADATA = PageMetadata()


def metadata_parts(metadata: PageMetadata) -> tuple[str, ...]:
    """Every field of ``metadata`` as text (None as ""), in order: for the snapshot ids, since
    the first page of a document shows them."""
    return tuple(getattr(metadata, part.name) or "" for part in fields(metadata))


@dataclass(frozen=True, slots=True)
class Converted:
    """The text the converter made of a response."""

    text: str
    title: str | None
    content_type: str
    """The kind of content that was converted, as a media type (e.g. text/html, application/pdf)."""
    used_fallback: bool = False
    """True when main-content extraction kept too little and the whole page was converted instead."""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    """Short notes for the caller (e.g. a PDF cut at its page limit)."""
    script_built: bool = False
    """The page's text is built by its scripts (a JavaScript shell): a browser would read more."""
    metadata: PageMetadata = NO_METADATA


@dataclass(frozen=True, slots=True)
class Document:
    """A converted page as it is cached and paginated."""

    url: str
    final_url: str
    status: int
    content_type: str
    title: str | None
    format: OutputFormat
    main_content: bool
    text: str
    used_fallback: bool = False
    warnings: tuple[str, ...] = ()
    snapshot: str = ""
    """Names this version of the document (SNAPSHOT_LENGTH hex digits, derived from its content):
    the pages a caller reads with one snapshot id all come from this one text."""
    fetched_at: str = ""
    """When this version was converted (from a download at most FetchConfig.cache_ttl older), ISO 8601 UTC."""
    via: Via = "direct"
    metadata: PageMetadata = NO_METADATA

    @property
    def total_length(self) -> int:
        return len(self.text)
