"""web_fetch as a library: URL -> cached, converted document -> one page of it.

The first call for a URL downloads it (robots.txt and the address policy permitting), converts it
in a worker process (see workers.py) and caches the whole document; every later page is sliced
from that copy, so page 2 is consistent with page 1 and costs no second download.

Each converted document is one snapshot, cached under an id derived from its content. The URL's
entry only points to its current snapshot, so a refresh (or the TTL) moves that pointer while a
reader that passes the id of the snapshot it started with keeps reading the same text, or is
told it expired: pages of two versions are never stitched together.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from http import HTTPStatus
from typing import Any

import anyio

from mcp_server_web.dates import iso_datetime
from mcp_server_web.errors import (
    BotProtected,
    ChallengePage,
    ExtractionFailed,
    FetchTimeout,
    HTTPStatusError,
    InvalidArgument,
    RenderUnavailable,
    ScriptBuiltPage,
    SnapshotExpired,
    TooLarge,
    WebToolError,
)
from mcp_server_web.fetch.browser.renderer import NotAPage, RenderedPage, Renderer
from mcp_server_web.fetch.config import FetchConfig, admission_scope
from mcp_server_web.fetch.doc.challenge import bot_protection, detect_challenge
from mcp_server_web.fetch.doc.sniff import ContentKind, classify
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.net.resolution import private_destination
from mcp_server_web.fetch.net.robots import ROBOTS_TIMEOUT, RobotsPolicy
from mcp_server_web.fetch.net.urls import parse_url
from mcp_server_web.fetch.pages import Page, slice_page
from mcp_server_web.fetch.passages import OutlineEntry, Passage
from mcp_server_web.fetch.readthrough import (
    ExtractedText,
    NotShared,
    ReadThrough,
    ReadThroughFailed,
    bounded_line,
    bounded_title,
    source_url,
)
from mcp_server_web.fetch.types import (
    METADATA_NAME_LIMIT,
    SNAPSHOT_LENGTH,
    Converted,
    Document,
    FetchResponse,
    OutputFormat,
    PageMetadata,
    RenderMode,
    Via,
    metadata_parts,
)
from mcp_server_web.fetch.workers import ConversionPool
from mcp_server_web.state import KeyValueStore, MemoryState, StateBackend

logger = logging.getLogger(__name__)

# (progress 0..1, message): how far along one fetch is, for clients that asked for progress.
ProgressReporter = Callable[[float, str], Awaitable[None]]

# Share of the progress bar given to the download; conversion takes the rest.
_DOWNLOAD_SHARE = 0.8
# What a conversion worker runs (named, so only the workers import the conversion stack).
CONVERSION_JOB = "mcp_server_web.fetch.snapshot:convert_identified"
WHOLE_PAGE_JOB = "mcp_server_web.fetch.snapshot:convert_whole_instead"
CONVERSION_PRELOAD = (CONVERSION_JOB.partition(":")[0], "mcp_server_web.fetch.doc.warm")
"""What the workers' fork server imports before it forks them: the conversion stack, and what it
reads from files on first use (fetch/doc/warm.py)."""
MAIN_CONTENT_TIME_SHARE = 0.6
"""Picking out an HTML page's main content may take this share of MCP_WEB_TIMEOUT. Past it, or
past the memory a conversion may use, the page is converted whole in the time left (which costs
far less: one tree, no extractors), so that a page with text is never extraction_failed for being
hard to read."""
# Focused reading runs in the same workers: a large page and a query of one-letter words cost
# seconds of CPU, which on the event loop would hold up every other call and the health check.
RANKING_JOB = "mcp_server_web.fetch.passages:rank_passages"
OUTLINE_JOB = "mcp_server_web.fetch.passages:outline"
# A PDF gets at most this share of the fetch time limit for its text extraction.
_PDF_TIME_SHARE = 0.5
# FetchConfig.cache_max_bytes bounds all the fetch path caches together: robots.txt rules get this
# fraction of it (when robots.txt is obeyed), responses and documents the rest.
ROBOTS_CACHE_SHARE = 1 / 8


@dataclass(frozen=True, slots=True)
class FetchedPage:
    document: Document
    page: Page
    cached: bool


async def _no_progress(progress: float, message: str) -> None:
    return None


class FetchService:
    """Fetches, converts, caches and paginates web pages."""

    def __init__(
        self,
        config: FetchConfig,
        fetcher: Fetcher,
        converters: ConversionPool,
        state: StateBackend | None = None,
        renderer: Renderer | None = None,
        no_renderer: str = "no browser is configured",
        read_through: ReadThrough | None = None,
    ) -> None:
        """state is where documents, responses and robots.txt rules are kept (this process's
        memory unless the composition root passes another backend). renderer reads pages built
        by JavaScript in a browser; without one, ``no_renderer`` says why and how to get one.
        read_through asks third parties for the text of a page we cannot read (a bot wall, a
        refusal by bot protection, a JavaScript shell no browser read); without one, no URL is
        ever sent to a third party."""
        state = MemoryState() if state is None else state
        self._config = config
        self._fetcher = fetcher
        self._converters = converters
        self._renderer = renderer
        self._no_renderer = no_renderer
        self._read_through = read_through
        robots_bytes = int(config.cache_max_bytes * ROBOTS_CACHE_SHARE) if config.respect_robots else 0
        self._robots = (
            RobotsPolicy(
                fetcher,
                token=config.robots_token,
                timeout=min(ROBOTS_TIMEOUT, config.timeout),
                max_bytes=robots_bytes,
                state=state,
            )
            if config.respect_robots
            else None
        )
        # Under the policy's name: what another policy admitted (a deployment reading private
        # ranges, or ignoring robots.txt, over the same Redis) is never found here, nor joined.
        scope = admission_scope(config)
        self._cache = state.store(
            f"fetch:{scope}", ttl=config.cache_ttl, max_bytes=config.cache_max_bytes - robots_bytes
        )
        # A call waits on another replica's work for its own time limit at most, then does it.
        wait = config.timeout
        self._downloads = state.flight(f"fetch.downloads:{scope}", wait=wait)
        self._renders = state.flight(f"fetch.renders:{scope}", wait=wait)
        self._conversions = state.flight(f"fetch.conversions:{scope}", wait=wait)

    @property
    def cache(self) -> KeyValueStore:
        return self._cache

    @property
    def robots(self) -> RobotsPolicy | None:
        return self._robots

    @property
    def renderer(self) -> Renderer | None:
        return self._renderer

    async def fetch_page(
        self,
        url: str,
        *,
        output_format: OutputFormat = "markdown",
        main_content: bool = True,
        start_index: int = 0,
        max_length: int = 8000,
        refresh: bool = False,
        snapshot: str | None = None,
        render: RenderMode = "auto",
        progress: ProgressReporter = _no_progress,
    ) -> FetchedPage:
        """One page of the document at url; with snapshot, of that version of it or SnapshotExpired.

        render: "auto" loads the page in the browser when its plain download is a JavaScript shell
        (and a renderer is configured), "always" loads it there in any case (RenderUnavailable
        without a renderer), "never" keeps to the plain download.
        """
        if render == "always" and self._renderer is None:
            raise RenderUnavailable(f"render=always needs a browser, and {self._no_renderer}.")
        mode = _Mode(output_format, main_content, render)
        if snapshot is not None and refresh:
            raise InvalidArgument(
                "refresh=true downloads a new version, so it cannot be combined with snapshot, which "
                "asks for an earlier one: pass one or the other."
            )
        canonical = str(parse_url(url))
        held = None if snapshot is None else await self._cache.get(_snapshot_key(canonical, mode, snapshot))
        if held is not None:
            document, cached = held, True
        else:
            document, cached = await self._document(canonical, mode, refresh, progress)
        if snapshot is not None and document.snapshot != snapshot:
            # The id is derived from the content: the current version is that snapshot only when
            # its text is the same, so a page that did not change is read on seamlessly.
            raise SnapshotExpired(
                f"snapshot {snapshot} of {canonical} is no longer available (its cached copy expired or "
                "was evicted and the page has changed since, or it was taken with another url, format or "
                "main_content or render); fetch it again with start_index=0 and without snapshot to read the "
                "current version from the start."
            )
        return FetchedPage(document, slice_page(document.text, start_index, max_length), cached)

    async def rank_passages(self, document: Document, query: str, *, max_chars: int) -> list[Passage]:
        """The passages of document most relevant to query (see passages.rank_passages), worked
        out in a conversion worker within the fetch time limit."""
        passages: list[Passage] = await self._focus(
            document, "finding the passages for this query in", RANKING_JOB, document.text, query,
            max_chars=max_chars, output_format=document.format,
        )  # fmt: skip
        return passages

    async def outline(self, document: Document) -> list[OutlineEntry]:
        """document's headings with their sections' extents (see passages.outline), worked out in
        a conversion worker within the fetch time limit."""
        entries: list[OutlineEntry] = await self._focus(
            document, "listing the headings of", OUTLINE_JOB, document.text, document.format
        )
        return entries

    async def _focus(self, document: Document, doing: str, job: str, *args: object, **kwargs: object) -> Any:
        try:
            # Past the limit (or when the caller goes away) the worker is killed, as for a conversion.
            with anyio.fail_after(self._config.timeout):
                return await self._converters.run(job, *args, **kwargs)
        except TimeoutError:
            raise FetchTimeout(
                f"{doing} the {document.total_length}-character document at {document.final_url} took "
                f"longer than {self._config.timeout:g} seconds; read it by pages with start_index instead."
            ) from None

    async def _document(
        self, url: str, mode: _Mode, refresh: bool, progress: ProgressReporter
    ) -> tuple[Document, bool]:
        if not refresh:
            cached = await self._current_document(url, mode)
            if cached is not None:
                return cached, True
        reused = False

        async def work() -> Document:
            nonlocal reused
            # Looked for again once the flight is ours: a replica that waited on another's work
            # and missed its result (it subscribed just as the work ended) finds the document the
            # work cached, rather than converting the page a second time.
            found = None if refresh else await self._current_document(url, mode)
            reused = found is not None
            return found if found is not None else await self._build_document(url, mode, refresh, progress)

        # A refresh must not join a normal call's flight, which may be serving the old copy.
        key = _current_key(url, mode)
        flight_key = (*key, "refresh") if refresh else key
        document, joined = await self._conversions.run(flight_key, work)
        # A call that joined another's download and conversion got a copy it did not make: cached.
        return document, joined or reused

    async def _current_document(self, url: str, mode: _Mode) -> Document | None:
        current: str | None = await self._cache.get(_current_key(url, mode))
        return None if current is None else await self._cache.get(_snapshot_key(url, mode, current))

    async def _build_document(
        self, url: str, mode: _Mode, refresh: bool, progress: ProgressReporter
    ) -> Document:
        try:
            document = await self._rendered_or_plain(url, mode, refresh, progress)
        except (ChallengePage, BotProtected, ScriptBuiltPage) as refusal:
            # render="never" keeps to the plain download: a shell stays unread (a bot wall is no shell).
            shell_kept = isinstance(refusal, ScriptBuiltPage) and mode.render == "never"
            if self._read_through is None or shell_kept:
                raise
            await progress(_DOWNLOAD_SHARE, "asking a third party for the page's text")
            try:
                extracted = await self._read_through_text(url, mode)
            except NotShared as kept:
                raise _joined(refusal, _not_shared(kept)) from None
            except ReadThroughFailed as failed:
                raise _joined(refusal, f"Asking third parties for its text failed too ({failed}).") from None
            document = self._extracted_document(url, mode, extracted, _why_unread(refusal))
        await self._remember(document, mode)
        await progress(1.0, "done")
        return document

    async def _rendered_or_plain(
        self, url: str, mode: _Mode, refresh: bool, progress: ProgressReporter
    ) -> Document:
        notes: tuple[str, ...] = ()
        rendered_ok = False
        if mode.render == "always":
            try:
                return await self._render_document(url, mode, refresh, progress)
            except NotAPage:
                notes = ("This is not an HTML page, so it was downloaded rather than rendered.",)
        response = await self._response(url, refresh, progress)
        await progress(_DOWNLOAD_SHARE, "converting")
        try:
            converted, snapshot = await self._convert(response, mode, rendered=False)
        except ScriptBuiltPage as shell:
            if not self._may_render(mode):
                raise
            try:
                return await self._render_document(url, mode, refresh, progress, plain=response)
            except (WebToolError, NotAPage) as failure:
                raise type(shell)(
                    f"{shell.message} Rendering it in a browser failed too: {_reason_of(failure)}",
                    parameters=shell.parameters,
                ) from None
        if converted.script_built and self._may_render(mode):
            try:
                rendered = await self._render_document(url, mode, refresh, progress, plain=response)
            except (WebToolError, NotAPage) as failure:
                notes = (f"Rendering this page in a browser failed ({_reason_of(failure)}).",)
            else:
                # A render can read less than the download carried (a script that failed, data the
                # page never shows): the fuller text wins.
                if len(rendered.text) > len(converted.text):
                    return rendered
                rendered_ok = True
                notes = ("Rendered in a browser, this page showed less text than its download carried.",)
        unread_shell = converted.script_built and not rendered_ok and mode.render != "never"
        if unread_shell and self._read_through is not None:
            # A shell no browser here could read: a third party may read more than its download.
            try:
                extracted = await self._read_through_text(url, mode)
            except NotShared as kept:
                notes = (*notes, _not_shared(kept))
            except ReadThroughFailed as failed:
                notes = (*notes, f"Asking third parties for its text failed ({failed}).")
            else:
                if len(extracted.text) > len(converted.text):
                    return self._extracted_document(url, mode, extracted, _SCRIPTS_UNREAD)
        return self._document_of(url, response, converted, snapshot, mode, "direct", notes)

    async def _read_through_text(self, url: str, mode: _Mode) -> ExtractedText:
        """The page's text as a third party read it; ReadThroughFailed when none could, NotShared
        (before anyone is asked) when the URL's destination is not public.

        allow_private lets this server reach private addresses; it does not make them anyone
        else's business (nor a URL's token): only the ranges listed one by one count as public
        here, as a proxy's fake-IP range standing for public sites does.
        """
        assert self._read_through is not None  # callers check
        parsed = parse_url(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        policy = self._fetcher.policy.public()
        private = await private_destination(parsed.host, port, self._fetcher.resolver, policy)
        if private is not None:
            raise NotShared(private)
        return await self._read_through.read(url, markdown=mode.output_format != "text")

    def _may_render(self, mode: _Mode) -> bool:
        return mode.render == "auto" and self._renderer is not None

    async def _render_document(
        self,
        url: str,
        mode: _Mode,
        refresh: bool,
        progress: ProgressReporter,
        plain: FetchResponse | None = None,
    ) -> Document:
        """The document of the page as the browser builds it (from the page's final URL when a
        plain download went first, so its redirects are not followed twice)."""
        target = url if plain is None else plain.final_url
        await progress(0.0 if plain is None else _DOWNLOAD_SHARE, "rendering in a browser")
        rendered = await self._rendered(target, refresh)
        response = rendered.response
        if plain is not None:
            response = replace(response, url=url)
        await progress(_DOWNLOAD_SHARE, "converting")
        converted, snapshot = await self._convert(response, mode, rendered=True)
        return self._document_of(url, response, converted, snapshot, mode, "browser", rendered.notes)

    async def _rendered(self, url: str, refresh: bool) -> RenderedPage:
        key = ("rendered", url)
        if not refresh:
            cached: RenderedPage | None = await self._cache.get(key)
            if cached is not None:
                return cached
        flight_key = (*key, "refresh") if refresh else key
        rendered, _ = await self._renders.run(flight_key, partial(self._render, url))
        return rendered

    async def _render(self, url: str) -> RenderedPage:
        assert self._renderer is not None  # callers check _may_render or render="always"
        rendered = await self._renderer.render(url, hop_check=self._robots.check if self._robots else None)
        self._refuse_unreadable(rendered.response)
        await self._cache.put(("rendered", url), rendered)
        return rendered

    async def _convert(
        self, response: FetchResponse, mode: _Mode, *, rendered: bool
    ) -> tuple[Converted, str]:
        options: dict[str, Any] = {
            "output_format": mode.output_format,
            "pdf_max_pages": self._config.pdf_max_pages,
            "pdf_time_budget": self._config.timeout * _PDF_TIME_SHARE,
            "rendered": rendered,
        }
        timeout = self._config.timeout
        if not mode.main_content or classify(response).kind is not ContentKind.HTML:
            return await self._converted(
                CONVERSION_JOB, response, timeout, main_content=mode.main_content, **options
            )
        budget = timeout * MAIN_CONTENT_TIME_SHARE
        try:
            return await self._converted(CONVERSION_JOB, response, budget, main_content=True, **options)
        except _ConversionTimedOut:
            reason = f"took longer than {budget:g} seconds"
        except TooLarge:
            reason = "needed more memory than a conversion may use"
        logger.info("the main content of %s %s; converting the whole page", response.final_url, reason)
        return await self._converted(WHOLE_PAGE_JOB, response, timeout - budget, reason=reason, **options)

    async def _converted(
        self, job: str, response: FetchResponse, seconds: float, **options: Any
    ) -> tuple[Converted, str]:
        """``job`` run on ``response`` in a conversion worker, killed after ``seconds``: a
        pathological page costs at most this long (or until the caller goes away), then nothing."""
        try:
            with anyio.fail_after(seconds):
                outcome: tuple[Converted, str] = await self._converters.run(job, response, **options)
        except TimeoutError:
            raise _ConversionTimedOut(
                f"converting {response.final_url} took longer than {self._config.timeout:g} seconds.",
                parameters=("timeout",),
            ) from None
        return outcome

    def _document_of(
        self,
        url: str,
        response: FetchResponse,
        converted: Converted,
        snapshot: str,
        mode: _Mode,
        via: Via,
        notes: tuple[str, ...],
    ) -> Document:
        return Document(
            url=url,
            final_url=response.final_url,
            status=response.status,
            content_type=converted.content_type,
            title=converted.title,
            format=mode.output_format,
            main_content=mode.main_content,
            text=converted.text,
            used_fallback=converted.used_fallback,
            warnings=(*converted.warnings, *notes),
            snapshot=snapshot,
            fetched_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            via=via,
            metadata=converted.metadata,
        )

    def _extracted_document(self, url: str, mode: _Mode, extracted: ExtractedText, why: str) -> Document:
        """The document of a page a third party read for us, noting so (the URL left this server)."""
        notes = [
            f"{extracted.provider}, a third party, fetched this page and extracted its text, because it "
            f"could not be read directly ({why}): its URL was sent to {extracted.provider}."
        ]
        if mode.output_format == "html":
            notes.append(f"{extracted.provider} gives a page's text only, so this is Markdown, not HTML.")
        # What the provider says of the page is its word: held to what a page may say itself.
        final_url, title = source_url(url, extracted.url), bounded_title(extracted.title)
        metadata = PageMetadata(
            author=bounded_line(extracted.author, METADATA_NAME_LIMIT),
            published=iso_datetime(extracted.published),
        )
        digest = hashlib.blake2b(digest_size=SNAPSHOT_LENGTH // 2)
        for part in (mode.output_format, str(mode.main_content), final_url, extracted.via,
                     title or "", *metadata_parts(metadata), extracted.text):  # fmt: skip
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return Document(
            url=url,
            final_url=final_url,
            status=200,
            content_type=extracted.content_type,
            title=title,
            format=mode.output_format,
            main_content=mode.main_content,
            text=extracted.text,
            warnings=tuple(notes),
            snapshot=digest.hexdigest(),
            fetched_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            via=extracted.via,
            metadata=metadata,
        )

    async def _remember(self, document: Document, mode: _Mode) -> None:
        """Cache document as its snapshot and make it the URL's current one.

        The document is stored once, under its snapshot; the URL's entry holds only the id, so
        the byte count sees each text once and older snapshots stay readable until evicted.
        """
        current = _current_key(document.url, mode)
        snapshot = _snapshot_key(document.url, mode, document.snapshot)
        if await self._cache.put(snapshot, document):
            await self._cache.put(current, document.snapshot)
        else:
            await self._cache.pop(current)  # too large to keep: the next call must not get an older one

    async def _response(self, url: str, refresh: bool, progress: ProgressReporter) -> FetchResponse:
        key = ("response", url)
        if not refresh:
            cached: FetchResponse | None = await self._cache.get(key)
            if cached is not None:
                return cached
        flight_key = (*key, "refresh") if refresh else key
        response, _ = await self._downloads.run(flight_key, partial(self._download, url, progress))
        return response

    async def _download(self, url: str, progress: ProgressReporter) -> FetchResponse:
        await progress(0.0, "downloading")

        async def on_bytes(received: int, total: int | None) -> None:
            share = min(received / total, 1.0) if total else 0.0
            await progress(share * _DOWNLOAD_SHARE, f"downloaded {received} bytes")

        response = await self._fetcher.fetch(
            url, on_progress=on_bytes, hop_check=self._robots.check if self._robots else None
        )
        self._refuse_unreadable(response)
        await self._cache.put(("response", url), response)
        return response

    def _refuse_unreadable(self, response: FetchResponse) -> None:
        """A bot wall or an error status is an error, whoever fetched it."""
        challenge = detect_challenge(response)
        if challenge is not None:
            raise ChallengePage(
                f"{response.final_url} answered with a bot-detection page ({challenge}) instead of its "
                "content."
            )
        vendor = bot_protection(response)
        if vendor is not None:
            raise BotProtected(
                f"{response.final_url} answered HTTP {response.status}{_reason(response.status)}: its bot "
                f"protection ({vendor}) refused the request.",
                status=response.status,
                vendor=vendor,
            )
        if response.status >= 400:
            raise HTTPStatusError(
                f"{response.final_url} answered HTTP {response.status}{_reason(response.status)}.",
                status=response.status,
            )


class _ConversionTimedOut(ExtractionFailed):
    """A conversion killed at its time limit."""


@dataclass(frozen=True, slots=True)
class _Mode:
    """What, besides the URL, tells two documents of a page apart."""

    output_format: OutputFormat
    main_content: bool
    render: RenderMode


def _current_key(url: str, mode: _Mode) -> tuple[str, str, str, bool, str]:
    """Where the id of the URL's current snapshot is cached."""
    return ("current", url, mode.output_format, mode.main_content, mode.render)


