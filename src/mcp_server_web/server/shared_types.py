"""The registry of every type the shared state stores, for the state codec.

state/ may not import the packages that declare these classes, so the composition root builds the
registry and hands it to the codec. A tag is written in every stored entry: renaming one, or
changing a class's fields, makes the entries written before unreadable (they are read as misses).
"""

from __future__ import annotations

from typing import Any


def shared_types() -> dict[str, type[Any]]:
    """Tag -> class of every dataclass stored in, or passed through, the shared state."""
    # Imported here: the search chain is loaded on first use (see providers/__init__.py), and only
    # a server with shared state needs these now.
    from mcp_server_web.fetch import Document, FetchResponse, PageMetadata, RenderedPage
    from mcp_server_web.providers import Attempt, SearchAnswer, SearchQuery, SearchResult

    return {
        "fetch.response": FetchResponse,
        "fetch.document": Document,
        "fetch.metadata": PageMetadata,
        "fetch.rendered": RenderedPage,
        "search.answer": SearchAnswer,
        "search.query": SearchQuery,
        "search.result": SearchResult,
        "search.attempt": Attempt,
    }
