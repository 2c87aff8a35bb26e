"""Who wrote a page and when (fetch/doc/metadata.py): pages served from 127.0.0.1, downloaded by the
real Fetcher and converted by the conversion worker's own job (snapshot.convert_identified)."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from ipaddress import ip_network

import pytest
from pypdf import PdfReader, PdfWriter

from mcp_server_web.fetch import MAX_URL_LENGTH, FetchConfig
from mcp_server_web.fetch.doc import metadata as metadata_module
from mcp_server_web.fetch.net.client import Fetcher
from mcp_server_web.fetch.snapshot import convert_identified
from mcp_server_web.fetch.types import Converted, PageMetadata
from tests.support.origin import Origin
from tests.support.samples import minimal_pdf

CONFIG = FetchConfig(allow_cidrs=(ip_network("127.0.0.1/32"),), timeout=5.0)
PROSE = "".join(
    f"<p>Rivers carry sediment downstream, cutting into rock over thousands of years ({i}). "
    "Erosion and deposition work together to shape the valley floor, meander by meander.</p>"
    for i in range(8)
)


@pytest.fixture
async def fetcher() -> AsyncIterator[Fetcher]:
    async with Fetcher(CONFIG, environ={}) as client:
        yield client


async def read(fetcher: Fetcher, url: str, *, main_content: bool = True) -> Converted:
    response = await fetcher.fetch(url)
    converted, _ = convert_identified(response, output_format="markdown", main_content=main_content)
    return converted


def page(head: str, body: str, *, lang: str | None = None) -> str:
    opening = f'<html lang="{lang}">' if lang else "<html>"
    return f"<!DOCTYPE html>{opening}<head><title>Valleys</title>{head}</head><body>{body}</body></html>"


def json_ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


NEWS_JSON_LD = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "WebSite", "@id": "https://news.example/#site", "name": "The Valley Times"},
        {
            "@type": ["NewsArticle"],
            "headline": "Valleys",
            "author": [{"@type": "Person", "name": "Jane Doe"}, {"@id": "https://news.example/#roe"}],
            "datePublished": "2024-03-01T09:30:00+01:00",
            "dateModified": "2024-03-05T18:00:00Z",
            "description": "How rivers cut valleys &amp; why it takes so long.",
            "publisher": {"@type": "NewsMediaOrganization", "name": "Valley Media Group"},
        },
        {"@type": "Person", "@id": "https://news.example/#roe", "name": "John Roe"},
    ],
}


async def test_a_news_article_declares_itself_in_json_ld_which_wins(fetcher: Fetcher, origin: Origin) -> None:
    # OpenGraph and meta tags disagree with the JSON-LD: JSON-LD is the publisher's typed data
    # for machines, so it wins field by field (see metadata.py).
    head = (
        json_ld(NEWS_JSON_LD)
        + '<meta property="og:site_name" content="OG Name">'
        + '<meta property="article:published_time" content="2020-01-01T00:00:00Z">'
        + '<meta name="author" content="Meta Author">'
        + '<meta name="description" content="Meta description">'
        + '<link rel="canonical" href="/2024/03/valleys?utm=no">'
    )
    body = f'<article><h1>Valleys</h1><p class="byline">By Someone Else</p>{PROSE}</article>'
    url = origin.serve("/news/valleys", page(head, body, lang="en-GB"))
    converted = await read(fetcher, url)
    assert converted.metadata == PageMetadata(
        author="Jane Doe, John Roe",
        published="2024-03-01T09:30:00+01:00",
        modified="2024-03-05T18:00:00+00:00",
        site_name="Valley Media Group",
        language="en-GB",
        description="How rivers cut valleys & why it takes so long.",
        canonical_url=origin.url("/2024/03/valleys?utm=no"),
    )
    assert "Rivers carry sediment" in converted.text


async def test_a_blog_with_only_opengraph(fetcher: Fetcher, origin: Origin) -> None:
    head = (
        '<meta property="og:site_name" content="Field Notes">'
        '<meta property="og:description" content="A walk up the valley.">'
        # A date with no zone is read as UTC, as web_search's dates are.
        '<meta property="article:published_time" content="2024-05-02T08:00:00">'
        '<meta property="article:modified_time" content="2024-05-03">'
        # A profile URL is not a name.
        '<meta property="article:author" content="https://www.facebook.com/fieldnotes">'
    )
    url = origin.serve("/blog/walk", page(head, f"<article><h1>A walk</h1>{PROSE}</article>"))
    converted = await read(fetcher, url)
    assert converted.metadata == PageMetadata(
        published="2024-05-02T08:00:00+00:00",
        modified="2024-05-03T00:00:00+00:00",
        site_name="Field Notes",
        description="A walk up the valley.",
    )


async def test_a_page_with_only_meta_tags_and_a_time_element(fetcher: Fetcher, origin: Origin) -> None:
    head = (
        '<meta name="author" content="  Marie\n Curie ">'
        '<meta name="description" content="Notes on radium.">'
        '<meta name="dcterms.modified" content="2023-11-30T10:00:00-05:00">'
    )
    body = (
        "<nav><time datetime='1999-01-01'>an old menu date</time></nav>"
        "<article><h1>Radium</h1><p>Written <time datetime='2023-11-28'>last Tuesday</time>.</p>"
        f"{PROSE}</article>"
    )
    # No <html lang>: the Content-Language header names the language.
    url = origin.serve("/notes", page(head, body), headers={"Content-Language": "fr-CA, en"})
    converted = await read(fetcher, url)
    assert converted.metadata == PageMetadata(
        author="Marie Curie",
        published="2023-11-28T00:00:00+00:00",
        modified="2023-11-30T10:00:00-05:00",
        language="fr-CA",
        description="Notes on radium.",
    )


async def test_a_byline_alone_names_the_author(fetcher: Fetcher, origin: Origin) -> None:
    body = (
        '<article><h1>Terraces</h1><div class="post-meta"><span class="byline">by '
        '<a rel="author" href="/u/ana">Ana Lima</a></span></div>'
        f"{PROSE}</article>"
    )
    url = origin.serve("/terraces", page("", body, lang="pt-BR"))
    converted = await read(fetcher, url)
    assert converted.metadata == PageMetadata(author="Ana Lima", language="pt-BR")


async def test_microdata_names_author_and_dates(fetcher: Fetcher, origin: Origin) -> None:
    body = (
        '<article itemscope itemtype="https://schema.org/BlogPosting"><h1>Deltas</h1>'
        '<span itemprop="author" itemscope><span itemprop="name">Kofi Mensah</span></span>'
        '<meta itemprop="datePublished" content="2022-07-14T12:00:00+02:00">'
        f"{PROSE}"
        '<div itemprop="comment" itemscope><span itemprop="author">A Commenter</span></div></article>'
    )
    url = origin.serve("/deltas", page("", body))
    converted = await read(fetcher, url)
    assert converted.metadata.author == "Kofi Mensah"
    assert converted.metadata.published == "2022-07-14T12:00:00+02:00"


async def test_a_page_that_declares_nothing_has_all_null(fetcher: Fetcher, origin: Origin) -> None:
    head = (
        '<meta name="date" content="sometime last spring">'  # not a date: null, not a guess
        '<link rel="canonical" href="javascript:alert(1)">'  # not http(s): null
        '<meta name="author" content="   ">'
    )
    url = origin.serve("/plain", page(head, f"<article><h1>Plain</h1>{PROSE}</article>", lang="not a tag!"))
    for main_content in (True, False):
        converted = await read(fetcher, url, main_content=main_content)
        assert converted.metadata == PageMetadata()
        assert "Rivers carry sediment" in converted.text


async def test_a_pdf_gives_its_document_information(fetcher: Fetcher, origin: Origin) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(minimal_pdf(["Valleys and rivers"], title="Valleys"))))
    writer.add_metadata(
        {
            "/Author": "Jane\nDoe",
            "/CreationDate": "D:20240301120000+01'00'",
            "/ModDate": "D:20240305093000",  # no zone: UTC
        }
    )
    body = io.BytesIO()
    writer.write(body)
    url = origin.serve("/paper.pdf", body.getvalue(), content_type="application/pdf")
    converted = await read(fetcher, url)
    assert "Valleys and rivers" in converted.text
    assert converted.metadata == PageMetadata(
        author="Jane Doe", published="2024-03-01T12:00:00+01:00", modified="2024-03-05T09:30:00+00:00"
    )


async def test_a_pdf_without_information_has_all_null(fetcher: Fetcher, origin: Origin) -> None:
    url = origin.serve("/bare.pdf", minimal_pdf(["Plain text"]), content_type="application/pdf")
    assert (await read(fetcher, url)).metadata == PageMetadata()


def test_the_canonical_url_cap_is_the_fetch_url_cap() -> None:
    assert metadata_module.URL_LIMIT == MAX_URL_LENGTH
