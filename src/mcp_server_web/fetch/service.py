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

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from http import HTTPStatus

import anyio

from mcp_server_web.errors import (
    ChallengePage,
    ExtractionFailed,
    HTTPStatusError,
    InvalidArgument,
    SnapshotExpired,
)
from mcp_server_web.fetch.config import FetchConfig
from mcp_server_web.fetch.doc.challenge import detect_challenge
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.net.robots import ROBOTS_TIMEOUT, RobotsPolicy
from mcp_server_web.fetch.net.urls import parse_url
from mcp_server_web.fetch.pages import Page, slice_page
from mcp_server_web.fetch.types import Converted, Document, FetchResponse, OutputFormat
from mcp_server_web.fetch.workers import ConversionPool
from mcp_server_web.state import KeyValueStore, MemoryState, StateBackend

logger = logging.getLogger(__name__)

# (progress 0..1, message): how far along one fetch is, for clients that asked for progress.
ProgressReporter = Callable[[float, str], Awaitable[None]]

# Share of the progress bar given to the download; conversion takes the rest.
_DOWNLOAD_SHARE = 0.8
# What a conversion worker runs (named, so only the workers import the conversion stack).
CONVERSION_JOB = "mcp_server_web.fetch.snapshot:convert_identified"
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
    ) -> None:
        """state is where documents, responses and robots.txt rules are kept (this process's
        memory unless the composition root passes another backend)."""
        state = MemoryState() if state is None else state
        self._config = config
        self._fetcher = fetcher
        self._converters = converters
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
        self._cache = state.store(
            "fetch", ttl=config.cache_ttl, max_bytes=config.cache_max_bytes - robots_bytes
        )
        self._downloads = state.flight("fetch.downloads")
        self._conversions = state.flight("fetch.conversions")

    @property
    def cache(self) -> KeyValueStore:
        return self._cache

    @property
    def robots(self) -> RobotsPolicy | None:
        return self._robots

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
        progress: ProgressReporter = _no_progress,
    ) -> FetchedPage:
        """One page of the document at url; with snapshot, of that version of it or SnapshotExpired."""
        if snapshot is not None and refresh:
            raise InvalidArgument(
                "refresh=true downloads a new version, so it cannot be combined with snapshot, which "
                "asks for an earlier one: pass one or the other."
            )
        canonical = str(parse_url(url))
        held = (
            None
            if snapshot is None
            else await self._cache.get(_snapshot_key(canonical, output_format, main_content, snapshot))
        )
        if held is not None:
            document, cached = held, True
        else:
            document, cached = await self._document(canonical, output_format, main_content, refresh, progress)
        if snapshot is not None and document.snapshot != snapshot:
            # The id is derived from the content: the current version is that snapshot only when
            # its text is the same, so a page that did not change is read on seamlessly.
            raise SnapshotExpired(
                f"snapshot {snapshot} of {canonical} is no longer available (its cached copy expired or "
                "was evicted and the page has changed since, or it was taken with another url, format or "
                "main_content); fetch it again with start_index=0 and without snapshot to read the "
                "current version from the start."
            )
        return FetchedPage(document, slice_page(document.text, start_index, max_length), cached)

    async def _document(
        self,
        url: str,
        output_format: OutputFormat,
        main_content: bool,
        refresh: bool,
        progress: ProgressReporter,
    ) -> tuple[Document, bool]:
        key = _current_key(url, output_format, main_content)
        if not refresh:
            current: str | None = await self._cache.get(key)
            snapshot_key = _snapshot_key(url, output_format, main_content, current or "")
            cached: Document | None = None if current is None else await self._cache.get(snapshot_key)
            if cached is not None:
                return cached, True
        # A refresh must not join a normal call's flight, which may be serving the old copy.
        flight_key = (*key, "refresh") if refresh else key
        work = partial(self._build_document, url, output_format, main_content, refresh, progress)
        document, _ = await self._conversions.run(flight_key, work)
        return document, False

    async def _build_document(
        self,
        url: str,
        output_format: OutputFormat,
        main_content: bool,
        refresh: bool,
        progress: ProgressReporter,
    ) -> Document:
        response = await self._response(url, refresh, progress)
        await progress(_DOWNLOAD_SHARE, "converting")
        try:
            # Past the limit (or when the caller goes away) the worker process is killed: a
            # pathological page costs at most this long, then nothing.
            with anyio.fail_after(self._config.timeout):
                outcome: tuple[Converted, str] = await self._converters.run(
                    CONVERSION_JOB,
                    response,
                    output_format=output_format,
                    main_content=main_content,
                    pdf_max_pages=self._config.pdf_max_pages,
                    pdf_time_budget=self._config.timeout * _PDF_TIME_SHARE,
                )
        except TimeoutError:
            raise ExtractionFailed(
                f"converting {response.final_url} took longer than {self._config.timeout:g} seconds.",
                parameters=("timeout",),
            ) from None
        converted, snapshot = outcome
        document = Document(
            url=url,
            final_url=response.final_url,
            status=response.status,
            content_type=converted.content_type,
            title=converted.title,
            format=output_format,
            main_content=main_content,
            text=converted.text,
            used_fallback=converted.used_fallback,
            warnings=converted.warnings,
            snapshot=snapshot,
            fetched_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        await self._remember(document)
        await progress(1.0, "done")
        return document

    async def _remember(self, document: Document) -> None:
        """Cache document as its snapshot and make it the URL's current one.

        The document is stored once, under its snapshot; the URL's entry holds only the id, so
        the byte count sees each text once and older snapshots stay readable until evicted.
        """
        url, output_format, main_content = document.url, document.format, document.main_content
        current = _current_key(url, output_format, main_content)
        snapshot = _snapshot_key(url, output_format, main_content, document.snapshot)
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
        challenge = detect_challenge(response)
        if challenge is not None:
            raise ChallengePage(
                f"{response.final_url} answered with a bot-detection page ({challenge}) instead of its "
                "content; a browser may be needed to read it."
            )
        if response.status >= 400:
            raise HTTPStatusError(
                f"{response.final_url} answered HTTP {response.status}{_reason(response.status)}.",
                status=response.status,
            )
        await self._cache.put(("response", url), response)
        return response


def _current_key(url: str, output_format: OutputFormat, main_content: bool) -> tuple[str, str, str, bool]:
    """Where the id of the URL's current snapshot is cached."""
    return ("current", url, output_format, main_content)


def _snapshot_key(
    url: str, output_format: OutputFormat, main_content: bool, snapshot: str
) -> tuple[str, str, str, bool, str]:
    """Where one snapshot is cached: only a request for the same URL, format and mode finds it."""
    return ("snapshot", url, output_format, main_content, snapshot)


def _reason(status: int) -> str:
    try:
        return f" ({HTTPStatus(status).phrase})"
    except ValueError:
        return ""
