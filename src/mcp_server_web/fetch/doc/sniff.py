"""What a response really is, judged from its bytes as well as its Content-Type.

Servers mislabel content all the time (images served as text/html, HTML as text/plain or
application/octet-stream, JSON as text/html). Binary signatures are checked first and always
win, so binary bytes are never decoded and shown as text whatever the label says.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import NamedTuple

from mcp_server_web.fetch.doc.charset import bom_codec
from mcp_server_web.fetch.types import FetchResponse


class ContentKind(StrEnum):
    HTML = "html"  # HTML and XHTML
    XML = "xml"
    FEED = "feed"  # RSS, Atom, RDF
    JSON = "json"
    TEXT = "text"
    MARKDOWN = "markdown"
    PDF = "pdf"
    BINARY = "binary"


class Sniffed(NamedTuple):
    kind: ContentKind
    media_type: str
    """The media type to report: the header's when it agrees with the bytes, else what the bytes are."""


OCTET_STREAM = "application/octet-stream"
MAX_MEDIA_TYPE_LENGTH = 100
"""Longest type/subtype taken from a server; the long Office types run to about 85."""
# RFC 6838 section 4.2: type and subtype are restricted names, a letter or digit then up to 126
# of these characters. Anything else is not a media type, whatever the header says.
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*")
# Binary signatures and text sniffing look at the start of the body only.
_SNIFF_BYTES = 1024

