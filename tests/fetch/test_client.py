"""The Fetcher against real loopback origins: redirects, pinning, limits, decoding, cancellation.

Only 127.0.0.1/32 is allowed (``allow_cidrs``), so every other loopback address (127.0.0.2, ::1)
is a refused address that tests can safely point at. ``GuardBackend`` fails any test in which the
fetcher tries to connect anywhere but 127.0.0.1.
"""

from __future__ import annotations

import gzip
import itertools
import socket
import ssl
import threading
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from functools import cache
from ipaddress import ip_network
from typing import Any

import anyio
import brotli
import httpcore
import pytest

from mcp_server_web.errors import (
    BlockedAddress,
    FetchTimeout,
    HTTPStatusError,
    InvalidArgument,
    InvalidURL,
    RobotsDisallowed,
    TooLarge,
)
from mcp_server_web.fetch import FetchConfig
from mcp_server_web.fetch.net.client import DEFAULT_ACCEPT, MAX_REDIRECTS, Fetcher
from mcp_server_web.fetch.net.decode import BodyDecoder
from mcp_server_web.fetch.net.proxy import ProxyRoutes
from tests.support.netguard import GuardBackend, QuickOrigin, StubResolver
from tests.support.origin import Origin, RequestContext, trickle
from tests.support.timing import PATIENCE, allowance, slowest

ONLY_127_0_0_1 = (ip_network("127.0.0.1/32"),)
SETTINGS = FetchConfig(allow_cidrs=ONLY_127_0_0_1, timeout=5)
MB = 1024 * 1024


@pytest.fixture
def origin() -> Iterator[Origin]:
    with QuickOrigin("127.0.0.1") as server:
        yield server


@pytest.fixture
def backend() -> Iterator[GuardBackend]:
    guard = GuardBackend(permitted=("127.0.0.1",))
    yield guard
    assert guard.violations == []


@pytest.fixture
def resolver() -> StubResolver:
    return StubResolver()


@pytest.fixture
async def fetcher(backend: GuardBackend, resolver: StubResolver) -> AsyncIterator[Fetcher]:
    async with Fetcher(SETTINGS, resolver=resolver, network_backend=backend, environ={}) as client:
        yield client


def _fetcher(backend: GuardBackend, resolver: StubResolver | None = None, **config: Any) -> Fetcher:
    values: dict[str, Any] = {"allow_cidrs": ONLY_127_0_0_1, "timeout": 5.0, **config}
    resolver = resolver or StubResolver()
    return Fetcher(FetchConfig(**values), resolver=resolver, network_backend=backend, environ={})


# ------------------------------------------------------------------------------------------
# Plain requests
# ------------------------------------------------------------------------------------------


