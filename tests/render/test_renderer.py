"""The Renderer with a real headless Chromium: what it reads, what it refuses, its limits and its
lifecycle. Pages are served from 127.0.0.1 (allowed by allow_cidrs); everything refused is on
127.0.0.2, where a listener proves no connection ever arrived."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator

import anyio
import pytest

from mcp_server_web.errors import FetchTimeout, RobotsDisallowed, TooLarge
from mcp_server_web.fetch import BrowserProxy, ProxyRoutes, RenderConfig, Renderer
from mcp_server_web.fetch.browser.processes import process_tree
from mcp_server_web.fetch.net.addresses import AddressPolicy
from mcp_server_web.fetch.net.resolution import SystemResolver
from tests.fetch.test_browser_proxy import Listener
from tests.render import pages
from tests.support.browser import browser_or_skip
from tests.support.netguard import QuickOrigin
from tests.support.origin import Reply, RequestContext
from tests.support.proctree import living
from tests.support.timing import PATIENCE, allowance, slowest, timed

ALLOWED = (ipaddress.ip_network("127.0.0.1/32"),)


def make_renderer(**overrides: object) -> Renderer:
    choice = browser_or_skip()
    values: dict[str, object] = {
        "executable": choice.executable,
        "timeout": 10.0,
        "user_agent": "test-agent/1",
    }
    values.update(overrides)
    proxy = BrowserProxy(
        policy=AddressPolicy(allow_cidrs=ALLOWED), resolver=SystemResolver(), routes=ProxyRoutes()
    )
    return Renderer(RenderConfig(**values), proxy)  # type: ignore[arg-type]


@pytest.fixture
async def renderer() -> AsyncIterator[Renderer]:
    rendering = make_renderer()
    try:
        yield rendering
    finally:
        await rendering.aclose()


@pytest.fixture
def origin() -> Iterator[QuickOrigin]:
    with QuickOrigin() as served:
        yield served


async def settled(condition: Callable[[], bool], seconds: float) -> None:
    """Return once condition holds, or after seconds (the caller asserts which)."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await anyio.sleep(0.05)


async def test_a_page_built_by_scripts_is_read_as_the_browser_builds_it(
    renderer: Renderer, origin: QuickOrigin
) -> None:
    origin.serve("/data.json", pages.spa_data(), content_type="application/json")
    url = origin.serve("/", pages.spa_shell())
    rendered = await renderer.render(url)
    html = rendered.response.body.decode()
    assert pages.SPA_TEXT in html
    assert rendered.response.status == 200 and rendered.response.final_url == url
    assert rendered.response.media_type == "text/html"
    assert rendered.notes == ()
    assert origin.requests[0].headers["user-agent"] == "test-agent/1"


async def test_every_way_out_to_a_refused_address_is_closed(renderer: Renderer, origin: QuickOrigin) -> None:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.2", 0))
    udp.settimeout(0.3)
    with Listener("127.0.0.2") as refused:
        refused_base = f"http://127.0.0.2:{refused.port}"
        url = origin.serve("/", pages.escape_attempts(refused_base, "127.0.0.2", udp.getsockname()[1]))
        origin.serve("/sw.js", "self.addEventListener('fetch', () => 0);", content_type="text/javascript")
        origin.serve("/popup", "<p>popup</p>")
        rendered = await renderer.render(url)
        await anyio.sleep(0.5)  # anything late (a WebRTC gathering, a beacon) has had its chance
        assert refused.accepted == 0
    with pytest.raises(TimeoutError):
        udp.recvfrom(100)
    udp.close()
    assert "A page that tries to reach a private address" in rendered.response.body.decode()
    assert "LEAKED:" not in rendered.response.body.decode(), "file: is out of a page's reach"
    assert origin.hits("/sw.js") == 0, "service workers are refused"


