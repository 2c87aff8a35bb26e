"""Main content of the page types other than articles: products, collections, listings.

Each test is a small page showing one general construct (metadata, markup, repeated cards)
that the selection (selection.py) reads.
"""

from __future__ import annotations

import json

from mcp_server_web.fetch.extract import extract_html
from mcp_server_web.fetch.html_tree import parse_html
from mcp_server_web.fetch.selection import page_kinds

CHROME_TOP = "<header><a href='/'>SITE_HEADER</a></header><nav><a href='/shop'>NAV_SHOP</a></nav>"
CHROME_BOTTOM = "<footer><p>SITE_FOOTER</p></footer>"


def _ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def _kinds(head: str) -> frozenset[str]:
    root = parse_html(f"<html><head>{head}</head><body><p>Some text.</p></body></html>")
    assert root is not None
    return page_kinds(root)


# --- what the page says it is ----------------------------------------------------------------


def _product_group(variants: int) -> dict[str, object]:
    return {
        "@context": "https://schema.org",
        "@type": "ProductGroup",
        "name": "Wool Runner",
        "hasVariant": [
            {"@type": "Product", "name": f"Wool Runner size {size}", "offers": {"@type": "Offer"}}
            for size in range(38, 38 + variants)
        ],
    }


def test_a_product_group_with_many_variants_is_one_product() -> None:
    assert "product" in _kinds(_ld(_product_group(8)))


def test_several_product_groups_are_a_listing() -> None:
    groups = [_product_group(2) for _ in range(5)]
    assert "product" not in _kinds(_ld({"@context": "https://schema.org", "@graph": groups}))


def test_an_og_product_group_is_a_collection_not_a_product() -> None:
    for og_type in ("product.group", "product:group"):
        assert "product" not in _kinds(f'<meta property="og:type" content="{og_type}">')
    assert "product" in _kinds('<meta property="og:type" content="product">')


def _product_page(head: str) -> str:
    reviews = "".join(
        f'<div class="review"><h4>Reviewer {i}</h4><p>REVIEW_TEXT {i}: I wore these shoes on a long '
        f"walk through the city and they stayed comfortable all day.</p></div>"
        for i in range(6)
    )
    return (
        f"<html><head><title>Wool Runner</title>{head}</head><body>{CHROME_TOP}<main>"
        "<h1>Wool Runner</h1><p class='price'>$ 98</p>"
        "<div class='description'><p>The Wool Runner is a light everyday shoe made from merino wool. "
        "It breathes in summer, keeps your feet warm in winter, and goes in the washing machine.</p>"
        "<p>Its sole is made from sugarcane, and its laces from recycled bottles, so that the whole shoe "
        "leaves a smaller footprint than most.</p></div>"
        f"<section class='product-reviews'><h2>Customer reviews</h2>{reviews}</section>"
        f"</main>{CHROME_BOTTOM}</body></html>"
    )


def test_reviews_are_left_out_on_the_page_of_a_product_group() -> None:
    text = extract_html(
        _product_page(_ld(_product_group(8))),
        "https://shop.example/p/wool-runner",
        output_format="markdown",
        main_content=True,
    ).text
    assert "The Wool Runner is a light everyday shoe" in text
    assert "REVIEW_TEXT" not in text
