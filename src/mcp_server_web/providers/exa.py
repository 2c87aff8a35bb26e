"""Exa (https://exa.ai): neural web search, through the official SDK, asking for highlights only."""

from __future__ import annotations

import json
import logging
import re
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from exa_py import AsyncExa
from exa_py.api import ContentsOptions
from exa_py.api_warnings import ExaWarning
from exa_py.errors import ExaTimeoutError

from mcp_server_web.dates import iso_datetime
from mcp_server_web.providers._http import Exchange, recording, sdk_client, transport_error
from mcp_server_web.providers.base import (
    ProviderConfig,
    ProviderError,
    ReadPage,
    SearchProvider,
    SearchQuery,
    SearchResult,
    TimeRange,
    plain_text,
    status_error,
)
from mcp_server_web.providers.dates import end_of, first_moment

logger = logging.getLogger(__name__)

MAX_RESULTS = 100
SNIPPET_CHARACTERS = 1000
"""A bound on each result's highlights: snippets go to a model, and without one Exa sizes them
by relevance, which makes the cost of a search unpredictable."""
DEFAULT_TIMEOUT = 30.0
"""The SDK's own default is 600 s; every call passes its budget anyway."""

_LOOKBACK: dict[TimeRange, timedelta] = {
    "day": timedelta(days=1),
    "week": timedelta(days=7),
    "month": timedelta(days=30),
    "year": timedelta(days=365),
}

_LOGGED_WARNINGS = 5
"""Warnings logged per answer at most: a real one has one or two, a hostile one thousands."""

# exa-py reports every HTTP failure as ValueError("Request failed with status code N: <body>").
_FAILED = re.compile(r"Request failed with status code (\d{3}): ?(.*)", re.DOTALL)


