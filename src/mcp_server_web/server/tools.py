"""Tool bodies: each takes its validated input model (server/contract/), calls the domain, and
shapes the text and the structured output.

Every failure becomes an MCP tool error (isError) whose text starts with a stable code
(server/failures.py, applied to every tool by toolspec.py); nothing raises into the protocol and
no stack trace reaches the client.

Text from the web (a page, search results) reaches the model fenced (see server/boundary.py);
what we write ourselves around it (headers, notes, the continuation line) stays outside.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Annotated, Any, Protocol

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent

from mcp_server_web.config import Settings
from mcp_server_web.errors import InvalidArgument
from mcp_server_web.fetch import (
    MAX_URL_LENGTH,
    Document,
    OutlineEntry,
    OutputFormat,
    Passage,
    RenderMode,
)
from mcp_server_web.providers import SearchQuery, SearchResult
from mcp_server_web.server.boundary import fence, one_line
from mcp_server_web.server.contract import (
    FETCH_ICON,
    FETCH_MAX_LENGTH_DEFAULT,
    SEARCH_ICON,
    SNIPPET_LIMIT,
    TITLE_LIMIT,
    WEB_SEARCH_DESCRIPTION,
    AttemptOut,
    ContentError,
    OutlineEntryOut,
    PassageOut,
    SearchResultOut,
    WebFetchInput,
    WebFetchOutput,
    WebSearchInput,
    WebSearchOutput,
    web_fetch_description,
)
from mcp_server_web.server.page_facts import facts_line, page_facts
from mcp_server_web.server.reading import Read, read_results
from mcp_server_web.server.services import Services
from mcp_server_web.server.toolspec import ToolSpec

logger = logging.getLogger(__name__)
ToolContext = Context[Services, Any]
"""What a tool receives as its context: the lifespan context is the server's Services."""

NOTE_LIMIT = 500
"""Most characters of one conversion note, kept to one bounded line (errors are, too:
failures.ERROR_TEXT_LIMIT): a note can name something the page chose (the id of a script its
text was recovered from)."""


class PageSlice(Protocol):
    """Where one page of a document sits in it (what FetchService's pages tell)."""

    @property
    def start_index(self) -> int: ...
    @property
    def total_length(self) -> int: ...
    @property
    def next_start_index(self) -> int | None: ...
    @property
    def remaining(self) -> int: ...
    @property
    def truncated(self) -> bool: ...


def continuation_footer(page: PageSlice, snapshot: str | None = None) -> str:
    """The one line appended to a page's text that tells the model how to read on.

    snapshot names the version of the document the page was cut from: passed back with the next
    start_index, it keeps the pages of one reading from one version.
    """
    if page.start_index >= page.total_length and page.total_length > 0:
        return (
            f"[start_index {page.start_index} is past the end of this document "
            f"({page.total_length} characters); use a smaller start_index.]"
        )
    if page.next_start_index is None:
        return ""
    snapshot_argument = f" and snapshot={snapshot}" if snapshot else ""
    return (
        f"[{page.remaining} more characters of {page.total_length}. "
        f"Call web_fetch again with start_index={page.next_start_index}{snapshot_argument} to continue.]"
    )


def services_of(ctx: ToolContext) -> Services:
    return ctx.request_context.lifespan_context


