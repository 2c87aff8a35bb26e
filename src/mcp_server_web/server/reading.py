"""web_search's read=N: the top results read through web_fetch's own path, each cut to what
matters for the query.

Every read is ``FetchService.fetch_page`` with web_fetch's defaults (address policy, robots.txt,
caps, rendering, the document cache: a later web_fetch of that URL is a cache hit), then the
passages of that document that rank best for the search query. All reads run at once (there are
at most READ_LIMIT) within one budget that starts when the search has answered; a page that
fails or is still loading when the budget ends costs only its own result.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from mcp_server_web.errors import WebToolError
from mcp_server_web.fetch import FetchService, Passage

logger = logging.getLogger(__name__)

READ_LIMIT = 5
"""Most results web_search reads (its ``read`` argument's maximum)."""
READ_CONTENT_LIMIT = 3000
"""Most characters of one result's ``content``."""


@dataclass(frozen=True, slots=True)
class ReadFailure:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Read:
    """What reading one result gave: its passages for the query, or why there are none."""

    content: str | None = None
    error: ReadFailure | None = None


async def read_results(fetch: FetchService, urls: list[str], query: str, *, budget: float) -> list[Read]:
    """One Read per url, in order, all within ``budget`` seconds."""
    reads: list[Read] = [
        Read(error=ReadFailure("timeout", f"reading it took longer than the {budget:g}-second read budget."))
    ] * len(urls)

    async def read_one(index: int, url: str) -> None:
        reads[index] = await _read(fetch, url, query)

    with anyio.move_on_after(budget):
        async with anyio.create_task_group() as group:
            for index, url in enumerate(urls):
                group.start_soon(read_one, index, url)
    return reads


async def _read(fetch: FetchService, url: str, query: str) -> Read:
    try:
        fetched = await fetch.fetch_page(url)
    except WebToolError as error:
        return Read(error=ReadFailure(error.code, error.message))
    try:
        passages = await fetch.rank_passages(fetched.document, query, max_chars=READ_CONTENT_LIMIT)
    except WebToolError as error:
        return Read(error=ReadFailure(error.code, error.message))
    if not passages:
        # Nothing in the page matches the query's words: its opening is the best guess.
        return Read(content=fetched.document.text[:READ_CONTENT_LIMIT])
    return Read(content=_fitted(passages))


def _fitted(passages: list[Passage]) -> str:
    """The passages in document order, each under its heading path, within READ_CONTENT_LIMIT:
    the lowest-scoring ones give way when the headings make them too long together."""
    kept = list(passages)
    while True:
        text = "\n\n".join(
            f"[{passage.heading}]\n{passage.text}" if passage.heading else passage.text for passage in kept
        )
        if len(text) <= READ_CONTENT_LIMIT or len(kept) == 1:
            return text[:READ_CONTENT_LIMIT]
        kept.remove(min(kept, key=lambda passage: passage.score))
