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
