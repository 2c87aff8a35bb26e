"""A fake Brave Search API: web and news endpoints, subscription-token check, Brave's error bodies.

Bodies follow what api.search.brave.com returns: a web answer nests results under "web" (and
leaves "web" out when nothing matched), a news answer lists them at the top level, and errors
are ``{"type": "ErrorResponse", "error": {...}}`` with a machine-readable ``code``. Rate-limit
answers carry Brave's two-window headers (per second, per month); a quota answer says when the
month resets only when the test gives ``retry_after``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from tests.support.fakes.base import Failure, FakeProvider, published_between, query_params, whole_days
from tests.support.origin import Reply, RequestContext

WEB_PATH = "/res/v1/web/search"
NEWS_PATH = "/res/v1/news/search"
API_KEY = "brave-test-key"
_FRESHNESS_RANGE = re.compile(r"(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})")


class FakeBrave(FakeProvider):
    name = "brave"

    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self.error_detail: str | None = None
        """Overrides the detail of error bodies (to check what the adapter does with it)."""

    def paths(self) -> tuple[str, ...]:
        return (WEB_PATH, NEWS_PATH)

    def settings(self) -> dict[str, Any]:
        return {"brave_api_key": self.api_key, "brave_url": self.origin.base}

    def authorized(self, ctx: RequestContext) -> bool:
        return ctx.headers.get("x-subscription-token") == self.api_key

    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        query = query_params(ctx.path)
        if (invalid := _invalid_parameter(query)) is not None:
            ctx.send(_error(422, "VALIDATION", f"Unable to validate request parameter(s): {invalid}", {}))
            return
        # freshness: pd, pw, pm, py, or a range of days YYYY-MM-DDtoYYYY-MM-DD (both included).
        if (days := _FRESHNESS_RANGE.fullmatch(query.get("freshness", ""))) is not None:
            try:
                earliest, latest = whole_days(days.group(1), days.group(2))
            except ValueError:
                ctx.send(_error(422, "VALIDATION", "Unable to validate request parameter(s): freshness", {}))
                return
            results = published_between(results, earliest, latest)
        count = int(query.get("count", "20"))
        items = [_item(result, news=ctx.path.startswith(NEWS_PATH)) for result in results[:count]]
        if ctx.path.startswith(NEWS_PATH):
            body: dict[str, Any] = {
                "type": "news",
                "query": {"original": query.get("q", ""), "spellcheck_off": False},
                "results": items,
            }
        else:
            body = {
                "type": "search",
                "query": {
                    "original": query.get("q", ""),
                    "show_strict_warning": False,
                    "is_navigational": False,
                    "is_news_breaking": False,
                    "spellcheck_off": True,
                    "country": "us",
                    "bad_results": False,
                    "should_fallback": False,
                    "postal_code": "",
                    "city": "",
                    "header_country": "",
                    "more_results_available": len(results) > count,
                    "state": "",
                },
                "mixed": {
                    "type": "mixed",
                    "main": [{"type": "web", "index": i, "all": False} for i in range(len(items))],
                    "top": [],
                    "side": [],
                },
            }
            if items:  # Brave leaves "web" out when nothing matched.
                body["web"] = {"type": "search", "results": items, "family_friendly": True}
        ctx.send(
            Reply(200, json.dumps(body), headers=_limit_headers(remaining="0, 1499"), content_type=_JSON)
        )

    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        headers = self.retry_after_header()
        if failure == "auth":
            detail = self._detail("The provided subscription token is invalid.")
            ctx.send(_error(422, "SUBSCRIPTION_TOKEN_INVALID", detail, {"component": "authentication"}))
        elif failure == "rate_limit":
            meta = _meta(rate_current=2, quota_current=500)
            detail = self._detail("Request rate limit exceeded for plan.")
            ctx.send(_error(429, "RATE_LIMITED", detail, meta, {**_limit_headers("0, 1500"), **headers}))
        elif failure == "quota":
            meta = _meta(rate_current=1, quota_current=2000)
            detail = self._detail("Request quota limit exceeded for plan.")
            # For a quota, when to come back is the monthly window's reset, so that is where this
            # fake puts retry_after; without it the answer gives no hint, as for every fake.
            windows = _limit_headers("0, 0")
            if self.retry_after is None:
                del windows["X-RateLimit-Reset"]
            else:
                windows["X-RateLimit-Reset"] = f"1, {self.retry_after}"
            ctx.send(_error(429, "QUOTA_LIMITED", detail, meta, windows))
        elif failure == "server":
            ctx.send(Reply(self.planned_status(502), _GATEWAY_PAGE, content_type="text/html"))
        elif failure == "blocked":
            ctx.send(Reply(403, _WAF_PAGE, content_type="text/html; charset=UTF-8"))
        elif failure == "malformed":
            # Valid HTTP, broken JSON: what a misbehaving cache or proxy in between hands over.
            ctx.send(Reply(200, '{"type": "search", "web": {"results": [{"title": ', content_type=_JSON))
        elif failure == "truncated":
            body = json.dumps({"type": "search", "web": {"results": [_item(r, news=False) for r in _SOME]}})
            _send_truncated(ctx, body.encode(), _JSON)

    def _detail(self, default: str) -> str:
        return self.error_detail if self.error_detail is not None else default


_JSON = "application/json"
_SOME = [{"title": "Cut off", "url": "https://cut.example.com/", "snippet": "x" * 400}]

_GATEWAY_PAGE = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
)
_WAF_PAGE = (
    "<!DOCTYPE html><html><head><title>Access denied</title></head><body>"
    "<h1>Access denied</h1><p>The owner of this website has banned your access.</p></body></html>"
)


def _invalid_parameter(query: dict[str, str]) -> str | None:
    """The first parameter Brave's documentation would refuse: country a two-letter code,
    search_lang a language code, safesearch off/moderate/strict, offset 0 to 9."""
    if "country" in query and not re.fullmatch(r"[A-Z]{2}|ALL", query["country"]):
        return "country"
    if "search_lang" in query and not re.fullmatch(r"[a-z]{2}(-[a-z]{2,4})?", query["search_lang"]):
        return "search_lang"
    if query.get("safesearch", "moderate") not in ("off", "moderate", "strict"):
        return "safesearch"
    if "freshness" in query and not (
        query["freshness"] in ("pd", "pw", "pm", "py") or _FRESHNESS_RANGE.fullmatch(query["freshness"])
    ):
        return "freshness"
    if "offset" in query and not (query["offset"].isdigit() and int(query["offset"]) <= 9):
        return "offset"
    if {"lang", "language", "page", "pageno", "locale"} & set(query):
        return "unknown parameter"
    return None


def _item(result: dict[str, Any], *, news: bool) -> dict[str, Any]:
    published = result.get("published")
    when = datetime.fromisoformat(published.replace("Z", "+00:00")) if published else None
    url = result["url"]
    host = urlsplit(url).hostname or ""
    item: dict[str, Any] = {
        "title": result["title"],
        "url": url,
        "is_source_local": False,
        "is_source_both": False,
        "description": result.get("snippet", ""),
        "profile": {
            "name": host,
            "url": url,
            "long_name": host,
            "img": "https://imgs.search.brave.com/x.png",
        },
        "language": "en",
        "family_friendly": True,
        "type": "news_result" if news else "search_result",
        "subtype": "article" if news else "generic",
        "is_live": False,
        "meta_url": {"scheme": "https", "netloc": host, "hostname": host, "favicon": "", "path": ""},
        "extra_snippets": [f"More about {result['title']}."],
    }
    if when is not None:
        # page_age is ISO without a zone; age is for people ("2 hours ago" on news, a date on web).
        item["page_age"] = when.strftime("%Y-%m-%dT%H:%M:%S")
        item["age"] = "2 hours ago" if news else when.strftime("%B %-d, %Y")
    if news:
        item["breaking"] = False
    return item


def _meta(*, rate_current: int, quota_current: int) -> dict[str, Any]:
    return {
        "plan": "Free",
        "rate_limit": 1,
        "rate_current": rate_current,
        "quota_limit": 2000,
        "quota_current": quota_current,
        "component": "rate_limiter",
    }


def _limit_headers(remaining: str) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": "1, 2000",
        "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
        "X-RateLimit-Remaining": remaining,
        "X-RateLimit-Reset": "1, 1419704",
    }


def _error(
    status: int, code: str, detail: str, meta: dict[str, Any], headers: dict[str, str] | None = None
) -> Reply:
    body = {
        "type": "ErrorResponse",
        "error": {"id": str(uuid.uuid4()), "status": status, "code": code, "detail": detail, "meta": meta},
        "time": int(time.time()),
    }
    return Reply(status, json.dumps(body), headers=headers or {}, content_type=_JSON)


def _send_truncated(ctx: RequestContext, body: bytes, content_type: str) -> None:
    """Promise the whole body, send half of it, hang up: a connection lost mid-answer."""
    ctx.send(
        Reply(
            200, body[: len(body) // 2], headers={"Content-Length": str(len(body))}, content_type=content_type
        )
    )
    ctx.close_connection()
