"""render.render_element on the text around elements: whitespace next to blocks, comments and their
tails, text at the start and end of an element, and the newlines where blocks meet."""

from __future__ import annotations

import lxml.html
import pytest

from mcp_server_web.fetch.doc.render import render_element
from mcp_server_web.fetch.types import OutputFormat


def render(html: str, output_format: OutputFormat = "markdown") -> str:
    return render_element(lxml.html.fragment_fromstring(html, create_parent="div"), output_format)


def test_whitespace_between_blocks_is_not_content() -> None:
    assert render("<p>One</p>\n  <p>Two</p>  \n<ul>\n <li>a</li>\n</ul>") == "One\n\nTwo\n\n- a"


def test_whitespace_between_inline_elements_is_content() -> None:
    assert render("<p><b>bold</b> <i>it</i>\n<a href='/x'>link</a></p>") == "**bold** *it*\n[link](/x)"


def test_a_comment_tail_counts_as_text_at_the_start() -> None:
    # After a comment a text is trimmed as at the start of its element; before one, as before the
    # element after the comment (here a block).
    assert render("<div><!-- c -->  text <!-- d --> more  <p>para</p></div>") == "textmore\n\npara"
    assert render("<p>a<!-- c -->b</p>") == "ab"
    assert render("<span>a <!-- c --> b</span>") == "a  b"


def test_tabs_double_spaces_and_line_breaks_collapse() -> None:
    assert render("<p>a\t\tb  c\r\n\n d</p>") == "a b c\nd"
    assert render("<pre>a\t\tb  c\n\n d</pre>") == "```\na\t\tb  c\n\n d\n```"


def test_asterisks_are_escaped_except_in_code() -> None:
    assert render("<p>2*3 <code>a*b</code></p>") == r"2\*3 `a*b`"
    assert render("<p>2*3</p>", "text") == "2*3"


def test_newlines_where_blocks_meet_collapse_to_one_blank_line() -> None:
    assert render("<div><h2>Title</h2><p>x</p><hr><p>y</p></div>") == "## Title\n\nx\n\n---\n\ny"
    assert render("<blockquote><p>a</p><p>b</p></blockquote>") == "> a\n>\n> b"
    assert render("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>") == "- a\n  - b\n- c"


@pytest.mark.parametrize("output_format", ["markdown", "text"])
def test_empty_elements_and_text_only_in_tails(output_format: OutputFormat) -> None:
    assert render("<div><p></p><span></span>tail<br>after</div>", output_format) == "tail\nafter"
