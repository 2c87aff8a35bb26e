"""Main content of the page types other than articles: products, collections, listings.

Each test is a small page showing one general construct (metadata, markup, repeated cards)
that the selection (selection.py) reads.
"""

from __future__ import annotations

import json

from mcp_server_web.fetch.doc.extract import extract_html
from mcp_server_web.fetch.doc.html_tree import parse_html
from mcp_server_web.fetch.doc.selection import page_kinds

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


# --- which way the page is read --------------------------------------------------------------

CATEGORY_PROSE = (
    "Our walking shoes are made for long days on your feet: cushioned soles, breathable uppers and a "
    "fit that stays comfortable from the morning commute to the evening stroll.",
    "Every pair is stitched by hand in our own workshop, from leather tanned without harsh chemicals, "
    "and can be resoled when the tread wears down, so that it lasts for years.",
    "Not sure which size to pick? Most customers take their usual size; if you are between two sizes, "
    "take the larger one, and exchanges are free within sixty days of delivery.",
)


def test_a_category_description_the_extractors_skip_is_kept() -> None:
    """The extractors agree on a members' club offer, while the page's description (in an element
    named like a footer, which both skip) holds most of its prose: the page is read as a region."""
    offer = (
        "<div class='club'><p>Members earn a reward for every purchase, with free shipping, early access "
        "to new colours, and a birthday gift. Join our walkers' club today, it is free.</p>"
        "<p>Members also get invitations to our walks, in the city, in the hills, and along the coast, "
        "with a guide, a picnic, and a pair to try on.</p></div>"
    )
    prose = "".join(f"<p>{paragraph}</p>" for paragraph in CATEGORY_PROSE)
    page = (
        f"<html><head><title>Walking shoes</title></head><body>{CHROME_TOP}<main>"
        f"<h1>Walking shoes</h1>{offer}<div class='seo-footer-copy'>{prose}</div>"
        f"</main>{CHROME_BOTTOM}</body></html>"
    )
    result = extract_html(page, "https://shop.example/c/walking", output_format="markdown", main_content=True)
    for paragraph in CATEGORY_PROSE:
        assert paragraph in result.text
    assert "SITE_FOOTER" not in result.text


# --- listings: every card, none of the controls -------------------------------------------------

SHOES = (
    "Trail Runner",
    "City Walker",
    "Harbour Boot",
    "Summit Hiker",
    "Meadow Slip-on",
    "Canyon Sandal",
    "Ridge Mid",
    "Valley Loafer",
    "Coast Sneaker",
    "Forest Clog",
    "Prairie Derby",
    "Glacier Boot",
)


def _card(number: int, name: str) -> str:
    return (
        f"<li class='product-card'><a href='/p/{number}'><img src='/img/{number}.jpg' alt='{name}'></a>"
        f"<h3><a href='/p/{number}'>{name}</a></h3>"
        f"<p>CARD_{number} A comfortable shoe for every day, made from recycled materials.</p>"
        f"<span class='price'>$ {90 + number}</span></li>"
    )


def _facet(name: str, linked: bool) -> str:
    def option(value: int) -> str:
        label = f"FILTER_{name}_{value}"
        if linked:
            return f"<li><a href='?{name.lower()}={value}'>{label}</a> ({value * 3})</li>"
        return f"<li><label><input type='checkbox' name='{name}'> {label} ({value * 3})</label></li>"

    return f"<div class='facet'><h4>FACET_{name}</h4><ul>{''.join(option(v) for v in range(6))}</ul></div>"


def test_a_listing_keeps_every_card_and_none_of_its_filters() -> None:
    for linked in (True, False):
        facets = "".join(_facet(name, linked) for name in ("Brand", "Size", "Colour", "Price"))
        sort = (
            "<div class='sort-bar'><span>SORT_BY</span> <a href='?s=new'>Newest</a>"
            " <a href='?s=price'>Price</a></div>"
        )
        cards = "".join(_card(number, name) for number, name in enumerate(SHOES))
        page = (
            f"<html><head><title>Walking shoes</title></head><body>{CHROME_TOP}<main><h1>Walking shoes</h1>"
            "<p>All our walking shoes, made to last and easy to repair.</p>"
            f"<div class='facets'>{facets}</div>{sort}<ul class='product-grid'>{cards}</ul>"
            f"</main>{CHROME_BOTTOM}</body></html>"
        )
        text = extract_html(
            page, "https://shop.example/c/walking", output_format="markdown", main_content=True
        ).text
        assert all(f"CARD_{number} " in text for number in range(len(SHOES))), linked
        assert all(name in text for name in SHOES)
        assert "FILTER_" not in text and "FACET_" not in text and "SORT_BY" not in text, linked


