"""Main content never silently shrinks to a sliver of the page (issue 11).

Synthetic pages only, each built on one general signal: text repeated across an article's
paragraphs, a short page's only heading, a page whose text sits where the selection drops it.
"""

from __future__ import annotations

import re

import pytest

from mcp_server_web.errors import ExtractionFailed
from mcp_server_web.fetch.doc.convert import convert
from mcp_server_web.fetch.doc.extract import extract_html
from mcp_server_web.fetch.doc.html_tree import parse_html, text_chars
from mcp_server_web.fetch.types import Converted
from tests.support.responses import response

URL = "https://example.com/notes/page"
TAIL = (
    "Every entry in this log follows the same procedure: the sample is weighed on the calibrated "
    "scale, dried for six hours at a constant temperature, weighed again, and the difference is "
    "written down next to the reading of the humidity meter, so that later readers can compare "
    "the entries with one another and see how the season changed the moisture of the soil."
)
TAIL_MORE = "The scale and the meter are checked against the reference weights every morning."
LEADS = [
    f"On day {i} the {colour} plot near the {place} was sampled after {weather}."
    for i, (colour, place, weather) in enumerate(
        (
            (c, p, w)
            for c in ("north", "south", "east", "west", "upper", "lower")
            for p in ("creek", "barn", "orchard", "road", "hedge")
            for w in ("rain", "frost", "a dry week", "fog")
        ),
        start=1,
    )
]


def _page(paragraphs: list[str]) -> str:
    body = "\n".join(f"<p>{text}</p>" for text in paragraphs)
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Soil moisture log</title></head>
<body><article><h1>Soil moisture log</h1>
<p>This is the field log of the soil moisture survey, one entry per sampling day.</p>
{body}
</article></body></html>"""


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _convert(body: str) -> Converted:
    return convert(response(body, charset="utf-8", url=URL), output_format="markdown", main_content=True)


# --- point 2: repeated text must not eat the article --------------------------------------------


def test_paragraphs_sharing_a_long_tail_are_all_kept() -> None:
    # 120 paragraphs told apart only by their number: the tail repeats 120 times in both
    # extractors' outputs, which both keep whole.
    paragraphs = [f"Entry {i}. {TAIL} {TAIL_MORE}" for i in range(1, 121)]
    html = _page(paragraphs)
    assert len(html) > 50_000
    result = extract_html(html, URL, output_format="markdown", main_content=True)
    expected = sum(len(p) for p in paragraphs)
    kept = sum(1 for i in range(1, 121) if f"Entry {i}. Every entry" in result.text)
    assert kept == 120, f"{kept} of 120 paragraphs, {len(result.text)} of {expected} characters"
    assert len(result.text) >= expected


def test_paragraphs_with_distinct_leads_and_a_shared_tail_are_all_kept() -> None:
    paragraphs = [f"{lead} {TAIL}" for lead in LEADS]
    html = _page(paragraphs)
    result = extract_html(html, URL, output_format="markdown", main_content=True)
    expected = sum(len(p) for p in paragraphs)
    kept = sum(1 for lead in LEADS if lead in result.text)
    assert kept == len(LEADS), f"{kept} of {len(LEADS)} leads, {len(result.text)} of {expected} characters"
    assert result.text.count("every entry in this log".capitalize()) == len(LEADS)


def test_identical_paragraphs_side_by_side_are_kept() -> None:
    # The same paragraph ten times in one article: repeats side by side are content.
    html = _page([TAIL] * 10)
    result = extract_html(html, URL, output_format="markdown", main_content=True)
    assert result.text.count(TAIL[:60]) == 10


# --- point 3: a short page keeps its only heading -----------------------------------------------

SHORT = (
    "The reading room opens at nine and closes at five on weekdays. Visitors bring an identity "
    "card, leave their bags in the lockers by the door, and ask the desk for the boxes they need."
)


@pytest.mark.parametrize(
    "body",
    [
        f"<main><h1>Reading room hours</h1><p>{SHORT}</p></main>",
        f"<h1>Reading room hours</h1><p>{SHORT}</p><p>Photography without flash is allowed.</p>",
        f"<div><h1>Reading room hours</h1><p>{SHORT}</p></div>",
    ],
    ids=["main", "body", "div"],
)
def test_short_page_keeps_its_only_heading(body: str) -> None:
    html = f"<!DOCTYPE html><html><head><title>Archive</title></head><body>{body}</body></html>"
    result = extract_html(html, URL, output_format="markdown", main_content=True)
    assert "# Reading room hours" in result.text, result.text
    assert SHORT in result.text


LOG = "<h1>Moisture log of the lower plots</h1>" + "".join(f"<p>{lead} {TAIL}</p>" for lead in LEADS[:6])


@pytest.mark.parametrize(
    "body",
    [LOG, f"<article>{LOG}</article>"],
    ids=["body", "article"],
)
def test_a_long_page_keeps_the_h1_above_its_text(body: str) -> None:
    # Issue 26: the extractors leave out the <h1> they take for the title; a page that opens
    # with its <h1> reads that way, whatever its length.
    html = f"<!DOCTYPE html><html><head><title>Log</title></head><body>{body}</body></html>"
    result = extract_html(html, URL, output_format="markdown", main_content=True)
    assert result.text.startswith("# Moisture log of the lower plots\n\n"), result.text[:200]
    assert LEADS[5] in result.text


# --- point 4: the safety net ----------------------------------------------------------------------

CARD = (
    "A walk of {n} kilometres along the old towpath, past the lock keeper's cottage and the "
    "water meadows, with a stop at the mill for tea before the climb back up to the village."
)


def _landmark_page() -> str:
    # All of the page's text sits in page-level landmarks, none of which holds half of it: the
    # selection drops them all as chrome.
    header = "".join(f"<p>{CARD.format(n=n)}</p>" for n in range(1, 5))
    aside = "".join(f"<p>{CARD.format(n=n)}</p>" for n in range(5, 9))
    footer = "".join(f"<p>{CARD.format(n=n)}</p>" for n in range(9, 13))
    return f"""<!DOCTYPE html><html><head><title>Walks</title></head><body>
