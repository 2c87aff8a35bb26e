"""A fake Exa: POST /search and POST /contents with x-api-key auth, answering in Exa's real JSON
and error shapes."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from tests.support.fakes.base import Failure, JsonFakeProvider, published_between
from tests.support.origin import Reply, RequestContext

API_KEY = "exa-test-key-0123456789"

# Exa's error bodies: {"requestId", "error", "tag"}.
_ERRORS: dict[str, tuple[int, str, str]] = {
    "auth": (401, "Invalid API key", "INVALID_API_KEY"),
    "rate_limit": (429, "You have exceeded the rate limit for this endpoint.", "RATE_LIMIT_EXCEEDED"),
    "quota": (
        402,
        "You have exhausted your credits. Add credits at https://dashboard.exa.ai/billing",
        "NO_MORE_CREDITS",
    ),
    "blocked": (403, "You do not have access to this resource.", "ACCESS_DENIED"),
    "server": (500, "Internal Server Error", "INTERNAL_ERROR"),
}


class FakeExa(JsonFakeProvider):
    name = "exa"

    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self.honor_num_results = True
        """Like the real service, answer at most the numResults asked for."""
        self.hang_seconds = 3.0
        self.pages: dict[str, tuple[str, str]] = {}
        """What /contents answers for each URL it can read: (title, text)."""
        self.about: dict[str, dict[str, Any]] = {}
        """What /contents says of a page besides its text (``author``, ``publishedDate``), as
        Exa's results carry them; null when a test gives none."""
        self.said: dict[str, str] = {}
        """The url /contents gives for a page instead of the one asked for (Exa gives the page's
        own after redirects; a test can make it give anything)."""

    def paths(self) -> tuple[str, ...]:
        return ("/search", "/contents")

    @property
    def contents(self) -> list[dict[str, Any]]:
        """The bodies of the /contents requests received."""
        return [body for body in self.bodies if "urls" in body or "ids" in body]

    def settings(self) -> dict[str, Any]:
        return {"exa_api_key": self.api_key, "exa_url": self.origin.base}

    def authorized(self, ctx: RequestContext) -> bool:
        return ctx.headers.get("x-api-key") == self.api_key

    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        request = self.current_json()
        if ctx.path == "/contents":
            self._send_contents(ctx, request)
            return
        location, moderation = request.get("userLocation"), request.get("moderation")
        # userLocation: a two-letter ISO 3166-1 code (or an object); moderation: a boolean.
        if (
            location is not None and not (isinstance(location, str) and re.fullmatch(r"[A-Z]{2}", location))
        ) or (moderation is not None and not isinstance(moderation, bool)):
            self.send_json(ctx, {"error": "Invalid request body"}, status=400)
            return
        # startPublishedDate / endPublishedDate: ISO 8601 instants; only links published within.
        try:
            earliest = _instant(request.get("startPublishedDate"))
            latest = _instant(request.get("endPublishedDate"))
        except ValueError:
            self.send_json(ctx, {"error": "Invalid request body"}, status=400)
            return
        results = published_between(results, earliest, latest)
        if self.honor_num_results:
            results = results[: int(request.get("numResults", 10))]
        rendered = []
        for item in results:
            highlights = item.get("highlights", [item["snippet"]])
            rendered.append(
                {
                    "id": item["url"],
                    "title": item["title"],
                    "url": item["url"],
                    "publishedDate": item.get("published"),
                    "author": item.get("author"),
                    "score": item.get("score"),
                    "highlights": highlights,
                    "highlightScores": [0.5] * len(highlights),
                }
            )
        answer = {
            "requestId": uuid.uuid4().hex,
            "resolvedSearchType": "neural",
            "results": rendered,
            "searchType": "auto",
            "costDollars": {"total": 0.005},
        }
        self.send_json(ctx, answer)

    def _send_contents(self, ctx: RequestContext, request: dict[str, Any]) -> None:
        found, statuses = [], []
        for url in request.get("urls") or request.get("ids") or []:
            if url in self.pages:
                title, text = self.pages[url]
                said = self.said.get(url, url)
                about = {"author": None, "publishedDate": None, **self.about.get(url, {})}
                found.append({"id": url, "url": said, "title": title, **about, "text": text})
                statuses.append({"id": url, "status": "success", "source": "cached"})
            else:
                error = {"tag": "CRAWL_NOT_FOUND", "httpStatusCode": 404}
                statuses.append({"id": url, "status": "error", "error": error})
        answer = {
            "requestId": uuid.uuid4().hex,
            "results": found,
            "statuses": statuses,
            "costDollars": {"total": 0.001},
        }
        self.send_json(ctx, answer)

    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        if failure == "malformed":
            ctx.send(Reply(200, "<html><body>Bad gateway</body></html>"))
            return
        if failure == "truncated":
            whole = json.dumps({"requestId": "r", "results": [{"id": "x", "url": "https://cut.example"}]})
            ctx.send(Reply(200, whole[: len(whole) // 2], content_type="application/json"))
            return
        status, text, tag = _ERRORS[failure]
        status = self.planned_status(self.statuses.get(failure, status))
        headers = self.retry_after_header() if failure == "rate_limit" else {}
        self.send_json(ctx, {"requestId": uuid.uuid4().hex, "error": text, "tag": tag}, status, headers)


def _instant(value: object) -> datetime | None:
    """An ISO 8601 date-time as Exa takes it ("2025-01-01T00:00:00.000Z"); ValueError otherwise."""
    if value is None:
        return None
    if not isinstance(value, str) or "T" not in value:
        raise ValueError(value)
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=UTC)
