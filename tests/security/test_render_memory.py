"""A page's memory while it renders: ArrayBuffers, Web Workers and WebAssembly memory are outside
the script heap's cap, so the browser's processes are watched while a page renders and the page
is stopped the moment they pass the allowance. The browser's memory is read here from /proc,
independently of what the renderer measures, by a sampler thread while each page renders."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import anyio
import pytest

from mcp_server_web.errors import TooLarge
from mcp_server_web.fetch import Renderer
from tests.render import pages
from tests.render.test_renderer import make_renderer
from tests.render.test_web_fetch_render import connected, serve_spa
from tests.server.conftest import error_code, fenced_text, text_of
from tests.support.browser import browser_or_skip
from tests.support.netguard import QuickOrigin
from tests.support.proctree import PeakMemory, descendants

MB = 1024 * 1024
ALLOWANCE_MB = 384
"""The allowance these tests give the browser: small, so each test is quick and light."""
MARGIN_MB = 160
"""How far past the allowance the browser may get before it is stopped: what the pages allocate
between two samples of the watch (about 1.5 GB/s here), and the moment a killed process takes to
give its memory back."""
BROWSER = b"chrom"
"""What the command line of each of the browser's processes carries (not Playwright's driver)."""


@pytest.fixture
def origin() -> Iterator[QuickOrigin]:
    with QuickOrigin() as served:
        served.serve("/poll", "{}", content_type="application/json")
        yield served


async def _ordinary_render(rendering: Renderer, origin: QuickOrigin, path: str) -> None:
    url = origin.serve(
        path, "<html><body><p>An ordinary page, rendered beside the hungry ones.</p></body></html>"
    )
    rendered = await rendering.render(url)
    assert b"An ordinary page" in rendered.response.body


@pytest.mark.parametrize(
    ("page", "at_once"),
    [
        pytest.param(pages.array_buffers, 1, id="array-buffers"),
        pytest.param(pages.array_buffers, 2, id="array-buffers-two-at-once"),
        pytest.param(pages.workers, 1, id="four-workers"),
        pytest.param(pages.wasm_memory, 1, id="wasm-memory"),
    ],
)
async def test_a_page_is_stopped_when_the_browser_passes_its_memory_allowance(
    origin: QuickOrigin, page: Callable[[], str], at_once: int
) -> None:
    others = descendants(os.getpid())  # a browser another test left running is not this one
    rendering = make_renderer(max_memory_bytes=ALLOWANCE_MB * MB, timeout=8.0, concurrency=2)
    try:
        # The control: an ordinary render, measured the same way, stays well under the allowance.
        with PeakMemory(os.getpid(), BROWSER, others=others) as control:
            await _ordinary_render(rendering, origin, "/before")
        assert control.peak_mib < ALLOWANCE_MB * 0.75, f"an ordinary render took {control.peak_mib:.0f} MiB"

        url = origin.serve("/hungry", page())
        outcomes: list[BaseException | None] = []

        async def render() -> None:
            try:
                await rendering.render(url)
                outcomes.append(None)
            except Exception as error:
                outcomes.append(error)

        with PeakMemory(os.getpid(), BROWSER, others=others) as memory:
            async with anyio.create_task_group() as group:
                for _ in range(at_once):
                    group.start_soon(render)
        assert memory.samples > 10
        assert memory.peak_mib < ALLOWANCE_MB + MARGIN_MB, (
            f"the browser reached {memory.peak_mib:.0f} MiB (allowance {ALLOWANCE_MB} MiB, "
            f"control {control.peak_mib:.0f} MiB; resident {memory.peak_rss_mib:.0f} MiB)"
        )
        assert len(outcomes) == at_once
        for outcome in outcomes:
            assert isinstance(outcome, TooLarge), outcome
            assert f"{ALLOWANCE_MB} MB of memory" in outcome.message
        # The next render works.
        await _ordinary_render(rendering, origin, "/after")
    finally:
        await rendering.aclose()


async def test_web_fetch_answers_a_page_stopped_for_its_memory_from_its_download(origin: QuickOrigin) -> None:
    choice = browser_or_skip()
    url = origin.serve("/hungry", pages.array_buffers())
    async for client in connected(browser=choice.executable, render_max_mb=ALLOWANCE_MB):
        # render="auto": the download looked like a JavaScript shell, its render was stopped, and
        # the text the download had is the answer, with a note.
        result = await client.call_tool("web_fetch", {"url": url})
        assert not result.is_error, text_of(result)
        assert result.structured_content["via"] == "direct"
        assert "This page keeps taking memory" in fenced_text(result)
        assert f"more than the {ALLOWANCE_MB} MB of memory" in text_of(result)
        # render="always": nothing else to answer with.
        always = await client.call_tool("web_fetch", {"url": url, "render": "always"})
        assert error_code(always) == "too_large"
        assert "MCP_WEB_RENDER_MAX_MB" in text_of(always)
        # The browser renders the next page.
        after = await client.call_tool("web_fetch", {"url": serve_spa(origin)})
        assert not after.is_error, text_of(after)
        assert after.structured_content["via"] == "browser"
