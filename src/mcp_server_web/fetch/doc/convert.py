"""Response -> text: dispatch on what the response really is (see sniff.py).

Synchronous and CPU-bound; the caller runs it in a worker thread.
"""

from __future__ import annotations

import html
import json
import logging
import re
from dataclasses import replace
from typing import overload

from mcp_server_web.errors import ExtractionFailed, ScriptBuiltPage, UnsupportedContentType
from mcp_server_web.fetch.doc.charset import decode_text, without_controls
from mcp_server_web.fetch.doc.embedded import PageScripts, ShellReport, inspect_shell, recover_embedded_text
from mcp_server_web.fetch.doc.extract import extract_html
from mcp_server_web.fetch.doc.pdf import pdf_to_text
from mcp_server_web.fetch.doc.sniff import ContentKind, classify, valid_media_type
from mcp_server_web.fetch.types import Converted, FetchResponse, OutputFormat

logger = logging.getLogger(__name__)

_BACKTICKS = re.compile(r"`+")
# Below this much extracted text a page is checked for being a JavaScript shell.
_SHELL_CHECK_BELOW = 1000


def convert(
    response: FetchResponse,
    *,
    output_format: OutputFormat,
    main_content: bool,
    pdf_max_pages: int = 100,
    pdf_time_budget: float = 20.0,
    rendered: bool = False,
) -> Converted:
    """Turn a response into text in ``output_format``.

    Raises UnsupportedContentType for binary content (images, archives, executables...), which
    is never decoded as text, and ExtractionFailed when there is no text to return: an empty
    body, a page whose text only JavaScript would produce (ScriptBuiltPage), a PDF without a text
    layer. ``rendered`` says the HTML is a DOM a browser built, its scripts already run.
    """
    converted = _convert(
        response,
        output_format=output_format,
        main_content=main_content,
        pdf_max_pages=pdf_max_pages,
        pdf_time_budget=pdf_time_budget,
        rendered=rendered,
    )
    return replace(converted, text=_printable(converted.text), title=_printable(converted.title))


# Escapes in JSON data (a page's JSON-LD, a JSON body) and PDF text layers can spell control
# characters and lone surrogates; a lone surrogate cannot even be sent as UTF-8.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@overload
def _printable(text: str) -> str: ...
@overload
def _printable(text: None) -> None: ...
def _printable(text: str | None) -> str | None:
    if text is None:
        return None
    return _LONE_SURROGATE.sub("\ufffd", without_controls(text))


def _described(response: FetchResponse, media_type: str) -> str:
    """The media type for a message: quoted only when valid, described otherwise, and said to
    come from the bytes when the server's own label was not a media type."""
    quoted = valid_media_type(media_type)
    if quoted is None:
        return "content of an invalid content type"
    if not response.media_type and response.headers.get("content-type"):
        return f"{quoted} (judged by its bytes: the server sent an invalid content type)"
    return quoted


def _convert(
    response: FetchResponse,
    *,
    output_format: OutputFormat,
    main_content: bool,
    pdf_max_pages: int,
    pdf_time_budget: float,
    rendered: bool,
) -> Converted:
    sniffed = classify(response)
    kind, media_type = sniffed.kind, sniffed.media_type
    logger.debug("converting %s as %s (%s)", response.final_url, kind, media_type)

    if kind is ContentKind.BINARY:
        raise UnsupportedContentType(
            f"{_described(response, media_type)} is not text; pages are read as text, and this "
            "cannot read images, archives or other binary files."
        )
    if not response.body.strip():
        raise ExtractionFailed(
            f"{response.final_url} returned an empty body ({media_type or 'no content type'})."
        )

    if kind is ContentKind.PDF:
        text, title, warnings, metadata = pdf_to_text(
            response.body, max_pages=pdf_max_pages, time_budget=pdf_time_budget
        )
        return Converted(
            text=_preformatted(text) if output_format == "html" else text,
            title=title,
            content_type=media_type,
            warnings=warnings,
            metadata=metadata,
        )

    if kind is ContentKind.HTML:
        decoded = decode_text(response.body, declared=response.charset, html=True)
        result = extract_html(
            decoded,
            response.final_url,
            output_format=output_format,
            main_content=main_content,
            content_language=response.headers.get("content-language"),
        )
        if not rendered and len(result.text) < _SHELL_CHECK_BELOW and result.scripts is not None:
            shell = inspect_shell(result.scripts, result.visible_chars)
            rescued = _script_rendered(
                shell, result.scripts, result.text, result.title, media_type, output_format
            )
            if rescued is not None:
                return replace(rescued, metadata=result.metadata)
        if not result.text.strip():
            if rendered:
                raise ExtractionFailed(
                    f"{response.final_url} has no readable text, even as rendered in a browser with "
                    "its scripts run."
                )
            if result.scripts is not None and result.scripts.scripts:
                raise ScriptBuiltPage(
                    f"{response.final_url} has no readable text in its HTML; its content is probably "
                    "built by JavaScript in the browser, and its scripts were not run."
                )
            raise ExtractionFailed(f"{response.final_url} has no readable text in its HTML.")
        return Converted(
            text=result.text,
            title=result.title,
            content_type=media_type,
            used_fallback=result.used_fallback,
            warnings=result.warnings,
            metadata=result.metadata,
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


def _script_rendered(
    shell: ShellReport,
    scripts: PageScripts,
    extracted: str,
    title: str | None,
    media_type: str,
    output_format: OutputFormat,
) -> Converted | None:
    """For a page with little text: its embedded data's prose, or the little text with a warning.

    None when the page is simply short (not a JavaScript shell and nothing embedded to recover).
    """
    recovered = recover_embedded_text(scripts) if shell.is_shell or not extracted.strip() else None
    if recovered is not None and len(recovered.text) > len(extracted):
        warning = (
            "This page is rendered by JavaScript in the browser; its text was recovered from data "
            f"embedded in the page ({recovered.source}), so formatting and some parts may be missing."
        )
        heading = recovered.title or title
        if output_format == "markdown":
            text = (f"# {heading}\n\n" if heading else "") + recovered.text
        elif output_format == "html":
            text = "".join(f"<p>{html.escape(part)}</p>" for part in recovered.text.split("\n\n"))
        else:
            text = recovered.text
        return Converted(
            text=text, title=heading, content_type=media_type, warnings=(warning,), script_built=True
        )
    if shell.is_shell and extracted.strip():
        warning = (
            "This page looks like an empty shell rendered by JavaScript (a mount point, "
            f"{shell.script_chars} characters of script, {shell.visible_chars} of text); scripts are not "
            "run, so the text below is probably incomplete."
        )
        return Converted(
            text=extracted, title=title, content_type=media_type, warnings=(warning,), script_built=True
        )
    return None


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