<header>{header}</header><aside>{aside}</aside><footer>{footer}</footer></body></html>"""


def _visible_chars(html: str) -> int:
    root = parse_html(html)
    assert root is not None
    return text_chars(root)


def test_page_with_visible_text_is_never_an_extraction_failure() -> None:
    html = _landmark_page()
    assert _visible_chars(html) >= 1000
    try:
        result = _convert(html)
    except ExtractionFailed as error:
        pytest.fail(f"extraction_failed on a page with {_visible_chars(html)} visible characters: {error}")
    kept = sum(1 for n in range(1, 13) if f"A walk of {n} kilometres" in result.text)
    share = len(result.text) / _visible_chars(html)
    assert kept == 12 or (share < 0.5 and any("main_content=false" in w for w in result.warnings)), (
        f"{kept} of 12 walks, {len(result.text)} characters, warnings {result.warnings}"
    )


def test_page_without_readable_text_is_still_an_extraction_failure() -> None:
    html = "<!DOCTYPE html><html><head><title>App</title></head><body><div id='root'></div></body></html>"
    with pytest.raises(ExtractionFailed):
        _convert(html)


def _sliver_page() -> str:
    # A short post, and most of the page's text in page-level landmarks set aside as chrome.
    post = (
        "<div class='post'><h1>Walks</h1><p>Short note: the towpath walks reopen on Monday after "
        "the repairs to the lock gates.</p></div>"
    )
    return _landmark_page().replace("<aside>", f"{post}<aside>")


def test_a_sliver_of_the_page_is_never_returned_silently() -> None:
    html = _sliver_page()
    visible = _visible_chars(html)
    result = _convert(html)
    share = len(result.text) / visible
    warned = [w for w in result.warnings if "main_content=false" in w]
    assert "Short note" in result.text
    assert share >= 0.5 or warned, (
        f"kept {len(result.text)} of {visible} characters, warnings {result.warnings}"
    )
    if warned:
        assert re.search(r"\b\d+% of the page's visible text", warned[0]), warned[0]


def test_a_whole_article_gets_no_warning() -> None:
    html = _page([f"{lead} {TAIL}" for lead in LEADS[:20]])
    result = _convert(html)
    assert result.warnings == ()
    assert _words(result.text) >= 0.9 * _words(re.sub(r"<[^>]+>", " ", html))
