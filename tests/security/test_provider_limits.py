"""Search providers are trusted with keys, not with what they answer.

A provider endpoint (or whatever sits in front of it) may redirect a keyed request elsewhere,
echo the keys it was sent into its error text, or answer with a body built to exhaust memory.
Through the real web_search tool (the SDK's Client, in memory) and fakes on loopback:

- no API key reaches another origin a provider redirects to (a second loopback address,
  127.0.0.2, records every header it gets); a redirect within the provider's own origin still works;
- no configured secret (any provider's API key, the password in SEARXNG_URL) shows in a tool
  result or a log record, at DEBUG or INFO, with the server's own logging set-up, wherever a
  provider puts it (error codes, details, messages, engine reasons, Location, result text);
- a gzip bomb or an endless body from any provider fails that provider with a clear reason
  while the process's resident memory grows by less than ``RSS_BUDGET``;
- DuckDuckGo's page is parsed off the event loop.
"""

from __future__ import annotations

import base64
import gc
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import anyio
import lxml.html
import pytest
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.logs import configure_logging
from mcp_server_web.providers.redact import Redactor, url_secrets
from mcp_server_web.server.app import build_server
from tests.server.conftest import error_code, text_of
from tests.support.fakes.base import FakeProvider, running, sample_results, settings_for
from tests.support.fakes.brave import WEB_PATH, FakeBrave
from tests.support.fakes.duckduckgo import FakeDuckDuckGo
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.hostile import (
    echoing,
    endless_body,
    gzip_bomb,
    json_answer,
    redirect_to,
    text_answer,
)
from tests.support.fakes.searxng import FakeSearxng
from tests.support.fakes.tavily import FakeTavily
from tests.support.origin import Origin, Reply, RequestContext

BRAVE_KEY = "BSAbrave9Qe7Lr2Vt8Kp4Wz1"
TAVILY_KEY = "tvly-dev-7Hq2Lx9Pw4Rk8Zt3Mn6B"
EXA_KEY = "exa-5c1d9e7a-44f2-4b8e-9a61-0f3c2b7d8e91"
SEARXNG_PASSWORD = "s3arxT0ken-Jq8Wm2Vx5Nc7"
SECRETS = (BRAVE_KEY, TAVILY_KEY, EXA_KEY, SEARXNG_PASSWORD)
ALL_SECRETS_TEXT = " ".join(SECRETS)
SEARXNG_BASIC = base64.b64encode(f"searx:{SEARXNG_PASSWORD}".encode()).decode()
"""SEARXNG_URL's credentials as they travel, in the Authorization header."""

RSS_BUDGET = 64 * 1024 * 1024
BOMB_DECODED = 256 * 1024 * 1024
"""A 256 MB answer (about 250 KB of gzip): far past any sane cap, small enough to survive the old code."""
ENDLESS = 200 * 1024 * 1024


class Fakes(dict[str, FakeProvider]):
    """The five fakes, keyed with the distinctive secrets above, and SEARXNG_URL with a password."""

    def settings(self, order: tuple[str, ...], **overrides: Any) -> dict[str, Any]:
        values: dict[str, Any] = {"search_providers": order}
        searxng = self["searxng"].origin
        values["searxng_url"] = f"http://searx:{SEARXNG_PASSWORD}@{searxng.host}:{searxng.port}"
        values.update(overrides)
        return values


@pytest.fixture
def fakes() -> Iterator[Fakes]:
    made = Fakes(
        tavily=FakeTavily(TAVILY_KEY),
        exa=FakeExa(EXA_KEY),
        brave=FakeBrave(BRAVE_KEY),
        searxng=FakeSearxng(),
        duckduckgo=FakeDuckDuckGo(),
    )
    with running(made):
        yield made


@pytest.fixture
def elsewhere() -> Iterator[Origin]:
    """Another origin a redirect can point at; it records every request and its headers."""
    with Origin("127.0.0.2") as server:
        yield server


