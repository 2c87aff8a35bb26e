"""extract_html: main content, cleaning, absolute links, Markdown/text/HTML output, robustness."""

from __future__ import annotations

import re

import pytest

from mcp_server_web.fetch.doc.extract import MAIN_CONTENT_MAX_ELEMENTS, extract_html, main_content
from mcp_server_web.fetch.doc.html_tree import MAX_DEPTH, parse_html
from tests.support.samples import article_html
from tests.support.timing import cpu_time

BASE = "https://example.com/blog/post/rivers"
PARAGRAPH = (
    "Rivers carry sediment downstream, cutting into rock over thousands of years. Erosion and "
    "deposition work together to shape the valley floor, meander by meander, and the slope of "
    "the land decides how fast the water moves."
)


def article_page(extra_body: str = "", head: str = "") -> str:
    paragraphs = "\n".join(f"<p>Paragraph {i}. {PARAGRAPH}</p>" for i in range(1, 9))
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>  How Rivers
 Shape Valleys | Geo Blog </title>{head}
<style>body {{ color: red }}</style><script>var secret = "SCRIPT_TEXT";</script></head>
<body>
<nav class="site-nav"><a href="/">Home</a> <a href="/about">About us</a> <a href="/contact">Contact</a></nav>
<article>
<h1>How Rivers Shape Valleys</h1>
<p>An introduction with a <a href="../glossary/erosion">relative link</a>, a
<a href="https://example.org/abs">absolute one</a> and <a href="javascript:void(0)">a script link</a>.</p>
<h2>Erosion</h2>
{paragraphs}
<h3>A list</h3>
<ul><li>First item: water flows downhill</li><li>Second item: rock wears away slowly<ul>
<li>Nested item: sand, silt and clay</li></ul></li></ul>
<pre><code class="language-python">def flow(rate):
    return rate * 2
