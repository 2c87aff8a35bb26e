"""Tavily (https://tavily.com): a search API built for agents, through the official SDK."""

from __future__ import annotations

import logging
from typing import Any

import httpx
from tavily import AsyncTavilyClient
from tavily.errors import (
    BadRequestError,
    ForbiddenError,
    InvalidAPIKeyError,
    UsageLimitExceededError,
)
from tavily.errors import TimeoutError as TavilyTimeoutError

from mcp_server_web.dates import iso_datetime
from mcp_server_web.providers._http import Exchange, recording, sdk_client, transport_error
from mcp_server_web.providers.base import (
    ProviderConfig,
    ProviderError,
    ReadPage,
    SearchProvider,
    SearchQuery,
    SearchResult,
    plain_text,
    status_error,
)

logger = logging.getLogger(__name__)

MAX_RESULTS = 20
"""Tavily refuses a max_results above 20 with HTTP 400."""

# The SDK raises one exception per status family and keeps no response; this is the status each
# one stands for when the response hook did not see the answer.
_SDK_ERROR_STATUS: dict[type[Exception], int] = {
    InvalidAPIKeyError: 401,
    ForbiddenError: 403,
    UsageLimitExceededError: 429,
    BadRequestError: 400,
}
# Every error that carries an HTTP status: the SDK's own (above) and httpx's.
_HTTP_ERRORS: tuple[type[Exception], ...] = (*_SDK_ERROR_STATUS, httpx.HTTPStatusError)


