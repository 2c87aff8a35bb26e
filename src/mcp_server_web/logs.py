"""Logging goes to stderr only: on stdio, stdout is the protocol channel.

The same set-up runs in the server and in each conversion worker process (fetch/workers.py),
so the libraries that log from inside a conversion (readability, trafilatura) follow the level
there too.
"""

from __future__ import annotations

import logging
import sys

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str | int) -> None:
    """Every log line at ``level`` or above to stderr, and nothing below it."""
    numeric = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    # On the handler as well as the root: a library that gives its logger a level of its own
    # (trafilatura sets htmldate's to WARNING) would otherwise get past the root's.
    handler.setLevel(numeric)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # Request-by-request chatter from the HTTP stack is noise at info level.
    for noisy in ("httpx", "httpcore", "mcp.server.lowlevel.server"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, numeric))
