"""Who wrote a page and when, through web_fetch end to end: a real MCP Client, the real server,
pages on 127.0.0.1 (and Exa's fake for a read-through)."""

from __future__ import annotations

import io
import json

from mcp import Client
from pypdf import PdfReader, PdfWriter

from mcp_server_web.server.app import build_server
from tests.server.conftest import fenced_text, text_of
from tests.server.test_fetch_fallback import PAGE_TEXT, settings_with, wall
from tests.support.fakes.exa import FakeExa
from tests.support.origin import Origin
from tests.support.samples import minimal_pdf

FIELDS = ("author", "published", "modified", "site_name", "language", "description", "canonical_url")
PROSE = "".join(
    f"<p>Rivers carry sediment downstream, cutting into rock over thousands of years ({i}). "
    "Erosion and deposition work together to shape the valley floor, meander by meander.</p>"
    for i in range(40)
)
BYLINE = "By Jane Doe, John Roe · Published 2024-03-01 · Updated 2024-03-05 · The Valley Times"


def news_page() -> str:
    data = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "name": "The Valley Times"},
            {
                "@type": "NewsArticle",
                "author": [{"@type": "Person", "name": "Jane Doe"}, {"@type": "Person", "name": "John Roe"}],
                "datePublished": "2024-03-01T09:30:00+01:00",
                "dateModified": "2024-03-05T18:00:00Z",
                "description": "How rivers cut valleys.",
            },
        ],
    }
    return (
        "<!DOCTYPE html><html lang='en-GB'><head><title>Valleys</title>"
        f"<script type='application/ld+json'>{json.dumps(data)}</script>"
        "<link rel='canonical' href='/2024/03/valleys'></head>"
        f"<body><article><h1>Valleys</h1>{PROSE}</article></body></html>"
    )


async def test_web_fetch_says_who_and_when(client: Client, origin: Origin) -> None:
    url = origin.serve("/news/valleys", news_page())
    result = await client.call_tool("web_fetch", {"url": url, "max_length": 1000})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None
    assert {name: data[name] for name in FIELDS} == {
        "author": "Jane Doe, John Roe",
        "published": "2024-03-01T09:30:00+01:00",
        "modified": "2024-03-05T18:00:00+00:00",
        "site_name": "The Valley Times",
        "language": "en-GB",
        "description": "How rivers cut valleys.",
        "canonical_url": origin.url("/2024/03/valleys"),
    }
    # One compact line opens the first page, inside the fence; the page itself follows.
    first = fenced_text(result)
    assert first.startswith(BYLINE + "\n\n# Valleys\n")
    assert first.count("Jane Doe") == 1

    # The line is not part of the document: the offsets count the document's characters, so the
    # first page's text after the line and the next page join into the document as one reading
    # of it gives it.
    whole = await client.call_tool("web_fetch", {"url": url, "max_length": 100_000})
    document = fenced_text(whole).removeprefix(BYLINE + "\n\n")
    assert len(document) == whole.structured_content["total_length"] == data["total_length"]
    page_one = first.removeprefix(BYLINE + "\n\n")
    assert document.startswith(page_one) and data["next_start_index"] == len(page_one)
    second = await client.call_tool(
        "web_fetch",
        {"url": url, "start_index": data["next_start_index"], "snapshot": data["snapshot"]}
        | {"max_length": 1000},
    )
    assert not second.is_error, text_of(second)
    page_two = fenced_text(second)
    assert "Jane Doe" not in page_two and document[len(page_one) :].startswith(page_two)
    assert second.structured_content["author"] == "Jane Doe, John Roe"  # the fields on every page

    # Passages and outlines are not the page's opening: no line.
    for focused in ({"query": "sediment"}, {"outline": True}):
        answer = await client.call_tool("web_fetch", {"url": url, **focused})
        assert not answer.is_error, text_of(answer)
        assert BYLINE not in text_of(answer)
        assert answer.structured_content["published"] == "2024-03-01T09:30:00+01:00"


async def test_a_page_that_declares_nothing_has_null_fields_and_no_line(
    client: Client, origin: Origin
) -> None:
    plain = f"<html><head><title>Plain</title></head><body><article>{PROSE}</article></body>"
    url = origin.serve("/plain", plain)
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert all(result.structured_content[name] is None for name in FIELDS)
    assert fenced_text(result).startswith("Rivers carry sediment")


async def test_a_pdf_says_who_and_when(client: Client, origin: Origin) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(minimal_pdf(["Valleys and rivers"], title="Valleys"))))
    writer.add_metadata({"/Author": "Jane Doe", "/CreationDate": "D:20240301120000+01'00'"})
    body = io.BytesIO()
    writer.write(body)
    url = origin.serve("/paper.pdf", body.getvalue(), content_type="application/pdf")
    result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    assert result.structured_content["author"] == "Jane Doe"
    assert result.structured_content["published"] == "2024-03-01T12:00:00+01:00"
    assert fenced_text(result).startswith("By Jane Doe · Published 2024-03-01\n\n--- Page 1 ---")


async def test_a_read_through_gives_what_exa_says(origin: Origin, exa: FakeExa) -> None:
    url = wall(origin)
    exa.pages[url] = ("The Valley", PAGE_TEXT)
    exa.about[url] = {"author": "Jane\nDoe", "publishedDate": "2024-03-01T09:30:00.000Z"}
    async with Client(build_server(settings_with(exa, fallback=("exa",)))) as client:
        result = await client.call_tool("web_fetch", {"url": url})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["via"] == "exa"
    assert data["author"] == "Jane Doe" and data["published"] == "2024-03-01T09:30:00+00:00"
    assert data["site_name"] is None and data["canonical_url"] is None
    assert fenced_text(result).startswith("By Jane Doe · Published 2024-03-01\n\n# The Valley")
