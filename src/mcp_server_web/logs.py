"""Logging goes to stderr only: on stdio, stdout is the protocol channel."""

from __future__ import annotations

import logging
import sys


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Request-by-request chatter from the HTTP stack is noise at info level.
    for noisy in ("httpx", "httpcore", "mcp.server.lowlevel.server"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
