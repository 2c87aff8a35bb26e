"""How a page is cut into blocks and runs of text (blocks.segment), on the cases its walk has to get
right: text around nested blocks, links, comments, images, hidden elements, empty text."""

from __future__ import annotations

from mcp_server_web.fetch.doc.blocks import _TOKEN, Segmentation, segment, token_chunks
from mcp_server_web.fetch.doc.html_tree import HIDDEN, body_of, parse_html
from tests.support.timing import least_cpu_times


def _segmented(body: str) -> Segmentation:
    root = parse_html(f"<html><body>{body}</body></html>")
    assert root is not None
    return segment(body_of(root))


def _block(segmentation: Segmentation, tag: str) -> int:
    return next(i for i, block in enumerate(segmentation.blocks) if block.element.tag == tag)


def test_an_empty_nested_block_does_not_cut_a_run() -> None:
    segmentation = _segmented("<div>one <span>two</span><section></section>three</div>")
    div = segmentation.blocks[_block(segmentation, "div")]
    assert div.text == "one twothree"
    assert [segmentation.spelled(run.tokens) for run in segmentation.runs] == [["one", "twothree"]]
    assert div.tokens is segmentation.runs[0].tokens  # one run: the same array


def test_a_nested_block_of_whitespace_cuts_a_run() -> None:
    segmentation = _segmented("<div>one <span>two</span><section> </section>three</div>")
    div = segmentation.blocks[_block(segmentation, "div")]
    assert div.text == "one two three"
    assert [segmentation.spelled(run.tokens) for run in segmentation.runs] == [["one", "two"], ["three"]]
    assert segmentation.spelled(div.tokens) == ["one", "two", "three"]


def test_a_nested_block_with_text_cuts_its_blocks_text_into_runs() -> None:
    segmentation = _segmented("<div>Before <p>Inside</p> after</div>")
    div, p = (segmentation.blocks[_block(segmentation, tag)] for tag in ("div", "p"))
    assert (div.text, p.text) == ("Before after", "Inside")
    assert [(run.block.element.tag, segmentation.spelled(run.tokens)) for run in segmentation.runs] == [
        ("div", ["before"]),
        ("p", ["inside"]),
        ("div", ["after"]),
    ]
    assert segmentation.spelled(div.tokens) == ["before", "after"]
    assert (p.parent, p.depth, p.index, div.children) == (div, 2, 2, [p])


def test_link_text_and_images_count_for_the_enclosing_block() -> None:
    segmentation = _segmented(
        '<p>See <a href="/x">the <b>docs</b><img src="i.png"></a> now <img src="j.png"></p>'
    )
    p = segmentation.blocks[_block(segmentation, "p")]
    assert (p.text, p.link_chars, p.images) == ("See the docs now", len("the docs"), 2)


def test_a_link_around_a_block_makes_its_text_link_text() -> None:
    segmentation = _segmented('<div><a href="/card"><h3>Title</h3>teaser</a></div>')
    h3, div = (segmentation.blocks[_block(segmentation, tag)] for tag in ("h3", "div"))
    assert (h3.text, h3.link_chars) == ("Title", 5)
    assert (div.text, div.link_chars) == ("teaser", 6)


def test_comments_are_not_text_but_their_tails_are() -> None:
    segmentation = _segmented("<p>a<!-- hidden words -->b</p>")
    assert segmentation.blocks[_block(segmentation, "p")].text == "ab"
    assert "hidden" not in segmentation.words


def test_blocks_inside_a_hidden_element_are_hidden() -> None:
    segmentation = _segmented(f"<div {HIDDEN}><p>x</p></div><p>y</p>")
    assert [(block.element.tag, block.hidden) for block in segmentation.blocks[1:]] == [
        ("div", True),
        ("p", True),
        ("p", False),
    ]


def test_whitespace_only_text_makes_no_run_and_words_are_numbered_once() -> None:
    segmentation = _segmented("<p> \n </p><p>Word word</p><li>WORD two</li>")
    assert [run.tokens.tolist() for run in segmentation.runs] == [[0, 0], [0, 1]]
    assert segmentation.words == {"word": 0, "two": 1}
    assert segmentation.blocks[1].text == "" and not segmentation.blocks[1].tokens


# --- an output's tokens, a piece at a time ---------------------------------------------------


def _whole(texts: list[str]) -> list[str]:
    return _TOKEN.findall("".join(texts).casefold())


def _pieced(texts: list[str], size: int) -> list[str]:
    return [token for piece in token_chunks(texts, size) for token in piece]


def test_an_outputs_tokens_in_pieces_are_the_tokens_of_its_text_whole() -> None:
    texts = ["Straße ", "ΣΊΣΥΦΟΣ", " and", "", "word", "s run\ttogether ", "字字 字", " ", "x" * 40, " end"]
    for size in (1, 3, 7, 16, 1000):
        assert _pieced(texts, size) == _whole(texts)  # "words" is one word: nothing goes between texts
    assert _pieced([], 8) == [] and _pieced(["", " "], 8) == []


def test_no_piece_is_much_longer_than_asked_where_the_text_has_spaces() -> None:
    pieces = list(token_chunks(["one two three " * 2_000], 1_000))
    assert len(pieces) > 20 and max(map(len, pieces)) <= 1_000 // 4 + 3


def test_text_without_spaces_in_many_nodes_is_read_in_linear_time() -> None:
    """A long text with nowhere to cut (unspaced script) in many text nodes: joined again for every
    node, 4x the nodes cost 16x."""
    small, large = ["字" * 10] * 20_000, ["字" * 10] * 80_000
    control, measured = least_cpu_times(lambda: _pieced(small, 1_000), lambda: _pieced(large, 1_000))
    assert measured < 8 * control, f"{control:.3f} s and {measured:.3f} s for 4x the text"
