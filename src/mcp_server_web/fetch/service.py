"""web_fetch as a library: URL -> cached, converted document -> one page of it.

The first call for a URL downloads it (robots.txt and the address policy permitting), converts it
in a worker process (see workers.py) and caches the whole document; every later page is sliced
from that copy, so page 2 is consistent with page 1 and costs no second download.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from http import HTTPStatus

import anyio

from mcp_server_web.config import Settings
from mcp_server_web.errors import ChallengePage, ExtractionFailed, HTTPStatusError
from mcp_server_web.fetch.cache import ByteBoundedTTLCache, SingleFlight
from mcp_server_web.fetch.challenge import detect_challenge
from mcp_server_web.fetch.client import Fetcher
from mcp_server_web.fetch.guard import parse_url
from mcp_server_web.fetch.pages import Page, slice_page
from mcp_server_web.fetch.robots import ROBOTS_TIMEOUT, RobotsPolicy
from mcp_server_web.fetch.types import Converted, Document, FetchResponse, OutputFormat
from mcp_server_web.fetch.workers import CONVERT, ConversionPool

logger = logging.getLogger(__name__)

# (progress 0..1, message): how far along one fetch is, for clients that asked for progress.
ProgressReporter = Callable[[float, str], Awaitable[None]]

# Share of the progress bar given to the download; conversion takes the rest.
_DOWNLOAD_SHARE = 0.8
# A PDF gets at most this share of the fetch time limit for its text extraction.
_PDF_TIME_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class FetchedPage:
    document: Document
    page: Page
    cached: bool


async def _no_progress(progress: float, message: str) -> None:
    return None


class FetchService:
    """Fetches, converts, caches and paginates web pages."""

    def __init__(self, settings: Settings, fetcher: Fetcher, converters: ConversionPool) -> None:
        self._settings = settings
        self._fetcher = fetcher
        self._converters = converters
        self._robots = (
            RobotsPolicy(fetcher, timeout=min(ROBOTS_TIMEOUT, settings.timeout))
            if settings.respect_robots
            else None
        )
        self._cache = ByteBoundedTTLCache(settings.cache_max_bytes, settings.cache_ttl)
        self._downloads: SingleFlight[FetchResponse] = SingleFlight()
        self._conversions: SingleFlight[Document] = SingleFlight()

    @property
    def cache(self) -> ByteBoundedTTLCache:
        return self._cache

    async def fetch_page(
        self,
        url: str,
        *,
        output_format: OutputFormat = "markdown",
        main_content: bool = True,
        start_index: int = 0,
        max_length: int = 8000,
        refresh: bool = False,
        progress: ProgressReporter = _no_progress,
    ) -> FetchedPage:
        canonical = str(parse_url(url))
        document, cached = await self._document(canonical, output_format, main_content, refresh, progress)
        return FetchedPage(document, slice_page(document.text, start_index, max_length), cached)

    async def _document(
        self,
        url: str,
        output_format: OutputFormat,
        main_content: bool,
        refresh: bool,
        progress: ProgressReporter,
    ) -> tuple[Document, bool]:
        key = ("document", url, output_format, main_content)
        if not refresh:
            cached = self._cache.get(key)
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
            with anyio.fail_after(self._settings.timeout):
                converted: Converted = await self._converters.run(
                    CONVERT,
                    response,
                    output_format=output_format,
                    main_content=main_content,
                    pdf_max_pages=self._settings.pdf_max_pages,
                    pdf_time_budget=self._settings.timeout * _PDF_TIME_SHARE,
                )
        except TimeoutError:
            raise ExtractionFailed(
                f"converting {response.final_url} took longer than {self._settings.timeout:g} seconds."
            ) from None
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
        )
        self._cache.put(("document", url, output_format, main_content), document)
        await progress(1.0, "done")
        return document

    async def _response(self, url: str, refresh: bool, progress: ProgressReporter) -> FetchResponse:
        key = ("response", url)
        if not refresh:
            cached = self._cache.get(key)
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
        self._cache.put(("response", url), response)
        return response


def _reason(status: int) -> str:
    try:
        return f" ({HTTPStatus(status).phrase})"
    except ValueError:
        return ""