</code></pre>
<table><tr><th>River</th><th>Length km</th></tr><tr><td>Nile</td><td>6650</td></tr></table>
<p><img src="/img/valley.png" alt="A valley"> <span style="display:none">HIDDEN_TEXT</span></p>
<div hidden>ALSO_HIDDEN</div>
{extra_body}
</article>
<footer>Copyright Geo Blog. <form action="/subscribe"><label>Your email</label><input name="email">
<button>SUBSCRIBE_BUTTON</button></form></footer>
</body></html>"""


def markdown(html: str, url: str = BASE, *, main: bool = True) -> str:
    return extract_html(html, url, output_format="markdown", main_content=main).text


# --- Markdown --------------------------------------------------------------------------------


def test_article_to_markdown() -> None:
    result = extract_html(article_page(), BASE, output_format="markdown", main_content=True)
    text = result.text
    assert result.title == "How Rivers Shape Valleys | Geo Blog"
    assert result.used_fallback is False
    assert re.search(r"^# How Rivers Shape Valleys$", text, re.M)
    assert re.search(r"^## Erosion$", text, re.M)
    assert re.search(r"^### A list$", text, re.M)
    assert "[relative link](https://example.com/blog/glossary/erosion)" in text
    assert "[absolute one](https://example.org/abs)" in text
    assert "a script link" in text and "javascript:" not in text
    assert "```python\ndef flow(rate):\n    return rate * 2\n```" in text
    assert "| River | Length km |\n| --- | --- |\n| Nile | 6650 |" in text
    assert "![A valley](https://example.com/img/valley.png)" in text
    assert "Paragraph 8. Rivers carry sediment" in text
    # Navigation and footer are not the main content.
    assert "About us" not in text and "Copyright" not in text


def test_markdown_house_style() -> None:
    text = markdown(article_page())
    assert (
        "- First item: water flows downhill\n- Second item: rock wears away slowly\n"
        "  - Nested item: sand, silt and clay"
    ) in text
    assert not re.search(r"^\s*[*+] ", text, re.M), "'-' bullets only"
    assert not re.search(r"</?[a-z][a-z0-9]*[^>]*>", text), "no HTML tags left"
    assert "\n\n\n" not in text
    assert not re.search(r"[ \t]+$", text, re.M), "no trailing spaces"
    for hidden in ("SCRIPT_TEXT", "color: red", "HIDDEN_TEXT", "ALSO_HIDDEN", "SUBSCRIBE_BUTTON"):
        assert hidden not in text


def test_base_href_is_respected() -> None:
    text = markdown(article_page(head='<base href="https://cdn.example.net/docs/">'))
    assert "[relative link](https://cdn.example.net/glossary/erosion)" in text
    assert "![A valley](https://cdn.example.net/img/valley.png)" in text


def test_relative_base_href_resolves_against_the_page() -> None:
    text = markdown(article_page(head='<base href="/archive/2024/">'))
    assert "[relative link](https://example.com/archive/glossary/erosion)" in text


@pytest.mark.parametrize(
    ("block", "fenced"),
    [
        ('<pre><code class="language-rust">fn main() {}</code></pre>', "```rust\nfn main() {}\n```"),
        ('<pre class="lang-js"><code>let x = 1;</code></pre>', "```js\nlet x = 1;\n```"),
        (
            '<div class="highlight highlight-source-python"><pre>print(1)</pre></div>',
            "```python\nprint(1)\n```",
        ),
        ('<pre data-lang="Go"><code>func main() {}</code></pre>', "```go\nfunc main() {}\n```"),
        (
            '<pre class="sourceCode haskell"><code>main = pure ()</code></pre>',
            "```haskell\nmain = pure ()\n```",
        ),
        ("<pre><code>no language here</code></pre>", "\n```\nno language here\n```"),
    ],
)
def test_code_block_language(block: str, fenced: str) -> None:
    assert fenced in markdown(article_page(extra_body=block))


def test_code_containing_backticks_gets_a_longer_fence() -> None:
    text = markdown(article_page(extra_body="<pre><code>echo ```not a fence```</code></pre>"))
    assert "````\necho ```not a fence```\n````" in text


def test_lazy_and_inline_images() -> None:
    extra = (
        '<p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" data-src="/img/lazy.jpg" alt="Lazy">'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="Inline"></p>'
    )
    text = markdown(article_page(extra_body=extra))
    assert "![Lazy](https://example.com/img/lazy.jpg)" in text
    assert "data:" not in text and "Inline" not in text


# --- other formats ---------------------------------------------------------------------------


def test_text_format_has_no_markdown_syntax() -> None:
    text = extract_html(article_page(), BASE, output_format="text", main_content=True).text
    assert "How Rivers Shape Valleys\n\nAn introduction with a relative link" in text
    assert "Paragraph 1. Rivers" in text and "\n\nParagraph 2. Rivers" in text
    assert "def flow(rate):\n    return rate * 2" in text
    assert "Nile | 6650" in text
    for syntax in ("#", "](", "**", "```", "![", "https://"):
        assert syntax not in text


def test_text_format_keeps_line_breaks() -> None:
    page = (
        "<html><body><article><p>"
        + "Line one of the poem<br>Line two of the poem<br>" * 20
        + "</p></article>"
    )
    text = extract_html(page, BASE, output_format="text", main_content=False).text
    assert "Line one of the poem\nLine two of the poem\nLine one" in text


def test_html_format_is_the_cleaned_fragment() -> None:
    fragment = extract_html(article_page(), BASE, output_format="html", main_content=True).text
    assert fragment.startswith("<") and "<html" not in fragment and "<body" not in fragment
    assert '<a href="https://example.com/blog/glossary/erosion">relative link</a>' in fragment
    assert "<h1>How Rivers Shape Valleys</h1>" in fragment
    assert "<script" not in fragment and "SCRIPT_TEXT" not in fragment and "style=" not in fragment


def test_whole_page_keeps_navigation_but_not_scripts_styles_or_forms() -> None:
    result = extract_html(article_page(), BASE, output_format="markdown", main_content=False)
    text = result.text
    assert result.used_fallback is False
    assert "[About us](https://example.com/about)" in text
    assert "Copyright Geo Blog." in text and "# How Rivers Shape Valleys" in text
    for gone in ("SCRIPT_TEXT", "color: red", "SUBSCRIBE_BUTTON", "Your email", "HIDDEN_TEXT"):
        assert gone not in text


def test_a_form_wrapping_the_whole_page_is_kept() -> None:
    # ASP.NET pages put everything inside one <form>.
    page = (
        "<html><body><form id='aspnetForm'><input type=hidden name=x><article><h1>Title</h1>"
        f"<p>{PARAGRAPH}</p><p>{PARAGRAPH} Second.</p></article></form></body></html>"
    )
    text = markdown(page)
    assert "Rivers carry sediment" in text and "Second." in text


def test_main_content_callable_for_the_scorer() -> None:
    text = main_content(article_page(), BASE)
    assert text == markdown(article_page())


# --- main region: listings, product pages, forums ---------------------------------------------


def listing_page(items: int = 40) -> str:
    cards = "\n".join(
        f'<div class="card"><h3><a href="/p/{i}">Product {i}</a></h3>'
        f"<p>Item {i} costs {i * 3} euros.</p></div>"
        for i in range(items)
    )
    return f"<html><head><title>Shop</title></head><body><div class='grid'>{cards}</div></body></html>"


def test_listing_page_falls_back_to_the_whole_page() -> None:
    result = extract_html(
        listing_page(), "https://shop.example/", output_format="markdown", main_content=True
    )
    assert result.used_fallback is True
    for i in (0, 17, 39):
        assert f"[Product {i}](https://shop.example/p/{i})" in result.text
        assert f"Item {i} costs {i * 3} euros." in result.text


def test_fallback_prefers_the_main_element_over_page_chrome() -> None:
    items = "".join(f"<li><a href='/t/{i}'>Thread {i}</a> <span>{i} replies</span></li>" for i in range(40))
    page = (
        "<html><body><header><a href='/'>SITE_HEADER</a></header><nav><a href='/x'>NAV_LINK</a></nav>"
        f"<main><h1>Forum</h1><ul>{items}</ul></main><footer>SITE_FOOTER</footer></body></html>"
    )
    result = extract_html(page, "https://forum.example/", output_format="markdown", main_content=True)
    assert result.used_fallback is True
    assert "[Thread 39](https://forum.example/t/39)" in result.text
    for chrome in ("SITE_HEADER", "NAV_LINK", "SITE_FOOTER"):
        assert chrome not in result.text


SITE_CHROME_TOP = (
    "<header><a href='/'>SITE_HEADER</a></header>"
    "<nav><a href='/news'>NAV_NEWS</a> <a href='/about'>NAV_ABOUT</a></nav>"
)
SITE_CHROME_BOTTOM = "<footer><p>SITE_FOOTER, all rights reserved.</p></footer>"


def test_news_listing_keeps_every_item() -> None:
    cards = "\n".join(
        f'<article class="card"><h2><a href="/story/{i}">Story number {i} about the river delta</a></h2>'
        f"<p>Teaser {i}: sediment builds up where the river meets the sea, year after year.</p>"
        f"<time>March {i + 1}, 2026</time></article>"
        for i in range(20)
    )
    page = (
        f"<html><head><title>News</title></head><body>{SITE_CHROME_TOP}<main><h1>Latest news</h1>"
        f"<p>{PARAGRAPH}</p><div class='stories'>{cards}</div></main>{SITE_CHROME_BOTTOM}</body></html>"
    )
    result = extract_html(page, "https://news.example/", output_format="markdown", main_content=True)
    for i in range(20):
        assert f"[Story number {i} about the river delta](https://news.example/story/{i})" in result.text
        assert f"Teaser {i}: sediment builds up" in result.text
    for chrome in ("SITE_HEADER", "NAV_NEWS", "SITE_FOOTER"):
        assert chrome not in result.text


def product_page() -> str:
    ld = (
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product",'
        ' "name": "Trail Pack 25"}</script>'
    )
    reviews = "".join(
        f'<div class="review"><h4>Reviewer {i}</h4><p>REVIEW_TEXT {i}: I carried this pack on a long '
        f"hike through the hills and it held up well in the rain.</p></div>"
        for i in range(6)
    )
    related = "".join(
        f'<li class="card"><a href="/p/{i}">OTHER_PRODUCT {i}</a> <span>$ {50 + i}</span></li>'
        for i in range(8)
    )
    return (
        f"<html><head><title>Trail Pack 25</title>{ld}</head><body>{SITE_CHROME_TOP}<main>"
        "<h1>Trail Pack 25</h1><p class='price'>$ 89.95</p>"
        "<div class='description'><p>The Trail Pack 25 is a light day pack for long walks. Its frame "
        "keeps the load close to your back, and its side pockets hold two water bottles.</p>"
        "<p>Made from recycled nylon with a water-repellent finish, it shrugs off showers and "
        "dries quickly after a river crossing.</p></div>"
        "<h2>Specifications</h2><table><tr><th>Weight</th><td>1.1 kg</td></tr>"
        "<tr><th>Volume</th><td>25 litres</td></tr><tr><th>Material</th><td>Recycled nylon</td></tr></table>"
        f"<section class='product-reviews'><h2>Customer reviews</h2>{reviews}</section>"
        f"<section class='related-products'><h2>You may also like</h2><ul>{related}</ul></section>"
        f"</main>{SITE_CHROME_BOTTOM}</body></html>"
    )


def test_product_page_keeps_description_and_specs_but_not_reviews_or_related() -> None:
    text = extract_html(
        product_page(), "https://shop.example/p/1", output_format="markdown", main_content=True
    ).text
    assert "# Trail Pack 25" in text
    assert "The Trail Pack 25 is a light day pack" in text and "dries quickly after a river crossing" in text
    assert "| Weight | 1.1 kg |" in text and "| Material | Recycled nylon |" in text
    assert "REVIEW_TEXT" not in text
    assert "OTHER_PRODUCT" not in text
    assert "SITE_FOOTER" not in text


def test_forum_posts_marked_up_as_microdata_are_the_content() -> None:
    posts = "".join(
        '<article itemscope itemtype="https://schema.org/Comment">'
        f'<div class="user-details"><a href="/u/{i}">member{i}</a>'
        f"<span>MEMBER_STATS {i * 7} posts</span></div>"
        f'<div itemprop="text"><p>Post {i}: the water level rose again last night, and the bridge on the '
        f"old road is closed until the engineers have inspected it.</p></div>"
        '<div class="post-actions"><a href="#">Like</a> <a href="#">Reply</a></div></article>'
        for i in range(6)
    )
    page = (
        f"<html><head><title>Flood thread</title></head><body>{SITE_CHROME_TOP}<main>"
        f"<h1>Is the river road still closed?</h1>{posts}</main>{SITE_CHROME_BOTTOM}</body></html>"
    )
    text = markdown(page, "https://forum.example/t/1")
    assert "# Is the river road still closed?" in text
    for i in range(6):
        assert f"Post {i}: the water level rose again" in text
    assert "MEMBER_STATS" not in text


def test_a_hidden_copy_of_the_article_is_not_repeated() -> None:
    copy = "".join(f"<p>{PARAGRAPH} Copy {i}.</p>" for i in range(1))
    hidden = (
        '<div style="display:none" itemscope itemtype="https://schema.org/NewsArticle">'
        f'<div itemprop="articleBody">{" ".join(f"Paragraph {i}. {PARAGRAPH}" for i in range(1, 9))}</div>'
        f"{copy}</div>"
    )
    text = markdown(article_page(extra_body=hidden))
    assert text.count("Paragraph 3. Rivers carry sediment") == 1


def test_a_page_wrapped_in_a_header_element_is_still_read() -> None:
    page = (
        article_page().replace("<article>", "<header><article>").replace("</article>", "</article></header>")
    )
    text = markdown(page)
    assert "# How Rivers Shape Valleys" in text and "Paragraph 8. Rivers carry sediment" in text


def test_tiny_page_is_never_empty() -> None:
    result = extract_html("<html><body><span>Just a short note.</span></body></html>", BASE,
                          output_format="markdown", main_content=True)  # fmt: skip
    assert result.text == "Just a short note."


@pytest.mark.parametrize(
    "html", ["", "   \n\t ", "<!-- only a comment -->", "<html><head></head><body></body></html>"]
)
def test_no_text_gives_an_empty_result(html: str) -> None:
    result = extract_html(html, BASE, output_format="markdown", main_content=True)
    assert result.text == ""


def test_noscript_page_content_is_kept_but_nags_are_not() -> None:
    page = (
        "<html><body><noscript>Please enable JavaScript to use this site.</noscript>"
        "<div id='app'></div><noscript><article><h1>Thread title</h1>"
        f"<p>{PARAGRAPH}</p><p>{PARAGRAPH}</p></article></noscript></body></html>"
    )
    text = markdown(page)
    assert "# Thread title" in text and "Rivers carry sediment" in text
    assert "enable JavaScript" not in text


def test_a_page_hidden_until_its_javascript_runs_is_still_read() -> None:
    hidden_link = '<a href="javascript:show()" style="display:none">JS_ONLY_LINK</a>'
    page = article_page().replace("<article>", '<article style="visibility:hidden">')
    page = page.replace("</article>", hidden_link + "</article>")
    text = markdown(page)
    assert "# How Rivers Shape Valleys" in text and "Paragraph 8." in text
    assert "JS_ONLY_LINK" not in text and "HIDDEN_TEXT" not in text


# --- title -----------------------------------------------------------------------------------


def test_title_falls_back_to_og_title_then_h1() -> None:
    og = (
        '<html><head><meta property="og:title" content="From  OG"></head><body><h1>Heading</h1></body></html>'
    )
    assert extract_html(og, BASE, output_format="text", main_content=False).title == "From OG"
    h1 = "<html><body><h1>Only a\n heading</h1><p>text</p></body></html>"
    assert extract_html(h1, BASE, output_format="text", main_content=False).title == "Only a heading"


# --- robustness ------------------------------------------------------------------------------


def test_deeply_nested_page_returns_its_text_quickly() -> None:
    depth = 100_000
    page = "<html><body><p>before</p>" + "<div>" * depth + "deep inner text" + "</div>" * depth
    page += "<p>after the deep part</p></body></html>"
    result, cpu = cpu_time(lambda: extract_html(page, BASE, output_format="markdown", main_content=True))
    assert "deep inner text" in result.text
    assert "before" in result.text and "after the deep part" in result.text
    assert cpu < 2.0, f"took {cpu:.2f} s of CPU"


@pytest.mark.parametrize("depth", [250, 1000, 5000])
def test_tree_depth_is_capped(depth: int) -> None:
    page = "<html><body>" + "<div><span>x</span>" * depth + "bottom" + "</div>" * depth + "</body></html>"
    root = parse_html(page)
    assert root is not None
    deepest = max(len(list(element.iterancestors())) + 1 for element in root.iter())
    assert deepest <= MAX_DEPTH
    assert "bottom" in root.text_content()


def test_long_whitespace_runs_do_not_stall_conversion() -> None:
    page = "<html><body><article><p>start" + " " * 300_000 + "end</p><pre>a" + " " * 100_000 + "b</pre>"
    page += f"<p>{PARAGRAPH}</p></article></body></html>"
    text, cpu = cpu_time(lambda: markdown(page, main=False))
    assert cpu < 2.0, f"took {cpu:.2f} s of CPU"
    assert "start end" in text


def test_malformed_base_and_links_do_not_crash() -> None:
    page = article_page(
        head='<base href="http://[::1">',
        extra_body='<p>See the <a href="http://[bad">broken</a> link, which must not stop the conversion.',
    )
    text = markdown(page)
    assert "broken" in text and "Paragraph 3." in text


def test_a_page_too_large_for_main_content_is_converted_whole_with_a_warning() -> None:
    rows = "".join(f"<li>item {i}</li>" for i in range(MAIN_CONTENT_MAX_ELEMENTS))
    page = f"<html><body><nav>SITE_NAV</nav><ul>{rows}</ul></body></html>"
    result = extract_html(page, "https://e.example/", output_format="markdown", main_content=True)
    assert f"- item {MAIN_CONTENT_MAX_ELEMENTS - 1}" in result.text
    assert "SITE_NAV" in result.text  # the whole page, navigation included
    assert len(result.warnings) == 1 and "too many to pick out its main content" in result.warnings[0]


def test_a_page_under_the_element_limit_gets_main_content_and_no_warning() -> None:
    result = extract_html(article_html(), "https://e.example/", output_format="markdown", main_content=True)
    assert result.warnings == ()