async def test_loopback_destinations_go_through_the_proxy_too(origin: QuickOrigin) -> None:
    # The same page, with the address policy refusing 127.0.0.1 as well: if Chromium bypassed
    # the proxy for loopback (its default), the page would load.
    choice = browser_or_skip()
    strict = Renderer(
        RenderConfig(executable=choice.executable, timeout=10.0),
        BrowserProxy(policy=AddressPolicy(), resolver=SystemResolver(), routes=ProxyRoutes()),
    )
    url = origin.serve("/", pages.spa_shell())
    try:
        with pytest.raises(Exception) as refused:
            await strict.render(url)
    finally:
        await strict.aclose()
    assert getattr(refused.value, "code", None) == "blocked_address"
    assert origin.requests == []


async def test_images_media_and_fonts_are_not_loaded(renderer: Renderer, origin: QuickOrigin) -> None:
    origin.serve("/style.css", "h1 { color: red }", content_type="text/css")
    for path in ("/image.png", "/video.mp4", "/audio.mp3", "/font.woff2"):
        origin.serve(path, b"\0" * 100, content_type="application/octet-stream")
    await renderer.render(origin.serve("/", pages.subresources()))
    assert origin.hits("/style.css") == 1
    assert [origin.hits(p) for p in ("/image.png", "/video.mp4", "/audio.mp3", "/font.woff2")] == [0, 0, 0, 0]


async def test_open_shadow_roots_are_part_of_the_page(renderer: Renderer, origin: QuickOrigin) -> None:
    rendered = await renderer.render(origin.serve("/", pages.shadow_component()))
    html = rendered.response.body.decode()
    assert '<template shadowrootmode="open">' in html
    assert "lives in an open shadow root" in html


async def test_a_page_whose_scripts_never_settle_is_read_at_the_deadline(origin: QuickOrigin) -> None:
    origin.serve("/poll", "{}", content_type="application/json")
    url = origin.serve("/", pages.never_settles())
    static = origin.serve("/static", "<html><body><p>static</p></body></html>")
    rendering = make_renderer(timeout=3.0)
    try:
        # What reading a page costs on this machine now, beyond the wait for it to settle.
        control = await slowest(lambda: rendering.render(static), runs=2)
        rendered, elapsed = await timed(lambda: rendering.render(url))
    finally:
        await rendering.aclose()
    assert "it never settles" in rendered.response.body.decode()
    assert any("still loading or changing" in note for note in rendered.notes)
    assert 2.0 < elapsed < 3.0 + allowance(0.5, control, 2), f"{elapsed:.2f} s, a static page {control:.2f} s"


async def test_everything_a_page_loads_counts_against_one_byte_budget(origin: QuickOrigin) -> None:
    for n in range(6):
        origin.serve(f"/big{n}.js", "// padding\n" * 20_000, content_type="text/javascript")  # 220 KB each
    rendering = make_renderer(max_bytes=500_000)
    try:
        rendered = await rendering.render(origin.serve("/", pages.loads_scripts(6)))
    finally:
        await rendering.aclose()
    assert any("stopped loading at" in note for note in rendered.notes)
    assert "Text before the scripts" in rendered.response.body.decode()


async def test_a_page_that_builds_a_huge_dom_is_refused(origin: QuickOrigin) -> None:
    rendering = make_renderer()
    try:
        with pytest.raises(TooLarge, match="elements"):
            await rendering.render(origin.serve("/", pages.huge_dom(210_000)))
    finally:
        await rendering.aclose()


async def test_renders_beyond_the_concurrency_wait_their_turn(origin: QuickOrigin) -> None:
    active, most = [0], [0]

    def slow_script(ctx: RequestContext) -> None:
        active[0] += 1
        most[0] = max(most[0], active[0])
        time.sleep(0.6)
        active[0] -= 1
        ctx.send(
            Reply(
                body="document.body.insertAdjacentHTML('beforeend', '<p>loaded</p>')",
                content_type="text/javascript",
            )
        )

    origin.route("/slow.js", slow_script)
    url = origin.serve(
        "/",
        "<html><body><p>Waiting for a slow script to load.</p><script src=/slow.js></script></body></html>",
    )
    rendering = make_renderer(concurrency=1)
    try:
        results: list[str] = []

        async def one() -> None:
            results.append((await rendering.render(url)).response.body.decode())

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(one)
    finally:
        await rendering.aclose()
    assert len(results) == 3 and all("<p>loaded</p>" in html for html in results)
    assert most[0] == 1


