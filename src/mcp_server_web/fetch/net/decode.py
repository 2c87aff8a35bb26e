"""Content-Encoding removal with a hard cap on the decoded size.

A compressed body can expand a thousand-fold or more (a "zip bomb"), so nothing here ever asks a
decompressor for "everything": each step produces at most ``STEP_BYTES`` of output, and the total
is checked after every step. Memory use therefore stays within the cap plus one step, whatever the
compressed stream claims to contain.

Stacked encodings (``Content-Encoding: gzip, br``) are removed in reverse order, each stage feeding
the next one step at a time, so an intermediate stage cannot balloon either.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator
from typing import Protocol

import brotli

from mcp_server_web.errors import HTTPStatusError, TooLarge

logger = logging.getLogger(__name__)

STEP_BYTES = 64 * 1024
"""Most output one decompression call may produce before the cap is checked again."""
MAX_STACKED_ENCODINGS = 4
"""More layers than this is an attack or a broken server, not a real site."""
SUPPORTED_ENCODINGS = ("gzip", "deflate", "br")
ACCEPT_ENCODING = ", ".join(SUPPORTED_ENCODINGS)

_GZIP_MAGIC = b"\x1f\x8b"


def describe_size(size: int) -> str:
    """A byte count for people: '10 MB', '512 KB', '900 bytes'."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.3g} MB"
    if size >= 1024:
        return f"{size / 1024:.3g} KB"
    return f"{size} bytes"


def too_large(cap: int) -> TooLarge:
    """The error for a body over the cap; one wording for the raw and the decoded checks."""
    return TooLarge(
        f"the response body is larger than the {describe_size(cap)} limit.",
        parameters=("max_response_bytes",),
    )


def _corrupt(encoding: str, detail: str) -> HTTPStatusError:
    return HTTPStatusError(f"the server sent a {encoding} body that could not be decoded ({detail}).")


class _Stage(Protocol):
    """One decompression layer. feed/flush yield output in pieces of at most about STEP_BYTES."""

    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def flush(self) -> Iterator[bytes]: ...


