"""Who wrote a page and when, as web_fetch shows it: the structured fields and the one line.

The values are the page's own word (fetch/doc/metadata.py reads them) and stand outside the
untrusted-content fence in the structured output, so each goes through ``one_line`` with its cap
here, at the face, whatever the extractor already did.
"""

from __future__ import annotations

from typing import TypedDict

from mcp_server_web.fetch import (
    MAX_URL_LENGTH,
    METADATA_DESCRIPTION_LIMIT,
    METADATA_NAME_LIMIT,
    PageMetadata,
)
from mcp_server_web.server.boundary import one_line

DATE_LIMIT = 40
"""An ISO 8601 date with a zone and microseconds takes 32 characters."""
LANGUAGE_LIMIT = 35


class PageFacts(TypedDict):
    """web_fetch's structured fields of who and when (schemas.WebFetchOutput)."""

    author: str | None
    published: str | None
    modified: str | None
    site_name: str | None
    language: str | None
    description: str | None
    canonical_url: str | None


def page_facts(metadata: PageMetadata) -> PageFacts:
    """web_fetch's structured fields for ``metadata``: each one bounded line, or None."""

    def bounded(value: str | None, limit: int) -> str | None:
        return one_line(value, limit) or None if value else None

    return PageFacts(
        author=bounded(metadata.author, METADATA_NAME_LIMIT),
        published=bounded(metadata.published, DATE_LIMIT),
        modified=bounded(metadata.modified, DATE_LIMIT),
        site_name=bounded(metadata.site_name, METADATA_NAME_LIMIT),
        language=bounded(metadata.language, LANGUAGE_LIMIT),
        description=bounded(metadata.description, METADATA_DESCRIPTION_LIMIT),
        canonical_url=bounded(metadata.canonical_url, MAX_URL_LENGTH),
    )


def facts_line(metadata: PageMetadata) -> str:
    """The page's byline as one compact line ("By Jane Doe · Published 2024-03-01 · Updated
    2024-03-05 · Example News"), or "" when the page declares none of these.

    Dates by their day only (the structured output has the time and zone); an update on the day
    of publication is left out. Description, language and canonical URL are not in it: the first
    repeats the page, the others are for the program, not the reader.
    """
    facts = page_facts(metadata)
    published, modified = (_day(facts["published"]), _day(facts["modified"]))
    parts = [
        f"By {facts['author']}" if facts["author"] else None,
        f"Published {published}" if published else None,
        f"Updated {modified}" if modified and modified != published else None,
        facts["site_name"],
    ]
    return " · ".join(part for part in parts if part)


def _day(date: str | None) -> str | None:
    return date[:10] if date else None