async def test_a_cancelled_render_closes_its_page_at_once(origin: QuickOrigin) -> None:
    def endless(ctx: RequestContext) -> None:
        ctx.send_head(200, {"Content-Type": "text/javascript", "Transfer-Encoding": "chunked"})
        for _ in range(100):
            if not ctx.write(b"2\r\n//\r\n"):
                ctx.origin.note_disconnect(ctx.path)
                return
            time.sleep(0.1)

    origin.route("/endless.js", endless)
    url = origin.serve("/", "<html><body><p>text</p><script src=/endless.js></script></body></html>")
    static = origin.serve("/static", "<html><body><p>static</p></body></html>")
    rendering = make_renderer()
    try:
        control = await slowest(lambda: rendering.render(static), runs=2)
        with anyio.move_on_after(1.5):
            await rendering.render(url)
        cancelled = time.monotonic()
        # The script streams for 10 s and notes no disconnect if it is left to end on its own.
        await settled(lambda: "/endless.js" in origin.disconnects, PATIENCE)
        assert "/endless.js" in origin.disconnects
        closed = time.monotonic() - cancelled
        assert closed < allowance(1.5, control, 5), f"{closed:.2f} s, a static page {control:.2f} s"
    finally:
        await rendering.aclose()


async def test_robots_check_applies_to_the_page_before_it_loads(
    renderer: Renderer, origin: QuickOrigin
) -> None:
    async def disallow(url: str) -> None:
        raise RobotsDisallowed(f"robots.txt disallows {url}")

    url = origin.serve("/private", "<p>secret</p>")
    with pytest.raises(RobotsDisallowed):
        await renderer.render(url, hop_check=disallow)
    assert origin.hits("/private") == 0


async def test_the_browser_is_started_again_after_it_crashed(renderer: Renderer, origin: QuickOrigin) -> None:
    url = origin.serve("/", "<html><body><p>A page to render twice around a crash.</p></body></html>")
    await renderer.render(url)
    pid = renderer.status().browser_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await anyio.sleep(0.3)
    rendered = await renderer.render(url)
    assert b"around a crash" in rendered.response.body
    status = renderer.status()
    assert status.launches == 2 and status.browser_pid not in (None, pid)


async def test_the_browser_is_started_afresh_after_its_render_allowance(origin: QuickOrigin) -> None:
    url = origin.serve("/", "<html><body><p>One of several renders.</p></body></html>")
    rendering = make_renderer(max_renders=2)
    try:
        pids = []
        for _ in range(3):
            await rendering.render(url)
            pids.append(rendering.status().browser_pid)
        assert rendering.status().launches == 2
        assert pids[0] != pids[2]
        assert living(process_tree(pids[0]) if pids[0] else []) == []
    finally:
        await rendering.aclose()


async def test_closing_the_renderer_leaves_no_browser_process(origin: QuickOrigin) -> None:
    rendering = make_renderer()
    await rendering.render(origin.serve("/", "<p>rendered once</p>"))
    pid = rendering.status().browser_pid
    assert pid is not None
    # Every process seen below the browser while it renders: a page's renderer lives only while
    # the page is open, so a look between renders may find the browser alone.
    seen: set[int] = set()
    rendered = anyio.Event()

    async def watch() -> None:
        while not rendered.is_set():
            seen.update(process_tree(pid))
            await anyio.sleep(0.01)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        await rendering.render(origin.serve("/again", "<p>rendered again</p>"))
        rendered.set()
    tree = sorted(seen)
    assert len(tree) > 1
    await rendering.aclose()
    await settled(lambda: not living(tree), PATIENCE)
    assert living(tree) == []


