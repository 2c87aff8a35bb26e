"""SearXNG: a self-hosted metasearch instance, asked for its JSON output.

Two answers need reading closely. A 403 means the instance does not serve JSON (``json`` is
missing from ``search.formats``), which only its operator can fix. And an empty result list can
mean every engine behind the instance failed (timeouts, CAPTCHAs): SearXNG lists those in
``unresponsive_engines``, and that is an outage, not "nothing matched".
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from mcp_server_web.dates import iso_datetime
from mcp_server_web.providers._http import HttpSearchProvider, json_object, retry_after, url_and_title
from mcp_server_web.providers.base import ProviderError, SearchQuery, SearchResult, plain_text
from mcp_server_web.providers.dates import no_parameter

_JSON_HINT = "enable it by adding `json` to `search.formats` in the instance's settings.yml"


_SAFESEARCH = {"off": 0, "moderate": 1, "strict": 2}


class SearxngProvider(HttpSearchProvider):
    default_url = ""
    pages = True
    # SearXNG's limiter, when an instance turns it on, takes a request without text/html in Accept
    # or without an Accept-Language for a bot. "*" states no language preference, so the
    # instance's own default language still decides.
    request_headers: ClassVar[dict[str, str]] = {
        "Accept": "application/json, text/html;q=0.1",
        "Accept-Language": "*",
    }

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        fields: dict[str, str | int] = {
            "format": "json",
            "categories": query.topic,
            "pageno": query.page,
            "safesearch": _SAFESEARCH[query.safesearch],
        }
        if query.language:
            # SearXNG's language takes a locale: "de", or "de-CH" to also name the region.
            fields["language"] = f"{query.language}-{query.country}" if query.country else query.language
        if query.time_range:
            fields["time_range"] = query.time_range
        response = await self._request("GET", "/search", query, fields, timeout=timeout)
        data = json_object(response, self.title)
        items = data.get("results")
        if not isinstance(items, list):
            raise ProviderError("bad_response", f"{self.title} answered without a result list.")
        results = [result for item in items if (result := _result(item))]
        failed = self.redactor.quote(_unresponsive(data.get("unresponsive_engines")), 300)
        if not results and failed:
            raise ProviderError(
                "upstream", f"{self.title} got no results because its engines failed: {failed}."
            )
        # The whole page, not just max_results: it costs nothing more, and the chain's domain
        # filter and de-duplication may drop some before it trims to max_results.
        return results

    def unsupported(self, query: SearchQuery) -> tuple[str, ...]:
        # Its search API takes time_range (day, week, month, year) and no dates.
        dates = no_parameter(self.title, query)
        if query.country and not query.language:
            return (
                f"{self.title} takes a region only with a language (language-COUNTRY); "
                f"country={query.country} alone was not applied.",
                *dates,
            )
        return dates

    def _error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        if status == 403:
            return ProviderError(
                "config",
                f"{self.title} refused the JSON format (HTTP 403); {_JSON_HINT}.",
                status=status,
            )
        if status == 429:
            return ProviderError(
                "rate_limit",
                f"{self.title}'s limiter is refusing requests (HTTP 429); "
                "on your own instance, set `server.limiter: false` in settings.yml.",
                retry_after=retry_after(response),
                status=status,
            )
        if status in (401, 407):
            # No API key to blame: a proxy or HTTP authentication in front of the instance.
            return ProviderError(
                "config",
                f"{self.title} asks for credentials (HTTP {status}); put them in {self.config.url_name} "
                "or open the instance to this server.",
                status=status,
            )
        return super()._error(response)


def _result(item: Any) -> SearchResult | None:
    if (named := url_and_title(item)) is None:
        return None
    url, title = named
    content, published = item.get("content"), item.get("publishedDate")
    return SearchResult(
        title=plain_text(title),
        url=url,
        snippet=plain_text(content if isinstance(content, str) else ""),
        published=iso_datetime(published),
    )


def _unresponsive(value: Any) -> str:
    """SearXNG's [[engine, reason], ...] as "google (timeout), bing (HTTP error)" (to be quoted)."""
    if not isinstance(value, list):
        return ""
    named = [
        f"{entry[0]} ({entry[1]})" if len(entry) > 1 and entry[1] else str(entry[0])
        for entry in value
        if isinstance(entry, list | tuple) and entry
    ]
    return ", ".join(named)
