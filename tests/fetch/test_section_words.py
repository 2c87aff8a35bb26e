"""The words in each heading's section (sections.section_words): up to the next heading of its level
or higher, a linked heading counting as content."""

from __future__ import annotations

from mcp_server_web.fetch.doc.html_tree import body_of, parse_html
from mcp_server_web.fetch.doc.sections import section_words


def test_each_section_ends_at_the_next_heading_of_its_level_or_higher() -> None:
    root = parse_html(
        "<html><body><h1>Page</h1><p>one two</p><h2>A</h2><p>three four five</p><h3>B</h3>"
        '<p>six</p><!-- a note --> seven <img src="i.png"><h2><a href="/c">C</a></h2><h4>D</h4>'
        "<p>eight nine</p></body></html>"
    )
    assert root is not None
    words = section_words(body_of(root))
    # Last heading first; the <h1> ends no <h2> before it, the linked <h2> counts as a word itself.
    assert [(heading.text_content(), count) for heading, count in words.items()] == [
        ("D", 2),
        ("C", 3),
        ("B", 3),
        ("A", 6),
        ("Page", 11),
    ]


def test_a_body_without_headings_below_h1_has_no_sections() -> None:
    root = parse_html("<html><body><h1>Page</h1><p>text</p></body></html>")
    assert root is not None
    assert section_words(body_of(root)) == {}