def test_cards_and_tabs_in_an_element_named_like_a_filter_are_kept() -> None:
    """Sites also name a grid of cards or tabs of prose "filters": those hold pictures or prose."""
    cards = "".join(_card(number, name) for number, name in enumerate(SHOES))
    tabs = "".join(
        f"<div class='filter-tab'><h3>Tab {number}</h3><p>TAB_{number} {CATEGORY_PROSE[number]}</p></div>"
        for number in range(3)
    )
    page = (
        f"<html><head><title>Walking shoes</title></head><body>{CHROME_TOP}<main><h1>Walking shoes</h1>"
        f"<div class='filter-tabs'>{tabs}</div><div class='plp-filters'><ul>{cards}</ul></div>"
        f"</main>{CHROME_BOTTOM}</body></html>"
    )
    text = extract_html(
        page, "https://shop.example/c/walking", output_format="markdown", main_content=True
    ).text
    assert all(f"CARD_{number} " in text for number in range(len(SHOES)))
    assert all(f"TAB_{number} " in text for number in range(3))


# --- service pages: every section --------------------------------------------------------------


def test_a_service_page_keeps_all_its_sections() -> None:
    """A hero, a grid of feature cards, numbered steps, plans, and questions whose answers are
    collapsed (<details>): each part of the offer, in wrappers of their own, is kept."""
    features = "".join(
        f"<div class='feature-card'><h3>{name}</h3><p>FEATURE_{number} Every plan includes {name.lower()}, "
        "set up for you on the first day and checked each week by our team.</p></div>"
        for number, name in enumerate(
            ("Secure backups", "Fast restores", "Encrypted at rest", "Audit trails")
        )
    )
    steps = "".join(
        f"<li>STEP_{number} {text}</li>"
        for number, text in enumerate(
            (
                "We call you to list the systems to protect.",
                "We install the agent on each server.",
                "The first full backup runs overnight.",
            )
        )
    )
    answers = (
        ("Where is my data kept?", "In two data centres in the EU, never outside it."),
        ("Can I cancel?", "Yes, at any time, and we delete your data within 30 days."),
    )
    questions = "".join(
        f"<details><summary>{question}</summary><p>ANSWER_{number} {answer}</p></details>"
        for number, (question, answer) in enumerate(answers)
    )
    page = (
        f"<html><head><title>Managed backup</title></head><body>{CHROME_TOP}<main>"
        "<div class='hero'><h1>Managed backup for small offices</h1><p>HERO We back up your servers "
        "and laptops every night, and restore any file within the hour when you need it.</p></div>"
        f"<div class='features-grid'>{features}</div>"
        f"<div class='process'><h2>How onboarding works</h2><ol>{steps}</ol></div>"
        "<div class='pricing'><h2>Plans</h2><div class='plan'><h3>Basic</h3><p>PLAN_0 $ 20 a month for "
        "100 GB</p></div><div class='plan'><h3>Pro</h3><p>PLAN_1 $ 50 a month for 1 TB</p></div></div>"
        f"<div class='faq'><h2>Questions</h2>{questions}</div>"
        f"</main>{CHROME_BOTTOM}</body></html>"
    )
    text = extract_html(
        page, "https://backup.example/managed", output_format="markdown", main_content=True
    ).text
    expected = ["HERO", *(f"FEATURE_{n} " for n in range(4)), *(f"STEP_{n} " for n in range(3))]
    expected += [*(f"PLAN_{n} " for n in range(2)), *(f"ANSWER_{n} " for n in range(2))]
    assert [part for part in expected if part not in text] == []
    assert "SITE_HEADER" not in text and "NAV_SHOP" not in text and "SITE_FOOTER" not in text
