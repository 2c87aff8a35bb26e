"""The job a conversion worker runs: a response converted, and the id of that version.

Runs in the worker process (see workers.py), where the text already is: hashing up to 10 MB of
text there costs the server's event loop nothing and needs no thread of the server's.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from mcp_server_web.fetch.doc.convert import convert
from mcp_server_web.fetch.types import (
    SNAPSHOT_LENGTH,
    Converted,
    FetchResponse,
    OutputFormat,
    metadata_parts,
)


def convert_identified(
    response: FetchResponse, *, output_format: OutputFormat, main_content: bool, **options: Any
) -> tuple[Converted, str]:
    """``convert(response, ...)`` and the snapshot id of what it made."""
    converted = convert(response, output_format=output_format, main_content=main_content, **options)
    return converted, snapshot_id(response, converted, output_format, main_content)


def convert_whole_instead(
    response: FetchResponse, *, output_format: OutputFormat, reason: str, **options: Any
) -> tuple[Converted, str]:
    """The whole page, for a request of its main content that could not be met (``reason``:
    "took longer than 18 seconds"): said in a warning, and identified as the main-content
    document it stands for."""
    converted = convert(response, output_format=output_format, main_content=False, **options)
    note = f"Picking out the main content of this page {reason}; the whole page was converted instead."
    converted = replace(converted, used_fallback=True, warnings=(*converted.warnings, note))
    return converted, snapshot_id(response, converted, output_format, True)


def snapshot_id(
    response: FetchResponse, converted: Converted, output_format: OutputFormat, main_content: bool
) -> str:
    """Derived from everything a page of the document shows, so equal content keeps its id.

    The format and the main-content mode count too: an id names one document of one URL, and a
    request in another mode never reads it, even when both readings happen to be the same text.
    """
    digest = hashlib.blake2b(digest_size=SNAPSHOT_LENGTH // 2)
    for part in (
        output_format,
        str(main_content),
        response.final_url,
        str(response.status),
        converted.content_type,
        converted.title or "",
        str(converted.used_fallback),
        *metadata_parts(converted.metadata),
        *converted.warnings,
        converted.text,
    ):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()
