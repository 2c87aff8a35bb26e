"""trafilatura_fast: trafilatura 2.3.1's text to the character, on pages made to catch its shortcuts
out, with each replacement in place wherever trafilatura calls it, and a guard whose cost grows with
the page, not with the square of its nesting."""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Callable

import lxml.html
import pytest
from lxml import etree

from mcp_server_web.fetch.doc import extract, trafilatura_fast
from tests.support.timing import least_cpu_times

SENTENCE = (
    "Rivers carry sediment downstream, cutting into rock over thousands of years, and the slope "
    "of the land decides how fast the water moves, as the survey of the valley showed."
)

_htmlprocessing = importlib.import_module("trafilatura.htmlprocessing")
_xpaths = importlib.import_module("trafilatura.xpaths")
_settings = importlib.import_module("trafilatura.settings")
_baseline = importlib.import_module("trafilatura.baseline")


def _page(body: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(f"<html><head><title>t</title></head><body>{body}</body></html>")


def _paragraphs(count: int, tag: str = "p") -> str:
    return "".join(f"<{tag}>Paragraph {i}. {SENTENCE}</{tag}>" for i in range(count))


def _nested(depth: int, classes: tuple[str, ...], paragraphs: int = 12) -> lxml.html.HtmlElement:
    """An article inside ``depth`` nested <div>s, their classes taken in turn from ``classes``, each
    with a word of its own and every third a hidden <span> (deeper than a parser builds: made
    element by element)."""
    root = _page("")
    parent = root.find("body")
    for level in range(depth):
        parent = etree.SubElement(parent, "div", {"class": f"{classes[level % len(classes)]} l{level}"})
        parent.text = f"level {level} "
        if level % 3 == 0:
            hidden = etree.SubElement(parent, "span", {"style": "display:none"})
            hidden.text = "hidden"
            hidden.tail = " after."
    article = etree.SubElement(parent, "div", {"class": "entry-content"})
    for piece in lxml.html.fragments_fromstring(_paragraphs(paragraphs)):
        article.append(piece)
    return root


PAGES: dict[str, Callable[[], lxml.html.HtmlElement]] = {
    "nested_1000": lambda: _nested(1000, ("wrap", "share-box", "sidebar x", "post-body", "hidden")),
    "nested_bare_250": lambda: _page("<div>" * 250 + _paragraphs(3) + "</div>" * 250),
    "siblings_3000": lambda: _page("<div class='entry-content'>" + _paragraphs(3000) + "</div>"),
    "comments": lambda: _page(
        "<article>"
        + _paragraphs(6)
        + "</article>"
        + "".join(
            f"<div id='comment-{i}' class='comment'><p>Comment {i}: {SENTENCE}</p>"
            f"<ol class='comment-list'><li id='comment-{i}-r'>reply {SENTENCE}</li></ol></div>"
            for i in range(50)
        )
        + "<section class='comments-area'><ul id='comments'><li>x</li></ul></section>"
        + "<div id='disqus_thread'>d</div><details class='Comments'>c</details>"
        + "<ol class='commentary'><li>k</li></ol><ul id='Comment-list'><li>l</li></ul>"
    ),
    "forms_and_tables": lambda: _page(
        "<form id='aspnetForm'><div class='post-content'>"
        + _paragraphs(10)
        + "<table><tr><th>a</th><td>"
        + SENTENCE
        + "</td></tr></table><table role='presentation'><tr><td>"
        + _paragraphs(3)
        + "</td></tr></table><figure><table><tr><td>figure</td></tr></table></figure>"
        + "<form class='search'><input name=q><button>Go</button></form></div></form>"
        + "<div class='cookie-banner'>We use cookies</div><div id='CookieBot'>x</div>"
        + "<div class='footer' id='x'>f</div><div id='footer' class='y'>g</div><aside>a</aside>"
    ),
    "attributes": lambda: _page(
        "<div id='main' class='reply-x'>" + _paragraphs(2) + "</div>"
        "<div class='reply-x' id='main'>" + _paragraphs(2) + "</div>"
        "<div style='x' id='hidden'>" + _paragraphs(2) + "</div>"
        "<div id='a' style='hidden'>" + _paragraphs(2) + "</div>"
        "<span role='Navigation'>nav</span><p data-lp-replacement-content=''>lp</p>"
        "<div data-component='MostPopularStoriesX'>mp</div><div aria-hidden='true'>ah</div>"
        "<div class='ArticleContent'>" + _paragraphs(5) + "</div>"
        "<section class='FullText'>" + _paragraphs(5) + "</section>"
        "<main id='Main-Content'>" + _paragraphs(5) + "</main>"
        "<div class='Page-Content'>" + _paragraphs(5) + "</div>"
        "<div class='mvp-post-add-box'><h1>t</h1>" + _paragraphs(2) + "</div>"
        "<div id='infinite-scroll'>" + _paragraphs(2) + "</div>"
        "<div class='infinitescroll'><h1>kept</h1>" + _paragraphs(2) + "</div>"
        "<div class='\u212aookie-banner'>Kelvin sign</div><div class='widget'>w</div>"
    ),
    "body_candidates": lambda: _page(
        "<div class='post'><p>first post</p></div><div class='post'>" + _paragraphs(2) + "</div>"
        "<section><div class='entry'>" + _paragraphs(4) + "</div><div class='entry'>later</div></section>"
        "<div id='story'><div class='story'>" + _paragraphs(3) + "</div></div>"
    ),
    "listing": lambda: _page(
        "<ul>" + "".join(f"<li><a href='/{i}'>Link {i}</a></li>" for i in range(300)) + "</ul><p>short</p>"
    ),
    "empty": lambda: _page(""),
}


def _text(root: lxml.html.HtmlElement, fast: bool) -> str:
    if fast:
        return extract._trafilatura_text(copy.deepcopy(root), "https://example.org/page", None)
    with trafilatura_fast.originals():
        return extract._trafilatura_text(copy.deepcopy(root), "https://example.org/page", None)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_text_is_trafilaturas_to_the_character(name: str) -> None:
    root = PAGES[name]()
    assert trafilatura_fast.installed()
    assert _text(root, fast=True) == _text(root, fast=False)
    assert trafilatura_fast.installed()


def _expressions() -> list[trafilatura_fast.Expression]:
    lists = (
        _xpaths.OVERALL_DISCARD_XPATH,
        _xpaths.REMOVE_COMMENTS_AND_LISTS_XPATH,
        _xpaths.RAW_TREE_PRUNE_XPATH,
        _xpaths.BODY_XPATH,
    )
    found = [entry for where in lists for entry in where if isinstance(entry, trafilatura_fast.Expression)]
    return [*found, _settings.BASIC_CLEAN_XPATH]


def test_every_replacement_is_where_trafilatura_calls_it() -> None:
    assert trafilatura_fast.installed()
    expressions = _expressions()
    assert all(isinstance(expression, trafilatura_fast.Expression) for expression in expressions)
    assert len(expressions) == 8
    assert all(expression.transcribes() for expression in expressions)
    assert _baseline.BASIC_CLEAN_XPATH is _settings.BASIC_CLEAN_XPATH
    # every trafilatura module that calls prune_unwanted_nodes by name calls ours
    original = _htmlprocessing.prune_unwanted_nodes
    assert original is trafilatura_fast.prune_unwanted_nodes
    callers = [
        module
        for name, module in sys.modules.items()
        if name.startswith("trafilatura.") and hasattr(module, "prune_unwanted_nodes")
    ]
    assert {module.__name__ for module in callers} >= {
        "trafilatura.core",
        "trafilatura.main_extractor",
        "trafilatura.external",
        "trafilatura.metadata",
    }
    assert all(module.prune_unwanted_nodes is trafilatura_fast.prune_unwanted_nodes for module in callers)
    with trafilatura_fast.originals():
        assert not any(isinstance(entry, trafilatura_fast.Expression) for entry in _xpaths.BODY_XPATH)
        assert all(module.prune_unwanted_nodes is not original for module in callers)
        assert not isinstance(_baseline.BASIC_CLEAN_XPATH, trafilatura_fast.Expression)
    assert _htmlprocessing.prune_unwanted_nodes is trafilatura_fast.prune_unwanted_nodes


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_expression_selects_what_its_xpath_selects(name: str) -> None:
    """Each replacement against its XPath, on the page and on each of its <div>s and <section>s
    (trafilatura runs some on a subtree)."""
    root = PAGES[name]()
    contexts = [root, *list(root.iter("div", "section"))[:400:8]]
    for expression in _expressions():
        for context in contexts:
            assert expression(context) == expression.original(context), (str(expression)[:80], context)


def test_outermost_keeps_the_order_and_skips_what_lies_inside() -> None:
    root = _page("<div id=a><div id=b><p id=c>x</p></div></div><div id=d><span id=e>y</span></div>")
    by_id = {element.get("id"): element for element in root.iter() if element.get("id")}
    given = [by_id[name] for name in ("e", "c", "b", "d", "a")]
    assert [element.get("id") for element in trafilatura_fast.outermost(given)] == ["d", "a"]


def _buried(depth: int, buttons: int, button_class: str) -> lxml.html.HtmlElement:
    """An article inside ``depth`` nested wrappers, ending in ``buttons`` <span>s of the class given."""
    root = _page("")
    parent = root.find("body")
    for level in range(depth):
        parent = etree.SubElement(parent, "div", {"class": f"wrap l{level}"})
        parent.text = f"level {level} "
    article = etree.SubElement(parent, "div", {"class": "entry-content"})
    for piece in lxml.html.fragments_fromstring(_paragraphs(buttons // 4)):
        article.append(piece)
    for number in range(buttons):
        button = etree.SubElement(article, "span", {"class": button_class})
        button.text = f"Share {number}"
    return root


def test_deep_nesting_of_discarded_elements_costs_linear_time() -> None:
    """The guard of trafilatura's pruning walked all the ancestors of every element it would drop:
    2,000 share buttons inside 2,000 nested wrappers cost 1.5 s of CPU against 0.11 s for the same
    tree with buttons trafilatura keeps. The control is that tree, so that both pay the same to
    walk it (lxml's own walk grows with the square of the nesting: each element let go climbs to
    the nearest one still held) and differ only in the guard: with each ancestor answered once,
    0.067 s against 0.061 s."""

    def prune(root: lxml.html.HtmlElement) -> Callable[[], object]:
        def run() -> object:
            return _htmlprocessing.prune_unwanted_nodes(
                copy.deepcopy(root), _xpaths.OVERALL_DISCARD_XPATH, with_backup=True
            )

        return run

    dropped, kept = _buried(2000, 2000, "share-button"), _buried(2000, 2000, "quote")
    pruned = copy.deepcopy(dropped)
    _htmlprocessing.prune_unwanted_nodes(pruned, _xpaths.OVERALL_DISCARD_XPATH, with_backup=True)
    with trafilatura_fast.originals():
        reference = copy.deepcopy(dropped)
        _htmlprocessing.prune_unwanted_nodes(reference, _xpaths.OVERALL_DISCARD_XPATH, with_backup=True)
    assert etree.tostring(pruned) == etree.tostring(reference)
    assert pruned.find(".//span") is None
    untouched = prune(kept)()
    assert len(untouched.findall(".//span")) == 2000
    control, measured = least_cpu_times(prune(kept), prune(dropped), runs=3)
    assert measured <= 3 * control, f"buttons kept {control:.3f} s CPU, buttons dropped {measured:.3f} s"


def test_the_readability_result_given_is_what_trafilatura_compares_its_own_with() -> None:
    """A page whose own text is short: trafilatura prefers readability's when it is more than twice
    as long. Given readability's result, it takes that one rather than running readability again."""
    page = _page("<div><p>A short note on the river survey, one line.</p></div>")
    given = lxml.html.fragment_fromstring(f"<div><p>{SENTENCE}</p><p>{SENTENCE}</p></div>")
    assert SENTENCE in trafilatura_fast.main_text(copy.deepcopy(page), "https://example.org/", given)
    assert SENTENCE not in trafilatura_fast.main_text(copy.deepcopy(page), "https://example.org/", None)
    assert etree.tostring(given) == etree.tostring(
        lxml.html.fragment_fromstring(f"<div><p>{SENTENCE}</p><p>{SENTENCE}</p></div>")
    )


def test_readability_run_by_trafilatura_leaves_the_tree_it_is_handed_as_it_was() -> None:
    """_extract_and_compare no longer copies the tree for readability, which changes what it reads:
    try_readability reads a copy of its own (trafilatura reads the tree again later)."""
    page = _page("<script>x()</script><div class='c'><p>" + SENTENCE + "</p></div><style>p{}</style>")
    before = etree.tostring(page)
    summary = trafilatura_fast.try_readability(page)
    assert SENTENCE in summary.text_content()
    assert etree.tostring(page) == before
