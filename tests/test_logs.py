"""Our log level is the level of every log line the process writes, libraries' included."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import logging, sys
import trafilatura.metadata  # on import, sets the "htmldate" logger's own level to WARNING
from mcp_server_web.logs import configure_logging

configure_logging(sys.argv[1])
logging.getLogger("htmldate").warning("htmldate warning")
logging.getLogger("readability.readability").info("readability info")
logging.getLogger("mcp_server_web").error("our error")
"""


@pytest.mark.parametrize(
    ("level", "shown"),
    [
        ("error", ["our error"]),
        ("warning", ["htmldate warning", "our error"]),
        ("info", ["htmldate warning", "readability info", "our error"]),
    ],
)
def test_a_library_logger_with_a_level_of_its_own_follows_ours(level: str, shown: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, level], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout == ""
    assert [line.split(": ", 1)[1] for line in out.stderr.splitlines()] == shown, out.stderr
