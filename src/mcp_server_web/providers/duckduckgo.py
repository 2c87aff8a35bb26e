"""DuckDuckGo's HTML-only results page: no key, the chain's last resort.

There is no API, so this reads the page a browser without JavaScript gets. DuckDuckGo answers
clients it suspects of being bots with a challenge page (often as HTTP 202); that must become a
``blocked`` error the chain cools down on, never an empty result list. A page that has neither
results, nor the "No results." notice, nor a challenge is a layout this parser does not know, and
is reported as such rather than as "nothing found".
"""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx
from lxml import etree, html

from mcp_server_web.dates import iso_datetime
from mcp_server_web.providers._http import HttpSearchProvider
from mcp_server_web.providers.base import ProviderError, SearchQuery, SearchResult
from mcp_server_web.providers.dates import no_parameter

_DF = {"day": "d", "week": "w", "month": "m", "year": "y"}
_KP = {"off": "-2", "moderate": "-1", "strict": "1"}
"""DuckDuckGo's kp (safe search): 1 on, -1 moderate, -2 off."""


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_BLOCKS = f"//div[{_has_class('result')} or {_has_class('web-result')}]"
_TITLE_LINK = f".//a[{_has_class('result__a')}]"
_SNIPPET = f".//*[{_has_class('result__snippet')}]"
_AD_BADGE = f".//*[{_has_class('badge--ad')}]"
_DATE_SPAN = f".//*[{_has_class('result__extras__url')}]//span"
_NO_RESULTS = f"//*[{_has_class('no-results')}]"
_CHALLENGE = "//form[@id='challenge-form'] | //*[contains(@class, 'anomaly-modal')]"
_CHALLENGE_TEXT = re.compile(
    r"bots use DuckDuckGo too|complete the following challenge|anomaly-modal|challenge-form", re.I
)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2})?")


class DuckDuckGoProvider(HttpSearchProvider):
    default_url = "https://html.duckduckgo.com"
    request_headers: ClassVar[dict[str, str]] = {"Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"}

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        # The HTML endpoint has no news vertical, so topic="news" runs the same web search (the
        # attempt says so, see unsupported); the time_range filter (df) keeps it recent.
        form = {"b": "", "kl": _region(query), "kp": _KP[query.safesearch]}
        if query.time_range:
            form["df"] = _DF[query.time_range]
        response = await self._request("POST", "/html/", query, form, timeout=timeout)
        # The whole page (about ten results), not just max_results: the chain's domain filter
        # and de-duplication may drop some before it trims to max_results. Parsed in a worker
        # thread: a page up to the answer cap takes lxml long enough to stall every other call.
        return await anyio.to_thread.run_sync(self._parse, response)

    def unsupported(self, query: SearchQuery) -> tuple[str, ...]:
        notes: list[str] = []
        if query.topic == "news":
            notes.append(f"{self.title}'s HTML page has no news search: these are web results.")
        if query.language and not query.country:
            notes.append(
                f"{self.title} takes a language only with a region (kl=country-language); "
                f"language={query.language} alone was not applied."
            )
        # df on the HTML page takes d, w, m or y (its own form offers no other); the range form
        # (YYYY-MM-DD..YYYY-MM-DD) is used with duckduckgo.com's script endpoints, not this page.
        notes.extend(no_parameter(self.title, query))
        return tuple(notes)

    def _error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        if status in (202, 403):
            # 202 carries the "are you a bot" challenge page; 403 is a plain refusal.
            return ProviderError(
                "blocked",
                f"{self.title} suspects automated traffic and served a challenge (HTTP {status}).",
                status=status,
            )
        # The rest, 429 with its Retry-After included, means what it means for any search API.
        return super()._error(response)

    def _parse(self, response: httpx.Response) -> list[SearchResult]:
        try:
            # Bytes, so lxml honours the page's own charset declaration.
            document = html.document_fromstring(response.content)
        except (etree.ParserError, ValueError):
            raise ProviderError("bad_response", f"{self.title} answered with an empty page.") from None
        blocks = document.xpath(_BLOCKS)
        organic = [block for block in blocks if not _is_ad_or_notice(block)]
        results = [result for block in organic if (result := _result(block))]
        if document.xpath(_CHALLENGE) or (not results and _CHALLENGE_TEXT.search(response.text)):
            raise ProviderError(
                "blocked", f"{self.title} suspects automated traffic and served a challenge page."
            )
        if results or (not organic and (blocks or document.xpath(_NO_RESULTS))):
            return results  # empty on the "No results." page or one with nothing but ads
        # Result blocks none of which could be read, or no blocks and no "No results." notice:
        # the layout changed, and "nothing found" would be a lie.
        raise ProviderError(
            "bad_response", f"{self.title} answered with a page this server does not recognise."
        )


def _region(query: SearchQuery) -> str:
    """kl: DuckDuckGo's region, "country-language" in lower case ("de-de", "ch-fr"; the United
    Kingdom is "uk"), or "wt-wt" for none. Without a language, the country's own code stands for
    it, which is how DuckDuckGo names most single-language regions ("de-de", "fr-fr")."""
    if not query.country:
        return "wt-wt"
    country = "uk" if query.country == "GB" else query.country.lower()
    return f"{country}-{query.language or country}"


def _is_ad_or_notice(block: html.HtmlElement) -> bool:
    classes = (block.get("class") or "").split()
    return "result--ad" in classes or "result--no-result" in classes or bool(block.xpath(_AD_BADGE))


def _result(block: html.HtmlElement) -> SearchResult | None:
    links = block.xpath(_TITLE_LINK)
    if not links:
        return None
    url = real_url(links[0].get("href"))
    if url is None:
        return None
    snippets = block.xpath(_SNIPPET)
    return SearchResult(
        title=_text(links[0]),
        url=url,
        snippet=_text(snippets[0]) if snippets else "",
        published=_published(block),
    )


def real_url(href: str | None) -> str | None:
    """The page a result link leads to: DuckDuckGo's ``/l/?uddg=`` redirect unwrapped; None for
    its other links (``y.js`` ad clicks) and for anything that is not http(s)."""
    if not href:
        return None
    absolute = urljoin("https://duckduckgo.com/", href.strip())
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path != "/l/":
            return None
        absolute = parse_qs(parts.query).get("uddg", [""])[0]  # parse_qs percent-decodes
    target = urlsplit(absolute)
    return absolute if target.scheme in ("http", "https") and target.hostname else None


def _text(element: html.HtmlElement) -> str:
    # text_content() has already decoded entities; only whitespace is left to tidy.
    return " ".join(element.text_content().split())


def _published(block: html.HtmlElement) -> str | None:
    """The date DuckDuckGo prints after some results' display URL (ISO, to the second)."""
    for span in block.xpath(_DATE_SPAN):
        match = _ISO_DATE.search(span.text_content())
        if match:
            return iso_datetime(match.group(0))
    return None