class ExaProvider(SearchProvider):
    default_url = "https://api.exa.ai"

    def __init__(self, config: ProviderConfig, http: httpx.AsyncClient) -> None:
        super().__init__(config, http)
        if not config.api_key:
            # The SDK would fall back to the EXA_API_KEY environment variable behind our back.
            raise ProviderError("config", f"{self.title} needs an API key: set {self.config.key_name}.")
        self._sdk = AsyncExa(api_key=config.api_key, api_base=config.base_url, timeout=DEFAULT_TIMEOUT)
        # AsyncExa takes no user_agent and sends "exa-py/<version>"; its headers dict (x-api-key,
        # User-Agent, Content-Type) goes out with every request.
        self._sdk.headers["User-Agent"] = config.user_agent
        # The SDK's ValueError keeps the status and body but not the headers. It builds its httpx
        # client lazily from `_client`; giving it ours is the only way to see Retry-After, and
        # what puts its requests under the shared client's rules (redirects, the answer cap).
        # Should a later SDK ignore it, test_provider_limits fails on the cap.
        # The SDK turns an answer's "warnings" into Python warnings, which reach stderr as the
        # API wrote them; the adapter logs them itself, quoted (_log_warnings). Set on every build,
        # not at import, so that a catch_warnings block around the import cannot undo it.
        warnings.filterwarnings("ignore", category=ExaWarning)
        self._sdk._client = sdk_client(http, self.title, config.base_url, self._sdk.headers, DEFAULT_TIMEOUT)

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        include = [d for d in query.include_domains if d not in query.exclude_domains]
        if query.include_domains and not include:
            return []  # every allowed domain is also excluded: nothing can match
        contents: ContentsOptions = {"highlights": {"max_characters": SNIPPET_CHARACTERS}}
        with recording() as exchange:
            try:
                answer = await self._sdk.search(
                    query.query,
                    type="auto",
                    contents=contents,
                    num_results=max(1, min(query.max_results, MAX_RESULTS)),
                    # Exa takes one of the two lists; an include list already excludes the rest.
                    include_domains=include or None,
                    exclude_domains=None if include else list(query.exclude_domains) or None,
                    start_published_date=_start(query),
                    end_published_date=_end(query),
                    category="news" if query.topic == "news" else None,
                    # Exa's userLocation: the two-letter country code; moderation filters unsafe
                    # results, its only level.
                    user_location=query.country,
                    moderation=True if query.safesearch != "off" else None,
                    timeout=max(timeout, 0.001),
                )
            # Causes are dropped (from None): the SDK's ValueError quotes Exa's response body.
            except ExaTimeoutError:
                raise ProviderError("timeout", f"Exa did not answer within {timeout:g} seconds.") from None
            except (httpx.InvalidURL, httpx.TransportError) as exc:
                raise transport_error(self.title, exc, self.config.url_name) from None
            except ValueError as exc:
                raise self._value_error(exc, exchange) from None
            except (KeyError, TypeError, AttributeError):
                # The SDK indexes the body without checking its shape.
                raise ProviderError("bad_response", "Exa answered without a list of results.") from None
        self._log_warnings(answer)
        return [self._result(item) for item in answer.results if _text(item.url)][: query.max_results]

    def unsupported(self, query: SearchQuery) -> tuple[str, ...]:
        notes: list[str] = []
        if query.language:
            notes.append(
                f"{self.title} has no language parameter; language={query.language} was not applied."
            )
        if query.safesearch == "strict":
            notes.append(
                f"{self.title} has one moderation level; strict safe search was applied as moderate."
            )
        return tuple(notes)

    async def read(self, url: str, *, markdown: bool, timeout: float) -> ReadPage:  # noqa: ASYNC109
        """The text of the page at url as Exa's contents reads it, with its author and date when Exa
        knows them; ProviderError
        on any failure, a page Exa could not read included. Exa's text is Markdown-like either way."""
        with recording() as exchange:
            try:
                answer = await self._sdk.get_contents([url], text=True, timeout=max(timeout, 0.001))
            except ExaTimeoutError:
                raise ProviderError("timeout", f"Exa did not answer within {timeout:g} seconds.") from None
            except (httpx.InvalidURL, httpx.TransportError) as exc:
                raise transport_error(self.title, exc, self.config.url_name) from None
            except ValueError as exc:
                raise self._value_error(exc, exchange) from None
            except (KeyError, TypeError, AttributeError):
                raise ProviderError("bad_response", "Exa answered without a list of results.") from None
        for item in answer.results:
            text = _text(item.text)
            if text and text.strip():
                return ReadPage(
                    _text(item.url) or url,
                    text,
                    plain_text(_text(item.title)) or None,
                    author=plain_text(_text(getattr(item, "author", None))) or None,
                    published=_text(getattr(item, "published_date", None)),
                )
        statuses = getattr(answer, "statuses", None) or []
        errors = [s.error for s in statuses if getattr(s, "status", None) == "error" and s.error is not None]
        detail = ""
        if errors:
            tag, code = _text(errors[0].tag), errors[0].http_status_code
            status = f"(HTTP {code})" if isinstance(code, int) else None
            said = " ".join(part for part in (tag, status) if part)
            detail = f": {self.redactor.quote(said)}" if said else ""
        raise ProviderError("upstream", f"Exa could not read the page{detail}.")

    async def aclose(self) -> None:
        await self._sdk.aclose()

    def _log_warnings(self, answer: Any) -> None:
        """What Exa said about the request (a field it ignores, say): for whoever maintains the
        adapter, so logged, not shown to the model."""
        notes = getattr(answer, "warnings", None)
        for note in notes[:_LOGGED_WARNINGS] if isinstance(notes, list) else []:
            code, path, message = (getattr(note, name, "") for name in ("code", "path", "message"))
            quoted = self.redactor.quote(f"{code} at {path}: {message}")
            logger.info("Exa warned about the search request: %s", quoted)

    def _value_error(self, exc: ValueError, exchange: Exchange) -> ProviderError:
        failed = _FAILED.match(str(exc))
        if failed is None:
            if str(exc).startswith("Expected a JSON response"):  # a 2xx body empty or not JSON
                return ProviderError("bad_response", "Exa answered with a body that is not JSON.")
            # Otherwise the SDK refused our arguments before sending anything: an adapter bug.
            logger.warning("exa-py refused the search arguments: %s", self.redactor.quote(str(exc)))
            return ProviderError("bad_response", "The Exa SDK refused the search arguments.")
        status = int(failed.group(1))
        logger.debug("Exa answered HTTP %s", status)
        return status_error("Exa", status, self._detail(failed.group(2)), exchange.retry_after)

    def _detail(self, body: str) -> str:
        """Exa's own error text (the "error" field of its JSON body), short, never holding the key."""
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        text = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(text, str):
            text = "" if body.lstrip().startswith("<") else body  # an HTML error page says nothing
        return self.redactor.quote(text)

    @staticmethod
    def _result(item: Any) -> SearchResult:
        highlights = (
            [h for h in item.highlights if isinstance(h, str)] if isinstance(item.highlights, list) else []
        )
        snippet = (
            plain_text(" … ".join(highlights))
            or plain_text(_text(item.summary))
            or plain_text(_text(item.text))
        )
        return SearchResult(
            title=plain_text(_text(item.title)) or item.url,
            url=item.url,
            snippet=snippet,
            published=iso_datetime(item.published_date),
        )


def _text(value: object) -> str | None:
    """A field of the answer when it is a string; the SDK passes the JSON through unchecked."""
    return value if isinstance(value, str) else None


def _start(query: SearchQuery) -> str | None:
    """startPublishedDate: the later of the time_range's start and published_after's first moment
    (both apply), as Exa takes it: ISO 8601 UTC with milliseconds."""
    starts = [first_moment(query.published_after)] if query.published_after else []
    if query.time_range is not None:
        starts.append(datetime.now(UTC) - _LOOKBACK[query.time_range])
    return _exa_time(max(starts)) if starts else None


def _end(query: SearchQuery) -> str | None:
    """endPublishedDate: the last millisecond of published_before, so that its whole day is in."""
    if query.published_before is None:
        return None
    return _exa_time(end_of(query.published_before) - timedelta(milliseconds=1))


def _exa_time(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