# (offset, signature, media type). Checked in order; the first match wins.
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "image/png"),
    (0, b"GIF87a", "image/gif"),
    (0, b"GIF89a", "image/gif"),
    (0, b"\xff\xd8\xff", "image/jpeg"),
    (0, b"II*\x00", "image/tiff"),
    (0, b"MM\x00*", "image/tiff"),
    (0, b"\x00\x00\x01\x00", "image/vnd.microsoft.icon"),
    (0, b"\x00\x00\x02\x00", "image/vnd.microsoft.icon"),
    (0, b"8BPS", "image/vnd.adobe.photoshop"),
    (0, b"PK\x03\x04", "application/zip"),
    (0, b"PK\x05\x06", "application/zip"),
    (0, b"PK\x07\x08", "application/zip"),
    (0, b"\x1f\x8b", "application/gzip"),
    (0, b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (0, b"Rar!\x1a\x07", "application/vnd.rar"),
    (0, b"\xfd7zXZ\x00", "application/x-xz"),
    (0, b"\x28\xb5\x2f\xfd", "application/zstd"),
    (0, b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
    (0, b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (0, b"ID3", "audio/mpeg"),
    (0, b"OggS", "audio/ogg"),
    (0, b"fLaC", "audio/flac"),
    (0, b"MThd", "audio/midi"),
    (0, b"\x1a\x45\xdf\xa3", "video/webm"),
    (0, b"FLV\x01", "video/x-flv"),
    (0, b"wOFF", "font/woff"),
    (0, b"wOF2", "font/woff2"),
    (0, b"OTTO", "font/otf"),
    (0, b"\x00\x01\x00\x00\x00", "font/ttf"),
    (0, b"\x00asm", "application/wasm"),
    (0, b"\x7fELF", "application/x-elf"),
    (0, b"\xfe\xed\xfa\xce", "application/x-mach-binary"),
    (0, b"\xfe\xed\xfa\xcf", "application/x-mach-binary"),
    (0, b"\xce\xfa\xed\xfe", "application/x-mach-binary"),
    (0, b"\xcf\xfa\xed\xfe", "application/x-mach-binary"),
    (0, b"\xca\xfe\xba\xbe", "application/java-vm"),
    (0, b"dex\n", "application/vnd.android.dex"),
    (4, b"ftypavif", "image/avif"),
    (4, b"ftypheic", "image/heic"),
    (4, b"ftypheix", "image/heic"),
    (4, b"ftypmif1", "image/heif"),
    (4, b"ftypM4A", "audio/mp4"),
    (4, b"ftypqt", "video/quicktime"),
    (4, b"ftyp", "video/mp4"),
)
# What a ZIP holds, from the name of its first entry (which starts at byte 30).
_ZIP_KINDS: tuple[tuple[bytes, str], ...] = (
    (b"mimetypeapplication/epub+zip", "application/epub+zip"),
    (b"mimetypeapplication/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text"),
    (
        b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet",
        "application/vnd.oasis.opendocument.spreadsheet",
    ),
    (b"word/", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    (b"xl/", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    (b"ppt/", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
)
_RIFF_KINDS = {b"WEBP": "image/webp", b"WAVE": "audio/wav", b"AVI ": "video/x-msvideo"}

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/vnd.wap.xhtml+xml"})
_FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})
_MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_JSON_TYPES = frozenset({"application/json", "text/json", "application/x-json"})
# application/* types that are text by nature; other application/* types are treated as binary
# unless the bytes prove otherwise.
_TEXTUAL_APPLICATION = frozenset(
    {
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-sh",
        "application/x-shellscript",
        "application/sql",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/x-ndjson",
        "application/jsonl",
        "application/x-tex",
        "application/x-latex",
        "application/x-httpd-php",
        "application/x-python",
        "application/x-perl",
        "application/x-ruby",
        "application/graphql",
        "application/csv",
        "application/x-www-form-urlencoded",
    }
)
# Labels that say nothing useful about the content, so the bytes decide.
_UNINFORMATIVE = frozenset(
    {"", OCTET_STREAM, "binary/octet-stream", "application/unknown", "unknown/unknown"}
)

# Leading junk that may precede the first tag: whitespace and comments (the BOM is removed first).
_LEADING_JUNK = re.compile(rb"(?:\s+|<!--.*?-->)*", re.S)
_HTML_START = re.compile(
    rb"<(?:!doctype\s+html|html|head|body|title|meta|link|script|style|iframe|h[1-6]|div|p|table|font|a|b|br|"
    rb"span|article|section|header|nav|main|center)(?:[\s/>]|$)",
    re.I,
)
# text/plain is only overridden by a whole document, not by text that merely starts with a tag.
_HTML_DOCUMENT_START = re.compile(rb"<(?:!doctype\s+html|html|head|body)(?:[\s/>]|$)", re.I)
_XML_DECL = re.compile(rb"<\?xml\b", re.I)
_FEED_ROOT = re.compile(rb"<(?:rss|feed|rdf:RDF)[\s>]")
_FIRST_ELEMENT = re.compile(rb"<([A-Za-z][\w:.-]*)")
_MARKUP_DECLARATIONS = re.compile(rb"<\?.*?\?>|<!--.*?-->|<![^>]*>", re.S)
_TEXT_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
# Bytes no text encoding of the web uses for text: C0 controls other than whitespace, ESC (ISO-2022)
# and SO/SI. A stray one turns up in real pages (a vertical tab pasted from a word processor), but
# one byte in 32 of the sniffed window is binary: random bytes have one in ten.
_BINARY_CONTROL = re.compile(rb"[\x00-\x08\x0b\x10-\x1a\x1c-\x1f]")
_BINARY_CONTROL_SHARE = 32


def valid_media_type(text: str) -> str | None:
    """``text`` lower-cased when it is a well-formed type/subtype of at most 100 characters.

    The only form of a server's Content-Type that is ever kept or quoted: an invalid label is
    treated as no label (the bytes decide, as browsers do) and described, never repeated.
    """
    lowered = text.strip().lower()
    if len(lowered) <= MAX_MEDIA_TYPE_LENGTH and _MEDIA_TYPE.fullmatch(lowered):
        return lowered
    return None


def classify(response: FetchResponse) -> Sniffed:
    """Decide what the response is, from its magic bytes first, then its label, then its text."""
    body = response.body
    declared = response.media_type.lower().strip()

    magic = binary_signature(body)
    if magic == "application/pdf":
        return Sniffed(ContentKind.PDF, magic)
    if magic is None and (_has_nul_bytes(body, response.charset) or _mostly_controls(body, response.charset)):
        magic = OCTET_STREAM
    if magic is not None:
        # The label is often more specific than the signature (a .docx is a ZIP), unless the
        # label claims text, which the bytes have just disproved.
        specific = declared not in _UNINFORMATIVE and not _claims_text(declared)
        return Sniffed(ContentKind.BINARY, declared if specific else magic)

    start = _text_start(body)
    if declared in _HTML_TYPES:
        return _classify_labelled_html(body, start, response.charset, declared)
    if declared == "application/pdf":
        # No %PDF- signature. An HTML error page under a PDF label is common; anything else goes
        # to the PDF reader, which says what is wrong with it.
        if _HTML_START.match(start):
            return Sniffed(ContentKind.HTML, "text/html")
        return Sniffed(ContentKind.PDF, declared)
    if declared in _FEED_TYPES:
        return Sniffed(ContentKind.FEED, declared)
    if declared in _MARKDOWN_TYPES:
        return Sniffed(ContentKind.MARKDOWN, declared)
    if declared in _JSON_TYPES or declared.endswith("+json"):
        return Sniffed(ContentKind.JSON, declared)
    if declared in ("text/xml", "application/xml") or declared.endswith("+xml"):
        return _classify_xml(start, declared)
    if declared == "text/plain":
        if _HTML_DOCUMENT_START.match(start):
            return Sniffed(ContentKind.HTML, "text/html")
        return _sniff_text(body, start, response.charset, declared)
    if declared.startswith("text/") or declared in _TEXTUAL_APPLICATION:
        return Sniffed(ContentKind.TEXT, declared)
    if declared in _UNINFORMATIVE:
        if _HTML_START.match(start) or start.startswith(b"<!--"):
            return Sniffed(ContentKind.HTML, "text/html")
        if _looks_like_text(body):
            return _sniff_text(body, start, response.charset, "text/plain")
        return Sniffed(ContentKind.BINARY, OCTET_STREAM)
    if declared.startswith(("image/", "audio/", "video/", "font/", "model/")):
        return Sniffed(ContentKind.BINARY, declared)
    # Any other label (application/x-whatever): text only if the bytes look like text.
    if _looks_like_text(body):
        return _sniff_text(body, start, response.charset, declared)
    return Sniffed(ContentKind.BINARY, declared)


def _classify_labelled_html(body: bytes, start: bytes, charset: str | None, declared: str) -> Sniffed:
    # Some servers label JSON or feeds text/html. Neither is ever HTML, and both read better as
    # what they are.
    if start[:1] in (b"{", b"[") and _parses_as_json(body, charset):
        return Sniffed(ContentKind.JSON, "application/json")
    if _XML_DECL.match(start) or _FEED_ROOT.match(start):
        xml = _classify_xml(start, "application/xml")
        if xml.kind is ContentKind.FEED:
            return xml
    return Sniffed(ContentKind.HTML, declared)


def binary_signature(body: bytes) -> str | None:
    """The media type a binary file signature at the start of ``body`` names, if any."""
    head = body[:_SNIFF_BYTES]
    if head.lstrip()[:5] == b"%PDF-":
        return "application/pdf"
    if head[:4] == b"RIFF" and head[8:12] in _RIFF_KINDS:
        return _RIFF_KINDS[head[8:12]]
    for offset, signature, media_type in _MAGIC:
        if head[offset : offset + len(signature)] == signature:
            if media_type == "application/zip":
                return _zip_kind(head)
            return media_type
    # Short signatures need corroboration: plenty of text starts with "BZh", "BM" or "MZ".
    # bzip2: "BZh", a block size digit, then a block or end-of-stream magic number.
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "application/x-bzip2"
    if head[:2] == b"BM" and len(head) >= 26 and head[6:10] == b"\0\0\0\0":
        return "image/bmp"
    if head[:2] == b"MZ" and _is_pe(head):
        return "application/vnd.microsoft.portable-executable"
    if head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    return None


def _zip_kind(head: bytes) -> str:
    entry = head[30:90]
    for prefix, media_type in _ZIP_KINDS:
        if entry.startswith(prefix):
            return media_type
    return "application/zip"


def _is_pe(head: bytes) -> bool:
    if len(head) < 64:
        return False
    pe_offset = int.from_bytes(head[0x3C:0x40], "little")
    if pe_offset + 4 <= len(head):
        return head[pe_offset : pe_offset + 4] == b"PE\0\0"
    # The PE header is beyond what we looked at; the DOS stub's message is proof enough.
    return b"This program cannot be run in DOS mode" in head


def _claims_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _HTML_TYPES
        or media_type in _JSON_TYPES
        or media_type.endswith(("+xml", "+json", "/xml"))
    )


def _has_nul_bytes(body: bytes, charset: str | None) -> bool:
    """NUL bytes near the start mean binary, unless the text is UTF-16 (which is full of them)."""
    if b"\0" not in body[:_SNIFF_BYTES]:
        return False
    return not _is_utf16(body, charset)


def _mostly_controls(body: bytes, charset: str | None) -> bool:
    """Binary without a signature or a NUL near the start: control bytes no text is made of."""
    if _is_utf16(body, charset):
        return False  # its ASCII characters come with control bytes as their other half
    head = body[:_SNIFF_BYTES]
    return len(_BINARY_CONTROL.findall(head)) * _BINARY_CONTROL_SHARE > len(head)


def _is_utf16(body: bytes, charset: str | None) -> bool:
    if bom_codec(body) in ("utf-16-le", "utf-16-be"):
        return True
    return bool(charset and charset.lower().replace("_", "-").startswith(("utf-16", "ucs-2", "unicode")))


def _text_start(body: bytes) -> bytes:
    """The first bytes of the body after any BOM, whitespace and comments."""
    head = body[:_SNIFF_BYTES]
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    elif head.startswith((b"\xff\xfe", b"\xfe\xff")):
        # UTF-16: dropping the NULs leaves an ASCII view, good enough to find tag names.
        head = head[2:].replace(b"\0", b"")
    junk = _LEADING_JUNK.match(head)
    rest = head[junk.end() :] if junk else head
    # If comments are all there is in the window, the document still starts with one.
    return rest or head.lstrip()


def _classify_xml(start: bytes, declared: str) -> Sniffed:
    root = _root_element(start)
    if root in (b"rss", b"feed", b"rdf:RDF"):
        return Sniffed(ContentKind.FEED, declared if declared in _FEED_TYPES else _feed_type(root))
    if root == b"html":
        return Sniffed(ContentKind.HTML, "application/xhtml+xml")
    return Sniffed(ContentKind.XML, declared)


def _feed_type(root: bytes) -> str:
    return {b"rss": "application/rss+xml", b"feed": "application/atom+xml"}.get(root, "application/rdf+xml")


def _root_element(start: bytes) -> bytes | None:
    """The name of the first element, after any XML declaration, doctype and comments."""
    match = _FIRST_ELEMENT.search(_MARKUP_DECLARATIONS.sub(b"", start))
    return match.group(1) if match else None


def _sniff_text(body: bytes, start: bytes, charset: str | None, label: str) -> Sniffed:
    """Classify a body that is text but whose label does not settle it: XML, JSON or plain text."""
    if _XML_DECL.match(start) or _FEED_ROOT.match(start):
        return _classify_xml(start, "application/xml")
    if start[:1] in (b"{", b"[") and _parses_as_json(body, charset):
        return Sniffed(ContentKind.JSON, "application/json")
    return Sniffed(ContentKind.TEXT, label)


def _parses_as_json(body: bytes, charset: str | None) -> bool:
    try:
        # json.loads detects UTF-8/16/32 itself; a legacy charset label is honoured if given.
        json.loads(body.decode(charset) if charset and charset.lower() not in ("utf-8", "utf8") else body)
    except (ValueError, LookupError, RecursionError):
        return False
    return True


def _looks_like_text(body: bytes) -> bool:
    """No control characters other than whitespace and ESC (ISO-2022) in the first KiB."""
    return _TEXT_CONTROL.search(body[:_SNIFF_BYTES]) is None
