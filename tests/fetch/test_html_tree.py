"""The page's tree (fetch/doc/html_tree.py): counting its text."""

from __future__ import annotations

import lxml.html
import pytest

from mcp_server_web.fetch.doc.html_tree import body_of, parse_html, text_chars


def _body(html: str) -> lxml.html.HtmlElement:
    root = parse_html(f"<html><body>{html}</body></html>")
    assert root is not None
    return body_of(root)


def test_text_is_counted_with_whitespace_collapsed() -> None:
    body = _body("<p>  one\n two </p><div>three<b>four</b></div>")
    # "one two three four": texts are counted apart, so "three" and "four" are two words
    assert text_chars(body) == len("one two three four")
    assert text_chars(_body("")) == 0


LONG = "<p>one two</p><p>three four five</p>" + "<p>more words here</p>" * 50


@pytest.mark.parametrize("past", [0, 5, 7, 8, 9, 100])
def test_counting_stops_once_past_a_limit(past: int) -> None:
    whole = text_chars(_body(LONG))
    counted = text_chars(_body(LONG), past=past)
    assert past < counted < whole  # told apart without reading to the end


def test_counting_to_a_limit_never_reached_counts_all() -> None:
    whole = text_chars(_body(LONG))
    assert text_chars(_body(LONG), past=whole) == whole
    assert text_chars(_body(LONG), past=10 * whole) == whole
