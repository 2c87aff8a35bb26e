"""Library errors in the library's words; the server adds its settings' names when it answers.

A library caller who passed ``timeout=`` must not be told to set an environment variable, and a
model calling web_fetch must still be told which setting the operator can raise.
"""

from __future__ import annotations

from ipaddress import ip_address

import pytest
from mcp import Client

from mcp_server_web.config import Settings
from mcp_server_web.errors import BlockedAddress, ExtractionFailed, WebToolError
from mcp_server_web.fetch import FetchConfig, Fetcher, FetchService
from mcp_server_web.fetch.net.addresses import AddressPolicy
from mcp_server_web.server.advice import advised
from mcp_server_web.server.app import build_server, conversion_pool
from mcp_server_web.server.compose import fetch_config
from tests.server.conftest import LOOPBACK_ONLY, error_code, make_settings, text_of
from tests.support.origin import Origin

MB = 1024 * 1024
SLOW_SECONDS = 0.4
"""A warm worker converts slow_page in about a second here: well over this limit, while the
download (5 MB over loopback) takes a few tens of milliseconds."""


def slow_page() -> str:
    """About 5 MB of plain blocks: seconds of conversion, a fraction of a second to download."""
    blocks = "".join(
        f"<div class='c{i}'><p>Paragraph {i} of ordinary words that a reader keeps, "
        f"with <a href='/l{i}'>a link</a>.</p></div>"
        for i in range(40_000)
    )
    return f"<html><head><title>Long</title></head><body>{blocks}</body></html>"


def test_server_defaults_are_the_library_defaults() -> None:
    assert fetch_config(Settings()) == FetchConfig()


def test_settings_reach_the_library_in_its_units() -> None:
    config = fetch_config(
        Settings(timeout=7.0, max_response_mb=2.0, cache_max_mb=3.0, respect_robots=False, proxy="http://p:1")
    )
    assert (config.timeout, config.max_response_bytes, config.cache_max_bytes) == (7.0, 2 * MB, 3 * MB)
    assert not config.respect_robots and config.proxy == "http://p:1"


def test_the_block_message_gains_the_settings_that_allow_it() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy().check(ip_address("10.0.0.5"), "intranet.example")
    assert advised(caught.value) == (
        "blocked_address: refusing to connect to 10.0.0.5 (host intranet.example): it is a private "
        "network (RFC 1918) address. Add the range to MCP_WEB_ALLOW_CIDRS to allow it (or set "
        "MCP_WEB_ALLOW_PRIVATE=true to allow every private, loopback and link-local address)."
    )


def test_a_metadata_refusal_names_only_allow_cidrs_as_the_way_out() -> None:
    with pytest.raises(BlockedAddress) as caught:
        AddressPolicy(allow_private=True).check(ip_address("169.254.169.254"))
    assert advised(caught.value) == (
        "blocked_address: refusing to connect to 169.254.169.254: it is a cloud metadata endpoint. "
        "Only an entry of MCP_WEB_ALLOW_CIDRS that holds the metadata service's address allows it "
        "(MCP_WEB_ALLOW_PRIVATE does not)."
    )


def test_an_error_no_setting_would_help_is_left_alone() -> None:
    error = ExtractionFailed("the converter stopped while reading this page.")
    assert advised(error) == str(error)


async def test_conversion_timeout_library_words_then_server_words(origin: Origin) -> None:
    slow_url = origin.serve("/long", slow_page())
    library = FetchConfig(allow_cidrs=LOOPBACK_ONLY, timeout=SLOW_SECONDS, respect_robots=False)
    converters = conversion_pool(Settings())
    try:
        async with Fetcher(library) as fetcher:
            with pytest.raises(ExtractionFailed) as caught:
                await FetchService(library, fetcher, converters).fetch_page(slow_url)
    finally:
        converters.close()
    error: WebToolError = caught.value
    assert "took longer than 0.4 seconds" in error.message
    assert error.parameters == ("timeout",) and "MCP_WEB_" not in error.message

    settings = make_settings(timeout=SLOW_SECONDS, respect_robots=False)
    async with Client(build_server(settings)) as client:
        result = await client.call_tool("web_fetch", {"url": slow_url})
    assert error_code(result) == "extraction_failed"
    assert "took longer than 0.4 seconds" in text_of(result)
    assert "MCP_WEB_TIMEOUT" in text_of(result)
