"""Fixtures that run the real server through the SDK's Client, in memory."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from ipaddress import ip_network
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.config import Settings
from mcp_server_web.server.app import build_server
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.tavily import FakeTavily

LOOPBACK_ONLY = (ip_network("127.0.0.1/32"),)


def make_settings(**overrides: Any) -> Settings:
    """Settings that reach the test origin on 127.0.0.1 and nothing else private. Rendering is
    off unless a test turns it on, so a page's answer does not depend on the machine having a
    browser (tests/render covers rendering)."""
    values: dict[str, Any] = {"allow_cidrs": LOOPBACK_ONLY, "timeout": 5.0, "render": "off"}
    values.update(overrides)
    return Settings.from_values(values)


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily() as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def exa() -> Iterator[FakeExa]:
    with FakeExa() as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    # pytest-asyncio runs a fixture's setup and teardown in different tasks, and the Client's
    # task group must be exited in the task that entered it: so a task of its own holds it.
    ready, finished = asyncio.Event(), asyncio.Event()
    holder: list[Client] = []

    async def hold() -> None:
        async with Client(build_server(make_settings())) as connected:
            holder.append(connected)
            ready.set()
            await finished.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait({task, asyncio.create_task(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # re-raise a start-up failure
    yield holder[0]
    finished.set()
    await task


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def error_code(result: CallToolResult) -> str:
    assert result.is_error, f"expected an error, got: {text_of(result)[:300]}"
    return text_of(result).split(":", 1)[0]


# Written out here rather than imported from server/boundary.py, so the tests check the format the
# tool descriptions promise, not whatever the implementation happens to produce.
_OPENING = re.compile(r'<untrusted-content id="(?P<id>[0-9a-f]{16})" source="(?P<source>[^"<>\n]*)">\n')


@dataclass(frozen=True)
class Fenced:
    """A tool text split at its untrusted-content fence."""

    id: str
    source: str
    before: str
    inside: str
    after: str


def fenced(result: CallToolResult | str) -> Fenced:
    """The one fence in a tool's text, checked: the first opening tag is the real one (it comes
    before any text from the web), its id occurs exactly twice (the opening and the closing
    tag), and the closing tag stands on its own line after the opening one."""
    text = result if isinstance(result, str) else text_of(result)
    opening = _OPENING.search(text)
    assert opening is not None, f"no fence in: {text[:300]}"
    marker = opening["id"]
    closing = f'\n</untrusted-content id="{marker}">'
    assert text.count(marker) == 2, f"id {marker} occurs {text.count(marker)} times"
    assert text.count(closing) == 1
    end = text.index(closing)
    assert end >= opening.end()
    return Fenced(
        id=marker,
        source=opening["source"],
        before=text[: opening.start()],
        inside=text[opening.end() : end],
        after=text[end + len(closing) :],
    )


def fenced_text(result: CallToolResult | str) -> str:
    """The text inside the fence of a tool's answer, after checking the fence."""
    return fenced(result).inside
