"""Permalink anchors stay out of what web_fetch says about a page's headings: its outline and the
heading paths of its passages (issue 25), through the real server, the SDK Client and a real origin."""

from __future__ import annotations

from mcp import Client

from tests.fetch.test_page_structure import sphinx_page
from tests.server.conftest import fenced_text, text_of
from tests.support.origin import Origin


async def test_outline_and_passage_paths_carry_no_permalinks(client: Client, origin: Origin) -> None:
    url = origin.serve("/settings.html", sphinx_page())
    outline = await client.call_tool("web_fetch", {"url": url, "outline": True})
    assert not outline.is_error, text_of(outline)
    assert outline.structured_content is not None
    entries = [(entry["heading"], entry["level"]) for entry in outline.structured_content["outline"]]
    assert entries == [("Settings reference", 1), ("Cache", 2), ("Timeouts", 2)], entries
    assert "¶" not in fenced_text(outline)

    found = await client.call_tool("web_fetch", {"url": url, "query": "timeouts note"})
    assert not found.is_error, text_of(found)
    inside = fenced_text(found)
    assert "[start_index=" in inside and "Settings reference > Timeouts" in inside, inside[:500]
    assert "¶" not in inside
