"""PDF -> text, from the PDF's own text layer (no OCR), with a marker line before each page."""

from __future__ import annotations

import io
import logging
import re
import time

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

from mcp_server_web.errors import ExtractionFailed

logger = logging.getLogger(__name__)

_BLANK_LINES = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")


def page_marker(number: int) -> str:
    """The line that starts page ``number`` (1-based) in the text."""
    return f"--- Page {number} ---"


def pdf_to_text(
    body: bytes, *, max_pages: int, time_budget: float
) -> tuple[str, str | None, tuple[str, ...]]:
    """The PDF's text as (text, title, warnings).

    Reads at most ``max_pages`` pages and stops early once ``time_budget`` seconds are spent
    (checked between pages, so one slow page can overrun it); either cut is reported in the
    warnings and on the last line of the text. Raises ExtractionFailed for a PDF that cannot be
    opened, is password-protected, or has no text layer.
    """
    started = time.monotonic()
    reader = _open(body)
    title = _title(reader)
    try:
        total = len(reader.pages)
    except Exception as error:  # a broken page tree shows up only here
        raise ExtractionFailed("The PDF is damaged: its list of pages cannot be read.") from error

    parts: list[str] = []
    warnings: list[str] = []
    found_text = False
    stop_reason: str | None = None
    converted = 0
    for index in range(total):
        if index >= max_pages:
            stop_reason = f"the limit is {max_pages} pages"
            break
        if index > 0 and time.monotonic() - started > time_budget:
            stop_reason = f"reading it took longer than {time_budget:g} seconds"
            break
        text = _page_text(reader, index, warnings)
        found_text = found_text or bool(text)
        parts.append(f"{page_marker(index + 1)}\n\n{text}" if text else page_marker(index + 1))
        converted += 1

    if not found_text:
        raise ExtractionFailed(
            "The PDF has no text layer (it is probably scanned images), and web_fetch does not do OCR."
        )
    if stop_reason is not None:
        note = f"Only pages 1-{converted} of {total} were converted: {stop_reason}."
        warnings.append(note)
        parts.append(f"--- {note} ---")
    return "\n\n".join(parts), title, tuple(warnings)


def _open(body: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(body))
    except Exception as error:  # pypdf raises many kinds of errors for malformed input
        logger.debug("pypdf could not open the PDF", exc_info=True)
        raise ExtractionFailed("The PDF could not be read: it is damaged or not really a PDF.") from error
    if reader.is_encrypted:
        # Many PDFs are "encrypted" only to set permissions, with an empty user password.
        try:
            decrypted = reader.decrypt("")
        except DependencyError as error:
            raise ExtractionFailed(
                "The PDF is encrypted with AES, which needs the 'cryptography' package to read."
            ) from error
        except Exception as error:
            raise ExtractionFailed("The PDF is encrypted and could not be decrypted.") from error
        if not decrypted:
            raise ExtractionFailed("The PDF is protected by a password, so its text cannot be read.")
    return reader


def _title(reader: PdfReader) -> str | None:
    try:
        metadata = reader.metadata
        raw = metadata.title if metadata is not None else None
    except Exception:  # metadata is optional and often malformed; the text matters more
        logger.debug("unreadable PDF metadata", exc_info=True)
        return None
    if not isinstance(raw, str):
        return None
    title = _WHITESPACE.sub(" ", raw).strip()
    return title or None


def _page_text(reader: PdfReader, index: int, warnings: list[str]) -> str:
    try:
        raw = reader.pages[index].extract_text() or ""
    except FileNotDecryptedError as error:
        raise ExtractionFailed("The PDF is protected by a password, so its text cannot be read.") from error
    except Exception:  # one bad page should not lose the others
        logger.debug("text of PDF page %d could not be extracted", index + 1, exc_info=True)
        warnings.append(f"The text of page {index + 1} could not be extracted.")
        return ""
    lines = (line.rstrip() for line in raw.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
