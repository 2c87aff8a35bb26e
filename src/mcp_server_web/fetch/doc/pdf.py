"""PDF -> text, from the PDF's own text layer (no OCR), with a marker line before each page.

A PDF is a program for drawing pages, and a hostile one can be tiny and still take pypdf minutes
and gigabytes: a content stream that inflates to tens of megabytes of operators, or a form of a few
thousand operators drawn thousands of times (3 KB of PDF, most of an hour of one CPU). pypdf's work is
therefore bounded twice: its own limits, set far below its defaults, cap what one stream may cost,
and a deadline stops the page being read between two streams.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import math
import re
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError

try:
    from pypdf import Configuration, apply_configuration
except ImportError:  # an older pypdf, without per-call limits: it reads as it always did
    Configuration = None  # type: ignore[assignment,misc]

from mcp_server_web.dates import iso_datetime
from mcp_server_web.errors import ExtractionFailed
from mcp_server_web.fetch.doc.metadata import NAME_LIMIT, one_line
from mcp_server_web.fetch.types import PageMetadata

logger = logging.getLogger(__name__)

_BLANK_LINES = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")

# pypdf's limits while we read (its defaults are 2,000,000 tokens and 75 MB per stream). A dense
# page of text is some 10,000 tokens; 250,000 take pypdf about a second and ~40 MB, which is the
# most one stream may cost past the deadline. Images are not decoded for text, so 16 MB is plenty
# for a content stream.
_STREAM_BYTES = 16 * 1024 * 1024
_WANTED_LIMITS: dict[str, Any] = {
    "stream_parsing_work_maximum_count": 250_000,
    "zlib_maximum_output_length": _STREAM_BYTES,
    "lzw_maximum_output_length": _STREAM_BYTES,
    "run_length_maximum_output_length": _STREAM_BYTES,
    "brotli_maximum_output_length": _STREAM_BYTES,
    "array_based_stream_maximum_output_length": _STREAM_BYTES,
    "disable_legacy_handling": True,  # our limits are set here, not through pypdf's old constants
}
# A page already started may run on until this multiple of the time budget (and at least
# _MIN_HARD_STOP seconds): past it the page is abandoned.
_OVERRUN = 1.5
_MIN_HARD_STOP = 0.5
_LIMIT_NAMES = (
    frozenset(field.name for field in dataclasses.fields(Configuration))
    if Configuration is not None
    else frozenset()
)
# Older pypdf releases lack some of these limits; each one that exists is used.
_PYPDF_LIMITS = {name: value for name, value in _WANTED_LIMITS.items() if name in _LIMIT_NAMES}


class _OutOfTime(BaseException):
    """Raised inside pypdf once the deadline has passed.

    A BaseException, so that pypdf's many ``except Exception`` (it logs and goes on with the next
    object) cannot swallow it.
    """


if Configuration is not None:

    @dataclasses.dataclass(frozen=True)
    class _Clocked(Configuration):
        """pypdf's configuration, with a deadline checked whenever pypdf reads one of its limits.

        pypdf (7.x) reads a limit before it decompresses a stream, parses a content stream or
        enters a form, so those are the points where an overlong read stops: no cost per operator,
        and at most one stream (bounded by the limits above) runs past the deadline.
        """

        deadline: float = math.inf

        def __getattribute__(self, name: str) -> Any:
            if name in _LIMIT_NAMES and time.monotonic() > object.__getattribute__(self, "deadline"):
                raise _OutOfTime
            return object.__getattribute__(self, name)


@contextlib.contextmanager
def _bounded(deadline: float) -> Iterator[None]:
    """pypdf's limits and the deadline, for the reads made inside the block (this thread only)."""
    if Configuration is None:
        yield
        return
    with apply_configuration(_Clocked(deadline=deadline), **_PYPDF_LIMITS):
        yield


def page_marker(number: int) -> str:
    """The line that starts page ``number`` (1-based) in the text."""
    return f"--- Page {number} ---"


def pdf_to_text(
    body: bytes, *, max_pages: int, time_budget: float
) -> tuple[str, str | None, tuple[str, ...], PageMetadata]:
    """The PDF's text as (text, title, warnings, metadata: its document information's author
    and dates).

    Reads at most ``max_pages`` pages and starts no new page once ``time_budget`` seconds are
    spent; a page already started is abandoned at 1.5 times the budget (at least half a second).
    Either cut is reported in the warnings and on the last line of the text. Raises
    ExtractionFailed for a PDF that cannot be opened (or not within that time), is
    password-protected, or has no text that could be read.
    """
    started = time.monotonic()
    hard_stop = started + max(time_budget * _OVERRUN, _MIN_HARD_STOP)
    parts: list[str] = []
    warnings: list[str] = []
    found_text = False
    stop_reason: str | None = None
    out_of_time = False
    converted = 0
    with _bounded(hard_stop):
        try:
            reader = _open(body)
            title = _title(reader)
            metadata = _metadata(reader)
            try:
                total = len(reader.pages)
            except Exception as error:  # a broken page tree shows up only here
                raise ExtractionFailed("The PDF is damaged: its list of pages cannot be read.") from error
        except _OutOfTime:
            raise ExtractionFailed(
                f"The PDF could not be opened within {time_budget:g} seconds; it is damaged or built to "
                "be slow to read."
            ) from None

        for index in range(total):
            if index >= max_pages:
                stop_reason = f"the limit is {max_pages} pages"
                break
            if index > 0 and time.monotonic() - started > time_budget:
                stop_reason, out_of_time = f"reading it took longer than {time_budget:g} seconds", True
                break
            try:
                text = _page_text(reader, index, warnings)
            except _OutOfTime:
                logger.debug("PDF page %d abandoned: past the deadline", index + 1)
                stop_reason = f"reading it took longer than {time_budget:g} seconds"
                out_of_time = True
                break
            found_text = found_text or bool(text)
            parts.append(f"{page_marker(index + 1)}\n\n{text}" if text else page_marker(index + 1))
            converted += 1

    if not found_text:
        if out_of_time:
            raise ExtractionFailed(
                f"No text could be read from the PDF within {time_budget:g} seconds: its pages are too "
                "complex, or built to be slow to read."
            )
        if warnings:
            raise ExtractionFailed(
                "No text could be read from the PDF: its pages are damaged or too complex to read."
            )
        raise ExtractionFailed(
            "The PDF has no text layer (it is probably scanned images), and no OCR is done here."
        )
    if stop_reason is not None:
        note = f"Only pages 1-{converted} of {total} were converted: {stop_reason}."
        warnings.append(note)
        parts.append(f"--- {note} ---")
    return "\n\n".join(parts), title, tuple(warnings), metadata


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


def _metadata(reader: PdfReader) -> PageMetadata:
    """The document information's /Author, /CreationDate and /ModDate (PDF dates with no zone
    are read as UTC, as every other date here)."""
    try:
        info = reader.metadata
        if info is None:
            return PageMetadata()
        author = info.author if isinstance(info.author, str) else None
        fields = {"author": one_line(author, NAME_LIMIT)}
        for name, attribute in (("published", "creation_date"), ("modified", "modification_date")):
            try:
                when = getattr(info, attribute)
            except Exception:  # an unreadable date is no date
                when = None
            fields[name] = iso_datetime(when.isoformat()) if isinstance(when, datetime) else None
    except Exception:  # metadata is optional and often malformed; the text matters more
        logger.debug("unreadable PDF metadata", exc_info=True)
        return PageMetadata()
    return PageMetadata(**fields)


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