async def web_search(
    arguments: WebSearchInput, *, ctx: ToolContext
) -> Annotated[CallToolResult, WebSearchOutput]:
    services = services_of(ctx)
    search_query = SearchQuery(
        query=arguments.query,
        max_results=arguments.max_results,
        topic=arguments.topic,
        time_range=arguments.time_range,
        include_domains=arguments.include_domains,
        exclude_domains=arguments.exclude_domains,
        country=arguments.country,
        language=arguments.language,
        page=arguments.page,
        safesearch=services.settings.safesearch,
        published_after=arguments.published_after,
        published_before=arguments.published_before,
    )
    pin, reading = arguments.provider, arguments.read
    if reading and "web_fetch" not in services.settings.tools:
        raise InvalidArgument(
            "read reads pages the way web_fetch does, and this server does not offer web_fetch: "
            "search without read."
        )
    chain = await services.search.get()
    answer = await chain.search(search_query, pin=pin)
    reads: list[Read] = []
    if reading and answer.results:
        urls = [result.url for result in answer.results[:reading]]

        async def progress(done: int, total: int) -> None:
            await ctx.report_progress(done, total, f"read {done} of {total} pages")

        reads = await read_results(
            services.fetch, urls, search_query.query, budget=services.settings.read_budget, progress=progress
        )
    output = WebSearchOutput(
        query=search_query.query,
        provider=answer.provider,
        results=[
            _result_out(result, reads[index] if index < len(reads) else None)
            for index, result in enumerate(answer.results)
        ],
        attempts=[AttemptOut(**asdict(attempt)) for attempt in answer.attempts],
        cached=answer.cached,
    )
    # The fenced listing shows the results as the provider sent them (a fence leaves its text
    # untouched); the structured fields stand outside any fence, so they are the cleaned lines.
    as_sent = output.model_copy(
        update={
            "results": [
                SearchResultOut(
                    **{**asdict(result), "sources": shown.sources},
                    content=shown.content,
                    content_note=shown.content_note,
                    content_error=shown.content_error,
                )
                for result, shown in zip(answer.results, output.results, strict=True)
            ]
        }
    )
    # A client that reads only structuredContent hands this JSON to its model: a page's text
    # there is web text, so it carries a fence of its own, as the listing in the text does.
    fenced = output.model_copy(
        update={
            "results": [
                result
                if result.content is None
                else result.model_copy(update={"content": fence(result.content, source=result.url)})
                for result in output.results
            ]
        }
    )
    return CallToolResult(
        content=[TextContent(type="text", text=render_search_answer(as_sent))],
        structured_content=fenced.model_dump(mode="json"),
    )


def _result_out(result: SearchResult, read: Read | None = None) -> SearchResultOut:
    """A provider's result with its remote strings made single bounded lines (see one_line), and
    what reading its page gave."""
    failure = None if read is None or read.error is None else read.error
    return SearchResultOut(
        title=one_line(result.title, TITLE_LIMIT),
        url=one_line(result.url, MAX_URL_LENGTH),
        snippet=one_line(result.snippet, SNIPPET_LIMIT),
        published=one_line(result.published, TITLE_LIMIT) if result.published else None,
        score=result.score,
        sources=list(result.sources) or None,
        content=None if read is None else read.content,
        content_note=None if read is None else read.note,
        content_error=None
        if failure is None
        else ContentError(code=failure.code, message=one_line(failure.message, NOTE_LIMIT)),
    )


def render_search_answer(answer: WebSearchOutput) -> str:
    """The compact numbered Markdown list the model reads.

    Titles, URLs and snippets are the provider's and the sites' words: the list is fenced, and
    our header line and fallback notes stay outside.
    """
    failed = [a for a in answer.attempts if a.outcome in ("error", "skipped")]
    # A provider's reason can quote its upstream's words, and these notes sit outside the fence.
    notes = "".join(
        f"\n- {a.provider} {'failed' if a.outcome == 'error' else 'skipped'}: "
        f"{one_line(str(a.error), NOTE_LIMIT)}"
        for a in failed
    ) + "".join(
        # What a provider could not apply (a country, paging): our words about the provider's API.
        f"\n- {a.provider}: {one_line(note, NOTE_LIMIT)}"
        for a in answer.attempts
        for note in a.notes
    )
    if not answer.results:
        tried = ", ".join(a.provider for a in answer.attempts)
        return f'No results for "{answer.query}" (tried: {tried}).' + (f"\n{notes}" if notes else "")
    listing: list[str] = []
    for number, result in enumerate(answer.results, start=1):
        listing.append(f"{number}. [{result.title or result.url}]({result.url})")
        if result.published:
            listing.append(f"   Published: {result.published}")
        if result.sources:
            listing.append(f"   Found by: {', '.join(result.sources)}")
        if result.snippet:
            listing.append(f"   {result.snippet}")
        if result.content is not None:
            listing.append("   Content:")
            listing.extend(f"   > {line}" if line else "   >" for line in result.content.splitlines())
        if result.content_note is not None:
            listing.append(f"   Not quoted: {result.content_note}")
        if result.content_error is not None:
            error = result.content_error
            listing.append(f"   Could not read it: {error.code}: {error.message}")
    lines = [
        f'Results for "{answer.query}" from {answer.provider}{" (cached)" if answer.cached else ""}:',
        "",
        fence("\n".join(listing), source=answer.provider or "search"),
    ]
    if notes:
        lines.append("")
        lines.append(f"Fallback notes:{notes}")
    return "\n".join(lines)


