"""Jobs for conversion workers (ConversionPool.run names them as "module:function") that report
on the worker itself."""

from __future__ import annotations

import sys


def loaded_at_start() -> dict[str, bool]:
    """What the worker holds before its first job reads anything (looked up, never imported)."""
    block_model = sys.modules.get("mcp_server_web.fetch.doc.block_model")
    external = sys.modules.get("trafilatura.external")
    return {
        "block_model": block_model is not None and getattr(block_model, "_model", None) is not None,
        "stoplists": external is not None and getattr(external, "JT_STOPLIST", None) is not None,
    }
