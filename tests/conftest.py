"""Shared fixtures. Every server a test talks to listens on a loopback address."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.origin import Origin


@pytest.fixture
def origin() -> Iterator[Origin]:
    with Origin("127.0.0.1") as server:
        yield server
