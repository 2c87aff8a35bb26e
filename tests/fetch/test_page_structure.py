"""What a page's structure says about its text: headings whose section was dropped, permalink
anchors in headings, and the highlighted entry of a docs sidebar (issue 25).

Each page is a small but realistic rendition of what a common engine serves (Sphinx, MkDocs,
GitHub, Docusaurus, a shop), fetched over HTTP from 127.0.0.1 by the real
Fetcher and converted by the real conversion path.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from ipaddress import ip_network

import pytest

from mcp_server_web.fetch import FetchConfig
from mcp_server_web.fetch.doc.convert import convert
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.types import OutputFormat
from tests.support.netguard import QuickOrigin
from tests.support.origin import Origin

FILL = (
    "The cache keeps each converted page for a while, so that a second read of the same URL costs "
    "no download and no conversion; its size is bounded in bytes and in entries."
)


def paragraphs(topic: str, count: int = 3) -> str:
    return "".join(f"<p>{topic}, note {i}. {FILL} {FILL}</p>" for i in range(1, count + 1))


@pytest.fixture
def origin() -> Iterator[Origin]:
    with QuickOrigin("127.0.0.1") as server:
        yield server


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    config = FetchConfig(allow_cidrs=(ip_network("127.0.0.1/32"),), timeout=5, respect_robots=False)
    async with Fetcher(config, environ={}) as client:
        yield client


async def read(
    fetcher: Fetcher, origin: Origin, page: str, *, output_format: OutputFormat = "markdown"
) -> str:
    """The page served from 127.0.0.1, fetched and converted to its main content."""
    url = origin.serve("/page.html", page)
    response = await fetcher.fetch(url)
    assert response.status == 200
    return convert(response, output_format=output_format, main_content=True).text


def headings(markdown: str) -> list[str]:
    return re.findall(r"^#{1,6} (.*)$", markdown, flags=re.MULTILINE)


# --- permalink anchors in headings ---------------------------------------------------------------


def sphinx_page() -> str:
    """Sphinx (Read the Docs theme): every heading and API entry ends with a headerlink, and the
    current page is highlighted in the sidebar's table of contents."""
    toc = "".join(
        f'<li class="toctree-l1"><a class="reference internal" href="/docs/{name.lower()}.html">'
        f"{name}</a></li>"
        for name in ("Install", "Quickstart", "Usage", "Deploy")
    )
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<title>Settings reference — Widgets</title></head>
<body class="wy-body-for-nav"><div class="wy-grid-for-nav">
<div class="wy-side-scroll"><div class="wy-menu wy-menu-vertical">
<p class="caption"><span class="caption-text">Contents</span></p>
<ul>{toc}<li class="toctree-l1 current"><a class="current reference internal" href="#">Settings reference</a>
<ul><li class="toctree-l2"><a class="reference internal" href="#cache">Cache</a></li></ul></li></ul>
</div></div>
<section class="wy-nav-content-wrap"><div class="wy-nav-content"><div class="rst-content">
<div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article">
<div itemprop="articleBody">
<section id="settings-reference">
<h1>Settings reference<a class="headerlink" href="#settings-reference" title="Link to this heading">¶</a></h1>
{paragraphs("Settings")}
<section id="cache"><h2>Cache<a class="headerlink" href="#cache" title="Link to this heading">¶</a></h2>
{paragraphs("Cache")}
<dl class="py function"><dt class="sig sig-object py" id="widgets.cache.clear">
<span class="sig-name descname">clear</span>()<a class="headerlink" href="#widgets.cache.clear">¶</a></dt>
<dd><p>Empty the cache. {FILL}</p></dd></dl>
</section>
<section id="timeouts"><h2>Timeouts<a class="headerlink" href="#timeouts"
title="Link to this heading">¶</a></h2>
{paragraphs("Timeouts")}
<p>See <a class="reference internal" href="#cache">the cache</a> for how long pages are kept.</p>
</section>
</section></div></div></div></div></section></div></body></html>"""


def mkdocs_page() -> str:
    """MkDocs Material: the permalink follows the heading text; the id is on the heading."""
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>Install - Widgets</title></head><body>
<header class="md-header"><nav class="md-header__inner"><a href="/">Widgets</a></nav></header>
<div class="md-container"><main class="md-main"><div class="md-content">
<article class="md-content__inner md-typeset">
<h1 id="install">Install<a class="headerlink" href="#install" title="Permanent link">&para;</a></h1>
{paragraphs("Install")}
<h2 id="from-pip">From pip<a class="headerlink" href="#from-pip" title="Permanent link">&para;</a></h2>
{paragraphs("Pip")}
<h2 id="from-source"><a href="#from-source">From source</a></h2>
{paragraphs("Source")}
<h2 id="upstream"><a href="https://upstream.example/guide">The upstream guide</a></h2>
{paragraphs("Upstream")}
</article></div></main></div></body></html>"""


