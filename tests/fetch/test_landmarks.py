"""The page-level navigation, header, footer and sidebars (fetch/doc/extract.py): numbered before
the clean-up, set aside from the cleaned tree and from the copy as parsed kept for trafilatura."""

from __future__ import annotations

import lxml.html

from mcp_server_web.fetch.doc import extract
from mcp_server_web.fetch.doc.html_tree import parse_html

BASE = "https://example.com/blog/post"
WORDS = "Rivers carry sediment downstream, cutting into rock over thousands of years. " * 6


def _page() -> str:
    return f"""<html><head><title>T</title></head><body>
<header><nav><a href="/">Home</a> <a href="/a">About</a></nav> Site name</header>
<form role="search"><input name="q"></form>
<svg role="banner"><text>logo</text></svg>
<main><article><header><h1>Heading kept</h1></header>
{"".join(f"<p>{i}. {WORDS}</p>" for i in range(6))}</article></main>
<aside><p>Related <a href="/r">stories</a></p><nav><a href="/x">More</a></nav></aside>
<footer>Copyright</footer></body></html>"""


def _numbered(tree: lxml.html.HtmlElement) -> list[str]:
    return [str(element.tag) for element in tree.iter() if element.get("data-landmark-number") is not None]


def test_landmarks_the_clean_up_removed_are_passed_over_and_no_number_is_left() -> None:
    root = parse_html(_page())
    assert root is not None
    page = extract.prepare(root, BASE)
    # Numbered before the clean-up, which drops the small search form (the <svg> went first).
    assert [element.tag for element in page.landmarks] == [
        "header",
        "nav",
        "form",
        "svg",
        "aside",
        "nav",
        "footer",
    ]
    first = extract.first_reading(root, page)
    text = root.text_content()
    assert "Heading kept" in text
    assert "Home" not in text and "Related" not in text and "Copyright" not in text
    assert _numbered(root) == []
    assert page.raw is not None
    raw = extract._for_trafilatura(page.raw, first.chrome)
    raw_text = raw.text_content()
    assert "Heading kept" in raw_text and "Home" not in raw_text and "Copyright" not in raw_text
    assert _numbered(raw) == []


def test_a_landmark_wrapping_the_page_is_not_chrome() -> None:
    html = f"<html><body><header><nav><a href='/'>Home</a></nav><p>{WORDS}</p></header></body></html>"
    root = parse_html(html)
    assert root is not None
    page = extract.prepare(root, BASE)
    landmarks = extract._landmarks_in(root, page.landmarks)
    # The header holds the page's text: it stays; the <nav> inside it is chrome.
    chrome = extract._chrome_landmarks(landmarks, page.prose)
    assert [element.tag for element in chrome] == ["nav"]


def test_text_outside_links_counts_a_link_in_a_link_twice() -> None:
    root = parse_html("<html><body><div>ab<a href='/'>cd</a>ef</div></body></html>")
    assert root is not None
    div = next(root.iter("div"))
    assert extract._prose_chars(div) == len("abef")
    # A link inside a link (only a script can build one) is taken off twice, as before.
    outer = next(root.iter("a"))
    outer.append(lxml.html.fragment_fromstring("<a href='/x'>gh</a>"))
    assert extract._prose_chars(div) == len("abcdghef") - len("cdgh") - len("gh")


def test_a_page_numbering_elements_itself_is_read_by_its_numbers() -> None:
    html = (
        f"<html><body><nav><a href='/'>Home</a></nav><div data-landmark-number='0'><p>Mine</p></div>"
        f"<article><p>{WORDS}</p></article></body></html>"
    )
    root = parse_html(html)
    assert root is not None
    page = extract.prepare(root, BASE)
    assert page.landmarks is None  # the numbers in the tree say which elements are landmarks
    extract.first_reading(root, page)
    # The <div> holds the number the <nav> was given: set aside with it, as the numbers say.
    assert "Home" not in root.text_content() and "Mine" not in root.text_content()
    assert _numbered(root) == []