def _snapshot_key(url: str, mode: _Mode, snapshot: str) -> tuple[str, str, str, bool, str, str]:
    """Where one snapshot is cached: only a request for the same URL and mode finds it."""
    return ("snapshot", url, mode.output_format, mode.main_content, mode.render, snapshot)


_SCRIPTS_UNREAD = "its scripts build it and no browser here read it"


def _why_unread(refusal: WebToolError) -> str:
    if isinstance(refusal, BotProtected):
        return f"its bot protection, {refusal.vendor}, refused the request"
    if isinstance(refusal, ChallengePage):
        return "it answered with a bot-detection page"
    return _SCRIPTS_UNREAD


def _not_shared(kept: NotShared) -> str:
    return (
        f"Its URL was not sent to a third party: its host {kept}, and a private destination is never shared."
    )


def _joined(refusal: WebToolError, more: str) -> WebToolError:
    """refusal, with its code and kind kept, saying more."""
    joined = copy.copy(refusal)
    joined.message = f"{refusal.message} {more}"
    joined.args = (joined.message,)
    return joined


def _reason_of(failure: BaseException) -> str:
    if isinstance(failure, WebToolError):
        return failure.message
    return "it is not an HTML page."


def _reason(status: int) -> str:
    try:
        return f" ({HTTPStatus(status).phrase})"
    except ValueError:
        return ""