class TavilyProvider(SearchProvider):
    default_url = "https://api.tavily.com"

    def __init__(self, config: ProviderConfig, http: httpx.AsyncClient) -> None:
        super().__init__(config, http)
        if not config.api_key:
            # Without a key the SDK silently switches to its rate-limited keyless mode; a
            # configured provider must run on the operator's own key or not at all.
            raise ProviderError("config", f"{self.title} needs an API key: set {self.config.key_name}.")
        # The SDK folds 403, 432 and 433 into ForbiddenError and drops Retry-After; a recording
        # client keeps both so a plan limit is a quota error and a 429 says how long to wait.
        self._client = sdk_client(http, self.title, config.base_url, {"User-Agent": config.user_agent}, 30.0)
        self._sdk = AsyncTavilyClient(
            api_key=config.api_key, api_base_url=config.base_url, client=self._client
        )

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        with recording() as exchange:
            try:
                answer = await self._sdk.search(
                    query.query,
                    search_depth="basic",
                    topic=query.topic,
                    time_range=query.time_range,
                    # Days, YYYY-MM-DD, both included: what published_after / _before mean too.
                    start_date=query.published_after.isoformat() if query.published_after else None,
                    end_date=query.published_before.isoformat() if query.published_before else None,
                    max_results=max(1, min(query.max_results, MAX_RESULTS)),
                    include_domains=list(query.include_domains) or None,
                    exclude_domains=list(query.exclude_domains) or None,
                    include_answer=False,
                    include_raw_content=False,
                    include_images=False,
                    country=_country_name(query) if query.topic == "general" else None,
                    language=query.language,
                    timeout=timeout,
                )
            # Causes are dropped (from None): the SDK's exceptions carry Tavily's own error text.
            except (TavilyTimeoutError, httpx.TimeoutException):
                raise ProviderError("timeout", f"Tavily did not answer within {timeout:g} seconds.") from None
            except _HTTP_ERRORS as exc:
                raise self._http_error(exc, exchange) from None
            except (httpx.InvalidURL, httpx.TransportError) as exc:
                raise transport_error(self.title, exc, self.config.url_name) from None
            except ValueError:  # json.JSONDecodeError and UnicodeDecodeError on a 200
                raise ProviderError("bad_response", "Tavily answered with a body that is not JSON.") from None
            except AttributeError:
                # The SDK calls .get("results") on whatever JSON came back (a list, null, a string).
                raise ProviderError("bad_response", "Tavily answered without a list of results.") from None
        return self._results(answer, query.max_results)

    def unsupported(self, query: SearchQuery) -> tuple[str, ...]:
        notes: list[str] = []
        if query.country and query.topic != "general":
            notes.append(f"{self.title} takes a country only for general searches; country was not applied.")
        elif query.country and _country_name(query) is None:
            notes.append(f"{self.title} has no country named for {query.country}; country was not applied.")
        if query.safesearch != "off":
            notes.append(f"{self.title} has no safe-search setting; results are not filtered.")
        return tuple(notes)

    async def read(self, url: str, *, markdown: bool, timeout: float) -> ReadPage:  # noqa: ASYNC109
        """The text of the page at url as Tavily's extract reads it (no author or date: Tavily gives none);
        ProviderError on any failure, a page Tavily could not read included."""
        with recording() as exchange:
            try:
                answer = await self._sdk.extract(
                    [url],
                    extract_depth="basic",
                    format="markdown" if markdown else "text",
                    # Tavily takes 1 to 60 s; the SDK also uses it for the request's own timeout.
                    timeout=max(1.0, min(timeout, 60.0)),
                )
            except (TavilyTimeoutError, httpx.TimeoutException):
                raise ProviderError("timeout", f"Tavily did not answer within {timeout:g} seconds.") from None
            except _HTTP_ERRORS as exc:
                raise self._http_error(exc, exchange) from None
            except (httpx.InvalidURL, httpx.TransportError) as exc:
                raise transport_error(self.title, exc, self.config.url_name) from None
            except ValueError:
                raise ProviderError("bad_response", "Tavily answered with a body that is not JSON.") from None
            except AttributeError:
                raise ProviderError("bad_response", "Tavily answered without a list of results.") from None
        results = answer.get("results") if isinstance(answer, dict) else None
        for item in results if isinstance(results, list) else []:
            text = _text(item.get("raw_content")) if isinstance(item, dict) else None
            if text and text.strip():
                title = plain_text(_text(item.get("title"))) or None
                return ReadPage(_text(item.get("url")) or url, text, title)
        failed = answer.get("failed_results") if isinstance(answer, dict) else None
        failures = failed if isinstance(failed, list) else []
        reasons = [_text(f.get("error")) for f in failures if isinstance(f, dict)]
        said = next((r for r in reasons if r), "")
        detail = f": {self.redactor.quote(said)}" if said else ""
        raise ProviderError("upstream", f"Tavily could not read the page{detail}.")

    async def aclose(self) -> None:
        # The SDK leaves a client it was given open, so the adapter closes its own (which leaves
        # the shared one open).
        await self._client.aclose()

    def _http_error(self, exc: Exception, exchange: Exchange) -> ProviderError:
        if isinstance(exc, httpx.HTTPStatusError):
            status, detail = exc.response.status_code, ""
        else:
            status = exchange.status or next(
                code for cls, code in _SDK_ERROR_STATUS.items() if isinstance(exc, cls)
            )
            detail = self.redactor.quote(str(exc))
        logger.debug("Tavily answered HTTP %s", status)
        if status in (432, 433):
            limit = "plan's usage limit" if status == 432 else "pay-as-you-go limit"
            suffix = f": {detail}" if detail else ""
            return ProviderError(
                "quota", f"Tavily says the {limit} is reached (HTTP {status}){suffix}.", status=status
            )
        return status_error("Tavily", status, detail, exchange.retry_after)

    @staticmethod
    def _results(answer: Any, limit: int) -> list[SearchResult]:
        items = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(items, list):
            raise ProviderError("bad_response", "Tavily answered without a list of results.")
        results: list[SearchResult] = []
        for item in items:
            if not isinstance(item, dict) or not _text(item.get("url")):
                continue
            results.append(
                SearchResult(
                    title=plain_text(_text(item.get("title"))) or item["url"],
                    url=item["url"],
                    snippet=plain_text(_text(item.get("content"))),
                    published=iso_datetime(item.get("published_date")),
                )
            )
        return results[:limit]


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _country_name(query: SearchQuery) -> str | None:
    """Tavily's country: the country's English name in lower case ("united states")."""
    if not query.country:
        return None
    from babel import Locale  # only when a country is asked for: the CLDR data is large

    name = Locale("en").territories.get(query.country)
    return name.lower() if isinstance(name, str) else None
