"""Common shape of the fake providers: a loopback origin whose next answers a test scripts.

A fake renders generic result dicts ({"title", "url", "snippet", "published"?, "score"?}) into
its provider's real response format, and can be told to fail the ways the real service fails:
all the same way (``answer``, ``fail``), or request by request (``schedule``, ``chaos``).
Every fake records the requests it received, so tests can check what our adapter sent, and what
it answered each one (``served``), so tests can check what the chain made of it.

Fakes are served by a thread per connection, so everything about the request being answered
(its body, its plan) lives in a thread-local: concurrent requests never read each other's.
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from datetime import time as time_of_day
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qs, urlsplit

from mcp_server_web.config import Settings
from mcp_server_web.providers.base import SearchResult
from tests.support.origin import Handler, Origin, Reply, RequestContext, SeenRequest

Failure = Literal["auth", "rate_limit", "quota", "server", "timeout", "malformed", "truncated", "blocked"]

Mode = Literal[
    "ok",
    "slow",
    "hang",
    "rate_limit_retry_after",
    "rate_limit",
    "server",
    "truncated",
    "malformed",
    "challenge",
]
"""How a fake answers one request: with its results ("ok"; "slow": after ``Plan.delay``), not
at all ("hang", past any sane provider timeout), 429 with or without Retry-After, a 5xx, a 200
whose body is cut off or is not what was asked for, or (DuckDuckGo) its bot challenge."""

_FAILURE_OF_MODE: dict[Mode, Failure | None] = {
    "ok": None,
    "slow": None,
    "hang": "timeout",
    "rate_limit_retry_after": "rate_limit",
    "rate_limit": "rate_limit",
    "server": "server",
    "truncated": "truncated",
    "malformed": "malformed",
    "challenge": "blocked",
}
SERVER_STATUSES = (500, 502, 503)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a fake does with one request."""

    mode: Mode | Failure
    """A chaos ``Mode``, or the ``Failure`` a test gave ``fail``."""
    retry_after: int | None = None
    """The Retry-After a rate-limit answer carries; None for none."""
    status: int | None = None
    """Another status than the failure's usual one (a 503 for "server", 200 for a challenge)."""
    delay: float = 0.0
    """Seconds a "slow" answer waits before it is sent."""

    @property
    def failure(self) -> Failure | None:
        if self.mode in _FAILURE_OF_MODE:
            return _FAILURE_OF_MODE[self.mode]  # type: ignore[index]
        return self.mode  # type: ignore[return-value]


Schedule = Callable[[str, int], Plan]
"""The plan for a request, from its query and how many requests for that query came before."""


