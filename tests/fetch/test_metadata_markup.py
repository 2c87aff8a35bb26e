"""What metadata.page_metadata reads from a page's declarations and markup, read straight from the
parsed tree: the XPath-equivalent tests (words of class and rel as normalize-space separates them,
a <time> tested from itself up, microdata outside comments) on the edge cases they must get right."""

from __future__ import annotations

from mcp_server_web.fetch.doc.html_tree import parse_html
from mcp_server_web.fetch.doc.metadata import page_metadata
from mcp_server_web.fetch.types import PageMetadata

URL = "https://example.org/a/page"


def read(head: str, body: str) -> PageMetadata:
    root = parse_html(f"<html><head><title>Valleys</title>{head}</head><body>{body}</body></html>")
    assert root is not None
    return page_metadata(root, URL)


def test_canonical_link_rel_is_read_word_by_word() -> None:
    assert read('<link rel="\tcanonical\nalternate" href="/c">', "").canonical_url == "https://example.org/c"
    # A non-breaking space does not separate words for XPath's normalize-space.
    assert read('<link rel="canonical\u00a0x" href="/c">', "").canonical_url is None
    assert read('<link rel="canonicalish" href="/c">', "").canonical_url is None
    assert read('<link rel="canonical">', "").canonical_url is None
    # The first usable one, in document order, even outside <head>.
    body = '<link rel="canonical" href="/body">'
    assert read('<link rel="x canonical" href="">', body).canonical_url == "https://example.org/body"


def test_json_ld_type_is_compared_normalised_and_ascii_lower_cased() -> None:
    data = '{"@type": "NewsArticle", "author": {"name": "Ada Lovelace"}}'
    assert read(f'<script type="  Application/LD+JSON ">{data}</script>', "").author == "Ada Lovelace"
    assert read(f'<script type="application/ld+json;x">{data}</script>', "").author is None
    assert read(f'<script type="application/ld+\u212ason">{data}</script>', "").author is None  # Kelvin sign


def test_meta_values_in_document_order() -> None:
    head = '<meta name="author" content=" "><meta property="Author" content="Grace Hopper">'
    assert read(head, '<meta name="author" content="Later">').author == "Grace Hopper"


def test_microdata_inside_a_comment_or_review_is_not_the_pages() -> None:
    body = (
        '<div itemprop="comment"><div><span itemprop="author">Commenter</span></div></div>'
        '<div itemprop="review"><time itemprop="datePublished" datetime="2020-01-01">x</time></div>'
        '<p itemprop="author"><b itemprop="name">Ada Lovelace</b></p>'
        '<meta itemprop="datePublished" content="2021-02-03">'
    )
    found = read("", body)
    assert found.author == "Ada Lovelace"
    assert found.published == "2021-02-03T00:00:00+00:00"


def test_a_time_in_a_byline_comes_before_one_in_the_article() -> None:
    body = (
        '<article><p><time datetime="2019-05-06">May</time></p>'
        '<div class="x\tmeta"><time datetime="2020-07-08">July</time></div></article>'
    )
    assert read("", body).published == "2020-07-08T00:00:00+00:00"


def test_a_time_in_the_article_outside_its_navigation_asides_footer_and_comments() -> None:
    body = (
        "<nav><article><time datetime='2018-01-01'>x</time></article></nav>"
        "<article><footer><time datetime='2018-02-02'>x</time></footer>"
        "<div itemprop='comment'><time datetime='2018-03-03'>x</time></div></article>"
        "<div role='main'><time datetime='2018-04-04'>x</time></div>"
    )
    assert read("", body).published == "2018-04-04T00:00:00+00:00"
    assert read("", "<section><time datetime='2018-05-05'>x</time></section>").published is None
    # A class word "metadata" is not "meta"; the time outside any article is not read.
    assert read("", "<div class='metadata'><time datetime='2018-06-06'>x</time></div>").published is None


def test_byline_elements_by_class_word_or_rel_author() -> None:
    assert read(
        "", '<p class="authors">Not me</p><a rel="nofollow author" href="/u">Jane Doe</a>'
    ).author == ("Jane Doe")
    assert read("", '<span class="post-author">By Jane Doe</span>').author == "Jane Doe"