@pytest.fixture(params=["debug", "info"])
def server_logs(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[pytest.LogCaptureFixture]:
    """The server's own logging set-up at the given level (it keeps httpx and httpcore at WARNING
    whatever the level), with every record also captured for the test."""
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    quiet = {
        name: logging.getLogger(name).level for name in ("httpx", "httpcore", "mcp.server.lowlevel.server")
    }
    configure_logging(request.param)
    root.addHandler(caplog.handler)
    caplog.handler.setLevel(logging.DEBUG)
    try:
        yield caplog
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for name, level in quiet.items():
            logging.getLogger(name).setLevel(level)


async def search(
    fakes: Fakes, order: tuple[str, ...], arguments: dict[str, Any] | None = None
) -> CallToolResult:
    server = build_server(settings_for(fakes, **fakes.settings(order)))
    with anyio.fail_after(30):
        async with Client(server) as client:
            return await client.call_tool("web_search", arguments or {"query": "rivers"})


def everything_shown(result: CallToolResult) -> str:
    return text_of(result) + json.dumps(result.structured_content or {})


def leaks(text: str) -> list[str]:
    """Each secret any 10-character piece of which is in ``text`` (a key cut short is a leak too)."""
    return [s for s in (*SECRETS, SEARXNG_BASIC) if any(s[i : i + 10] in text for i in range(len(s) - 9))]


def logged(caplog: pytest.LogCaptureFixture) -> str:
    lines = [caplog.text]
    lines += [record.getMessage() for record in caplog.records]
    return "\n".join(lines)


# --- point 6: keys and redirects ---------------------------------------------------------------

KEY_HEADERS = {"brave": "x-subscription-token", "tavily": "authorization", "exa": "x-api-key"}


@pytest.mark.parametrize("name", ["brave", "tavily", "exa"])
async def test_a_key_never_follows_a_redirect_to_another_origin(
    fakes: Fakes, elsewhere: Origin, name: str
) -> None:
    fakes[name].misbehave(redirect_to(elsewhere.base))
    fakes["duckduckgo"].answer(sample_results(3))

    result = await search(fakes, (name, "duckduckgo"))

    carried = [
        (request.path, header)
        for request in elsewhere.requests
        for header, value in request.headers.items()
        if leaks(value) or header == KEY_HEADERS[name]
    ]
    assert carried == [], f"the {name} key reached {elsewhere.base}: {carried}"
    assert not result.is_error, text_of(result)
    first = result.structured_content["attempts"][0]
    assert (first["provider"], first["outcome"]) == (name, "error")
    assert not leaks(everything_shown(result))


async def test_a_redirect_within_the_providers_origin_is_followed_with_the_key(fakes: Fakes) -> None:
    brave = fakes["brave"]
    brave.origin.route("/old" + WEB_PATH, moved_out_of_old)
    brave.answer(sample_results(3))

    server = build_server(
        settings_for(fakes, **fakes.settings(("brave",), brave_url=brave.origin.base + "/old"))
    )
    async with Client(server) as client:
        result = await client.call_tool("web_search", {"query": "rivers"})

    assert not result.is_error, text_of(result)
    assert result.structured_content["provider"] == "brave"
    assert [r.path.split("?")[0] for r in brave.origin.requests] == ["/old" + WEB_PATH, WEB_PATH]


def moved_out_of_old(ctx: RequestContext) -> None:
    ctx.send(Reply(301, b"", headers={"Location": ctx.path.removeprefix("/old")}, content_type=None))


# Each provider's error answers, with every configured secret put where that provider puts text.
_KEY_AT_THE_CUT = "x" * 185 + BRAVE_KEY
ECHOES: dict[str, list[Any]] = {
    "brave": [
        json_answer(
            429,
            {
                "type": "ErrorResponse",
                "error": {
                    "code": f"RATE_LIMITED {ALL_SECRETS_TEXT}",
                    "detail": f"Token {ALL_SECRETS_TEXT} is over its limit.",
                    "meta": {"token": BRAVE_KEY},
                },
                "message": ALL_SECRETS_TEXT,
            },
        ),
        json_answer(
            422, {"type": "ErrorResponse", "error": {"code": "OPTION_NOT_IN_PLAN", "detail": _KEY_AT_THE_CUT}}
        ),
        json_answer(500, {"type": "ErrorResponse", "error": {"code": "X" * 190 + BRAVE_KEY, "detail": "d"}}),
        echoing(401, lambda seen: {"type": "ErrorResponse", "error": {"code": "BAD_TOKEN", "detail": seen}}),
    ],
    "tavily": [
        json_answer(401, {"detail": {"error": f"Unauthorized: invalid API key {ALL_SECRETS_TEXT}"}}),
        json_answer(432, {"detail": {"error": "y" * 190 + TAVILY_KEY}}),
        echoing(401, lambda seen: {"detail": {"error": f"Unauthorized: {seen}"}}),
        json_answer(
            400,
            {
                "detail": {
                    "error": f"Bad request; sent Authorization: Bearer {TAVILY_KEY}\n{ALL_SECRETS_TEXT}"
                }
            },
        ),
    ],
    "exa": [
        json_answer(
            401, {"requestId": "r", "error": f"Invalid API key {ALL_SECRETS_TEXT}", "tag": "INVALID_API_KEY"}
        ),
        text_answer(502, f"upstream said x-api-key: {EXA_KEY} {ALL_SECRETS_TEXT}"),
        json_answer(429, {"error": "z" * 190 + EXA_KEY}),
        echoing(401, lambda seen: {"error": f"no valid key among {seen}"}),
    ],
    "searxng": [
        json_answer(
            200,
            {"query": "q", "results": [], "unresponsive_engines": [["google", f"denied {ALL_SECRETS_TEXT}"]]},
        ),
        redirect_to(f"http://searx:{SEARXNG_PASSWORD}@127.0.0.2:1/{ALL_SECRETS_TEXT.replace(' ', '/')}"),
        # The password travels as Basic authorization: echoed, it is base64, not the password.
        echoing(200, lambda seen: {"query": "q", "results": [], "unresponsive_engines": [["proxy", seen]]}),
    ],
}


@pytest.mark.parametrize(
    ("name", "index"), [(name, index) for name, answers in ECHOES.items() for index in range(len(answers))]
)
async def test_no_secret_shows_in_results_or_logs(
    fakes: Fakes, server_logs: pytest.LogCaptureFixture, name: str, index: int
) -> None:
    fakes[name].misbehave(ECHOES[name][index])

    result = await search(fakes, (name,))

    assert error_code(result) == "all_providers_failed"
    assert f"{name}: " in text_of(result)
    assert leaks(everything_shown(result)) == [], text_of(result)
    assert f"{name}: " in server_logs.text  # the failure was logged...
    assert leaks(logged(server_logs)) == [], logged(server_logs)  # ...without a secret
    for record in server_logs.records:
        if record.name.startswith("mcp_server_web"):
            assert "\n" not in record.getMessage() or record.exc_info, record.getMessage()


async def test_no_secret_shows_in_result_text(fakes: Fakes, server_logs: pytest.LogCaptureFixture) -> None:
    # A provider (or a proxy before it) that echoes the request into its results.
    fakes["brave"].answer(
        [{"title": f"Your token {BRAVE_KEY}", "url": "https://a.example.com/", "snippet": ALL_SECRETS_TEXT}]
    )

    result = await search(fakes, ("brave",))

    assert not result.is_error, text_of(result)
    assert result.structured_content["results"][0]["url"] == "https://a.example.com/"
    assert leaks(everything_shown(result)) == []
    assert leaks(logged(server_logs)) == []


async def test_exa_warnings_are_logged_quoted_not_printed(
    fakes: Fakes, server_logs: pytest.LogCaptureFixture
) -> None:
    # exa-py turns an answer's "warnings" into Python warnings, which go to stderr verbatim.
    note = {"code": "IGNORED_FIELD", "path": "/query", "message": f"ignored; you sent {ALL_SECRETS_TEXT}"}
    result = {"id": "a", "url": "https://a.example.com/", "title": "A", "highlights": ["Some text."]}
    fakes["exa"].misbehave(json_answer(200, {"requestId": "r", "results": [result], "warnings": [note] * 50}))

    with warnings.catch_warnings(record=True) as raised:
        answer = await search(fakes, ("exa",))

    assert not answer.is_error, text_of(answer)
    assert [str(w.message) for w in raised if leaks(str(w.message))] == []
    reported = [r.getMessage() for r in server_logs.records if "IGNORED_FIELD" in r.getMessage()]
    assert 1 <= len(reported) <= 5
    assert leaks(logged(server_logs)) == []


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("https://searx:pa%24%24word-9@search.example.org", "pa$$word-9"),
        ("https://searx:pa%24%24word-9@search.example.org", "c2Vhcng6cGEkJHdvcmQtOQ=="),  # Basic auth
        ("https://Abc123tokenXYZ789@search.example.org", "Abc123tokenXYZ789"),
        ("https://search.example.org/k7Fq2LmZ9xWp4Rt8Yb3N/", "k7Fq2LmZ9xWp4Rt8Yb3N"),
        ("https://search.example.org/searxng?key=Zz9Yy8Xx7Ww6", "Zz9Yy8Xx7Ww6"),
    ],
)
def test_credentials_in_an_endpoint_url_are_secrets(url: str, secret: str) -> None:
    redactor = Redactor(url_secrets(url))
    echoed = f"denied for {url} and {secret} and {quote(secret, safe='')}"

    assert secret not in redactor.quote(echoed)
    assert quote(secret, safe="") not in redactor.quote(echoed)
    assert "search.example.org" in redactor.quote(echoed)  # the rest is still readable
    assert Redactor(url_secrets("https://search.example.org/searxng/")).forms == ()