async def web_fetch(
    arguments: WebFetchInput, *, ctx: ToolContext
) -> Annotated[CallToolResult, WebFetchOutput]:
    async def progress(fraction: float, message: str) -> None:
        await ctx.report_progress(fraction, 1.0, message)

    text, output = await read_page(
        services_of(ctx),
        arguments.url,
        output_format=arguments.format,
        main_content=arguments.main_content,
        start_index=arguments.start_index,
        max_length=arguments.max_length,
        refresh=arguments.refresh,
        snapshot=arguments.snapshot,
        render=arguments.render,
        query=arguments.query,
        outline=arguments.outline,
        progress=progress,
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=output.model_dump(mode="json"),
    )


Progress = Callable[[float, str], Awaitable[None]]


async def read_page(
    services: Services,
    url: str,
    *,
    output_format: OutputFormat = "markdown",
    main_content: bool = True,
    start_index: int = 0,
    max_length: int = FETCH_MAX_LENGTH_DEFAULT,
    refresh: bool = False,
    snapshot: str | None = None,
    render: RenderMode = "auto",
    query: str | None = None,
    outline: bool = False,
    progress: Progress,
) -> tuple[str, WebFetchOutput]:
    """One page of the document at url, as web_fetch answers it: the text the model reads and the
    structured output. The one path of web_fetch and of the fetch prompt (server/prompts.py).

    With query, the page is the passages of the whole document most relevant to it (at most
    max_length characters of the document); with outline, its headings. Both work on the cached
    document like any page."""
    result = await services.fetch.fetch_page(
        url,
        output_format=output_format,
        main_content=main_content,
        start_index=start_index,
        max_length=max_length,
        refresh=refresh,
        snapshot=snapshot,
        render=render,
        progress=progress,
    )
    document, page = result.document, result.page
    notes = (
        [f"[Note: {one_line(warning, NOTE_LIMIT)}]" for warning in document.warnings]
        if page.start_index == 0
        else []
    )
    if query is not None:
        passages = await services.fetch.rank_passages(document, query, max_chars=max_length)
        body, footer = passages_text(passages, document.final_url, document.total_length, document.snapshot)
        text = "\n\n".join(part for part in [body, *notes, footer] if part)
        output = _fetch_output(document, result.cached, page)
        returned = sum(passage.length for passage in passages)
        return text, output.model_copy(
            update={
                **_content(body, footer),
                "next_start_index": None,
                "truncated": returned < document.total_length,
                "passages": [
                    PassageOut(
                        start_index=p.start_index,
                        length=p.length,
                        heading=one_line(p.heading, TITLE_LIMIT),
                        score=p.score,
                    )
                    for p in passages
                ],
            }
        )
    if outline:
        entries = await services.fetch.outline(document)
        shown_entries, listing = outline_listing(entries, max_length)
        body, footer = outline_text(
            entries, shown_entries, listing, document.final_url, document.format, document.snapshot
        )
        text = "\n\n".join(part for part in [body, *notes, footer] if part)
        output = _fetch_output(document, result.cached, page)
        return text, output.model_copy(
            update={
                **_content(body, footer),
                "next_start_index": None,
                "truncated": False,
                "outline": [
                    OutlineEntryOut(
                        heading=one_line(e.heading, TITLE_LIMIT),
                        level=e.level,
                        start_index=e.start_index,
                        length=e.length,
                    )
                    for e in shown_entries
                ],
            }
        )
    footer = continuation_footer(page, document.snapshot)
    # Only the slice of the document is fenced, so start_index and next_start_index still count
    # characters of the document itself; every call (cached pages too) draws its own id.
    # The byline opens the first page, inside the fence (the page's word): page.text, and the
    # offsets, are the document's own.
    byline = facts_line(document.metadata) if page.start_index == 0 else ""
    shown = f"{byline}\n\n{page.text}" if byline else page.text
    body = fence(shown, source=document.final_url)
    text = "\n\n".join([body, *notes, *([footer] if footer else [])])
    return text, _fetch_output(document, result.cached, page).model_copy(update={"content": body})


def _content(body: str, footer: str) -> dict[str, str | None]:
    """The structured content of passages or an outline: the fenced body exactly as the text has
    it; without one (nothing matched, no headings), the sentence the text gives instead."""
    return {"content": body, "content_note": None} if body else {"content": None, "content_note": footer}