@dataclass(frozen=True, slots=True)
class Served:
    """One request a fake answered, as the fake saw it."""

    query: str
    mode: str
    """The plan's mode: "ok", a chaos ``Mode`` or a ``Failure``."""
    status: int | None
    """The status sent; None when nothing was (a hang, or a client that left first)."""
    retry_after: int | None
    at: float
    """time.monotonic() just before the answer went out (when the fake gave up on the request,
    for one it never answered): no client can have read the answer earlier."""


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
        self.served: list[Served] = []
        """Every request answered, in the order the answers went out."""
        self._schedule: Schedule | None = None
        self._misbehaviour: Handler | None = None
        self._results_for: Callable[[str], list[dict[str, Any]]] | None = None
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._local = threading.local()

    def __enter__(self) -> FakeProvider:
        self.origin.__enter__()
        # socketserver listens with a backlog of 5: a burst of concurrent searches opening
        # connections at once overflows it, and the dropped handshakes come back 1 to 8 s later
        # as timeouts the provider never caused. Listening again only raises the backlog.
        assert self.origin._server is not None
        self.origin._server.socket.listen(128)
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
            self._results_for = self._schedule = None

    def answer_each(self, results_for: Callable[[str], list[dict[str, Any]]]) -> None:
        """Answer every request with the results for its query (canned data a test can check
        an answer against)."""
        with self._lock:
            self._results_for, self.failure, self._schedule = results_for, None, None

    def fail(self, failure: Failure, retry_after: int | None = None) -> None:
        with self._lock:
            self.failure, self.retry_after, self._schedule = failure, retry_after, None

    def misbehave(self, act: Handler | None) -> None:
        """Answer every request with ``act`` instead of the provider's wire format: the hostile
        answers no real service gives (a redirect elsewhere, a bomb, an echo of credentials;
        see ``tests.support.fakes.hostile``). None goes back to normal."""
        with self._lock:
            self._misbehaviour = act

    def schedule(self, plan_for: Schedule) -> None:
        """Decide request by request: ``plan_for(query, earlier requests for it)``. Results come
        from ``answer_each`` when it was called, else from ``answer``."""
        with self._lock:
            self._schedule, self.failure = plan_for, None

    def chaos(
        self,
        seed: int,
        rates: Mapping[Mode, float],
        *,
        retry_after: tuple[int, int] = (1, 5),
        hang_seconds: float | None = None,
    ) -> None:
        """Fail at random: each request's mode drawn with the relative ``rates``, Retry-After
        (for "rate_limit_retry_after") uniformly from ``retry_after``, a "server" status among
        500, 502 and 503. The draw is seeded by ``seed``, this fake and the request's query (and
        how often that query came before), so a query meets the same fate whatever order
        concurrent requests arrive in."""
        unsupported = set(rates) - set(self.chaos_modes())
        if unsupported:
            raise ValueError(f"the {self.name} fake cannot act out {sorted(unsupported)}")
        modes, weights = list(rates), list(rates.values())
        low, high = retry_after
        if hang_seconds is not None:
            self.hang_seconds = hang_seconds

        def plan_for(query: str, earlier: int) -> Plan:
            draw = random.Random(f"{seed}/{self.name}/{query}/{earlier}")
            mode = draw.choices(modes, weights)[0]
            if mode == "rate_limit_retry_after":
                return Plan(mode, retry_after=draw.randint(low, high))
            if mode == "server":
                return Plan(mode, status=draw.choice(SERVER_STATUSES))
            if mode == "challenge":
                return Plan(mode, status=self.challenge_status(draw))
            return Plan(mode)

        self.schedule(plan_for)

    def chaos_modes(self) -> tuple[Mode, ...]:
        """The modes ``chaos`` can draw for this fake; "challenge" only where the real service
        has a bot challenge."""
        return tuple(mode for mode in _FAILURE_OF_MODE if mode != "challenge")

    def challenge_status(self, draw: random.Random) -> int:
        """The status of a chaos challenge answer (for fakes that have one)."""
        raise NotImplementedError

    def served_for(self, query: str) -> list[Served]:
        with self._lock:
            return [entry for entry in self.served if entry.query == query]

    def retry_after_header(self) -> dict[str, str]:
        """Retry-After as the plan of the request being answered gives it (as the test gave it
        to ``fail``); no header when it gives none."""
        plan = self.current_plan()
        return {"Retry-After": str(plan.retry_after)} if plan.retry_after is not None else {}

    def planned_status(self, usual: int) -> int:
        """The status to answer the current failure with: the plan's, else ``usual``."""
        status = self.current_plan().status
        return usual if status is None else status

    def current_plan(self) -> Plan:
        plan: Plan | None = getattr(self._local, "plan", None)
        return plan if plan is not None else Plan("ok", self.retry_after)

    def current_body(self) -> bytes:
        """The body of the request being answered (by this thread)."""
        body: bytes = getattr(self._local, "body", b"")
        return body

    def _handle(self, ctx: RequestContext) -> None:
        # The origin leaves request bodies unread; read the body before answering so the
        # connection stays usable and tests can see what was sent.
        body = read_body(ctx)
        self.received(body)
        query = self.query_of(ctx, body)
        with self._lock:
            earlier = self._seen[query]
            self._seen[query] += 1
            schedule, results_for = self._schedule, self._results_for
            failure, retry_after, results = self.failure, self.retry_after, list(self.results)
        if not self.authorized(ctx):
            plan = Plan("auth")
        elif schedule is not None:
            plan = schedule(query, earlier)
        else:
            plan = Plan(failure or "ok", retry_after)
        self._local.body, self._local.plan, self._local.status, self._local.sent = body, plan, None, None
        send = ctx.send

        def send_and_note(reply: Reply) -> None:
            self._local.status, self._local.sent = reply.status, time.monotonic()
            send(reply)

        # Noted as sent, not as planned: what the log says is what went over the wire.
        ctx.send = send_and_note  # type: ignore[method-assign]
        try:
            self._act(ctx, plan, results_for(query) if results_for is not None else results)
        finally:
            sent = self._local.sent
            at = time.monotonic() if sent is None else sent
            entry = Served(query, plan.mode, self._local.status, plan.retry_after, at)
            with self._lock:
                self.served.append(entry)
            self._local.body = self._local.plan = None

    def _act(self, ctx: RequestContext, plan: Plan, results: list[dict[str, Any]]) -> None:
        with self._lock:
            misbehaviour = self._misbehaviour
        if misbehaviour is not None:
            misbehaviour(ctx)
            return
        failure = plan.failure
        if failure == "timeout":
            self._released.wait(self.hang_seconds)
        elif failure is not None:
            self.send_failure(ctx, failure)
        else:
            if plan.delay:
                self._released.wait(plan.delay)
            self.send_results(ctx, results)

    def received(self, body: bytes) -> None:
        """Keep what a request sent in its body; a fake whose tests look at it overrides this."""
        return None

    def query_of(self, ctx: RequestContext, body: bytes) -> str:
        """The search text of a request ("q" in the URL unless the fake says otherwise)."""
        return query_params(ctx.path).get("q", "")

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

    def current_json(self) -> dict[str, Any]:
        """The JSON body of the request being answered ({} when it is not a JSON object)."""
        return _json_object(self.current_body())

    def query_of(self, ctx: RequestContext, body: bytes) -> str:
        query = _json_object(body).get("query")
        return query if isinstance(query, str) else ""

    def send_json(
        self, ctx: RequestContext, answer: object, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        ctx.send(Reply(status, json.dumps(answer), headers=headers or {}, content_type="application/json"))


def _json_object(body: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(body)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


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


def published_at(result: dict[str, Any]) -> datetime | None:
    """When a generic result was published ("published": ISO 8601, "Z" for UTC, or RFC 2822), or
    None."""
    published = result.get("published")
    if not published:
        return None
    try:
        when = datetime.fromisoformat(published.replace("Z", "+00:00"))
    except ValueError:
        when = email.utils.parsedate_to_datetime(published)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def published_between(
    results: list[dict[str, Any]], earliest: datetime | None, latest: datetime | None
) -> list[dict[str, Any]]:
    """The results a provider's date filter lets through: those published from earliest to latest
    (both included), and those with no date (which the fakes' services cannot judge)."""
    if earliest is None and latest is None:
        return list(results)  # no filter asked for: dates in any form pass untouched
    kept = []
    for result in results:
        when = published_at(result)
        if when is not None and (
            (earliest is not None and when < earliest) or (latest is not None and when > latest)
        ):
            continue
        kept.append(result)
    return kept


def whole_days(first: str | None, last: str | None) -> tuple[datetime | None, datetime | None]:
    """A provider's YYYY-MM-DD bounds as the instants they include: first's midnight UTC to the
    last moment of last (ValueError when either is not a date)."""
    earliest = datetime.combine(date.fromisoformat(first), time_of_day.min, UTC) if first else None
    latest = datetime.combine(date.fromisoformat(last), time_of_day.max, UTC) if last else None
    return earliest, latest


def settings_for(fakes: dict[str, FakeProvider], **overrides: Any) -> Settings:
    """Settings that point every provider at its fake; nothing can reach a real service."""
    values: dict[str, Any] = {}
    for fake in fakes.values():
        values.update(fake.settings())
    values.update(overrides)
    return Settings.from_values(values)


FakesT = TypeVar("FakesT", bound=Mapping[str, "FakeProvider"])


@contextmanager
def running(fakes: FakesT) -> Iterator[FakesT]:
    """Every fake of ``fakes`` serving on 127.0.0.1 for the block, and stopped after it."""
    for fake in fakes.values():
        fake.__enter__()
    try:
        yield fakes
    finally:
        for fake in fakes.values():
            fake.__exit__(None, None, None)
