"""mcp-server-fetch's own extraction, as a scorer extractor: run by bench/.peer-venv/bin/python.

``score_extraction.py bench/peer_extract.py:main_content`` runs in the peer venv, so the function
under test, ``mcp_server_fetch.server.extract_content_from_html``, runs with the readabilipy,
markdownify and mcp versions mcp-server-fetch itself installs.

BENCH_PEER_NODE=1 or 0 says which readabilipy mode the caller set up (node on PATH with
readabilipy's javascript/node_modules installed, or no node on PATH); the import fails when the
environment does not give that mode, so a mislabelled row cannot happen.

The function's failure text (``<error>Page failed to be simplified from HTML</error>``) is
returned as an empty string, so the scorer counts it as an empty output (F1 0 either way).
"""

from __future__ import annotations

import os

import readabilipy.simple_json
from mcp_server_fetch.server import extract_content_from_html

FAILED = "<error>Page failed to be simplified from HTML</error>"

_expected = os.environ.get("BENCH_PEER_NODE")
if _expected is not None:
    _actual = readabilipy.simple_json.have_node()
    if _actual != (_expected == "1"):
        raise RuntimeError(f"BENCH_PEER_NODE={_expected} but readabilipy.have_node() is {_actual}")


def main_content(html: str, url: str) -> str:
    text = extract_content_from_html(html)
    return "" if text.strip() == FAILED else text
