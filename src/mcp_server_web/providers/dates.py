"""published_after / published_before: which results fall on the days asked for.

The bounds are calendar days in UTC, both included: a result published at any moment from
``published_after`` 00:00:00Z up to, but not including, the midnight that ends
``published_before`` is kept. A date with another zone is converted to UTC first, so
"2026-11-11T01:00:00+02:00" falls on 2026-11-10. Providers' own date parameters are asked first
(each adapter maps them); this filter is applied to every answer anyway, because a provider's
filter is its own (some have none, and a date it reads from a page can differ from the one it
returns). A result without a date cannot be judged and is kept: dropping it would empty the
answers of providers that date nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta

from mcp_server_web.providers.base import SearchQuery, SearchResult


def first_moment(day: date) -> datetime:
    """The first instant of day, in UTC."""
    return datetime.combine(day, time.min, UTC)


def end_of(day: date) -> datetime:
    """The midnight (UTC) that ends day: the first instant no longer on it."""
    return first_moment(day + timedelta(days=1))


def span(query: SearchQuery) -> str:
    """The days asked for, as a note says them ("2026-11-01 to 2026-11-10")."""
    after, before = query.published_after, query.published_before
    if after is not None and before is not None:
        return f"{after.isoformat()} to {before.isoformat()}"
    if after is not None:
        return f"from {after.isoformat()}"
    return f"up to {before.isoformat()}" if before is not None else ""


def no_parameter(title: str, query: SearchQuery) -> tuple[str, ...]:
    """The note of a provider that has no date parameter, when the query has dates."""
    if query.published_after is None and query.published_before is None:
        return ()
    return (
        f"{title} has no date parameter; its results were filtered by their own dates "
        f"({span(query)}), and those without a date were kept.",
    )


def published_within(
    results: Sequence[SearchResult], query: SearchQuery
) -> tuple[list[SearchResult], tuple[str, ...]]:
    """(the results dated on the query's days or not dated, a note saying what was dropped and how
    many were kept undated; none when the query has no dates or nothing was dropped or undated)."""
    after, before = query.published_after, query.published_before
    if after is None and before is None:
        return list(results), ()
    earliest = first_moment(after) if after is not None else None
    ending = end_of(before) if before is not None else None
    kept: list[SearchResult] = []
    dropped = undated = 0
    for result in results:
        when = _instant(result.published)
        if when is None:
            undated += 1
        elif (earliest is not None and when < earliest) or (ending is not None and when >= ending):
            dropped += 1
            continue
        kept.append(result)
    said: list[str] = []
    if dropped:
        where = {
            (True, True): f"outside {span(query)}",
            (True, False): f"before {after}",
            (False, True): f"after {before}",
        }[(after is not None, before is not None)]
        said.append(f"{_count(dropped, 'result')} dated {where} {'was' if dropped == 1 else 'were'} dropped")
    if undated:
        said.append(f"{_count(undated, 'result')} without a date {'was' if undated == 1 else 'were'} kept")
    return kept, ("; ".join(said) + ".",) if said else ()


def _instant(published: str | None) -> datetime | None:
    """A result's date (ISO 8601: dates.iso_datetime) in UTC; None when it has none or it is
    not one (a date the chain cannot read is not a date outside the days)."""
    if not published:
        return None
    try:
        when = datetime.fromisoformat(published)
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
