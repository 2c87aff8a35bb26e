"""Dates as the tools report them: ISO 8601 with a zone, from whatever spelling a source used.

One rule for every date a tool returns, so that a search result's ``published`` and a fetched
page's ``published`` compare as they read: fetch/ and providers/ both take it from here (neither
may import the other).
"""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, datetime, timedelta

MAX_DATE_CHARS = 64
"""Longer than any date spelling taken below: anything longer is not read (no parser sees it)."""

_RELATIVE = re.compile(r"(\d+)\s+(minute|hour|day|week|month|year)s?\s+ago", re.I)
_RELATIVE_SECONDS = {
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}


def iso_datetime(value: object, *, now: datetime | None = None) -> str | None:
    """A date as ISO 8601 with a timezone, or None when it is not a date we can read.

    Taken: ISO 8601 (a date alone is midnight; no zone is UTC, which is what the providers that
    leave it out mean, and the only reading a page that names no zone allows without guessing
    its reader's), RFC 2822 ("Tue, 04 Nov 2025 15:30:00 GMT", Tavily) and relative ages
    ("2 days ago", Brave's news), counted back from ``now`` (the time of the answer).
    """
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_DATE_CHARS:
        return None
    text = value.strip()
    when: datetime | None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        when = None
    if when is None:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            when = None
    if when is None:
        try:
            when = datetime.strptime(text, "%B %d, %Y")  # Brave's web "age": "November 1, 2026"
        except ValueError:
            when = None
    if when is None and (relative := _RELATIVE.fullmatch(text)):
        seconds = int(relative.group(1)) * _RELATIVE_SECONDS[relative.group(2).lower()]
        try:
            when = (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        except OverflowError:  # "99999999 years ago"
            return None
        when = when.replace(microsecond=0)
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.isoformat()
