"""Fan-out: ask several providers at once and fuse their lists by reciprocal rank.

Each result scores the sum of 1 / (RRF_K + rank) over the providers that returned it (rank from
1), the same page found by several providers counting once, under its normalised URL (results.
normalize_url). It keeps the title and snippet of the provider that ranked it best and lists every
provider that returned it in ``sources``. A provider still running at the search deadline is cut
there (the chain's own per-attempt timeout) and contributes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

import anyio

from mcp_server_web.providers.base import SearchResult
from mcp_server_web.providers.results import normalize_url

RRF_K = 60
"""The constant of reciprocal-rank fusion (Cormack et al., 2009): it damps the weight of the
very top ranks so that one provider's first result does not outvote agreement."""


async def ask_all(
    names: Sequence[str], ask: Callable[[str], Awaitable[list[SearchResult]]]
) -> list[list[SearchResult]]:
    """Every provider's results, asked at once; in the order of names."""
    lists: list[list[SearchResult]] = [[] for _ in names]

    async def one(index: int, name: str) -> None:
        lists[index] = await ask(name)

    async with anyio.create_task_group() as group:
        for index, name in enumerate(names):
            group.start_soon(one, index, name)
    return lists


def fuse(lists: Sequence[tuple[str, Sequence[SearchResult]]], limit: int) -> list[SearchResult]:
    """The results of (provider, ranked results) lists fused by reciprocal rank, best first, at most
    limit; ties keep the order of the providers, then of the ranks."""
    scores: dict[str, float] = {}
    best: dict[str, tuple[int, SearchResult]] = {}
    sources: dict[str, list[str]] = {}
    order: list[str] = []
    for provider, results in lists:
        for rank, result in enumerate(results, 1):
            key = normalize_url(result.url)
            if key not in scores:
                scores[key] = 0.0
                sources[key] = []
                order.append(key)
            if provider in sources[key]:
                continue  # a provider listing one page twice counts it once
            scores[key] += 1.0 / (RRF_K + rank)
            sources[key].append(provider)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, result)
    ranked = sorted(order, key=lambda key: -scores[key])  # sorted() is stable: ties keep order
    return [replace(best[key][1], sources=tuple(sources[key])) for key in ranked[:limit]]
