"""Pagination reads one snapshot: a refresh by another caller never stitches two versions together.

Through the real web_fetch tool (the SDK's Client, in memory) against an origin on 127.0.0.1 whose
page changes between downloads. Each page names its snapshot; passing it back keeps reading that
version while the server holds it, and once it is gone the caller is told to start again
(snapshot_expired) instead of silently getting pages of another version.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from mcp import Client

from mcp_server_web.server.app import build_server
from mcp_server_web.server.contract import WebFetchInput, web_fetch_description
from tests.server.conftest import error_code, fenced, make_settings, text_of
from tests.support.origin import Origin, Reply, RequestContext

PAGE = 3000
SNAPSHOT = re.compile(r"[0-9a-f]{12}")


def version_html(version: int) -> str:
    """A long article whose every paragraph names its version; later versions are longer."""
    parts = []
    for s in range(20 + 5 * version):
        parts.append(f"<h2>Section {s}</h2>")
        parts.extend(
            f"<p>Version {version} section {s} paragraph {p}. "
            + "The river cuts its valley slowly. " * 6
            + "</p>"
            for p in range(3)
        )
    return (
        "<!DOCTYPE html><html><head><title>Changing Read</title></head><body><article>"
        f"<h1>Changing Read</h1>{''.join(parts)}</article></body></html>"
    )


class ChangingPage:
    """Serves version_html(n); bump() makes the next download a new version."""

    def __init__(self, origin: Origin, path: str = "/changing") -> None:
        self.version = 1
        origin.route(path, self._answer)
        self.url = origin.url(path)

    def _answer(self, ctx: RequestContext) -> None:
        ctx.send(Reply(200, version_html(self.version)))

    def bump(self) -> None:
        self.version += 1


async def call(client: Client, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool("web_fetch", arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return fenced(result).inside, result.structured_content


def footer_of(client_text: str) -> str:
    return client_text.rsplit("\n\n", 1)[-1]


async def test_pages_of_a_snapshot_survive_a_refresh(origin: Origin) -> None:
    page = ChangingPage(origin)
    async with Client(build_server(make_settings())) as client:
        result = await client.call_tool("web_fetch", {"url": page.url, "max_length": PAGE})
        first, data = fenced(result).inside, result.structured_content
        assert data is not None
        snapshot, total = data["snapshot"], data["total_length"]
        assert SNAPSHOT.fullmatch(snapshot), snapshot
        fetched_at = datetime.fromisoformat(data["fetched_at"].replace("Z", "+00:00"))
        assert fetched_at.tzinfo is not None and fetched_at.utcoffset() == timedelta(0)
        assert abs(datetime.now(UTC) - fetched_at) < timedelta(minutes=5)
        # The continuation line names the snapshot to pass back.
        assert footer_of(text_of(result)) == (
            f"[{total - data['next_start_index']} more characters of {total}. Call web_fetch again with "
            f"start_index={data['next_start_index']} and snapshot={snapshot} to continue.]"
        )
        assert "Version 1 " in first

        # Another caller refreshes; the origin now serves a different version.
        page.bump()
        _, fresh = await call(client, url=page.url, refresh=True, max_length=PAGE)
        assert fresh["snapshot"] != snapshot and fresh["total_length"] != total
        assert fresh["cached"] is False

        # The first reader walks on with its snapshot: every page is of version 1.
        texts, start, seen_totals = [first], data["next_start_index"], {total}
        while start is not None:
            text, later = await call(
                client, url=page.url, start_index=start, max_length=PAGE, snapshot=snapshot
            )
            assert later["snapshot"] == snapshot and later["cached"] is True
            assert later["fetched_at"] == data["fetched_at"]
            seen_totals.add(later["total_length"])
            assert "Version 2" not in text
            texts.append(text)
            start = later["next_start_index"]
            assert len(texts) < 100
        assert seen_totals == {total}
        whole_v1, whole = await call(client, url=page.url, max_length=100_000, snapshot=snapshot)
        assert "".join(texts) == whole_v1 and len(whole_v1) == total and whole["snapshot"] == snapshot

        # Without a snapshot the current version is read, as before.
        current, plain = await call(client, url=page.url, start_index=PAGE, max_length=PAGE)
        assert plain["snapshot"] == fresh["snapshot"] and plain["total_length"] == fresh["total_length"]
        assert plain["cached"] is True and "Version 1" not in current
    assert origin.hits("/changing") == 2


async def test_an_evicted_snapshot_says_start_again(origin: Origin) -> None:
    page = ChangingPage(origin)
    filler_html = version_html(60)  # each filler document alone is over a third of the cache
    origin.route("/filler", lambda ctx: ctx.send(Reply(200, filler_html)))
    async with Client(build_server(make_settings(cache_max_mb=0.5))) as client:
        _, data = await call(client, url=page.url, max_length=PAGE)
        snapshot = data["snapshot"]
        page.bump()
        await call(client, url=page.url, refresh=True, max_length=PAGE)
        _, held = await call(client, url=page.url, start_index=PAGE, max_length=PAGE, snapshot=snapshot)
        assert held["snapshot"] == snapshot
        for n in range(4):  # together larger than the whole cache: everything older is evicted
            _, filler = await call(client, url=origin.url(f"/filler?n={n}"), max_length=10)
            assert filler["total_length"] * 3 > 512 * 1024
        result = await client.call_tool(
            "web_fetch", {"url": page.url, "start_index": 2 * PAGE, "max_length": PAGE, "snapshot": snapshot}
        )
        assert error_code(result) == "snapshot_expired"
        message = text_of(result)
        assert snapshot in message and "start_index=0" in message and "without snapshot" in message
        # Starting again works, and reads the current version.
        text, again = await call(client, url=page.url, max_length=PAGE)
        assert again["snapshot"] != snapshot and "Version 2 " in text


async def test_an_unchanged_page_reads_on_even_when_its_snapshot_cannot_be_cached(origin: Origin) -> None:
    # The cache (20 KB) is smaller than the document: nothing is kept, every page is converted
    # again, and since the id is derived from the content, the same text keeps the same id.
    html = version_html(3)
    url = origin.serve("/steady", html)
    async with Client(build_server(make_settings(cache_max_mb=0.02))) as client:
        text, data = await call(client, url=url, max_length=PAGE)
        assert data["total_length"] > 20 * 1024
        texts, start = [text], data["next_start_index"]
        while start is not None:
            text, later = await call(
                client, url=url, start_index=start, max_length=PAGE, snapshot=data["snapshot"]
            )
            assert later["snapshot"] == data["snapshot"] and later["total_length"] == data["total_length"]
            assert later["cached"] is False
            texts.append(text)
            start = later["next_start_index"]
            assert len(texts) < 100
    assert len("".join(texts)) == data["total_length"]
    assert origin.hits("/steady") == len(texts)


async def test_a_snapshot_is_only_served_for_its_own_request(origin: Origin) -> None:
    page = ChangingPage(origin)
    other = ChangingPage(origin, "/other")
    async with Client(build_server(make_settings())) as client:
        _, data = await call(client, url=page.url, max_length=PAGE)
        await call(client, url=other.url, max_length=PAGE)
        # Another URL, or the same URL in another format, is another document: never this one.
        for arguments in (
            {"url": other.url},
            {"url": page.url, "format": "text"},
            {"url": page.url, "main_content": False},
        ):
            result = await client.call_tool("web_fetch", {**arguments, "snapshot": data["snapshot"]})
            assert error_code(result) == "snapshot_expired", arguments
        # A well-formed id the server never issued.
        result = await client.call_tool("web_fetch", {"url": page.url, "snapshot": "0123456789ab"})
        assert error_code(result) == "snapshot_expired"


async def test_snapshot_argument_is_validated(origin: Origin) -> None:
    page = ChangingPage(origin)
    async with Client(build_server(make_settings())) as client:
        _, data = await call(client, url=page.url, max_length=PAGE)
        for bad in ("xyz", "0123456789abc", "0123456789a", "../../etc/pas", 12, ["0123456789ab"]):
            result = await client.call_tool("web_fetch", {"url": page.url, "snapshot": bad})
            assert error_code(result) == "invalid_argument", bad
            assert "snapshot" in text_of(result)
        # A refresh downloads a new version, so it cannot also ask for an old one.
        result = await client.call_tool(
            "web_fetch", {"url": page.url, "snapshot": data["snapshot"], "refresh": True}
        )
        assert error_code(result) == "invalid_argument"
        assert "refresh" in text_of(result) and "snapshot" in text_of(result)
        # Case does not matter; an empty string means no snapshot.
        _, upper = await call(client, url=page.url, snapshot=data["snapshot"].upper())
        assert upper["snapshot"] == data["snapshot"]
        _, empty = await call(client, url=page.url, snapshot="")
        assert empty["snapshot"] == data["snapshot"]
    assert origin.hits("/changing") == 1


def test_schema_and_description_tell_the_model_about_snapshots() -> None:
    prop = WebFetchInput.input_schema()["properties"]["snapshot"]
    assert prop["anyOf"] == [{"type": "string", "pattern": "^[0-9a-fA-F]{12}$"}, {"type": "null"}]
    description = web_fetch_description(900.0)
    assert "snapshot_expired" in description and "snapshot" in prop["description"]
    assert "A snapshot lives up to 15 minutes" in description