class _ZlibStage:
    """gzip (one or more members) or deflate (zlib-wrapped or, as some servers send it, raw)."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._gzip = encoding == "gzip"
        self._pending = b""  # deflate only: the first bytes, until the wrapper can be recognised
        self._decompressor: zlib._Decompress | None = (
            zlib.decompressobj(16 + zlib.MAX_WBITS) if self._gzip else None
        )
        self._done = False  # end of the last member seen; anything after it is ignored

    def _start_deflate(self, head: bytes) -> zlib._Decompress:
        # RFC 9110 says "deflate" is zlib-wrapped, but raw deflate is common in the wild. A zlib
        # header is two bytes whose big-endian value is a multiple of 31 with method 8.
        wrapped = len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._done or not data:
            return
        if self._decompressor is None:
            self._pending += data
            if len(self._pending) < 2:
                return
            self._decompressor = self._start_deflate(self._pending)
            data, self._pending = self._pending, b""
        yield from self._run(data)

    def _run(self, data: bytes) -> Iterator[bytes]:
        assert self._decompressor is not None
        while True:
            try:
                out = self._decompressor.decompress(data, STEP_BYTES)
            except zlib.error as exc:
                raise _corrupt(self._encoding, str(exc)) from None
            if out:
                yield out
            data = self._decompressor.unconsumed_tail
            if self._decompressor.eof:
                rest = self._decompressor.unused_data
                if self._gzip and rest.startswith(_GZIP_MAGIC):
                    # Concatenated gzip members are one valid body (RFC 1952 section 2.2).
                    self._decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    data = rest
                    continue
                if rest.strip(b"\x00"):
                    logger.debug("ignoring %d bytes after the end of a %s body", len(rest), self._encoding)
                self._done = True
                return
            # A full step may leave output pending inside zlib even with no input left.
            if not data and len(out) < STEP_BYTES:
                return

    def flush(self) -> Iterator[bytes]:
        if self._decompressor is None:
            if self._pending:
                # A one-byte deflate body: decide with what there is.
                self._decompressor = self._start_deflate(self._pending)
                data, self._pending = self._pending, b""
                yield from self._run(data)
            return
        if not self._done:
            # A stream cut short still yields what arrived; browsers are just as lenient.
            yield from self._run(b"")
            logger.debug("%s body ended before its end marker", self._encoding)


class _BrotliStage:
    def __init__(self) -> None:
        self._decompressor = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not data or self._decompressor.is_finished():
            return
        try:
            out = self._decompressor.process(data, output_buffer_limit=STEP_BYTES)
            if out:
                yield out
            # With an output limit the decoder holds back input; it must be drained with empty
            # input before it may be given more.
            while not self._decompressor.can_accept_more_data():
                out = self._decompressor.process(b"", output_buffer_limit=STEP_BYTES)
                if out:
                    yield out
        except brotli.error as exc:
            raise _corrupt("br", str(exc) or "invalid brotli stream") from None

    def flush(self) -> Iterator[bytes]:
        if not self._decompressor.is_finished():
            logger.debug("br body ended before its end marker")
        return iter(())


def _stage(encoding: str) -> _Stage:
    if encoding in ("gzip", "x-gzip"):
        return _ZlibStage("gzip")
    if encoding == "deflate":
        return _ZlibStage("deflate")
    if encoding == "br":
        return _BrotliStage()
    raise HTTPStatusError(
        f"the server sent the body with content encoding {encoding!r}, which is not supported "
        f"(supported: {', '.join(SUPPORTED_ENCODINGS)})."
    )


def parse_content_encoding(header: str | None) -> list[str]:
    """The encodings named by a Content-Encoding header, in the order they were applied."""
    if not header:
        return []
    names = [token.strip().lower() for token in header.split(",")]
    return [name for name in names if name and name != "identity"]


class BodyDecoder:
    """Removes Content-Encoding from a body fed in pieces, refusing to produce more than max_bytes.

    feed() returns the decoded bytes of each raw piece; flush() the rest at the end. TooLarge is
    raised as soon as the decoded total would pass max_bytes, before the excess is kept; with
    truncate=True the output is cut at max_bytes instead and ``truncated`` is set (the caller
    should then stop reading).
    """

    def __init__(self, content_encoding: str | None, max_bytes: int, *, truncate: bool = False) -> None:
        encodings = parse_content_encoding(content_encoding)
        if len(encodings) > MAX_STACKED_ENCODINGS:
            raise HTTPStatusError(
                f"the server applied {len(encodings)} content encodings to the body; "
                f"at most {MAX_STACKED_ENCODINGS} are accepted."
            )
        # The last encoding listed was applied last, so it is removed first.
        self._stages = [_stage(name) for name in reversed(encodings)]
        self._max_bytes = max_bytes
        self._truncate = truncate
        self.decoded = 0
        """Decoded bytes produced so far."""
        self.truncated = False
        """True once output was cut at max_bytes (truncate=True only)."""

    def feed(self, data: bytes) -> bytes:
        if self.truncated:
            return b""
        return self._collect(self._through(0, data))

    def flush(self) -> bytes:
        if self.truncated:
            return b""
        return self._collect(self._flush_from(0))

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        """Push data through stages[index:], yielding final output piece by piece."""
        if index == len(self._stages):
            if data:
                yield data
            return
        for piece in self._stages[index].feed(data):
            yield from self._through(index + 1, piece)

    def _flush_from(self, index: int) -> Iterator[bytes]:
        if index == len(self._stages):
            return
        for piece in self._stages[index].flush():
            yield from self._through(index + 1, piece)
        yield from self._flush_from(index + 1)

    def _collect(self, pieces: Iterator[bytes]) -> bytes:
        out = bytearray()
        for piece in pieces:
            room = self._max_bytes - self.decoded
            if len(piece) > room:
                if not self._truncate:
                    raise too_large(self._max_bytes)
                out += piece[:room]
                self.decoded = self._max_bytes
                self.truncated = True
                break
            self.decoded += len(piece)
            out += piece
        return bytes(out)
