"""Common shape of the fake providers: a loopback origin whose next answers a test scripts.

A fake renders generic result dicts ({"title", "url", "snippet", "published"?, "score"?}) into
its provider's real response format, and can be told to fail the ways the real service fails.
Every fake records the requests it received, so tests can check what our adapter sent.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from mcp_server_web.config import Settings
from mcp_server_web.providers.base import SearchResult
from tests.support.origin import Origin, Reply, RequestContext, SeenRequest

Failure = Literal["auth", "rate_limit", "quota", "server", "timeout", "malformed", "truncated", "blocked"]


class FakeProvider(ABC):
    """A fake provider. Use as a context manager; configure with ``answer`` or ``fail``."""

    name: str

    def __init__(self) -> None:
        self.origin = Origin("127.0.0.1")
        self.results: list[dict[str, Any]] = []
        self.failure: Failure | None = None
        self.retry_after: int | None = None
        self.hang_seconds = 5.0
        """How long a "timeout" failure holds the request at most (the fake's exit ends it sooner)."""
        self._lock = threading.Lock()
        self._released = threading.Event()

    def __enter__(self) -> FakeProvider:
        self.origin.__enter__()
        for path in self.paths():
            self.origin.route(path, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()  # let a hanging handler go, so shutdown does not wait for it
        self.origin.__exit__(*exc)

    @property
    def requests(self) -> list[SeenRequest]:
        return [r for r in self.origin.requests if r.path.split("?", 1)[0] in self.paths()]

    def params(self, index: int = -1) -> dict[str, str]:
        """The query parameters of a request this fake received (the last by default)."""
        return query_params(self.requests[index].path)

    def answer(self, results: list[dict[str, Any]]) -> None:
        with self._lock:
            self.results, self.failure = list(results), None

    def fail(self, failure: Failure, retry_after: int | None = None) -> None:
        with self._lock:
            self.failure, self.retry_after = failure, retry_after

    def retry_after_header(self) -> dict[str, str]:
        """Retry-After as the test gave it to ``fail``; no header when it gave none."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}

    def _handle(self, ctx: RequestContext) -> None:
        # The origin leaves request bodies unread; read the body before answering so the
        # connection stays usable and tests can see what was sent.
        self.received(read_body(ctx))
        if not self.authorized(ctx):
            self.send_failure(ctx, "auth")
            return
        with self._lock:
            failure, results = self.failure, list(self.results)
        if failure == "timeout":
            self._released.wait(self.hang_seconds)
            return
        if failure is not None:
            self.send_failure(ctx, failure)
        else:
            self.send_results(ctx, results)

    def received(self, body: bytes) -> None:
        """Keep what a request sent in its body; a fake whose tests look at it overrides this."""
        return None

    def authorized(self, ctx: RequestContext) -> bool:
        """Whether the request carries the credential the real service asks for (a failed check
        is answered as the "auth" failure)."""
        return True

    @abstractmethod
    def paths(self) -> tuple[str, ...]:
        """The request paths this fake answers (e.g. ("/search",))."""

    @abstractmethod
    def send_results(self, ctx: RequestContext, results: list[dict[str, Any]]) -> None:
        """Answer with results rendered in the provider's wire format."""

    @abstractmethod
    def send_failure(self, ctx: RequestContext, failure: Failure) -> None:
        """Answer the way the real provider answers for that failure (status, headers, body)."""

    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """Settings fields that point our server at this fake (key and endpoint URL)."""


class JsonFakeProvider(FakeProvider):
    """A fake of an API that takes its searches as JSON bodies (Tavily, Exa)."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[dict[str, Any]] = []
        """Each request's parsed JSON body, in order."""
        self.statuses: dict[Failure, int] = {}
        """The status to answer a failure with instead of the usual one, for a failure the real
        service answers with more than one status (e.g. {"server": 503})."""

    def received(self, body: bytes) -> None:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {"_unparsed": body.decode("utf-8", "replace")}
        with self._lock:
            self.bodies.append(parsed)

    def send_json(
        self, ctx: RequestContext, answer: object, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        ctx.send(Reply(status, json.dumps(answer), headers=headers or {}, content_type="application/json"))


def read_body(ctx: RequestContext) -> bytes:
    """The request body (RequestContext leaves it unread on the socket)."""
    length = int(ctx.headers.get("content-length") or 0)
    return ctx._handler.rfile.read(length) if length else b""


def query_params(path: str) -> dict[str, str]:
    """The query parameters of a request path, the first value of each."""
    return {name: values[0] for name, values in parse_qs(urlsplit(path).query).items()}


def sample_results(count: int, prefix: str = "r") -> list[dict[str, Any]]:
    return [
        {
            "title": f"Result {prefix}{i}",
            "url": f"https://site{i}.example.com/{prefix}/{i}",
            "snippet": f"Snippet number {i} about the <b>query</b> &amp; more.",
            "published": "2026-11-01T10:00:00Z",
            "score": round(1 - i / 100, 3),
        }
        for i in range(count)
    ]


def assert_samples(results: list[SearchResult], count: int) -> SearchResult:
    """``results`` are the first ``count`` of ``sample_results``, in order, with title and snippet
    as plain text; returns the first, for the checks that differ by provider."""
    assert [r.url for r in results] == [f"https://site{i}.example.com/r/{i}" for i in range(count)]
    first = results[0]
    assert first.title == "Result r0"
    assert first.snippet == "Snippet number 0 about the query & more."
    return first


def settings_for(fakes: dict[str, FakeProvider], **overrides: Any) -> Settings:
    """Settings that point every provider at its fake; nothing can reach a real service."""
    values: dict[str, Any] = {}
    for fake in fakes.values():
        values.update(fake.settings())
    values.update(overrides)
    return Settings(**values)
