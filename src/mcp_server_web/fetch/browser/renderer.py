"""Renderer: a page loaded in a headless Chromium (driven by Playwright), read as the DOM it built.

The browser starts on the first render and is reused; it is started again after it crashed, after
``RenderConfig.max_renders`` renders, or when its processes hold more than
``RenderConfig.max_memory_bytes``; it is closed with the renderer. Each render gets a fresh
context (no cookies, storage or cache from another) whose only way out is its own ProxySession
(proxy.py), and at most ``concurrency`` renders run at once, the others waiting their turn within
their own deadline, shared fairly between the clients the caller names (slots.py). Images, media
and fonts are not loaded; service workers, downloads and popups are refused. A page is read once
its network is quiet, or once its text stops changing, or at the deadline when its scripts never
settle, provided it has text by then.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import uuid
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from mcp_server_web.errors import (
    BlockedAddress,
    ExtractionFailed,
    FetchTimeout,
    HTTPStatusError,
    InvalidURL,
    RobotsDisallowed,
    TooLarge,
    WebToolError,
)
from mcp_server_web.fetch.browser.launch import CHROMIUM_ARGS, CONTEXT_BYPASS
from mcp_server_web.fetch.browser.memory import MemoryWatch
from mcp_server_web.fetch.browser.processes import browser_pid, kill_tree, lower_priority, tree_memory
from mcp_server_web.fetch.browser.proxy import BrowserProxy, ProxySession
from mcp_server_web.fetch.browser.slots import FairSlots, current_client
from mcp_server_web.fetch.net.addresses import shortened
from mcp_server_web.fetch.net.decode import describe_size
from mcp_server_web.fetch.net.urls import parse_url
from mcp_server_web.fetch.types import FetchResponse, HopCheck

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Request, Route

logger = logging.getLogger(__name__)

_MB = 1024 * 1024
BLOCKED_RESOURCES = frozenset({"image", "media", "font"})
"""Resource types never loaded: they cost bytes and time and add no text."""
QUIET_NETWORK = 0.5
"""Seconds without a request in flight after which a loaded page counts as settled."""
STEADY_TEXT = 1.5
"""Seconds of unchanged text after which a loaded page counts as settled (polling, live clocks)."""
_POLL = 0.2
FAIR_PROBE = 1.0
"""Seconds a probe of the page's text must have had before its silence means a script that never
yields (an idle page answers in milliseconds, a busy machine's in a fraction of a second)."""
MAX_ELEMENTS = 200_000
"""A rendered DOM with more elements than this is refused rather than serialised."""
_CLOSE_TIMEOUT = 5.0
BROWSER_NICENESS = 5
"""The browser runs below the server's CPU priority (as the conversion workers do): a page's
scripts, however busy, cannot starve the server's calls or the thread that watches the browser's
memory."""

# The DOM as HTML, open shadow roots included as declarative shadow DOM (which the document half
# shows, as a browser does); null when it has more elements than the limit or more characters.
_SNAPSHOT_JS = """([maxElements, maxChars]) => {
  const count = document.getElementsByTagName('*').length;
  if (count > maxElements) return {count, html: null};
  const root = document.documentElement;
  if (!root) return {count, html: ''};
  let html;
  if (typeof root.getHTML === 'function') {
    const roots = [];
    const walk = (node) => {
      for (const el of node.querySelectorAll('*')) {
        if (el.shadowRoot) { roots.push(el.shadowRoot); walk(el.shadowRoot); }
      }
    };
    walk(document);
    const quote = (v) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    const attrs = Array.from(root.attributes).map((a) => ` ${a.name}="${quote(a.value)}"`).join('');
    html = '<!DOCTYPE html><html' + attrs + '>' +
      root.getHTML({serializableShadowRoots: true, shadowRoots: roots}) + '</html>';
  } else {
    html = '<!DOCTYPE html>' + root.outerHTML;
  }
  if (html.length > maxChars) return {count, html: null, chars: html.length};
  return {count, html};
}"""
_TEXT_LENGTH_JS = "() => document.body ? document.body.innerText.length : 0"


@dataclass(frozen=True, slots=True)
class RenderConfig:
    """The limits of one Renderer."""

    executable: str | None = None
    """Chromium or Chrome to run; None for Playwright's own browser."""
    timeout: float = 20.0
    """Seconds one render may take, waiting for a free slot included."""
    concurrency: int = 2
    """Renders at once."""
    max_bytes: int = 10 * _MB
    """Bytes one render may receive through its proxy, every resource together."""
    user_agent: str = ""
    """The User-Agent the browser sends; empty keeps the browser's own."""
    max_renders: int = 100
    """Renders after which the browser is started afresh."""
    max_memory_bytes: int = 1024 * _MB
    """Private memory the browser's processes may hold together (processes.private_memory): while
    a page renders, past it the page holding the most is stopped (memory.py); after a render, past
    it the browser is started afresh."""
    ignore_https_errors: bool = False
    """For tests that serve https from 127.0.0.1 with their own certificate."""


@dataclass(frozen=True, slots=True)
class RenderedPage:
    """What a render read: the DOM as an HTML response, and notes for the caller."""

    response: FetchResponse
    notes: tuple[str, ...] = ()


class NotAPage(Exception):
    """The URL answered with something the browser does not render as a page (a PDF, a
    download, plain text): read it with a plain download instead."""


@dataclass(frozen=True, slots=True)
class RendererStatus:
    executable: str
    running: bool
    renders: int
    launches: int
    browser_pid: int | None


class _Instance:
    """One launched browser and its bookkeeping."""

    def __init__(self, browser: Browser, marker: str, memory_allowance: int) -> None:
        self.browser = browser
        self.marker = marker
        self.pid = browser_pid(marker)
        self.watch = None if self.pid is None else MemoryWatch(self.pid, memory_allowance)
        self.renders = 0
        self.active = 0
        self.retired = False

    def stops(self) -> int:
        """Pages stopped for their memory so far, the browser itself counting as one."""
        if self.watch is None:
            return 0
        return self.watch.stopped_pages + int(self.watch.stopped_browser)


class _PageCrashed(Exception):
    """The page's process ended while it rendered (killed for its memory, or crashed)."""


class Renderer:
    """Renders pages in a shared headless browser; see the module docstring."""

    def __init__(self, config: RenderConfig, proxy: BrowserProxy) -> None:
        self._config = config
        self._proxy = proxy
        self._slots = FairSlots(config.concurrency)
        self._lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._current: _Instance | None = None
        self._renders = 0
        self._launches = 0
        self._closed = False

    @property
    def config(self) -> RenderConfig:
        return self._config

    def status(self) -> RendererStatus:
        current = self._current
        return RendererStatus(
            executable=self._config.executable or "Playwright's Chromium",
            running=current is not None and current.browser.is_connected(),
            renders=self._renders,
            launches=self._launches,
            browser_pid=None if current is None else current.pid,
        )

    async def aclose(self) -> None:
        """Close the browser and Playwright's driver (idempotent)."""
        self._closed = True
        async with self._lock:
            current, self._current = self._current, None
            if current is not None:
                await _close_browser(current)
            if self._playwright is not None:
                playwright, self._playwright = self._playwright, None
                with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
                    await playwright.stop()

    async def render(self, url: str, *, hop_check: HopCheck | None = None) -> RenderedPage:
        """Load url in a fresh context and return its DOM, within RenderConfig.timeout.

        Raises the plain fetch's errors where they apply (BlockedAddress for a refused page,
        RobotsDisallowed, FetchTimeout, HTTPStatusError, TooLarge), ExtractionFailed when the
        browser could not produce the page, and NotAPage for what a browser does not render.
        """
        limit = self._config.timeout
        deadline = anyio.current_time() + limit
        client = current_client()
        try:
            with anyio.fail_after(limit):
                await self._slots.acquire(client)
        except TimeoutError:
            own = self._slots.held(client)
            mine = f", of which one client may run {self._slots.share}, and this one ran {own}" if own else ""
            raise FetchTimeout(
                f"no browser became free within the {limit:g}-second render limit "
                f"({self._config.concurrency} renders at once{mine}).",
                parameters=("render_timeout", "render_concurrency"),
            ) from None
        try:
            # Every step below watches the deadline; this bounds what does not (a hung browser).
            with anyio.fail_after(limit + _CLOSE_TIMEOUT):
                instance = await self._acquire()
                return await self._render_on(instance, url, deadline, hop_check)
        except TimeoutError:
            raise FetchTimeout(
                f"rendering {shortened(url)} took longer than the {limit:g}-second render limit.",
                parameters=("render_timeout",),
            ) from None
        finally:
            self._slots.release(client)

    async def _render_on(
        self, instance: _Instance, url: str, deadline: float, hop_check: HopCheck | None
    ) -> RenderedPage:
        from playwright.async_api import Error as PlaywrightError

        stops = instance.stops()
        try:
            async with self._proxy.session(max_bytes=self._config.max_bytes) as session:
                context = await instance.browser.new_context(**self._context_options(session))
                try:
                    load = _Load(context, session, url, deadline, hop_check, self._proxy.check)
                    return await load.run()
                finally:
                    # A browser that is gone has no context left to close; it is replaced below.
                    with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True), suppress(PlaywrightError):
                        await context.close()
        except _PageCrashed:
            if instance.stops() > stops:
                raise self._over_memory(url) from None
            raise ExtractionFailed(f"the browser's page crashed while rendering {shortened(url)}.") from None
        except PlaywrightError as exc:
            if not instance.browser.is_connected():
                instance.retired = True
                if instance.stops() > stops:
                    raise self._over_memory(url) from None
                raise ExtractionFailed(
                    f"the browser stopped while rendering {shortened(url)}; "
                    "it is started again for the next render."
                ) from None
            raise ExtractionFailed(
                f"the browser could not render {shortened(url)}: {_first_line(exc)}."
            ) from None
        finally:
            await self._release(instance)

    def _over_memory(self, url: str) -> TooLarge:
        return TooLarge(
            f"the page {shortened(url)} took more than the {self._config.max_memory_bytes // _MB} MB of "
            "memory the browser may use while it renders, so it was stopped.",
            parameters=("render_memory",),
        )

    def _context_options(self, session: ProxySession) -> dict[str, Any]:
        options: dict[str, Any] = {
            "proxy": {"server": session.url, "bypass": CONTEXT_BYPASS},
            "service_workers": "block",
            "accept_downloads": False,
            "java_script_enabled": True,
            "viewport": {"width": 1280, "height": 1000},
            "ignore_https_errors": self._config.ignore_https_errors,
        }
        if self._config.user_agent:
            options["user_agent"] = self._config.user_agent
        return options

    async def _acquire(self) -> _Instance:
        async with self._lock:
            if self._closed:
                raise ExtractionFailed("the renderer is shut down.")
            current = self._current
            if current is not None and (current.retired or not current.browser.is_connected()):
                self._current = None
                current.retired = True
                if current.active == 0:
                    await _close_browser(current)
                current = None
            if current is None:
                current = self._current = await self._launch()
            current.active += 1
            if current.watch is not None:
                current.watch.rendering(True)
            return current

    async def _release(self, instance: _Instance) -> None:
        async with self._lock:
            instance.active -= 1
            instance.renders += 1
            self._renders += 1
            if instance.watch is not None and instance.active == 0:
                instance.watch.rendering(False)
            if instance.renders >= self._config.max_renders:
                instance.retired = True
            elif instance.pid is not None and tree_memory(instance.pid) > self._config.max_memory_bytes:
                logger.info(
                    "browser memory over %s: starting it afresh", describe_size(self._config.max_memory_bytes)
                )
                instance.retired = True
            if instance.retired and instance.active == 0:
                if self._current is instance:
                    self._current = None
                await _close_browser(instance)

    async def _launch(self) -> _Instance:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright

        if self._playwright is None:
            self._playwright = await async_playwright().start()
        marker = f"--mcp-server-web-render={uuid.uuid4().hex}"
        # Root cannot use Chromium's sandbox; everyone else keeps it where the system allows it
        # (a container without user namespaces does not: there it is started without).
        for sandbox in (True, False) if _can_sandbox() else (False,):
            try:
                browser = await self._playwright.chromium.launch(
                    executable_path=self._config.executable,
                    args=[*CHROMIUM_ARGS, marker],
                    headless=True,
                    chromium_sandbox=sandbox,
                    handle_sigint=False,
                    handle_sigterm=False,
                    handle_sighup=False,
                    timeout=30_000,
                )
                break
            except PlaywrightError as exc:
                if sandbox:
                    logger.warning(
                        "the browser did not start in its sandbox (%s); starting it without", _first_line(exc)
                    )
                    continue
                raise ExtractionFailed(f"the browser could not be started: {_first_line(exc)}.") from None
        self._launches += 1
        instance = _Instance(browser, marker, self._config.max_memory_bytes)
        if instance.pid is not None:
            lower_priority(instance.pid, BROWSER_NICENESS)
        elif sys.platform == "linux":
            logger.warning("the browser's process was not found: its memory is not watched while it renders")
        logger.info(
            "browser started (%s, pid %s)", self._config.executable or "Playwright's Chromium", instance.pid
        )
        return instance


