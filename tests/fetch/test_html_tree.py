"""The page's tree (fetch/doc/html_tree.py): counting its text, its title, its clean-up."""

from __future__ import annotations

import tracemalloc

import lxml.html
import pytest

from mcp_server_web.fetch.doc.html_tree import (
    COUNT_PIECE_CHARS,
    body_of,
    clean_tree,
    drop,
    in_tree,
    page_title,
    parse_html,
    text_chars,
)


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


def test_tails_and_adjacent_texts_are_counted_apart_with_or_without_a_limit() -> None:
    body = _body("<div>a<b>b</b>c<i></i>  <span> d </span>e</div>\n<p></p>tail")
    # a, b, c, d, e and tail: words of texts that touch are still counted apart
    assert text_chars(body) == len("a b c d e tail")
    assert text_chars(body, past=1000) == text_chars(body)
    assert text_chars(_body("<p> </p>\n<div>\t</div>")) == 0


def test_long_text_is_counted_in_pieces_as_it_is_text_by_text() -> None:
    many = "".join(f"<p>word{i} <b>x</b>y {'z' * (i % 7)}</p>" for i in range(20_000))
    one_long = "<pre>" + " ab  c\n" * (3 * COUNT_PIECE_CHARS // 7) + "</pre>"
    for html in (many, one_long, many + one_long + many):
        body = _body(html)
        assert len(" ".join(body.itertext())) > 2 * COUNT_PIECE_CHARS
        # (with a limit it never reaches, the count goes text by text)
        assert text_chars(body) == text_chars(body, past=10**9)


def test_counting_a_long_text_holds_a_piece_of_it_not_its_words() -> None:
    body = _body("<p>a b c d e f g h i j</p>\n" * 100_000)
    text = sum(len(text) for text in body.itertext())
    tracemalloc.start()
    try:
        text_chars(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # a string per word would be over 20 times the text; its texts a piece at a time, a third
    assert peak < text / 2, f"{peak:,} bytes for {text:,} characters"


# --- title -------------------------------------------------------------------------------------


def _root(html: str) -> lxml.html.HtmlElement:
    root = parse_html(html)
    assert root is not None
    return root


def test_title_is_the_first_nonempty_of_title_og_twitter_then_h1() -> None:
    head = (
        "<title> </title><svg><title>Icon</title></svg>"
        '<meta property="og:title"><meta name="og:title" content=" "><meta name="twitter:title" content="Tw">'
        '<meta property="og:title" content="From  OG">'
    )
    # The <svg>'s title is an icon's; empty ones and a <meta> without content are passed over;
    # any og:title comes before any twitter:title.
    assert page_title(_root(f"<html><head>{head}</head><body><h1>H</h1></body></html>")) == "From OG"
    assert page_title(_root('<meta property="twitter:title" content="Tw"><h1>H</h1>')) == "Tw"
    assert page_title(_root("<svg><title>Icon</title></svg><h1> </h1><h1>Second\n one</h1>")) == "Second one"
    assert page_title(_root("<p>no title</p>")) is None


# --- clean-up ------------------------------------------------------------------------------------


def test_links_resolve_against_the_first_base_with_an_href() -> None:
    root = _root(
        '<head><base target="_blank"><base href="/docs/"><base href="https://other.example/"></head>'
        '<body><a href="page">a</a></body>'
    )
    clean_tree(root, "https://example.com/x/y")
    assert [a.get("href") for a in root.iter("a")] == ["https://example.com/docs/page"]


def test_event_title_and_style_attributes_go_and_the_others_stay() -> None:
    root = _root(
        '<p class="c" onclick="x()" title="t" style="color: red" data-on="1" x-on="2">text</p>'
        '<p id="i" ONLOAD="y()">more</p>'
    )
    clean_tree(root, "https://example.com/")
    assert [dict(p.attrib) for p in root.iter("p")] == [
        {"class": "c", "data-on": "1", "x-on": "2"},
        {"id": "i"},
    ]


def test_forms_go_unless_they_wrap_the_page_and_only_once() -> None:
    page = "<p>" + "words " * 100 + "</p>"
    root = _root(
        f'<body><form id="page">{page}</form><form id="search"><p>search</p></form>'
        '<div hidden><form id="in-hidden"><p>x</p></form></div></body>'
    )
    clean_tree(root, "https://example.com/")
    # The page's form is unwrapped, the search form dropped, the hidden one gone with its <div>.
    assert root.find(".//form") is None
    assert "words" in root.text_content()
    assert "search" not in root.text_content()


def test_a_dropped_element_loses_its_text_but_not_its_tail() -> None:
    root = _root("<body><p>a<script>  var   x  </script>  kept\n\n  tail</p></body>")
    clean_tree(root, "https://example.com/")
    assert [p.text for p in root.iter("p")] == ["a kept\ntail"]


def test_declarative_shadow_roots_are_unwrapped_and_other_templates_kept() -> None:
    root = _root(
        '<body><div><template shadowrootmode="open"><p>shown</p></template>'
        "<template><p>inert</p></template><template shadowroot='open'><p>old</p></template></div></body>"
    )
    assert [t.attrib.get("shadowrootmode") for t in root.iter("template")] == [None]
    assert [p.text for p in root.iter("p")] == ["shown", "inert", "old"]


def test_in_tree_tells_dropped_elements_and_what_they_held() -> None:
    root = _root("<body><div id='a'><p id='b'>x</p></div><p id='c'>y</p></body>")
    a, b, c = (root.get_element_by_id(name) for name in "abc")
    drop(a)
    assert not in_tree(a, root)
    assert not in_tree(b, root)  # still under <div>, which is gone
    assert in_tree(c, root)
    assert in_tree(root, root)
