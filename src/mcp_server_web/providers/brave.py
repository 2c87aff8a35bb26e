"""Brave Search API: independent web and news indexes behind one subscription token.

Brave says why it refused in a JSON error body (``error.code``), which is what separates an
exhausted monthly quota (QUOTA_LIMITED: wait for the month) from the per-second rate limit
(RATE_LIMITED: wait a second); both are HTTP 429.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar

import httpx

from mcp_server_web.dates import iso_datetime
from mcp_server_web.providers._http import HttpSearchProvider, json_object, retry_after, url_and_title
from mcp_server_web.providers.base import (
    ProviderError,
    SearchQuery,
    SearchResult,
    plain_text,
    status_error,
)

_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_LOOKBACK_DAYS = {"day": 1, "week": 7, "month": 31, "year": 365}
"""How far back each freshness value reaches, in days (Brave: pm is 31 days, py 365)."""
_EARLIEST = date(1970, 1, 1)
_MAX_COUNT = {"general": 20, "news": 50}
_PATHS = {"general": "/res/v1/web/search", "news": "/res/v1/news/search"}
_CODE_LIMIT = 60
"""Brave's codes are short words (RATE_LIMITED); anything longer is not one of them."""


class BraveProvider(HttpSearchProvider):
    default_url = "https://api.search.brave.com"
    pages = True
    key_header = "X-Subscription-Token"
    request_headers: ClassVar[dict[str, str]] = {"Accept": "application/json"}

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        fields: dict[str, str | int] = {
            "count": max(1, min(query.max_results, _MAX_COUNT[query.topic])),
            # Brave's own three levels, by the same names.
            "safesearch": query.safesearch,
        }
        if query.page > 1:
            # offset counts pages of `count` results (0 to 9), not results.
            fields["offset"] = query.page - 1
        if query.country:
            fields["country"] = query.country
        if query.language:
            fields["search_lang"] = query.language
        if query.topic == "general":
            # Only the web endpoint marks matches with <strong>; plain_text still strips any tag.
            fields["text_decorations"] = "false"
        if query.published_after or query.published_before:
            first, last = _days(query, datetime.now(UTC).date())
            if first > last:
                return []  # time_range ends before the days asked for begin: nothing can match
            fields["freshness"] = f"{first.isoformat()}to{last.isoformat()}"
        elif query.time_range:
            fields["freshness"] = _FRESHNESS[query.time_range]
        response = await self._request("GET", _PATHS[query.topic], query, fields, timeout=timeout)
        data = json_object(response, self.title)
        # The news endpoint lists results at the top; the web one under "web", which it leaves
        # out altogether when nothing matched.
        items = data.get("results") if query.topic == "news" else (data.get("web") or {}).get("results", [])
        if not isinstance(items, list) or data.get("type") not in ("search", "news"):
            raise ProviderError("bad_response", f"{self.title} answered without a result list.")
        now = _answer_time(response)
        return [result for item in items if (result := _result(item, now))][: query.max_results]

    def _error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        code, detail = _error_body(response, self.title)
        # Brave does not echo the token, but a proxy in between might: its words are quoted
        # through the redactor, the code is only matched as it is.
        quoted = f"{self.redactor.quote(code, _CODE_LIMIT)}: {self.redactor.quote(detail)}" if code else ""
        explained = f" ({quoted})" if quoted else ""
        asked_wait = retry_after(response)
        windows = _numbers(response.headers.get("x-ratelimit-reset"))
        monthly_left = _numbers(response.headers.get("x-ratelimit-remaining"))[-1:]
        if code == "QUOTA_LIMITED" or (status == 429 and not code and monthly_left == [0.0]):
            # The monthly window's reset is when the quota returns; a Retry-After would only say
            # when to knock again.
            return ProviderError(
                "quota",
                f"{self.title}'s monthly query quota for this API key is used up{explained}.",
                retry_after=windows[-1] if windows else asked_wait,
                status=status,
            )
        if code == "RATE_LIMITED" or status == 429:
            return ProviderError(
                "rate_limit",
                f"{self.title} is rate-limiting this API key (HTTP {status}){explained}.",
                retry_after=asked_wait if asked_wait is not None else (windows[0] if windows else None),
                status=status,
            )
        if "TOKEN" in code or code.startswith("SUBSCRIPTION") or status == 401:
            return ProviderError(
                "auth", f"{self.title} rejected the API key (HTTP {status}){explained}.", status=status
            )
        if status == 403 and not code:
            # Brave explains its own refusals in JSON; a bare 403 comes from something in between.
            return ProviderError("blocked", f"{self.title} refused the request (HTTP 403).", status=status)
        return status_error(self.title, status, quoted)


def _days(query: SearchQuery, today: date) -> tuple[date, date]:
    """The first and last day of freshness's range (YYYY-MM-DDtoYYYY-MM-DD), which takes both.

    A bound left out is the widest day that restricts nothing: 1970-01-01 before, and tomorrow
    (UTC) after, so that a page dated today in a zone ahead of UTC is not cut; the chain applies
    the exact days. With time_range too, both apply: the range is their intersection.
    """
    first = query.published_after or _EARLIEST
    last = query.published_before or today + timedelta(days=1)
    if query.time_range is not None:
        first = max(first, today - timedelta(days=_LOOKBACK_DAYS[query.time_range]))
        last = min(last, today + timedelta(days=1))
    return first, last


def _answer_time(response: httpx.Response) -> datetime:
    """When Brave answered (its Date header), from which its relative ages ("2 hours ago") count."""
    dates = response.headers.get_list("date")
    try:
        # The last one when there are several: the application's, after its server's.
        return email.utils.parsedate_to_datetime(dates[-1] if dates else "")
    except (TypeError, ValueError, IndexError):
        return datetime.now(UTC)


def _result(item: Any, now: datetime) -> SearchResult | None:
    if (named := url_and_title(item)) is None:
        return None
    url, title = named
    snippet = item.get("description")
    extra = item.get("extra_snippets")
    if not snippet and isinstance(extra, list) and extra and isinstance(extra[0], str):
        snippet = extra[0]
    # page_age is ISO 8601 without a zone; age is for people ("2 hours ago", "November 1, 2026").
    published = iso_datetime(item.get("page_age"), now=now) or iso_datetime(item.get("age"), now=now)
    return SearchResult(
        title=plain_text(title),
        url=url,
        snippet=plain_text(snippet if isinstance(snippet, str) else ""),
        published=published,
    )


def _error_body(response: httpx.Response, title: str) -> tuple[str, str]:
    """(code, detail) from Brave's ErrorResponse body; empty strings when it is something else."""
    try:
        error = json_object(response, title).get("error")
    except ProviderError:
        return "", ""
    if not isinstance(error, dict):
        return "", ""
    code, detail = error.get("code"), error.get("detail")
    return (code if isinstance(code, str) else ""), (detail if isinstance(detail, str) else "")


def _numbers(header: str | None) -> list[float]:
    """Brave's X-RateLimit-* values: one number per window, per-second window first."""
    numbers: list[float] = []
    for part in (header or "").split(","):
        try:
            numbers.append(float(part))
        except ValueError:
            return []
    return numbers