class _Load:
    """One page's load, settle and read, inside its own context."""

    def __init__(
        self,
        context: BrowserContext,
        session: ProxySession,
        url: str,
        deadline: float,
        hop_check: HopCheck | None,
        address_check: HopCheck,
    ) -> None:
        self.context = context
        self.session = session
        self.url = str(parse_url(url))
        self.deadline = deadline
        self.hop_check = hop_check
        self.address_check = address_check
        self.refused_navigations: list[str] = []
        """Why each place the page tried to go to was refused (notes for the caller)."""
        self.in_flight = 0
        self.crashed = False
        self.last_activity = anyio.current_time()
        self.limit = max(deadline - anyio.current_time(), 0.0)
        # Time kept back from waiting for the page, to read it.
        self.reserve = min(2.0, self.limit * 0.15)

    def remaining(self) -> float:
        return self.deadline - anyio.current_time()

    async def run(self) -> RenderedPage:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        if self.hop_check is not None:
            await self.hop_check(self.url)
        await self.context.route("**/*", self._route)
        page = await self.context.new_page()
        page.on("crash", self._crashed)
        self.context.on("page", _close_popup)
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)
        navigation_ms = max(self.remaining() - self.reserve, 0.1) * 1000
        try:
            response = await page.goto(self.url, wait_until="commit", timeout=navigation_ms)
        except PlaywrightTimeout:
            self._raise_refusal(self.url)
            raise FetchTimeout(
                f"{shortened(self.url)} did not start loading in the browser within the "
                f"{self.limit:g}-second render limit.",
                parameters=("render_timeout",),
            ) from None
        except PlaywrightError as exc:
            self._raise_refusal(self.url)
            if self.crashed:
                raise _PageCrashed from None
            if "Download is starting" in exc.message:
                raise NotAPage(self.url) from None
            raise HTTPStatusError(
                f"the browser could not load {shortened(self.url)}: {_first_line(exc)}."
            ) from None
        if response is None:
            raise NotAPage(self.url)
        if response.headers.get("x-refused-by") == "mcp-server-web":
            self._raise_refusal(response.url)
        media_type = (response.headers.get("content-type") or "").split(";")[0].strip().lower()
        if media_type and media_type not in ("text/html", "application/xhtml+xml"):
            raise NotAPage(self.url)
        settled = await self._settle(page)
        final_url = page.url
        if self.hop_check is not None and final_url != self.url:
            await self.hop_check(final_url)
        html = await self._snapshot(page)
        notes: list[str] = []
        if not settled:
            notes.append(
                f"The page's scripts were still loading or changing it after {self.limit:g} seconds; "
                "this is the page as it stood then."
            )
        notes.extend(self.refused_navigations)
        if self.session.over_budget:
            notes.append(
                f"The page stopped loading at {describe_size(self.session.max_bytes)}, the size "
                "limit of one page with everything it loads."
            )
        body = html.encode("utf-8", "surrogatepass")
        return RenderedPage(
            FetchResponse(
                url=self.url,
                final_url=final_url,
                status=response.status,
                headers={"content-type": "text/html; charset=utf-8"},
                media_type="text/html",
                charset="utf-8",
                body=body,
            ),
            tuple(notes),
        )

    def _raise_refusal(self, url: str) -> None:
        """Raise the proxy's reason when it refused url's host (the page itself, not a resource)."""
        try:
            host = parse_url(url).host.lower()
        except WebToolError:
            return
        refusal = self.session.refusals.get(host)
        if refusal is not None:
            raise refusal

    async def _route(self, route: Route) -> None:
        request = route.request
        if request.resource_type in BLOCKED_RESOURCES:
            await route.abort("blockedbyclient")
            return
        if request.is_navigation_request() and request.frame.parent_frame is None and request.url != self.url:
            # The main frame going elsewhere (a meta refresh, a script's location change, a form it
            # submits). Where it may not go, the navigation is cancelled ("aborted" commits no
            # error page), so the page stays as it was rather than become the refusal.
            refusal = await self._refusal_of(request.url)
            if refusal is not None:
                self._refuse_navigation(request.url, refusal)
                await route.abort("aborted")
                return
        await route.continue_()

    async def _refusal_of(self, url: str) -> WebToolError | None:
        """Why the main frame may not go to url (the address policy, then robots.txt), if it may not."""
        try:
            await self.address_check(url)
            if self.hop_check is not None:
                await self.hop_check(url)
        except (BlockedAddress, RobotsDisallowed, HTTPStatusError, InvalidURL) as refusal:
            return refusal
        return None

    def _refuse_navigation(self, url: str, refusal: WebToolError) -> None:
        try:
            host = parse_url(url).host.lower()
        except WebToolError:
            host = ""
        # A redirect of the page itself is refused the same way: its load then reports why.
        self.session.refusals.setdefault(host, refusal)
        self.refused_navigations.append(
            f"The page tried to go to {shortened(url)}, which was refused ({refusal.message.rstrip('.')}); "
            "this is the page as it was before."
        )

    def _crashed(self, page: Page) -> None:
        self.crashed = True

    def _started(self, request: Request) -> None:
        self.in_flight += 1
        self.last_activity = anyio.current_time()

    def _ended(self, request: Request) -> None:
        self.in_flight = max(self.in_flight - 1, 0)
        self.last_activity = anyio.current_time()

    async def _settle(self, page: Page) -> bool:
        """Wait until the page is settled (True), or until only the reserve is left (False)."""
        from playwright.async_api import Error as PlaywrightError

        text_length, steady_since = -1, anyio.current_time()
        while self.remaining() > self.reserve:
            if self.crashed:
                raise _PageCrashed
            now = anyio.current_time()
            # A script that never yields holds the page's main thread, where this runs: the wait
            # ends with the time, not with the page.
            allowed = max(self.remaining() - self.reserve, 0.0)
            with anyio.move_on_after(allowed) as probe:
                try:
                    length = int(await page.evaluate(_TEXT_LENGTH_JS))
                except PlaywrightError:
                    length = -1  # navigating (the document is being replaced), or crashed (seen above)
            if probe.cancelled_caught:
                if allowed < FAIR_PROBE:
                    # The probe started with the time nearly gone: the limit ended it, not the page
                    # (a page with no text is probed until its deadline).
                    return False
                raise FetchTimeout(
                    f"the scripts of {shortened(self.url)} kept the page busy without a pause until "
                    f"the {self.limit:g}-second render limit (a script that never yields), so it could "
                    "not be read.",
                    parameters=("render_timeout",),
                )
            if length != text_length:
                text_length, steady_since = length, now
            if length > 0 and not self.session.over_budget:
                if self.in_flight == 0 and now - self.last_activity >= QUIET_NETWORK:
                    return True
                if now - steady_since >= STEADY_TEXT and now - self.last_activity >= QUIET_NETWORK / 2:
                    return True
            elif self.session.over_budget and length > 0:
                return False
            await anyio.sleep(min(_POLL, max(self.remaining() - self.reserve, 0.0)))
        return False

    async def _snapshot(self, page: Page) -> str:
        from playwright.async_api import Error as PlaywrightError

        try:
            with anyio.fail_after(max(self.remaining(), 1.0)):
                result = await page.evaluate(_SNAPSHOT_JS, [MAX_ELEMENTS, self.session.max_bytes])
        except TimeoutError:
            raise FetchTimeout(
                f"reading the rendered page of {shortened(self.url)} took too long.",
                parameters=("render_timeout",),
            ) from None
        except PlaywrightError as exc:
            if self.crashed:
                raise _PageCrashed from None
            raise ExtractionFailed(
                f"the rendered page of {shortened(self.url)} could not be read: {_first_line(exc)}."
            ) from None
        html = result.get("html")
        if html is None:
            if int(result.get("count", 0)) > MAX_ELEMENTS:
                raise TooLarge(
                    f"the page {shortened(self.url)} built more than {MAX_ELEMENTS:,} elements in the "
                    "browser, far more than any readable page has."
                )
            raise TooLarge(
                f"the page {shortened(self.url)} built more than {describe_size(self.session.max_bytes)} "
                "of HTML in the browser.",
                parameters=("max_response_bytes",),
            )
        return str(html)


async def _close_popup(page: Page) -> None:
    await page.close()


async def _close_browser(instance: _Instance) -> None:
    from playwright.async_api import Error as PlaywrightError

    if instance.watch is not None:
        instance.watch.close()
    with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
        with contextlib.suppress(PlaywrightError):
            await instance.browser.close()
    if instance.pid is not None and browser_pid(instance.marker) == instance.pid:
        kill_tree(instance.pid)  # a browser that did not close in time


def _first_line(exc: BaseException) -> str:
    """Playwright's message, first line, without the API call it names ("Page.goto: ")."""
    text = (getattr(exc, "message", None) or str(exc)).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    line = re.sub(r"^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*: ", "", line)
    return shortened(line, 200).rstrip(".")


def _can_sandbox() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() != 0
