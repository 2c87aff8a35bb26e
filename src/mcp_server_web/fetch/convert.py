"""Response -> text: dispatch on what the response really is (see sniff.py).

Synchronous and CPU-bound; the caller runs it in a worker thread.
"""

from __future__ import annotations

import html
import json
import logging
import re

from mcp_server_web.errors import ExtractionFailed, UnsupportedContentType
from mcp_server_web.fetch.charset import decode_text
from mcp_server_web.fetch.extract import extract_html
from mcp_server_web.fetch.pdf import pdf_to_text
from mcp_server_web.fetch.sniff import ContentKind, classify
from mcp_server_web.fetch.types import Converted, FetchResponse, OutputFormat

logger = logging.getLogger(__name__)

_BACKTICKS = re.compile(r"`+")


def convert(
    response: FetchResponse,
    *,
    output_format: OutputFormat,
    main_content: bool,
    pdf_max_pages: int = 100,
    pdf_time_budget: float = 20.0,
) -> Converted:
    """Turn a response into text in ``output_format``.

    Raises UnsupportedContentType for binary content (images, archives, executables...), which
    is never decoded as text, and ExtractionFailed when there is no text to return: an empty
    body, a page whose text only JavaScript would produce, a PDF without a text layer.
    """
    sniffed = classify(response)
    kind, media_type = sniffed.kind, sniffed.media_type
    logger.debug("converting %s as %s (%s)", response.final_url, kind, media_type)

    if kind is ContentKind.BINARY:
        raise UnsupportedContentType(
            f"{media_type} is not text; web_fetch returns text and cannot read images, archives or "
            "other binary files."
        )
    if not response.body.strip():
        raise ExtractionFailed(
            f"{response.final_url} returned an empty body ({media_type or 'no content type'})."
        )

    if kind is ContentKind.PDF:
        text, title, warnings = pdf_to_text(
            response.body, max_pages=pdf_max_pages, time_budget=pdf_time_budget
        )
        return Converted(
            text=_preformatted(text) if output_format == "html" else text,
            title=title,
            content_type=media_type,
            warnings=warnings,
        )

    if kind is ContentKind.HTML:
        decoded = decode_text(response.body, declared=response.charset, html=True)
        result = extract_html(
            decoded, response.final_url, output_format=output_format, main_content=main_content
        )
        if not result.text.strip():
            raise ExtractionFailed(
                f"{response.final_url} has no readable text in its HTML; its content is probably "
                "built by JavaScript in the browser, which web_fetch does not run."
            )
        return Converted(
            text=result.text, title=result.title, content_type=media_type, used_fallback=result.used_fallback
        )

    decoded = _normalise_newlines(decode_text(response.body, declared=response.charset, html=False))
    if not decoded.strip():
        raise ExtractionFailed(f"{response.final_url} returned only whitespace ({media_type}).")
    if kind is ContentKind.JSON:
        return _convert_json(decoded, media_type, output_format)
    if kind in (ContentKind.XML, ContentKind.FEED):
        return Converted(text=_code(decoded, "xml", output_format), title=None, content_type=media_type)
    # Plain text and Markdown pass through as they are.
    text = _preformatted(decoded) if output_format == "html" else decoded
    return Converted(text=text, title=None, content_type=media_type)


def _convert_json(decoded: str, media_type: str, output_format: OutputFormat) -> Converted:
    try:
        pretty = json.dumps(json.loads(decoded), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        # Labelled JSON but is not: still worth showing, as the text it is.
        note = "The body is labelled JSON but is not valid JSON; it is shown as text."
        return Converted(
            text=_code(decoded, "", output_format), title=None, content_type=media_type, warnings=(note,)
        )
    return Converted(text=_code(pretty, "json", output_format), title=None, content_type=media_type)


def _code(text: str, language: str, output_format: OutputFormat) -> str:
    """Source text as a fenced block (Markdown), as is (text), or in <pre><code> (HTML)."""
    if output_format == "text":
        return text
    if output_format == "html":
        css = f' class="language-{language}"' if language else ""
        return f"<pre><code{css}>{html.escape(text, quote=False)}</code></pre>"
    body = text.rstrip("\n")
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}{language}\n{body}\n{fence}"


def _preformatted(text: str) -> str:
    return f"<pre>{html.escape(text, quote=False)}</pre>"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
