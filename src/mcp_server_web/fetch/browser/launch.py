"""Which browser renders pages, and the switches that leave it no way out but our proxy.

Nothing here starts anything: ``find_browser`` looks at the disk (for ``doctor`` and for the
composition root), and ``CHROMIUM_ARGS`` is what every launch passes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

PATH_NAMES = (
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
)
"""Browsers looked for on PATH, in this order, when none is configured and Playwright has none."""

INSTALL_HINT = (
    "install one with 'pip install \"mcp-server-web[render]\"' and then 'playwright install chromium' "
    "(or a system Chromium, e.g. Debian's 'apt-get install chromium-headless-shell'), or name an "
    "installed Chromium or Chrome as the browser"
)

NOWHERE = "http://127.0.0.1:9"
"""The proxy of the browser's default context (nothing listens on the discard port): anything the
browser would fetch outside a render's own context fails instead of going out directly."""

CHROMIUM_ARGS = (
    # No UDP: QUIC would leave beside the proxy, and WebRTC may only use what is proxied (TCP).
    "--disable-quic",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    # The browser resolves no name itself (the proxy does, and vets the answer); the proxy is
    # reached by its address, the one exception.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--dns-prefetch-disable",
    f"--proxy-server={NOWHERE}",
    # Chromium sends loopback destinations around any proxy unless told not to.
    "--proxy-bypass-list=<-loopback>",
    # None of the browser's own traffic: updates, sync, reporting, pings, prediction.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-pings",
    "--disable-features=NetworkPrediction,InterestFeedContentSuggestions,MediaRouter,OptimizationHints",
    "--no-first-run",
    "--disable-extensions",
    "--mute-audio",
    # A hostile page's scripts get a bounded heap; /dev/shm is small in containers.
    "--js-flags=--max-old-space-size=512",
    "--disable-dev-shm-usage",
)

CONTEXT_BYPASS = "<-loopback>"
"""A render context's proxy bypass list: nothing, loopback included, goes around the proxy."""


@dataclass(frozen=True, slots=True)
class BrowserChoice:
    """The browser a render would use, and how it was found."""

    executable: str | None
    """A path, or None for Playwright's own browser (Playwright finds its path)."""
    source: str
    """'configured', 'playwright' or 'PATH'."""


def playwright_installed() -> bool:
    return importlib.util.find_spec("playwright") is not None


def find_browser(configured: str | None = None) -> BrowserChoice | None:
    """The configured executable (a path or a name on PATH), else Playwright's own browser when
    'playwright install' put one on this machine, else the first of PATH_NAMES found; None when
    there is no browser or Playwright itself is missing."""
    if not playwright_installed():
        return None
    if configured:
        found = shutil.which(configured) or (configured if Path(configured).is_file() else None)
        return BrowserChoice(found, "configured") if found else None
    if _playwright_browsers():
        return BrowserChoice(None, "playwright")
    for name in PATH_NAMES:
        found = shutil.which(name)
        if found:
            return BrowserChoice(found, "PATH")
    return None


def _playwright_browsers() -> list[Path]:
    """Chromium builds 'playwright install' left in its cache (PLAYWRIGHT_BROWSERS_PATH or the
    platform's default)."""
    configured = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if configured == "0":  # installed inside the package
        spec = importlib.util.find_spec("playwright")
        roots = (
            [Path(spec.origin).parent / "driver" / "package" / ".local-browsers"]
            if spec and spec.origin
            else []
        )
    elif configured:
        roots = [Path(configured)]
    elif sys.platform == "darwin":
        roots = [Path.home() / "Library" / "Caches" / "ms-playwright"]
    elif sys.platform == "win32":
        roots = [Path(os.environ.get("LOCALAPPDATA", Path.home())) / "ms-playwright"]
    else:
        roots = [Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ms-playwright"]
    found: list[Path] = []
    for root in roots:
        for pattern in ("chromium_headless_shell-*", "chromium-*"):
            found.extend(path for path in root.glob(pattern) if (path / "INSTALLATION_COMPLETE").exists())
    return found