async def test_a_browser_holding_too_much_memory_is_started_afresh(origin: QuickOrigin) -> None:
    # Under a one-byte allowance every render is stopped (the page, or the browser when it holds
    # the most), and the browser is not kept for the next render.
    url = origin.serve("/", "<html><body><p>Rendered under a tiny memory allowance.</p></body></html>")
    rendering = make_renderer(max_memory_bytes=1)
    try:
        with pytest.raises(TooLarge, match="MB of memory"):
            await rendering.render(url)
        assert not rendering.status().running, "retired as soon as its render ended"
        with pytest.raises(TooLarge, match="MB of memory"):
            await rendering.render(url)
        assert rendering.status().launches == 2
    finally:
        await rendering.aclose()


def test_doctor_names_the_browser_or_why_there_is_none() -> None:
    import subprocess
    import sys

    choice = browser_or_skip()

    def doctor(**env: str) -> str:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("MCP_WEB_")}
        environment.update(env)
        done = subprocess.run(
            [sys.executable, "-m", "mcp_server_web", "doctor"],
            env=environment,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.decode()

    assert f"loaded in {choice.executable or 'Playwright'}" in doctor(MCP_WEB_BROWSER=choice.executable or "")
    assert "Rendering: none; web_fetch reads pages as downloaded, because rendering is off" in doctor(
        MCP_WEB_RENDER="off"
    )
    missing = doctor(MCP_WEB_BROWSER="/nonexistent/chrome")
    assert (
        "MCP_WEB_BROWSER=/nonexistent/chrome is neither an executable file nor a command on PATH" in missing
    )
    # Nothing on PATH and no Playwright browser cache: how to install one.
    empty = doctor(MCP_WEB_BROWSER="", PATH="/nonexistent", PLAYWRIGHT_BROWSERS_PATH="/nonexistent")
    assert "no browser was found: install one with" in empty


@pytest.mark.parametrize("how", ["meta-refresh", "location", "form"])
async def test_a_page_that_navigates_to_a_refused_address_is_kept_as_it_was(
    renderer: Renderer, origin: QuickOrigin, how: str
) -> None:
    with Listener("127.0.0.2") as refused:
        target = f"http://127.0.0.2:{refused.port}/elsewhere"
        rendered = await renderer.render(origin.serve("/", pages.navigates_away(how, target)))
        assert refused.accepted == 0
    html = rendered.response.body.decode()
    assert pages.AWAY_TEXT in html
    assert rendered.response.final_url == origin.url("/")
    assert any("127.0.0.2" in note and "refused" in note for note in rendered.notes), rendered.notes


async def test_a_page_whose_script_never_yields_ends_at_the_deadline(origin: QuickOrigin) -> None:
    # The control: a page whose scripts never settle but do yield is read at the deadline.
    origin.serve("/poll", "{}", content_type="application/json")
    rendering = make_renderer(timeout=3.0)
    try:
        started = time.monotonic()
        await rendering.render(origin.serve("/live", pages.never_settles()))
        control = time.monotonic() - started
        started = time.monotonic()
        with pytest.raises(FetchTimeout, match="never") as timed_out:
            await rendering.render(origin.serve("/busy", pages.never_yields()))
        elapsed = time.monotonic() - started
        # The browser is still usable afterwards.
        await rendering.render(origin.serve("/fine", "<p>An ordinary page after the busy one.</p>"))
    finally:
        await rendering.aclose()
    assert timed_out.value.parameters == ("render_timeout",)
    assert elapsed < control + 1.0, f"{elapsed:.1f} s, where a page read at its deadline took {control:.1f} s"


async def test_a_page_that_navigates_where_robots_txt_disallows_is_kept_as_it_was(
    renderer: Renderer, origin: QuickOrigin
) -> None:
    async def disallow_elsewhere(url: str) -> None:
        if url.endswith("/elsewhere"):
            raise RobotsDisallowed(f"robots.txt disallows {url}")

    target = origin.url("/elsewhere")
    origin.serve("/elsewhere", "<p>Where robots.txt says no reader goes.</p>")
    url = origin.serve("/", pages.navigates_away("location", target))
    rendered = await renderer.render(url, hop_check=disallow_elsewhere)
    assert pages.AWAY_TEXT in rendered.response.body.decode()
    assert origin.hits("/elsewhere") == 0
    assert any("robots.txt disallows" in note for note in rendered.notes), rendered.notes
