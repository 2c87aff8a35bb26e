"""web_fetch's focused reading (query) and outline, through the real server and a real origin."""

from __future__ import annotations

import re

from mcp import Client

from tests.server.conftest import error_code, fenced, fenced_text, text_of
from tests.support.origin import Origin

FILLER = "The surveyors walked the banks and wrote down what they saw along the way. " * 6

GUIDE = f"""\
# Widget guide

Widgets are small tools for measuring rivers. {FILLER}

## Install

Widgets need Python 3.12 or later and a working compiler. {FILLER}

### From source

Clone the repository and run make to build the extension modules. {FILLER}

### With pip

Run pip install widgets from a virtual environment. {FILLER}

## Troubleshooting

If the gauge reads zero, recalibrate the sensor with widget calibrate --reset. {FILLER}
"""

HEADER = re.compile(r"^\[start_index=(\d+) · (.*)\]$", re.MULTILINE)


def serve_guide(origin: Origin, path: str = "/guide.md") -> str:
    return origin.serve(path, GUIDE, "text/markdown; charset=utf-8")


async def test_query_returns_relevant_passages_headed_by_start_index(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    result = await client.call_tool("web_fetch", {"url": url, "query": "how to recalibrate the gauge sensor"})
    assert not result.is_error, text_of(result)
    inside = fenced_text(result)
    headers = HEADER.findall(inside)
    assert headers, inside
    assert "Widget guide > Troubleshooting" in [heading for _, heading in headers], headers
    assert "recalibrate the sensor" in inside
    assert "pip install" not in inside
    data = result.structured_content
    assert data is not None
    passages = data["passages"]
    assert [str(p["start_index"]) for p in passages] == [start for start, _ in headers]
    assert sum(p["length"] for p in passages) <= 8000
    for passage in passages:
        # The header's start_index is where the passage's text sits in the document.
        assert GUIDE[passage["start_index"] : passage["start_index"] + passage["length"]] in inside
        assert passage["score"] > 0
    assert data["outline"] is None
    assert data["total_length"] == len(GUIDE)
    # How to read more: after the fence, it names start_index and this snapshot.
    after = fenced(result).after
    assert "start_index" in after and data["snapshot"] in after


async def test_max_length_bounds_the_passages(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    result = await client.call_tool("web_fetch", {"url": url, "query": "widgets", "max_length": 700})
    data = result.structured_content
    assert data is not None and data["passages"]
    assert sum(p["length"] for p in data["passages"]) <= 700


async def test_second_query_and_outline_cost_no_download(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    first = await client.call_tool("web_fetch", {"url": url, "query": "compiler"})
    second = await client.call_tool("web_fetch", {"url": url, "query": "virtual environment"})
    third = await client.call_tool("web_fetch", {"url": url, "outline": True})
    assert not first.is_error and not second.is_error and not third.is_error
    assert origin.hits("/guide.md") == 1
    assert second.structured_content is not None and second.structured_content["cached"] is True
    assert third.structured_content is not None and third.structured_content["cached"] is True


async def test_outline_lists_headings_and_reading_at_one_starts_there(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    result = await client.call_tool("web_fetch", {"url": url, "outline": "true"})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data is not None and data["passages"] is None
    entries = data["outline"]
    assert [(e["heading"], e["level"]) for e in entries] == [
        ("Widget guide", 1),
        ("Install", 2),
        ("From source", 3),
        ("With pip", 3),
        ("Troubleshooting", 2),
    ]
    inside = fenced_text(result)
    assert "  - From source [start_index=" in inside  # indented under Install
    source = next(e for e in entries if e["heading"] == "From source")
    section = await client.call_tool(
        "web_fetch", {"url": url, "start_index": source["start_index"], "max_length": source["length"]}
    )
    text = fenced_text(section)
    assert text.startswith("### From source\n")
    assert "With pip" not in text


async def test_html_format_outline_and_query(client: Client, origin: Origin) -> None:
    page = (
        "<html><head><title>Widgets</title></head><body><article><h1>Widget guide</h1>"
        f"<p>Widgets are small tools for measuring rivers. {FILLER}</p><h2>Troubleshooting</h2>"
        f"<p>If the gauge reads zero, recalibrate the sensor. {FILLER}</p></article></body></html>"
    )
    url = origin.serve("/guide.html", page)
    outline = await client.call_tool("web_fetch", {"url": url, "format": "html", "outline": True})
    data = outline.structured_content
    assert data is not None
    assert [e["heading"] for e in data["outline"]] == ["Widget guide", "Troubleshooting"]
    query = await client.call_tool("web_fetch", {"url": url, "format": "html", "query": "recalibrate"})
    assert query.structured_content is not None
    assert [p["heading"] for p in query.structured_content["passages"]] == ["Widget guide > Troubleshooting"]


async def test_text_format_has_no_outline_and_says_so(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    result = await client.call_tool("web_fetch", {"url": url, "format": "text", "outline": True})
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["outline"] == []
    assert "format=markdown" in text_of(result)


async def test_a_query_nothing_matches_says_so(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    result = await client.call_tool("web_fetch", {"url": url, "query": "zebra giraffe"})
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["passages"] == []
    assert "No passage" in text_of(result)


async def test_query_with_outline_or_start_index_is_refused(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    both = await client.call_tool("web_fetch", {"url": url, "query": "widgets", "outline": True})
    assert error_code(both) == "invalid_argument"
    assert "query" in text_of(both) and "outline" in text_of(both)
    moved = await client.call_tool("web_fetch", {"url": url, "query": "widgets", "start_index": 100})
    assert error_code(moved) == "invalid_argument"
    too_long = await client.call_tool("web_fetch", {"url": url, "query": "w" * 401})
    assert error_code(too_long) == "invalid_argument"
    assert origin.hits("/guide.md") == 0  # refused before any download


async def test_empty_query_reads_normally_and_snapshot_is_honoured(client: Client, origin: Origin) -> None:
    url = serve_guide(origin)
    plain = await client.call_tool("web_fetch", {"url": url, "query": "  "})
    assert not plain.is_error
    assert plain.structured_content is not None and plain.structured_content["passages"] is None
    assert fenced_text(plain).startswith("# Widget guide")
    snapshot = plain.structured_content["snapshot"]
    focused = await client.call_tool("web_fetch", {"url": url, "query": "compiler", "snapshot": snapshot})
    assert focused.structured_content is not None and focused.structured_content["snapshot"] == snapshot
    assert "working compiler" in fenced_text(focused)


async def test_plain_text_passages_are_headed_before_the_first_heading(
    client: Client, origin: Origin
) -> None:
    url = origin.serve(
        "/notes.txt", f"Field notes.\n\n{FILLER}\n\nThe gauge was recalibrated on Monday.\n", "text/plain"
    )
    result = await client.call_tool(
        "web_fetch", {"url": url, "format": "text", "query": "gauge recalibrated"}
    )
    assert not result.is_error, text_of(result)
    assert "[start_index=" in fenced_text(result) and "· (before the first heading)]" in fenced_text(result)
    assert result.structured_content is not None
    assert [p["heading"] for p in result.structured_content["passages"]] == [""]
