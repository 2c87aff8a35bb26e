"""The line after a page that tells the model how to read on: the tool's words, so the face's."""

from __future__ import annotations

from mcp_server_web.fetch.pages import slice_page
from mcp_server_web.server.tools import continuation_footer


def test_past_the_end_is_an_empty_page_that_says_so() -> None:
    page = slice_page("short", 50, 10)
    assert page.text == "" and page.next_start_index is None
    assert "past the end" in continuation_footer(page)


def test_footer_gives_exact_continuation() -> None:
    page = slice_page("a" * 25, 0, 10)
    assert continuation_footer(page) == (
        "[15 more characters of 25. Call web_fetch again with start_index=10 to continue.]"
    )
    assert continuation_footer(slice_page("a" * 5, 0, 10)) == ""


def test_footer_names_the_snapshot_to_pass_back() -> None:
    page = slice_page("a" * 25, 0, 10)
    assert continuation_footer(page, "0123456789ab") == (
        "[15 more characters of 25. Call web_fetch again with start_index=10 and snapshot=0123456789ab "
        "to continue.]"
    )
    assert continuation_footer(slice_page("a" * 5, 0, 10), "0123456789ab") == ""
