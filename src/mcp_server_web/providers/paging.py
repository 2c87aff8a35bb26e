"""Pages and locale options a provider cannot take: what to ask it instead, and what to say.

A provider that pages itself (``SearchProvider.pages``) is asked for the page; any other is asked
for the first page * max_results results, of which the chain keeps the last max_results. Either
way the attempt's notes list what the provider could not apply (``SearchProvider.unsupported``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mcp_server_web.providers.base import SearchProvider, SearchQuery, SearchResult


def paged(provider: SearchProvider, query: SearchQuery) -> tuple[SearchQuery, list[str]]:
    """(the query to send provider, the notes for its attempt)."""
    notes = list(provider.unsupported(query))
    if query.page == 1 or provider.pages:
        return query, notes
    wanted = query.page * query.max_results
    notes.append(
        f"{provider.title} cannot page: asked for the first {wanted} results and kept "
        f"results {wanted - query.max_results + 1} to {wanted}."
    )
    return replace(query, max_results=wanted, page=1), notes


def page_of(results: Sequence[SearchResult], query: SearchQuery, asked: SearchQuery) -> list[SearchResult]:
    """The results of query's page among those asked for (all of them when the provider paged)."""
    if asked.page == query.page:
        return list(results)
    return list(results[(query.page - 1) * query.max_results :][: query.max_results])