async def test_plain_fetch(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/page", "<h1>Hello</h1>", content_type="text/HTML; Charset=ISO-8859-1")
    response = await fetcher.fetch(url + "#section")
    assert response.status == 200
    assert response.body == b"<h1>Hello</h1>"
    assert response.url == url and response.final_url == url
    assert response.media_type == "text/html" and response.charset == "ISO-8859-1"
    assert response.headers["content-length"] == "14"
    assert response.redirects == ()
    assert origin.hits("/page") == 1


async def test_default_headers_are_sent(fetcher: Fetcher, origin: Origin) -> None:
    await fetcher.fetch(origin.serve("/h", "ok"))
    sent = origin.requests[-1].headers
    assert sent["user-agent"] == SETTINGS.user_agent
    assert sent["accept"] == DEFAULT_ACCEPT
    assert sent["accept-encoding"] == "gzip, deflate, br"
    assert "cookie" not in sent and "authorization" not in sent


async def test_caller_headers_accept_and_method(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/h", "ok")
    await fetcher.fetch(
        url,
        method="post",
        content=b"payload",
        accept="application/json",
        headers={"X-Custom": "1", "Host": "evil.example", "Accept-Encoding": "zstd", "User-Agent": "agent/2"},
    )
    seen = origin.requests[-1]
    assert seen.method == "POST"
    assert seen.headers["accept"] == "application/json"
    assert seen.headers["x-custom"] == "1"
    assert seen.headers["user-agent"] == "agent/2"
    assert seen.headers["host"] == f"127.0.0.1:{origin.port}"  # the caller cannot pick the vhost
    assert seen.headers["accept-encoding"] == "gzip, deflate, br"  # only what we can decode
    assert seen.headers["content-length"] == "7"


async def test_invalid_header_value_is_an_invalid_argument(fetcher: Fetcher, origin: Origin) -> None:
    with pytest.raises(InvalidArgument):
        await fetcher.fetch(origin.serve("/h", "ok"), headers={"X-Bad": "a\r\nInjected: 1"})
    assert origin.hits("/h") == 0


async def test_repeated_response_headers_are_joined(fetcher: Fetcher, origin: Origin) -> None:
    def handler(ctx: RequestContext) -> None:
        ctx._handler.send_response(200)
        for name, value in (("X-Multi", "a"), ("x-multi", "b"), ("Content-Length", "0")):
            ctx._handler.send_header(name, value)
        ctx._handler.end_headers()

    origin.route("/multi", handler)
    response = await fetcher.fetch(origin.url("/multi"))
    assert response.headers["x-multi"] == "a, b"
    assert all(name == name.lower() for name in response.headers)
    assert response.media_type == "" and response.charset is None


@pytest.mark.parametrize("status", [404, 410, 500, 503])
async def test_error_statuses_are_returned_not_raised(fetcher: Fetcher, origin: Origin, status: int) -> None:
    url = origin.serve("/e", "nope", content_type="text/plain", status=status)
    response = await fetcher.fetch(url)
    assert response.status == status and response.body == b"nope"


async def test_head_request_ignores_content_length(fetcher: Fetcher, origin: Origin) -> None:
    def handler(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Length": str(100 * MB), "Content-Type": "text/plain"})

    origin.route("/head", handler)
    response = await fetcher.fetch(origin.url("/head"), method="HEAD")
    assert response.status == 200 and response.body == b""


async def test_connection_refused_is_a_plain_http_error(fetcher: Fetcher) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HTTPStatusError) as caught:
        await fetcher.fetch(f"http://127.0.0.1:{port}/")
    assert caught.value.status is None
    assert caught.value.message == f"could not connect to 127.0.0.1:{port}: connection refused."


async def test_unresolvable_host_is_a_plain_http_error(fetcher: Fetcher, backend: GuardBackend) -> None:
    with pytest.raises(HTTPStatusError) as caught:
        await fetcher.fetch("http://nowhere.test/")
    assert caught.value.status is None and "could not resolve host nowhere.test" in caught.value.message
    assert backend.connects == []


async def test_cookies_are_not_kept_between_fetches(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/c", "ok", headers={"Set-Cookie": "session=secret; Path=/"})
    await fetcher.fetch(url)
    await fetcher.fetch(url)
    assert "cookie" not in origin.requests[-1].headers


async def test_progress_is_reported_in_steps(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/big", b"x" * (1 * MB), content_type="application/octet-stream")
    calls: list[tuple[int, int | None]] = []

    async def on_progress(received: int, total: int | None) -> None:
        calls.append((received, total))

    response = await fetcher.fetch(url, on_progress=on_progress)
    assert response.size == MB
    assert calls[-1] == (MB, MB)
    assert [received for received, _ in calls] == sorted(received for received, _ in calls)
    assert len(calls) <= MB // (64 * 1024) + 1
    steps = [received for received, _ in calls[:-1]]
    assert all(later - earlier >= 64 * 1024 for earlier, later in itertools.pairwise(steps))


# ------------------------------------------------------------------------------------------
# Redirects
# ------------------------------------------------------------------------------------------


async def test_redirect_chain_of_three_is_followed(fetcher: Fetcher, origin: Origin) -> None:
    origin.redirect("/r1", origin.url("/r2"), 301)  # absolute
    origin.redirect("/r2", "/r3", 302)  # relative
    origin.redirect("/r3", f"//127.0.0.1:{origin.port}/final", 307)  # scheme-relative
    final = origin.serve("/final", "done")
    seen: list[str] = []

    async def hop_check(url: str) -> None:
        seen.append(url)

    response = await fetcher.fetch(origin.url("/r1"), hop_check=hop_check)
    assert response.body == b"done"
    assert response.url == origin.url("/r1") and response.final_url == final
    assert response.redirects == (origin.url("/r1"), origin.url("/r2"), origin.url("/r3"))
    assert seen == [origin.url(path) for path in ("/r1", "/r2", "/r3", "/final")]


async def test_exactly_five_redirects_are_followed(fetcher: Fetcher, origin: Origin) -> None:
    for index in range(MAX_REDIRECTS):
        origin.redirect(f"/hop{index}", f"/hop{index + 1}")
    origin.serve(f"/hop{MAX_REDIRECTS}", "end")
    response = await fetcher.fetch(origin.url("/hop0"))
    assert response.body == b"end" and len(response.redirects) == 5


async def test_six_redirects_are_refused(fetcher: Fetcher, origin: Origin) -> None:
    for index in range(6):
        origin.redirect(f"/hop{index}", f"/hop{index + 1}")
    origin.serve("/hop6", "never")
    with pytest.raises(HTTPStatusError) as caught:
        await fetcher.fetch(origin.url("/hop0"))
    assert caught.value.message.startswith("too many redirects (more than 5)")
    assert origin.hits("/hop6") == 0


async def test_redirect_loop_is_refused(fetcher: Fetcher, origin: Origin) -> None:
    origin.redirect("/loop", "/loop")
    with pytest.raises(HTTPStatusError, match="too many redirects"):
        await fetcher.fetch(origin.url("/loop"))
    assert origin.hits("/loop") == 6


async def test_redirect_without_location_is_an_error(fetcher: Fetcher, origin: Origin) -> None:
    origin.serve("/r", b"", status=302)
    with pytest.raises(HTTPStatusError) as caught:
        await fetcher.fetch(origin.url("/r"))
    assert "without a Location header" in caught.value.message and caught.value.status == 302


@pytest.mark.parametrize("location", ["file:///etc/passwd", "http://user:pw@127.0.0.1/", "/\\evil.example/"])
async def test_redirect_to_an_invalid_url_is_refused(fetcher: Fetcher, origin: Origin, location: str) -> None:
    origin.redirect("/r", location)
    with pytest.raises(InvalidURL):
        await fetcher.fetch(origin.url("/r"))


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("form", ["absolute", "scheme-relative", "hex", "mapped-v6"])
async def test_redirect_to_a_refused_address_is_blocked(
    backend: GuardBackend, origin: Origin, status: int, form: str
) -> None:
    # A real origin listens on 127.0.0.2 at the same port: it must never see a request.
    with QuickOrigin("127.0.0.2", origin.port) as other:
        other.serve("/secret", "internal")
        target = {
            "absolute": f"http://127.0.0.2:{origin.port}/secret",
            "scheme-relative": f"//127.0.0.2:{origin.port}/secret",
            "hex": f"http://0x7f.0.0.2:{origin.port}/secret",
            "mapped-v6": f"http://[::ffff:127.0.0.2]:{origin.port}/secret",
        }[form]
        origin.redirect("/go", target, status)
        async with _fetcher(backend) as fetcher:
            with pytest.raises(BlockedAddress) as caught:
                await fetcher.fetch(origin.url("/go"))
        assert "127.0.0.2" in caught.value.message
        assert other.requests == []
    assert origin.hits("/go") == 1
    assert {host for host, _ in backend.connects} == {"127.0.0.1"}


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/latest/meta-data/",
        "//169.254.169.254/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fd00:ec2::254]/",
        "http://10.0.0.1/",
        "http://[::1]/",
    ],
)
async def test_redirect_to_metadata_or_private_never_connects(
    fetcher: Fetcher, backend: GuardBackend, origin: Origin, target: str
) -> None:
    origin.redirect("/go", target, 302)
    hops: list[str] = []

    async def hop_check(url: str) -> None:
        hops.append(url)

    with pytest.raises(BlockedAddress):
        await fetcher.fetch(origin.url("/go"), hop_check=hop_check)
    # GuardBackend fails the test on any connect elsewhere; this also shows what was tried.
    assert backend.connects == [("127.0.0.1", origin.port)]
    assert hops == [origin.url("/go")]  # refused before the hop check ran


async def test_redirect_to_a_name_resolving_to_a_refused_address(
    fetcher: Fetcher, backend: GuardBackend, resolver: StubResolver, origin: Origin
) -> None:
    resolver.answer("internal.test", "10.0.0.7")
    origin.redirect("/go", "http://internal.test/admin", 308)
    with pytest.raises(BlockedAddress) as caught:
        await fetcher.fetch(origin.url("/go"))
    assert "10.0.0.7 (host internal.test)" in caught.value.message
    assert backend.connects == [("127.0.0.1", origin.port)]


async def test_303_and_post_redirects_become_get_without_body(fetcher: Fetcher, origin: Origin) -> None:
    origin.redirect("/post301", "/landing", 301)
    origin.redirect("/post303", "/landing", 303)
    origin.serve("/landing", "ok")
    for path in ("/post301", "/post303"):
        await fetcher.fetch(
            origin.url(path), method="POST", content=b"a=1", headers={"Content-Type": "text/plain"}
        )
        landing = origin.requests[-1]
        assert landing.path == "/landing" and landing.method == "GET"
        assert "content-length" not in landing.headers and "content-type" not in landing.headers


async def test_307_and_308_keep_method_and_body(origin: Origin, backend: GuardBackend) -> None:
    received: list[bytes] = []

    def echo(ctx: RequestContext) -> None:
        length = int(ctx.headers.get("content-length", "0"))
        received.append(ctx._handler.rfile.read(length))
        ctx.send_head(200, {"Content-Length": "0"})

    for status in (307, 308):
        origin.redirect(f"/p{status}", "/echo", status)
    origin.route("/echo", echo)
    async with _fetcher(backend) as fetcher:
        for status in (307, 308):
            await fetcher.fetch(origin.url(f"/p{status}"), method="POST", content=b"body!")
            assert origin.requests[-1].method == "POST"
    assert received == [b"body!", b"body!"]


async def test_credentials_are_not_forwarded_across_origins(
    backend: GuardBackend, resolver: StubResolver, origin: Origin
) -> None:
    resolver.answer("other.test", "127.0.0.1")
    origin.redirect("/go", f"http://other.test:{origin.port}/land")
    origin.serve("/land", "ok")
    async with _fetcher(backend, resolver) as fetcher:
        await fetcher.fetch(
            origin.url("/go"), headers={"Authorization": "Bearer t", "X-Other": "1", "Accept-Language": "de"}
        )
    first, landing = origin.requests
    assert first.headers["authorization"] == "Bearer t" and first.headers["x-other"] == "1"
    # Only the allow-listed headers cross origins (any other header may be a credential).
    assert "authorization" not in landing.headers and "x-other" not in landing.headers
    assert landing.headers["accept-language"] == "de"
    assert landing.headers["host"] == f"other.test:{origin.port}"


async def test_hop_check_can_stop_a_redirect_hop(fetcher: Fetcher, origin: Origin) -> None:
    origin.redirect("/start", "/private")
    origin.serve("/private", "secret")

    async def hop_check(url: str) -> None:
        if url.endswith("/private"):
            raise RobotsDisallowed("robots.txt disallows /private")

    with pytest.raises(RobotsDisallowed):
        await fetcher.fetch(origin.url("/start"), hop_check=hop_check)
    assert origin.hits("/start") == 1 and origin.hits("/private") == 0


# ------------------------------------------------------------------------------------------
# DNS pinning
# ------------------------------------------------------------------------------------------


async def test_dns_answer_is_pinned_for_the_connection(backend: GuardBackend) -> None:
    """The resolver answers an allowed address once, then a refused one (DNS rebinding).

    Connections use the address vetted from the single resolution; the second origin, on the
    refused address at the same port, must see nothing.
    """
    with QuickOrigin("127.0.0.1") as good, QuickOrigin("127.0.0.2", good.port) as evil:
        good.serve("/", "good", headers={"Connection": "close"})
        evil.serve("/", "evil")
        resolver = StubResolver({"pinned.test": [["127.0.0.1"], ["127.0.0.2"]]})
        url = f"http://pinned.test:{good.port}/"
        async with _fetcher(backend, resolver) as fetcher:
            first = await fetcher.fetch(url)
            assert first.body == b"good"
            assert resolver.calls == ["pinned.test"]  # resolved once for the connection
            # The name never reaches the lower layer (which could resolve it again).
            assert backend.connects == [("127.0.0.1", good.port)]
            assert good.requests[0].headers["host"] == f"pinned.test:{good.port}"

            # The origin closed the connection, so the next fetch resolves again: now refused.
            with pytest.raises(BlockedAddress) as caught:
                await fetcher.fetch(url)
            assert "127.0.0.2 (host pinned.test)" in caught.value.message
            assert resolver.calls == ["pinned.test", "pinned.test"]
        assert evil.requests == []
        assert backend.connects == [("127.0.0.1", good.port)]


async def test_mixed_allowed_and_refused_answers_are_refused(backend: GuardBackend, origin: Origin) -> None:
    origin.serve("/", "should not be reached")
    for answers in (["127.0.0.1", "127.0.0.2"], ["127.0.0.2", "127.0.0.1"], ["127.0.0.1", "::1"]):
        resolver = StubResolver({"mixed.test": [answers]})
        async with _fetcher(backend, resolver) as fetcher:
            with pytest.raises(BlockedAddress):
                await fetcher.fetch(f"http://mixed.test:{origin.port}/")
    assert origin.requests == [] and backend.connects == []


async def test_next_vetted_address_is_tried_when_a_connect_fails(origin: Origin) -> None:
    origin.serve("/", "second address")
    # Nothing listens on 127.0.0.3 at the origin's port, so the first connect is refused.
    backend = GuardBackend(permitted=("127.0.0.1", "127.0.0.3"))
    resolver = StubResolver({"multi.test": [["127.0.0.3", "127.0.0.1"]]})
    allowed = (ip_network("127.0.0.1/32"), ip_network("127.0.0.3/32"))
    async with _fetcher(backend, resolver, allow_cidrs=allowed) as fetcher:
        response = await fetcher.fetch(f"http://multi.test:{origin.port}/")
    assert response.body == b"second address"
    assert backend.connects == [("127.0.0.3", origin.port), ("127.0.0.1", origin.port)]


# ------------------------------------------------------------------------------------------
# Proxies
# ------------------------------------------------------------------------------------------


async def test_proxy_is_used_and_the_target_is_vetted_first(backend: GuardBackend) -> None:
    with QuickOrigin("127.0.0.1") as proxy:
        # The proxy is handed the vetted address, never the name (it would resolve it again).
        proxy.serve("http://93.184.216.34/page", "via proxy")
        proxy.serve("http://10.0.0.5/page", "must not be asked")
        resolver = StubResolver({"public.test": [["93.184.216.34"]], "intranet.test": [["10.0.0.5"]]})
        async with _fetcher(backend, resolver, proxy=proxy.base) as fetcher:
            response = await fetcher.fetch("http://public.test/page")
            assert response.body == b"via proxy"
            with pytest.raises(BlockedAddress) as caught:
                await fetcher.fetch("http://intranet.test/page")
            assert "10.0.0.5 (host intranet.test)" in caught.value.message
            with pytest.raises(BlockedAddress):
                await fetcher.fetch("http://169.254.169.254/")
        assert [(seen.path, seen.headers["host"]) for seen in proxy.requests] == [
            ("http://93.184.216.34/page", "public.test")
        ]
        # Only the proxy was connected to; never the target's (public) address.
        assert {host for host, _ in backend.connects} == {"127.0.0.1"}


async def test_proxy_from_environment_respects_no_proxy(backend: GuardBackend, origin: Origin) -> None:
    origin.serve("/direct", "direct")
    with QuickOrigin("127.0.0.1") as proxy:
        proxy.serve("http://93.184.216.34/", "proxied")
        resolver = StubResolver({"public.test": [["93.184.216.34"]], "pinned.test": [["127.0.0.1"]]})
        environ = {"HTTP_PROXY": proxy.base, "no_proxy": ".pinned.test, 127.0.0.0/8"}
        async with Fetcher(SETTINGS, resolver=resolver, network_backend=backend, environ=environ) as fetcher:
            assert (await fetcher.fetch("http://public.test/")).body == b"proxied"
            assert (await fetcher.fetch(f"http://pinned.test:{origin.port}/direct")).body == b"direct"
            assert (await fetcher.fetch(origin.url("/direct"))).body == b"direct"
        assert len(proxy.requests) == 1 and origin.hits("/direct") == 2


def test_proxy_routes_choose_by_scheme_and_no_proxy() -> None:
    from mcp_server_web.fetch.net.urls import parse_url

    routes = ProxyRoutes.configured(
        None,
        {
            "https_proxy": "proxy.corp:3128",
            "ALL_PROXY": "http://all:1",
            "NO_PROXY": "internal.corp,10.0.0.0/8",
        },
    )
    assert routes.proxy_for(parse_url("https://example.com/")) == "http://proxy.corp:3128"
    assert routes.proxy_for(parse_url("http://example.com/")) == "http://all:1"
    assert routes.proxy_for(parse_url("https://a.internal.corp/")) is None
    assert routes.proxy_for(parse_url("https://10.1.2.3/")) is None
    assert routes.proxy_for(parse_url("https://notinternal.corp/")) == "http://proxy.corp:3128"
    explicit = ProxyRoutes.configured("http://p:8080", {"NO_PROXY": "*"})
    assert explicit.proxy_for(parse_url("http://example.com/")) is None
    assert (
        ProxyRoutes.configured("http://p:8080", {}).proxy_for(parse_url("https://example.com/"))
        == "http://p:8080"
    )


# ------------------------------------------------------------------------------------------
# Time limits
# ------------------------------------------------------------------------------------------


LATE_CONTROLS = 10
"""A limit's margin (the seconds a call may end past it, or take when it is refused at once) is
stated for an idle machine; on a busy one it is LATE_CONTROLS times the control, if that is more:
the slowest of three fetches of a small page just before, with the same fetcher, from the same
origin. Each stall lasts far longer than its bound, so a limit that does not hold still fails."""


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so handler threads that stall on purpose end with the test."""
    event = threading.Event()
    yield event
    event.set()


async def ordinary_fetches(fetcher: Fetcher, origin: Origin) -> float:
    """The control: the slowest of three fetches of a small page, now."""
    url = origin.serve("/ordinary", "<p>An ordinary page.</p>")
    return await slowest(lambda: fetcher.fetch(url))


async def test_silent_server_times_out_within_the_limit(
    backend: GuardBackend, origin: Origin, release: threading.Event
) -> None:
    origin.route("/silent", lambda ctx: release.wait(60))
    async with _fetcher(backend, timeout=1.0) as fetcher:
        late = allowance(1.0, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        started = time.monotonic()
        with pytest.raises(FetchTimeout) as caught:
            await fetcher.fetch(origin.url("/silent"))
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 1.0 + late, (elapsed, late)
    assert "1-second limit" in caught.value.message and caught.value.parameters == ("timeout",)
    assert "MCP_WEB_" not in caught.value.message  # the library's words; the server names its setting


async def test_trickling_server_is_stopped_at_the_total_deadline(
    backend: GuardBackend, origin: Origin
) -> None:
    # Each byte arrives well within any per-read timeout; only the total deadline stops it.
    origin.route("/trickle", trickle([b"x"] * 60, delay=0.5))
    async with _fetcher(backend, timeout=1.5) as fetcher:
        late = allowance(1.0, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        started = time.monotonic()
        with pytest.raises(FetchTimeout, match=r"1\.5-second limit"):
            await fetcher.fetch(origin.url("/trickle"))
        elapsed = time.monotonic() - started
    assert 1.4 <= elapsed < 1.5 + late, (elapsed, late)


async def test_deadline_covers_the_whole_redirect_chain(backend: GuardBackend, origin: Origin) -> None:
    def slow_redirect(ctx: RequestContext) -> None:
        time.sleep(0.4)
        ctx.send_head(302, {"Location": "/slow", "Content-Length": "0"})

    origin.route("/slow", slow_redirect)
    async with _fetcher(backend, timeout=1.0) as fetcher:
        late = allowance(0.8, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        started = time.monotonic()
        with pytest.raises(FetchTimeout):
            await fetcher.fetch(origin.url("/slow"))
        elapsed = time.monotonic() - started
    assert elapsed < 1.0 + late, (elapsed, late)
    assert origin.hits("/slow") <= 3


async def test_per_call_timeout_overrides_the_setting(fetcher: Fetcher, origin: Origin) -> None:
    # The setting is 5 s: a call that kept to it would run 4.5 s longer.
    origin.route("/trickle", trickle([b"x"] * 40, delay=0.3))
    late = allowance(1.0, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
    started = time.monotonic()
    with pytest.raises(FetchTimeout, match=r"0\.5-second limit"):
        await fetcher.fetch(origin.url("/trickle"), timeout=0.5)
    elapsed = time.monotonic() - started
    assert elapsed < 0.5 + late, (elapsed, late)


# ------------------------------------------------------------------------------------------
# Size limits
# ------------------------------------------------------------------------------------------


async def test_content_length_over_the_cap_is_refused_before_reading(
    backend: GuardBackend, origin: Origin, release: threading.Event
) -> None:
    def handler(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Length": str(5 * MB), "Content-Type": "text/plain"})
        release.wait(10)  # never sends the body: reading it would time out instead

    origin.route("/huge", handler)
    async with _fetcher(backend, max_response_bytes=MB) as fetcher:
        at_once = allowance(1.0, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        started = time.monotonic()
        with pytest.raises(TooLarge) as caught:
            await fetcher.fetch(origin.url("/huge"))
        elapsed = time.monotonic() - started
    assert elapsed < at_once, (elapsed, at_once)
    assert "1 MB" in caught.value.message and caught.value.parameters == ("max_response_bytes",)
    assert "MCP_WEB_" not in caught.value.message


async def test_chunked_body_over_the_cap_is_refused(backend: GuardBackend, origin: Origin) -> None:
    origin.route("/chunked", trickle([b"y" * 65536] * 40, delay=0))  # 2.5 MB, no length
    async with _fetcher(backend, max_response_bytes=MB) as fetcher:
        with pytest.raises(TooLarge):
            await fetcher.fetch(origin.url("/chunked"))


async def test_close_delimited_body_over_the_cap_is_refused(fetcher: Fetcher, origin: Origin) -> None:
    def handler(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Type": "text/plain", "Connection": "close"})
        for _ in range(32):  # 2 MB, delimited by closing the connection
            if not ctx.write(b"z" * 65536):
                return
        ctx.close_connection()

    origin.route("/eof", handler)
    with pytest.raises(TooLarge):
        await fetcher.fetch(origin.url("/eof"), max_bytes=MB)


async def test_max_bytes_per_call_and_truncation(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/robots.txt", b"a" * 5000, content_type="text/plain")
    with pytest.raises(TooLarge, match=r"4\.88 KB"):
        await fetcher.fetch(url, max_bytes=5000 - 1)
    cut = await fetcher.fetch(url, max_bytes=1000, truncate=True)
    assert cut.body == b"a" * 1000
    exact = await fetcher.fetch(url, max_bytes=5000)
    assert exact.size == 5000


@cache
def _gzip_bomb() -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(MB)
    return b"".join(compressor.compress(zeros) for _ in range(50)) + compressor.flush()


@cache
def _brotli_bomb() -> bytes:
    compressor = brotli.Compressor(quality=5)
    zeros = bytes(MB)
    return b"".join(compressor.process(zeros) for _ in range(50)) + compressor.finish()


@pytest.mark.parametrize(("encoding", "bomb"), [("gzip", _gzip_bomb), ("br", _brotli_bomb)])
async def test_compression_bomb_is_stopped_with_bounded_memory(
    backend: GuardBackend, origin: Origin, encoding: str, bomb: object
) -> None:
    payload = bomb()  # type: ignore[operator]
    assert len(payload) < 100_000  # 50 MB of zeros, compressed
    origin.serve("/bomb", payload, headers={"Content-Encoding": encoding})
    async with _fetcher(backend, max_response_bytes=MB) as fetcher:
        tracemalloc.start()
        try:
            with pytest.raises(TooLarge):
                await fetcher.fetch(origin.url("/bomb"))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * MB, f"peak {peak / MB:.1f} MB while decoding a 50 MB bomb"


# ------------------------------------------------------------------------------------------
# Content-Encoding
# ------------------------------------------------------------------------------------------

TEXT = ("<p>Grüße, 世界! " * 2000).encode()


def _deflate_raw(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _two_gzip_members(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("gzip", _two_gzip_members),
        ("deflate", zlib.compress),
        ("deflate", _deflate_raw),
        ("br", brotli.compress),
        ("identity", lambda data: data),
        ("gzip, br", lambda data: brotli.compress(gzip.compress(data))),
        ("deflate, gzip", lambda data: gzip.compress(zlib.compress(data))),
    ],
)
async def test_encoded_bodies_are_decoded(
    fetcher: Fetcher, origin: Origin, encoding: str, encode: object
) -> None:
    url = origin.serve("/enc", encode(TEXT), headers={"Content-Encoding": encoding})  # type: ignore[operator]
    response = await fetcher.fetch(url)
    assert response.body == TEXT
    assert response.headers["content-encoding"] == encoding


async def test_encoded_body_just_under_the_cap_is_accepted(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/enc", gzip.compress(TEXT), headers={"Content-Encoding": "gzip"})
    assert (await fetcher.fetch(url, max_bytes=len(TEXT))).body == TEXT
    with pytest.raises(TooLarge):
        await fetcher.fetch(url, max_bytes=len(TEXT) - 1)


async def test_unknown_encoding_is_an_http_error(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/enc", b"\x28\xb5\x2f\xfd", headers={"Content-Encoding": "zstd"})
    with pytest.raises(HTTPStatusError, match="content encoding 'zstd'"):
        await fetcher.fetch(url)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
async def test_corrupt_stream_is_an_http_error(fetcher: Fetcher, origin: Origin, encoding: str) -> None:
    url = origin.serve("/enc", b"this is not compressed at all" * 10, headers={"Content-Encoding": encoding})
    with pytest.raises(HTTPStatusError, match="could not be decoded"):
        await fetcher.fetch(url)


def test_decoder_steps_never_exceed_the_cap_by_more_than_a_step() -> None:
    decoder = BodyDecoder("gzip", 100_000, truncate=True)
    out = decoder.feed(_gzip_bomb())
    assert len(out) == 100_000 and decoder.truncated
    assert decoder.feed(b"more") == b"" and decoder.flush() == b""


def test_decoder_accepts_byte_by_byte_input() -> None:
    samples = (
        ("deflate", zlib.compress(TEXT)),
        ("deflate", _deflate_raw(TEXT)),
        ("br", brotli.compress(TEXT)),
        ("gzip", gzip.compress(TEXT)),
    )
    for encoding, data in samples:
        decoder = BodyDecoder(encoding, len(TEXT))
        out = b"".join(decoder.feed(data[i : i + 1]) for i in range(len(data))) + decoder.flush()
        assert out == TEXT, encoding


def test_too_many_stacked_encodings_are_refused() -> None:
    with pytest.raises(HTTPStatusError, match="content encodings"):
        BodyDecoder(", ".join(["gzip"] * 5), MB)


# ------------------------------------------------------------------------------------------
# Cancellation
# ------------------------------------------------------------------------------------------


async def test_cancellation_closes_the_connection_promptly(backend: GuardBackend, origin: Origin) -> None:
    gone = threading.Event()
    sent = threading.Event()

    def endless(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Type": "text/plain", "Transfer-Encoding": "chunked"})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if not ctx.write(b"400\r\n" + b"e" * 1024 + b"\r\n"):
                gone.set()
                return
            sent.set()
            time.sleep(0.02)

    origin.route("/endless", endless)
    async with _fetcher(backend, timeout=30.0) as fetcher:
        promptly = allowance(1.5, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        with anyio.move_on_after(0.5) as scope:
            await fetcher.fetch(origin.url("/endless"))
        cancelled_at = time.monotonic()
        assert scope.cancelled_caught
        assert sent.is_set()
        # Left open, the connection would go on until the origin's own 10 s deadline.
        disconnected = await anyio.to_thread.run_sync(gone.wait, PATIENCE)
        seen_after = time.monotonic() - cancelled_at
    assert disconnected, "the origin never saw the client go away"
    assert seen_after < promptly, (seen_after, promptly)


async def test_task_cancellation_stops_the_download(backend: GuardBackend, origin: Origin) -> None:
    origin.route("/trickle", trickle([b"t" * 100] * 200, delay=0.05))  # 10 s
    async with _fetcher(backend, timeout=30.0) as fetcher:
        promptly = allowance(0.7, await ordinary_fetches(fetcher, origin), LATE_CONTROLS)
        started = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(fetcher.fetch, origin.url("/trickle"))
            await anyio.sleep(0.3)
            group.cancel_scope.cancel()
        elapsed = time.monotonic() - started
    assert elapsed < 0.3 + promptly, (elapsed, promptly)


# ------------------------------------------------------------------------------------------
# TLS
# ------------------------------------------------------------------------------------------


class _RecordingStream(httpcore.AsyncNetworkStream):
    def __init__(self, hostnames: list[str | None]) -> None:
        self.hostnames = hostnames

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> httpcore.AsyncNetworkStream:
        self.hostnames.append(server_hostname)
        raise httpcore.ConnectError("stop here: the test only inspects the TLS parameters")

    async def aclose(self) -> None:
        return None


class _NoNetworkBackend(httpcore.AsyncNetworkBackend):
    """Hands out fake streams; nothing is sent anywhere."""

    def __init__(self) -> None:
        self.connects: list[tuple[str, int]] = []
        self.hostnames: list[str | None] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: object = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        return _RecordingStream(self.hostnames)


async def test_tls_verifies_the_host_name_not_the_pinned_address() -> None:
    backend = _NoNetworkBackend()
    resolver = StubResolver({"secure.test": [["127.0.0.1"]]})
    async with Fetcher(SETTINGS, resolver=resolver, network_backend=backend, environ={}) as fetcher:
        with pytest.raises(HTTPStatusError, match=r"could not connect to secure\.test:443"):
            await fetcher.fetch("https://secure.test/")
    assert backend.connects == [("127.0.0.1", 443)]  # the socket goes to the vetted address
    assert backend.hostnames == ["secure.test"]  # certificate checked against the name