# --- point 7: bounded answers ------------------------------------------------------------------


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """The highest resident size of this process while the block runs, sampled every 2 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> PeakRss:
        gc.collect()
        self.start = self.peak = rss()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())
        gc.collect()
        self.end = rss()

    @property
    def growth(self) -> int:
        return self.peak - self.start


HUGE = {
    "gzip-bomb": lambda: gzip_bomb(BOMB_DECODED),
    "endless-chunked": lambda: endless_body(ENDLESS, chunked=True),
    "endless-with-length": lambda: endless_body(ENDLESS, chunked=False),
}


@pytest.mark.parametrize("kind", list(HUGE))
@pytest.mark.parametrize("name", ["searxng", "brave", "duckduckgo", "tavily", "exa"])
async def test_a_huge_answer_fails_the_provider_within_a_memory_bound(
    fakes: Fakes, name: str, kind: str
) -> None:
    fallback = "duckduckgo" if name != "duckduckgo" else "searxng"
    fakes[fallback].answer(sample_results(3))
    await search(fakes, (fallback,), {"query": "warm-up"})  # imports done, threads started
    fakes[name].misbehave(HUGE[kind]())

    with PeakRss() as memory:
        result = await search(fakes, (name, fallback))

    kept = memory.end - memory.start
    print(f"{name} {kind}: peak RSS +{memory.growth / 2**20:.1f} MB, kept +{kept / 2**20:.1f} MB")
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["provider"] == fallback
    first = data["attempts"][0]
    assert (first["provider"], first["outcome"]) == (name, "error")
    assert "limit" in first["error"], first["error"]
    assert memory.growth < RSS_BUDGET, f"peak RSS grew by {memory.growth / 2**20:.0f} MB"


async def test_duckduckgo_page_is_parsed_off_the_event_loop(
    fakes: Fakes, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes["duckduckgo"].answer(sample_results(3))
    await search(fakes, ("duckduckgo",), {"query": "warm-up"})  # imports done, threads started
    # A page near the size cap (1.7 MB, a thousand results): a long parse on a slow machine.
    fakes["duckduckgo"].answer(sample_results(1000))
    parsed_on: list[int] = []
    parse = lxml.html.document_fromstring

    def spy(*args: Any, **kwargs: Any) -> Any:  # a library function, observed, not replaced
        parsed_on.append(threading.get_ident())
        return parse(*args, **kwargs)

    monkeypatch.setattr(lxml.html, "document_fromstring", spy)
    gaps: list[float] = []
    done = anyio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        result = await search(fakes, ("duckduckgo",), {"query": "rivers", "max_results": 20})
        done.set()

    # The stall is reported, not asserted: on two busy cores any bound would be a coin toss.
    print(f"longest event-loop stall during the search: {max(gaps) * 1000:.0f} ms")
    assert not result.is_error, text_of(result)
    assert result.structured_content["provider"] == "duckduckgo"
    assert len(result.structured_content["results"]) == 20
    assert parsed_on, "the page was not parsed with lxml.html.document_fromstring"
    assert threading.get_ident() not in parsed_on, "the page was parsed on the event loop's thread"
