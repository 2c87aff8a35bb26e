"""Shared fixtures. Every server a test talks to listens on a loopback address."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fakes.base import FakeProvider, running
from tests.support.fakes.brave import FakeBrave
from tests.support.fakes.duckduckgo import FakeDuckDuckGo
from tests.support.fakes.exa import FakeExa
from tests.support.fakes.searxng import FakeSearxng
from tests.support.fakes.tavily import FakeTavily
from tests.support.origin import Origin
from tests.support.redis_server import RedisServer, running_redis


@pytest.fixture
def origin() -> Iterator[Origin]:
    with Origin("127.0.0.1") as server:
        yield server


@pytest.fixture
def fakes() -> Iterator[dict[str, FakeProvider]]:
    made: dict[str, FakeProvider] = {
        "tavily": FakeTavily(),
        "exa": FakeExa(),
        "brave": FakeBrave(),
        "searxng": FakeSearxng(),
        "duckduckgo": FakeDuckDuckGo(),
    }
    with running(made):
        yield made


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of the test's own on a free 127.0.0.1 port, empty, never the machine's
    service; skipped without redis-server (failed under MCP_WEB_REQUIRE_SERVICES=1)."""
    with running_redis() as server:
        yield server
