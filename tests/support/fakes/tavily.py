"""A fake Tavily: POST /search and POST /extract with Bearer auth, answering in Tavily's real JSON
and error shapes."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from tests.support.fakes.base import Failure, JsonFakeProvider, published_between, whole_days
from tests.support.origin import Reply, RequestContext

API_KEY = "tvly-test-key-0123456789"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

# Tavily's own error texts, in its {"detail": {"error": ...}} envelope.
_ERRORS: dict[str, tuple[int, str]] = {
    "auth": (401, "Unauthorized: missing or invalid API key."),
    "rate_limit": (
        429,
        "Your request has been blocked due to excessive requests. Please reduce the rate of requests.",
    ),
    # 432 is the plan's limit, 433 the pay-as-you-go limit.
    "quota": (
        432,
        "This request exceeds your plan's set usage limit. Please upgrade your plan or contact "
        "support@tavily.com",
    ),
    "blocked": (403, "Forbidden."),
    "server": (500, "Internal Server Error"),
}


class FakeTavily(JsonFakeProvider):
    name = "tavily"

    def __init__(self, api_key: str = API_KEY) -> None:
        super().__init__()
        self.api_key = api_key
        self.honor_max_results = True
        """Like the real service, answer at most the max_results asked for."""
        self.hang_seconds = 3.0
        self.pages: dict[str, str] = {}
        """What /extract answers for each URL it can read (its raw_content)."""
        self.unreadable: dict[str, str] = {}
        """URLs /extract fails inside a 200 (failed_results), with Tavily's error text."""
        self.said: dict[str, str] = {}
        """The url /extract gives for a page instead of the one asked for (a test can make it
        give anything)."""

    def paths(self) -> tuple[str, ...]:
        return ("/search", "/extract")

    @property
    def extracts(self) -> list[dict[str, Any]]:
        """The bodies of the /extract requests received."""
        return [body for body in self.bodies if "urls" in body]

    def settings(self) -> dict[str, Any]:
        return {"tavily_api_key": self.api_key, "tavily_url": self.origin.base}

    def authorized(self, ctx: RequestContext) -> bool:
        return ctx.headers.get("authorization") == f"Bearer {self.api_key}"

    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        request = self.current_json()
        if ctx.path == "/extract":
            self._send_extract(ctx, request)
            return
        country = request.get("country")
        # Tavily's country: a country's English name in lower case, general searches only.
        if country is not None and (
            not isinstance(country, str)
            or not re.fullmatch(r"[a-z][a-z .'-]+", country)
            or request.get("topic") != "general"
        ):
            self.send_json(ctx, {"detail": {"error": "Invalid country."}}, status=400)
            return
        # start_date / end_date: YYYY-MM-DD, content published on or after / on or before that day.
        bounds = [request.get("start_date"), request.get("end_date")]
        for name, bound in zip(("start_date", "end_date"), bounds, strict=True):
            if bound is not None and not (isinstance(bound, str) and _DAY.fullmatch(bound)):
                self.send_json(ctx, {"detail": {"error": f"Invalid {name}."}}, status=400)
                return
        try:
            earliest, latest = whole_days(*bounds)
        except ValueError:
            self.send_json(ctx, {"detail": {"error": "Invalid date."}}, status=400)
            return
        results = published_between(results, earliest, latest)
        if self.honor_max_results:
            results = results[: int(request.get("max_results", 5))]
        rendered = []
        for item in results:
            entry: dict[str, Any] = {
                "title": item["title"],
                "url": item["url"],
                "content": item["snippet"],
                "score": item.get("score", 0.5),
                "raw_content": None,
            }
            if "published" in item:  # Tavily only dates results of topic "news"
                entry["published_date"] = item["published"]
            rendered.append(entry)
        answer = {
            "query": request.get("query", ""),
            "follow_up_questions": None,
            "answer": None,
            "images": [],
            "results": rendered,
            "response_time": 0.42,
            "request_id": str(uuid.uuid4()),
        }
        self.send_json(ctx, answer)

    def _send_extract(self, ctx: RequestContext, request: dict[str, Any]) -> None:
        urls = request.get("urls", [])
        urls = [urls] if isinstance(urls, str) else urls
        found, failed = [], []
        for url in urls:
            if url in self.pages:
                said = self.said.get(url, url)
                found.append({"url": said, "raw_content": self.pages[url], "images": [], "favicon": None})
            else:
                failed.append({"url": url, "error": self.unreadable.get(url, "Failed to fetch url")})
        answer = {
            "results": found,
            "failed_results": failed,
            "response_time": 0.87,
            "request_id": str(uuid.uuid4()),
        }
        self.send_json(ctx, answer)

    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        if failure == "malformed":
            ctx.send(Reply(200, "<html><body>Service temporarily unavailable</body></html>"))
            return
        if failure == "truncated":
            whole = json.dumps({"query": "q", "results": [{"title": "Cut", "url": "https://cut.example"}]})
            ctx.send(Reply(200, whole[: len(whole) // 2], content_type="application/json"))
            return
        status, text = _ERRORS[failure]
        status = self.planned_status(self.statuses.get(failure, status))
        headers = self.retry_after_header() if failure == "rate_limit" else {}
        self.send_json(ctx, {"detail": {"error": text}}, status, headers)
