"""The block features (fetch/doc/block_features.py): each row read off a small page by hand."""

from __future__ import annotations

import lxml.html
import numpy as np

from mcp_server_web.fetch.doc.block_features import FAR, FEATURES, block_features
from mcp_server_web.fetch.doc.blocks import segment

PAGE = """<html><body>
<div class="nav"><a href="/a">Home page link</a></div>
<h1>A title</h1>
<div itemprop="articleBody"><span class="share"><p>One two, three. Four five 6 7.</p></span>
<p>Eight <a href="/b">nine</a></p></div>
</body></html>"""


def _rows(html: str) -> tuple[list[str], list[dict[str, float]]]:
    blocks, rows = block_features(segment(lxml.html.fromstring(html)), frozenset({"NewsArticle"}))
    assert rows.shape == (len(blocks), len(FEATURES))
    assert not np.isnan(rows).any()  # every feature is set
    return [block.text for block in blocks], [dict(zip(FEATURES, row.tolist(), strict=True)) for row in rows]


def test_each_block_with_text_has_its_row() -> None:
    texts, rows = _rows(PAGE)
    assert texts == ["Home page link", "A title", "One two, three. Four five 6 7.", "Eight nine"]
    nav, title, first, last = rows
    assert (nav["word_chrome"], title["word_chrome"], first["word_chrome"]) == (0.0, FAR, FAR)
    # The class of an inline element between a block and its parent block counts as the block's own.
    assert (first["word_social"], last["word_social"]) == (0.0, FAR)
    assert (first["in_text_prop"], last["in_text_prop"], title["in_text_prop"]) == (1.0, 1.0, 0.0)
    assert [row["after_h1"] for row in rows] == [0.0, 1.0, 1.0, 1.0]
    assert nav["link_density"] == 1.0 and last["link_density"] == 4 / 10
    assert first["commas"] == 1 / 7 and first["sentence_ends"] == 2 / 7 and first["digit_share"] == 2 / 7
    assert first["chars_before"] == (len("Home page link") + len("A title")) / sum(map(len, texts))
    # The blocks with text before and after; none before the first, none after the last.
    assert (nav["prev_tokens"], nav["next_tokens"]) == (0.0, 2.0)
    assert (last["prev_tokens"], last["next_tokens"], last["next_link_density"]) == (7.0, 0.0, 0.0)
    assert first["prev_link_density"] == 0.0 and first["next_link_density"] == 4 / 10
    # Above the page's root, the page itself.
    assert (title["up3_share"], title["up3_prose_share"], title["up3_blocks"]) == (1.0, 1.0, 4.0)
    assert title["up3_link_density"] == title["page_link_density"] and title["up2_prose_share"] == 0.0
    assert all(row["page_article"] == 1.0 and row["page_product"] == 0.0 for row in rows)
    assert all(row["page_h1s"] == 1.0 for row in rows)


def test_a_page_without_text_has_no_rows() -> None:
    blocks, rows = block_features(
        segment(lxml.html.fromstring("<html><body><div></div></body></html>")), frozenset()
    )
    assert blocks == [] and rows.shape == (0, len(FEATURES))
