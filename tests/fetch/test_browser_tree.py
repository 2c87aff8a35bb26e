"""The page is read as a browser builds it, not as libxml2's HTML4-era parser does (issue 11).

Each page below holds a construct where the two tree builders disagree: an end tag arriving while
elements opened inside are still open (a <button>, <a> or <select> in a site header), an SVG sprite
left open before the content, text or paragraphs misplaced in a <table>, a paragraph inside a
heading, void elements libxml2 does not know, content in a declarative shadow root. libxml2 nests
the rest of the page inside the element it failed to close (which the clean-up then drops, with the
article in it) or lays the content out elsewhere; the test says what a browser shows.
"""

from __future__ import annotations

import re

import pytest

from mcp_server_web.fetch.doc.convert import convert
from mcp_server_web.fetch.doc.extract import extract_html
from mcp_server_web.fetch.doc.html_tree import parse_html
from mcp_server_web.fetch.types import Converted
from tests.support.responses import response
from tests.support.timing import cpu_time

URL = "https://example.com/garden/pruning"
SENTENCES = [
    "Pruning an apple tree in late winter lets the cuts heal before the sap rises in spring.",
    "Start with the dead, diseased and damaged wood, cutting back to healthy tissue each time.",
    "Then remove branches that cross or rub, since the wounds they make invite canker.",
    "Open the centre of the tree so that light and air reach the fruiting spurs inside.",
    "Never take more than a quarter of the canopy in one year, or the tree answers with water shoots.",
    "Cut just above an outward-facing bud, at a slight angle, so rain runs off the wound.",
    "Sharp, clean tools matter more than any sealing paint, which most growers now skip.",
    "Keep the prunings away from the orchard floor if the tree has shown any sign of disease.",
    "Young trees are shaped for structure, old ones are thinned for light and renewal.",
    "Summer pruning, done after the new growth hardens, slows a tree that grows too strongly.",
    "Record what you cut each year so that next winter you can see how the tree responded.",
    "Stand back from the tree every few cuts: the shape is judged from a distance, not the ladder.",
    "Water the tree well in a dry spring after a hard pruning, since the roots must feed new wood.",
    "A ladder with a tripod base is steadier on the soft ground of an orchard than a straight one.",
]
ARTICLE = "\n".join(f"<p>{sentence}</p>" for sentence in SENTENCES)
ARTICLE_CHARS = sum(len(sentence) for sentence in SENTENCES)


