"""The browser the render tests drive: the machine's Chromium, found as the server finds it.

Without one the render tests skip, unless MCP_WEB_REQUIRE_BROWSER=1 (CI sets it, having installed
Debian's chromium-headless-shell): there a missing browser is a failure, never a silent skip.
"""

from __future__ import annotations

import os

import pytest

from mcp_server_web.fetch import BrowserChoice, find_browser


def browser_or_skip() -> BrowserChoice:
    choice = find_browser(os.environ.get("MCP_WEB_BROWSER") or None)
    if choice is None:
        message = "no browser for rendering (Playwright and a Chromium): see scripts/install-browser"
        if os.environ.get("MCP_WEB_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return choice