SVG_LINK = (
    '<svg class="octicon octicon-link" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">'
    '<path d="m7.775 3.275 1.25-1.25a3.5 3.5 0 1 1 4.95 4.95l-2.5 2.5"></path></svg>'
)


def github_readme_page() -> str:
    """A GitHub-rendered README: old-style anchors inside the heading (an svg link icon whose id
    is user-content-<slug>), new-style ones beside it."""
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>widgets/README.md</title></head><body>
<div class="application-main"><main><div id="readme" class="Box-body">
<article class="markdown-body entry-content container-lg" itemprop="text">
<h1><a id="user-content-widgets" class="anchor" aria-hidden="true" href="#widgets">{SVG_LINK}</a>Widgets</h1>
{paragraphs("Widgets")}
<h2><a id="user-content-install" class="anchor" aria-hidden="true" tabindex="-1"
href="#install">{SVG_LINK}</a>Install</h2>
{paragraphs("Install")}
<div class="markdown-heading"><h2 tabindex="-1" class="heading-element">Usage</h2>
<a id="user-content-usage" class="anchor" aria-label="Permalink: Usage" href="#usage">{SVG_LINK}</a></div>
{paragraphs("Usage")}
<h3><a class="anchor" href="#license">#</a> License</h3>
{paragraphs("License")}
</article></div></main></div></body></html>"""


async def test_sphinx_headerlinks_are_dropped_from_headings(fetcher: Fetcher, origin: Origin) -> None:
    text = await read(fetcher, origin, sphinx_page())
    assert headings(text) == ["Settings reference", "Cache", "Timeouts"], text[:600]
    assert "¶" not in text
    assert "clear()" in text  # the API entry keeps its name, not its permalink
    # A link into the page that is not the heading's own stays.
    assert "[the cache](" in text
    plain = await read(fetcher, origin, sphinx_page(), output_format="text")
    assert "¶" not in plain and "Settings reference\n" in plain


async def test_mkdocs_permalinks_go_and_linked_headings_keep_their_text(
    fetcher: Fetcher, origin: Origin
) -> None:
    text = await read(fetcher, origin, mkdocs_page())
    # A heading that links to itself keeps its words, not the link; one that links elsewhere
    # stays a link.
    assert headings(text) == [
        "Install",
        "From pip",
        "From source",
        "[The upstream guide](https://upstream.example/guide)",
    ], text[:600]
    assert "¶" not in text


async def test_github_anchor_icons_leave_no_empty_links(fetcher: Fetcher, origin: Origin) -> None:
    text = await read(fetcher, origin, github_readme_page())
    assert headings(text) == ["Widgets", "Install", "Usage", "License"], text[:600]
    assert "](" not in text  # no link is left in the text: each pointed at its heading


# --- the highlighted sidebar entry ---------------------------------------------------------------


def docusaurus_page() -> str:
    """Docusaurus-like: the sidebar is a plain <div> (no <nav>, no <aside>), its current entry
    marked aria-current and *--active, and it names the page as the title does."""
    entries = "".join(
        f'<li class="menu__list-item"><a class="menu__link" href="/docs/{name.lower()}">{name}</a></li>'
        for name in ("Introduction", "Install", "Deploy")
    )
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Configuration | Widgets</title>
</head><body>
<div class="main-wrapper docs-wrapper"><div class="docPage">
<div class="docSidebarContainer"><div class="sidebar"><ul class="theme-doc-sidebar-menu menu__list">{entries}
<li class="menu__list-item"><a class="menu__link menu__link--active" aria-current="page"
href="/docs/configuration">Configuration</a></li>
</ul></div></div>
<main class="docMainContainer"><div class="container"><div class="row"><div class="col docItemCol">
<article><div class="theme-doc-markdown markdown"><header><h1>Configuration</h1></header>
{paragraphs("Configuration", 4)}
<h2 id="cache">Cache<a href="#cache" class="hash-link" aria-label="Direct link to Cache"
title="Direct link to Cache">\u200b</a></h2>
{paragraphs("Cache")}
</div></article></div></div></div></main></div></div></body></html>"""