def _fetch_output(document: Document, cached: bool, page: PageSlice) -> WebFetchOutput:
    return WebFetchOutput(
        url=document.url,
        final_url=document.final_url,
        status=document.status,
        content_type=document.content_type,
        title=one_line(document.title or "", TITLE_LIMIT) or None,
        format=document.format,
        start_index=page.start_index,
        next_start_index=page.next_start_index,
        total_length=page.total_length,
        truncated=page.truncated,
        cached=cached,
        snapshot=document.snapshot,
        fetched_at=document.fetched_at,
        via=document.via,
        warnings=[one_line(warning, NOTE_LIMIT) for warning in document.warnings],
        **page_facts(document.metadata),
    )


BEFORE_HEADINGS = "(before the first heading)"
"""What a passage's header line names when the passage comes before any heading of its document."""


def passages_text(passages: list[Passage], source: str, total_length: int, snapshot: str) -> tuple[str, str]:
    """The passages as the model reads them, fenced, each under a line that gives its start_index
    and heading path; and the line that says how to read around one ("" and a sentence when no
    passage matched)."""
    if not passages:
        return "", (
            f"No passage of this document ({total_length} characters) matches the query. Call web_fetch "
            "again without query to read it from the start, or with outline=true to see its sections."
        )
    blocks = [
        f"[start_index={p.start_index} · {one_line(p.heading, TITLE_LIMIT) or BEFORE_HEADINGS}]\n{p.text}"
        for p in passages
    ]
    returned = sum(p.length for p in passages)
    footer = (
        f"[{len(passages)} passage{'s' if len(passages) != 1 else ''} for the query: {returned} of "
        f"{total_length} characters. To read around a passage, call web_fetch again without query, "
        f"with start_index set to that passage's start_index and snapshot={snapshot}.]"
    )
    return fence("\n\n".join(blocks), source=source), footer


def outline_listing(entries: list[OutlineEntry], max_length: int) -> tuple[list[OutlineEntry], str]:
    """The outline as an indented list of at most max_length characters, and the entries it shows."""
    top = min((entry.level for entry in entries), default=1)
    lines: list[str] = []
    used = 0
    for entry in entries:
        line = (
            f"{'  ' * (entry.level - top)}- {one_line(entry.heading, TITLE_LIMIT) or '(empty heading)'} "
            f"[start_index={entry.start_index}, {entry.length} characters]"
        )
        if used + len(line) + 1 > max_length and lines:
            break
        lines.append(line)
        used += len(line) + 1
    return entries[: len(lines)], "\n".join(lines)


def outline_text(
    entries: list[OutlineEntry],
    shown_entries: list[OutlineEntry],
    listing: str,
    source: str,
    output_format: OutputFormat,
    snapshot: str,
) -> tuple[str, str]:
    """The outline fenced (its headings are the page's words), and the line that says how to read a
    section ("" and a sentence when the document has no headings)."""
    if not entries:
        why = (
            " (format=text has no heading markers: ask format=markdown for its outline)"
            if output_format == "text"
            else ""
        )
        return "", (
            f"This document has no headings{why}. Read it with start_index, or pass query to find the "
            "passages about something."
        )
    cut = (
        f" Only the first {len(shown_entries)} of {len(entries)} headings fit in max_length; pass a larger "
        "max_length for more."
        if len(shown_entries) < len(entries)
        else ""
    )
    footer = (
        f"[{len(entries)} heading{'s' if len(entries) != 1 else ''}.{cut} To read a section, call web_fetch "
        "again without outline, with start_index set to its start_index, max_length to its length, and "
        f"snapshot={snapshot}.]"
    )
    return fence(listing, source=source), footer


def _web_fetch_description(settings: Settings) -> str:
    return web_fetch_description(settings.cache_ttl)


WEB_SEARCH_TOOL = ToolSpec(
    fn=web_search,
    name="web_search",
    title="Search the web",
    description=WEB_SEARCH_DESCRIPTION,
    input_model=WebSearchInput,
    output_model=WebSearchOutput,
    icon=SEARCH_ICON,
)
WEB_FETCH_TOOL = ToolSpec(
    fn=web_fetch,
    name="web_fetch",
    title="Fetch a web page",
    description=_web_fetch_description,
    input_model=WebFetchInput,
    output_model=WebFetchOutput,
    icon=FETCH_ICON,
)