def _document(
    header: str, *, main: str = f"<main><article><h1>Pruning apple trees</h1>{ARTICLE}</article></main>"
) -> str:
    # An SVG sprite comes first in the body; anything else sits in the site's header.
    sprite, header = (header, "") if header.startswith("<svg") else ("", header)
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Pruning apple trees</title></head>
<body>{sprite}<div class="site"><header><a href="/">Garden notes</a> {header}</header>
{main}
<footer><a href="/about">About</a> <a href="/contact">Contact</a></footer></div></body></html>"""


def _convert(body: str, *, main_content: bool) -> Converted:
    return convert(
        response(body, charset="utf-8", url=URL), output_format="markdown", main_content=main_content
    )


def _plain(markdown: str) -> str:
    return re.sub(r"\s+", " ", markdown)


# Headers whose element is closed by its end tag while something opened inside it is still open:
# a browser closes it there; libxml2 ignores the end tag and nests the rest of the page inside.
UNCLOSED_IN_HEADER = {
    "button": '<button class="menu-toggle" type="button"><div class="icon"><span></span>Menu</button>',
    "link": '<a class="logo" href="/"><div class="mark">Garden notes</a>',
    "select": '<select name="lang"><option value="en">English<div class="flag"></select>',
    "svg sprite": '<svg style="display:none"><symbol id="leaf"><path d="M0 0h10v10z"></symbol>',
    "svg sprite, stray end tags": (
        '<svg style="display:none"><symbol id="leaf"><path d="M0 0"></symbol></symbol></svg></svg>'
        '<svg style="display:none"><symbol id="fruit"><g><path d="M1 1">'
    ),
    "label": '<label class="search"><div class="field">Search</label>',
}


@pytest.mark.parametrize("main_content", [True, False], ids=["main", "whole"])
@pytest.mark.parametrize("header", list(UNCLOSED_IN_HEADER.values()), ids=list(UNCLOSED_IN_HEADER))
def test_an_element_left_open_in_the_header_does_not_swallow_the_article(
    header: str, main_content: bool
) -> None:
    page = _document(header)
    root = parse_html(page)
    assert root is not None
    main = root.find(".//main")
    assert main is not None
    assert [ancestor.tag for ancestor in main.iterancestors()] == ["div", "body", "html"]
    converted = _convert(page, main_content=main_content)
    text = _plain(converted.text)
    for sentence in SENTENCES:
        assert sentence in text
    # The article is not the text of a link (an <a> that swallowed the page).
    assert not re.search(r"\[[^\]]*Pruning an apple tree", converted.text)


def test_a_page_wrapped_in_one_form_keeps_its_content() -> None:
    # ASP.NET wraps the page in a single <form>, closed after elements opened inside it.
    page = _document("", main=f'<form action="/post"><div class="page"><main>{ARTICLE}</form></div></main>')
    text = _plain(_convert(page, main_content=True).text)
    assert all(sentence in text for sentence in SENTENCES)


def test_text_misplaced_in_a_table_comes_before_it_as_in_a_browser() -> None:
    # Text and a paragraph directly inside <table> are moved before the table ("foster parenting").
    page = _document(
        "",
        main=(
            f"<main>{ARTICLE}<table>Harvest dates by variety"
            "<tr><th>Variety</th><th>Harvest</th></tr><tr><td>Discovery</td><td>August</td></tr>"
            "<p>Late varieties keep longest in a cool shed.</p></table></main>"
        ),
    )
    text = _convert(page, main_content=False).text
    table_at = text.index("| Variety")
    assert text.index("Harvest dates by variety") < table_at
    assert text.index("Late varieties keep longest") < table_at
    assert "| Discovery | August |" in text


def test_a_paragraph_inside_a_heading_stays_a_heading() -> None:
    page = _document(
        "", main=f"<main><h1><p>Pruning apple trees</p></h1>{ARTICLE}<h2><p>Tools</p></h2>{ARTICLE}</main>"
    )
    text = _convert(page, main_content=False).text
    assert re.search(r"^# Pruning apple trees$", text, re.M)
    assert re.search(r"^## Tools$", text, re.M)


def test_void_elements_libxml2_does_not_know_hold_nothing() -> None:
    # <source>, <track> and <wbr> are void: what follows is their sibling, not their child.
    page = _document(
        "",
        main=(
            '<main><picture><source srcset="tree.webp" type="image/webp">'
            '<img src="tree.jpg" alt="An old tree"></picture>'
            f"<p>Spur<wbr>bearing varieties fruit on <em>short</em> shoots.</p>{ARTICLE}</main>"
        ),
    )
    root = parse_html(page)
    assert root is not None
    assert [child.tag for child in root.find(".//picture")] == ["source", "img"]
    assert root.find(".//wbr").text is None and len(root.find(".//wbr")) == 0
    assert "![An old tree](https://example.com/garden/tree.jpg)" in _convert(page, main_content=False).text


def test_content_in_a_declarative_shadow_root_is_shown() -> None:
    # A server-rendered web component: its content is a <template shadowrootmode>, which a
    # browser attaches and shows, unlike an ordinary <template>.
    page = _document(
        "",
        main=(
            f'<main><garden-article><template shadowrootmode="open"><article>{ARTICLE}</article></template>'
            "</garden-article><template><p>Never shown: an inert template.</p></template></main>"
        ),
    )
    for main_content in (True, False):
        text = _plain(_convert(page, main_content=main_content).text)
        assert all(sentence in text for sentence in SENTENCES)
        assert "Never shown" not in text


def test_noscript_content_in_the_head_is_read_as_a_browser_without_scripts_reads_it() -> None:
    # An <img> inside a <noscript> in the head ends the head: the body starts there.
    page = (
        '<!DOCTYPE html><html><head><title>Pruning</title><noscript><img src="pixel.gif" alt="">'
        f"<p>Pruning apple trees</p></noscript></head><body><main>{ARTICLE}</main></body></html>"
    )
    root = parse_html(page)
    assert root is not None
    assert root.find("head//p") is None
    assert "Pruning an apple tree" in _plain(
        extract_html(page, URL, output_format="markdown", main_content=False).text
    )


HOSTILE = {
    # Each a known worst case of HTML5 tree construction: the stack of open elements grows with
    # the input, or formatting elements are reconstructed over and over.
    "deep nesting": "<div>" * 200_000,
    "list nesting": "<ul><li>" * 100_000,
    "misnested formatting": "<a><b><i><u><div>x</a>" * 40_000,
    "formatting reconstruction": "".join(f"<b {i}>" for i in range(6000))
    + "".join(f"<i {i}>" for i in range(6000))
    + "x</b>" * 6000,
    "options": "<select>" + "<option><optgroup>" * 100_000,
}


@pytest.mark.parametrize("html", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_markup_parses_in_bounded_time(html: str) -> None:
    # About a megabyte each; an HTML5 tree builder without a depth cap takes seconds to minutes.
    root, cpu = cpu_time(lambda: parse_html(html))
    assert root is not None
    assert cpu < 3.0, f"{cpu:.2f} s of CPU"