@pytest.mark.parametrize(
    ("page", "title"),
    [(sphinx_page, "# Settings reference"), (docusaurus_page, "# Configuration")],
    ids=["sphinx", "docusaurus"],
)
async def test_the_current_sidebar_entry_does_not_precede_the_title(
    fetcher: Fetcher, origin: Origin, page: Callable[[], str], title: str
) -> None:
    text = await read(fetcher, origin, page())
    assert text.startswith(title + "\n"), text[:300]


# --- headings whose section was dropped ----------------------------------------------------------


def product_page() -> str:
    """A shop's product page: its reviews widget (a review per card, stars, helpful votes) is not
    the product, and goes; its heading must go with it."""
    reviews = "".join(
        f'<div class="review-card"><span class="stars">★★★★☆</span><p class="review-body">REVIEW {i}: '
        "I wore these shoes on a long walk through the city and they stayed comfortable all day, "
        f'even in the rain.</p><span class="helpful">{i} people found this helpful</span></div>'
        for i in range(1, 7)
    )
    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Wool Runner",
        "offers": {"@type": "Offer", "price": "98"},
    }
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Wool Runner</title>
<script type="application/ld+json">{json.dumps(product)}</script></head><body>
<header><a href="/">SHOP</a></header><main>
<h1>Wool Runner</h1><p class="price">$ 98</p>
<h2>Description</h2>
<div class="description"><p>The Wool Runner is a light everyday shoe made from merino wool. It breathes in
summer, keeps your feet warm in winter, and goes in the washing machine.</p>
<p>Its sole is made from sugarcane, and its laces from recycled bottles, so that the whole shoe leaves a
smaller footprint than most.</p></div>
<h2>Materials</h2><p>Merino wool upper, sugarcane sole, recycled polyester laces; machine washable.</p>
<h2>Customer reviews</h2>
<section class="product-reviews"><h3>Most helpful</h3>{reviews}</section>
</main><footer><p>FOOTER</p></footer></body></html>"""


async def test_a_heading_whose_section_was_dropped_goes_too(fetcher: Fetcher, origin: Origin) -> None:
    text = await read(fetcher, origin, product_page())
    assert "REVIEW" not in text  # the reviews were dropped (what the selection decides)...
    assert "Customer reviews" not in text and "Most helpful" not in text, text  # ... and their headings
    assert headings(text)[:2] == ["Wool Runner", "Description"]
    assert text.endswith("Merino wool upper, sugarcane sole, recycled polyester laces; machine washable.")


def cards_page() -> str:
    """A listing whose cards are only headings: those sections were empty on the page already,
    and stay."""
    cards = "".join(
        f'<div class="card"><h3><a href="/guides/{i}">Guide number {i} to the river widgets</a></h3></div>'
        for i in range(1, 9)
    )
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Guides</title></head><body>
<main><h1>Guides</h1><p>Every guide we have written about the widgets, newest first. {FILL}</p>
<div class="cards">{cards}</div></main></body></html>"""


async def test_headings_that_were_empty_on_the_page_stay(fetcher: Fetcher, origin: Origin) -> None:
    text = await read(fetcher, origin, cards_page())
    assert sum(1 for heading in headings(text) if heading.startswith("[Guide number")) == 8, text
