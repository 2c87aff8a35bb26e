"""A fake SearXNG instance: ``/search?format=json`` answered the way SearXNG's webapp answers.

SearXNG is a Flask app: a format not listed in ``search.formats`` gets Flask's stock 403 page,
its limiter answers 429 "Too Many Requests" in plain text, and an internal error is Flask's 500
page. A JSON answer whose engines all failed has an empty ``results`` list and the failures in
``unresponsive_engines`` as ``[engine, reason]`` pairs.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from tests.support.fakes.base import Failure, FakeProvider, query_params
from tests.support.origin import Reply, RequestContext

_JSON = "application/json"
_FORBIDDEN_PAGE = (
    "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
    "<p>You don&#39;t have the permission to access the requested resource. It is either "
    "read-protected or not readable by the server.</p>\n"
)
_SERVER_ERROR_PAGE = (
    "<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
    "<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was unable "
    "to complete your request. Either the server is overloaded or there is an error in the "
    "application.</p>\n"
)
_HTML_RESULTS_PAGE = (
    '<!DOCTYPE html>\n<html class="no-js theme-auto center-alignment-no" lang="en-EN">\n<head>'
    '<meta charset="UTF-8"><title>query - SearXNG</title></head>\n<body class="results_endpoint">'
    '<main id="main_results"><div id="urls" role="main"><article class="result result-default '
    'category-general"><a href="https://example.com/" class="url_header">example.com</a>'
    '<h3><a href="https://example.com/">Example</a></h3><p class="content">An HTML page.</p>'
    "</article></div></main></body></html>"
)


class FakeSearxng(FakeProvider):
    name = "searxng"

    def __init__(self) -> None:
        super().__init__()
        self.unresponsive: list[list[str]] = []

    def paths(self) -> tuple[str, ...]:
        return ("/search",)

    def settings(self) -> dict[str, Any]:
        return {"searxng_url": self.origin.base}

    def answer(self, results: list[dict[str, Any]]) -> None:
        with self._lock:
            self.unresponsive = []
        super().answer(results)

    def disable_json(self) -> None:
        """Answer as an instance without ``json`` in ``search.formats`` does: 403 Forbidden."""
        self.fail("auth")

    def engines_fail(self, unresponsive: list[tuple[str, str]]) -> None:
        """Answer no results because every engine failed, listing them as SearXNG does."""
        super().answer([])
        with self._lock:
            self.unresponsive = [list(pair) for pair in unresponsive]

    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        query = query_params(ctx.path)
        if query.get("format") != "json":
            ctx.send(Reply(200, _HTML_RESULTS_PAGE))
            return
        if not _valid(query):
            # SearXNG answers a bad parameter value with HTTP 400.
            ctx.send(Reply(400, "Bad Request", content_type="text/plain"))
            return
        category = query.get("categories", "general")
        with self._lock:
            unresponsive = list(self.unresponsive)
        body = {
            "query": query.get("q", ""),
            "number_of_results": 0,
            "results": [_item(result, category, rank) for rank, result in enumerate(results, 1)],
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [f"{query.get('q', '')} tutorial"] if results else [],
            "unresponsive_engines": unresponsive,
        }
        ctx.send(Reply(200, json.dumps(body), content_type=_JSON))

    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        headers = self.retry_after_header()
        if failure == "auth":
            ctx.send(Reply(403, _FORBIDDEN_PAGE))
        elif failure in ("rate_limit", "quota", "blocked"):
            # SearXNG has no quota; its limiter (rate or bot detection) is the one refusal it has.
            ctx.send(Reply(429, "Too Many Requests", headers=headers, content_type="text/plain"))
        elif failure == "server":
            ctx.send(Reply(self.planned_status(500), _SERVER_ERROR_PAGE))
        elif failure == "malformed":
            # A reverse proxy in front of the instance that ignores format=json.
            ctx.send(Reply(200, _HTML_RESULTS_PAGE))
        elif failure == "truncated":
            body = json.dumps({"query": "q", "results": [_item(r, "general", 1) for r in _SOME]}).encode()
            # Promise the whole body, send half, hang up: a connection lost mid-answer.
            cut = Reply(
                200, body[: len(body) // 2], headers={"Content-Length": str(len(body))}, content_type=_JSON
            )
            ctx.send(cut)
            ctx.close_connection()


_SOME = [{"title": "Cut off", "url": "https://cut.example.com/", "snippet": "x" * 400}]


def _valid(query: dict[str, str]) -> bool:
    """safesearch 0/1/2, pageno a number from 1, language a locale ("de", "de-CH") or "all"."""
    return (
        query.get("safesearch", "0") in ("0", "1", "2")
        and query.get("pageno", "1").isdigit()
        and int(query.get("pageno", "1")) >= 1
        and re.fullmatch(r"all|auto|[a-z]{2}(-[A-Z]{2})?", query.get("language", "all")) is not None
    )


def _item(result: dict[str, Any], category: str, rank: int) -> dict[str, Any]:
    url = result["url"]
    parts = urlsplit(url)
    published = result.get("published")
    return {
        "url": url,
        "title": result["title"],
        "content": result.get("snippet", ""),
        # SearXNG serialises its (naive) datetimes with isoformat().
        "publishedDate": published.removesuffix("Z") if published else None,
        "thumbnail": "",
        "engine": "duckduckgo",
        "template": "default.html",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, parts.fragment],
        "img_src": "",
        "priority": "",
        "engines": ["duckduckgo", "brave"],
        "positions": [rank, rank + 1],
        "score": result.get("score", 1.0),
        "category": category,
    }
