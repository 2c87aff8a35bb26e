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
import re
from collections.abc import Awaitable, Callable
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


NOT_MENTIONED = (
    "The page did not mention the query's words, so none of it is given; "
    "call web_fetch on its URL to read it anyway."
)
"""A read result's note when no passage of its page matches the query."""

ReadProgress = Callable[[int, int], Awaitable[None]]
"""Called with (pages read so far, pages to read) each time a read ends."""


@dataclass(frozen=True, slots=True)
class Read:
    """What reading one result gave: its passages for the query, a note that none match, or why
    the page could not be read."""

    content: str | None = None
    note: str | None = None
    error: ReadFailure | None = None


async def read_results(
    fetch: FetchService, urls: list[str], query: str, *, budget: float, progress: ReadProgress | None = None
) -> list[Read]:
    """One Read per url, in order, all within ``budget`` seconds; progress hears of each one done."""
    reads: list[Read] = [
        Read(error=ReadFailure("timeout", f"reading it took longer than the {budget:g}-second read budget."))
    ] * len(urls)
    done = 0

    async def read_one(index: int, url: str) -> None:
        nonlocal done
        reads[index] = await _read(fetch, url, query)
        done += 1
        if progress is not None:
            await progress(done, len(urls))

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
        # Its opening would be a guess the model takes for an answer: an unrelated page says so.
        return Read(note=NOT_MENTIONED)
    return Read(content=_fitted(passages))


_LEADING_HEADING = re.compile(r"#{1,6}[ \t][^\n]*\n*")


def _body(passage: Passage) -> str:
    """A passage's text without the heading it opens with: its [path] line already names it (a
    passage starts with a heading only when it starts its section, the path's last step)."""
    if not passage.heading:
        return passage.text
    opening = _LEADING_HEADING.match(passage.text)
    return passage.text[opening.end() :] if opening else passage.text


def _fitted(passages: list[Passage]) -> str:
    """The passages in document order, each under its heading path, within READ_CONTENT_LIMIT:
    the lowest-scoring ones give way when the headings make them too long together."""
    kept = list(passages)
    while True:
        text = "\n\n".join(
            f"[{passage.heading}]\n{_body(passage)}" if passage.heading else passage.text for passage in kept
        )
        if len(text) <= READ_CONTENT_LIMIT or len(kept) == 1:
            return text[:READ_CONTENT_LIMIT]
        kept.remove(min(kept, key=lambda passage: passage.score))
