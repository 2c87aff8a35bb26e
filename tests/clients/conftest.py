"""One run of every client driver against one stage, shared by the tests that read it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.clients.stage import CLIENT_MODES, Stage, client_python, finish_driver, staged, start_driver


@pytest.fixture(scope="session")
def stage() -> Iterator[Stage]:
    with staged() as made:
        yield made


@pytest.fixture(scope="session")
def reports(stage: Stage) -> dict[str, dict[str, Any]]:
    """Each client mode's report, its drivers run at once (each starts our server once and makes
    every call on it). A missing venv leaves that mode out, and its tests skip or fail; a driver
    that fails is that mode's failure, kept as {"failed": why}, not every mode's."""
    plan = stage.plan()
    started = {}
    for mode in CLIENT_MODES:
        try:
            python = client_python(mode.group)
        except pytest.skip.Exception:
            continue
        started[mode.id] = start_driver(python, mode.driver, mode.args, plan)
    reports: dict[str, dict[str, Any]] = {}
    for name, process in started.items():
        try:
            reports[name] = finish_driver(process, name)
        except (AssertionError, ValueError) as failure:
            reports[name] = {"failed": str(failure)}
    return reports
