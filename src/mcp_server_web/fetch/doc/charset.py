"""Bytes -> str for web documents, choosing the encoding the way a browser would.

Precedence: byte-order mark, then the Content-Type charset, then (HTML) a ``<meta>`` charset
in the first few KiB or (any kind) an XML declaration, then valid UTF-8, then statistical
detection, then UTF-8 with replacement characters.

Two deliberate departures from a strict WHATWG decoder, both to avoid mojibake:

* A declared legacy charset is not trusted blindly. If the bytes are valid UTF-8 and contain
  non-ASCII text, they are UTF-8: servers that default to ``charset=iso-8859-1`` in front of
  UTF-8 pages are common, while real Latin-1/Shift_JIS/GBK text that happens to be valid UTF-8
  is vanishingly rare.
* A declaration whose decoding fails on more than a few bytes is skipped (the next source of
  truth is tried) instead of producing a page of replacement characters; a handful of bad
  bytes in an otherwise valid document is tolerated and replaced. For UTF-8, "a handful" is
  measured against the valid multi-byte sequences: text in a legacy encoding almost never forms
  them, so a page with many of them is damaged UTF-8, and any other codec would garble every
  one of them to save a few bad bytes.

HTML text never contains the control characters an HTML or XML tree cannot hold (C0 controls
other than tab, line feed and carriage return, and U+FFFE/U+FFFF): lxml refuses them, and a
browser shows nothing for them anyway.
"""

from __future__ import annotations

import codecs
import logging
import re

from charset_normalizer import from_bytes

logger = logging.getLogger(__name__)

# How far into an HTML document to look for <meta charset>; browsers use 1 KiB, but many real
# pages put a long <head> (inline scripts, preload lists) before the meta tag.
PRESCAN_BYTES = 4096
# Statistical detection looks at this much of the body; it is slow and gains nothing from more.
DETECT_BYTES = 64 * 1024
# Up to this many undecodable sequences (or one per this many non-ASCII bytes, if more) are
# replaced rather than taken as proof that the declared charset is wrong.
_TOLERATED_ERRORS = 8
_NON_ASCII_PER_ERROR = 100
# Damaged UTF-8 is still UTF-8 when valid multi-byte sequences outnumber the bad ones this many
# times. Legacy text decoded as UTF-8 forms valid sequences by accident at most about 1 for every
# 3 bad ones (measured on GBK, Shift_JIS, EUC-JP, EUC-KR and windows-874 text; 0 for the
# single-byte Latin, Cyrillic, Greek and Hebrew code pages), so 2 leaves a wide margin.
_UTF8_VALID_PER_ERROR = 2
_ASCII = bytes(range(128))

_UTF8 = "utf-8"
_CP1252 = "cp1252"

# WHATWG encoding labels -> Python codec, one codec a line. Like browsers, Latin-1 and ASCII mean
# windows-1252, GB2312/GBK mean GB18030, Shift_JIS means Microsoft's cp932 and EUC-KR means cp949:
# the supersets real pages are written in. "x-user-defined" is read as windows-1252 because its
# real mapping (bytes to private-use characters) never yields readable text.
_LABEL_TABLE = """
utf-8       utf-8 utf8 unicode-1-1-utf-8 unicode11utf8 unicode20utf8 x-unicode20utf8
utf-16-le   utf-16 utf-16le ucs-2 unicode csunicode iso-10646-ucs-2 unicodefeff
utf-16-be   utf-16be unicodefffe
cp1252      windows-1252 x-cp1252 iso-8859-1 iso8859-1 latin1 latin-1 l1 iso_8859-1:1987 iso-ir-100
            csisolatin1 ibm819 cp819 us-ascii ascii ansi_x3.4-1968 iso646-us csascii x-user-defined
cp866       ibm866 866 csibm866
iso8859_2   iso-8859-2 latin2 l2 csisolatin2 iso-ir-101
iso8859_3   iso-8859-3 latin3 l3 csisolatin3 iso-ir-109
iso8859_4   iso-8859-4 latin4 l4 csisolatin4 iso-ir-110
iso8859_5   iso-8859-5 cyrillic csisolatincyrillic iso-ir-144
iso8859_6   iso-8859-6 arabic asmo-708 ecma-114 csisolatinarabic iso-8859-6-e iso-8859-6-i
iso8859_7   iso-8859-7 greek greek8 elot_928 ecma-118 csisolatingreek sun_eu_greek
iso8859_8   iso-8859-8 hebrew visual csisolatinhebrew iso-8859-8-e iso-8859-8-i logical
iso8859_10  iso-8859-10 latin6 l6 csisolatin6
iso8859_13  iso-8859-13
iso8859_14  iso-8859-14
iso8859_15  iso-8859-15 latin9 l9 csisolatin9
iso8859_16  iso-8859-16
koi8_r      koi8-r koi8 koi cskoi8r
koi8_u      koi8-u koi8-ru
mac_roman   macintosh mac x-mac-roman csmacintosh
mac_cyrillic x-mac-cyrillic x-mac-ukrainian
cp874       windows-874 tis-620 iso-8859-11 dos-874
cp1250      windows-1250 x-cp1250
cp1251      windows-1251 x-cp1251
cp1253      windows-1253 x-cp1253
cp1254      windows-1254 x-cp1254 iso-8859-9 latin5 l5 csisolatin5 iso-ir-148
cp1255      windows-1255 x-cp1255
cp1256      windows-1256 x-cp1256
cp1257      windows-1257 x-cp1257
cp1258      windows-1258 x-cp1258
gb18030     gbk gb2312 chinese csgb2312 csiso58gb231280 gb_2312 gb_2312-80 iso-ir-58 x-gbk cp936 ms936
            windows-936 euc-cn
big5hkscs   big5 big5-hkscs cn-big5 csbig5 x-x-big5
euc_jp      euc-jp cseucpkdfmtjapanese x-euc-jp
iso2022_jp  iso-2022-jp csiso2022jp
cp932       shift_jis shift-jis sjis x-sjis ms932 ms_kanji windows-31j csshiftjis
cp949       euc-kr cseuckr csksc56011987 iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 ksc_5601
            windows-949 uhc
"""


def _normalise(label: str) -> str:
    return re.sub(r"[-_ .:]", "", label.strip().strip("\"'").lower())


def _parse_labels(table: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    codec = ""
    for line in table.strip().splitlines():
        words = line.split()
        # A continuation line starts with blanks. The codec's own name is a label too: charset
        # detection reports Python's names.
        if not line[0].isspace():
            codec = words[0]
        for word in words:
            labels[_normalise(word)] = codec
    return labels


_LABELS = _parse_labels(_LABEL_TABLE)

_META_RE = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([a-zA-Z0-9_.:-]+)", re.I)
_COMMENT_RE = re.compile(rb"<!--.*?(?:-->|$)", re.S)
# An unclosed element or comment runs to the end ("|$"), so no match is tried more than once.
_INVISIBLE_RE = re.compile(rb"<(script|style)\b.*?(?:</\1\s*>|$)|<!--.*?(?:-->|$)", re.I | re.S)
_TAG_RE = re.compile(rb"<[^>]*>")
_XML_DECL_RE = re.compile(rb"^<\?xml\b[^>]*?encoding\s*=\s*[\"']([a-zA-Z0-9_.:-]+)[\"']")
# What lxml refuses in a tree (XML 1.0's Char production, minus surrogates, which decoding never
# yields). Vertical tab and form feed separate words, so they become spaces; the rest go.
_TREE_UNSAFE_CHARS = "".join(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF]))
_TREE_UNSAFE = re.compile(f"[{re.escape(_TREE_UNSAFE_CHARS)}]")
_SPACE_LIKE = frozenset("\x0b\x0c")
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, _UTF8),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def codec_for_label(label: str | None) -> str | None:
    """The Python codec for an encoding label as a browser reads it; None if unknown or unsafe."""
    if not label:
        return None
    return _LABELS.get(_normalise(label))


def bom_codec(body: bytes) -> str | None:
    """The encoding named by a byte-order mark at the start of ``body``, if any."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    return None


def decode_text(body: bytes, *, declared: str | None, html: bool) -> str:
    """Decode a response body to text; never raises, never returns a BOM.

    The text never holds control characters (see the module docstring): a tree cannot hold
    them, and in plain text they only cost the model tokens (or hide text from it).
    """
    return without_controls(_decode(body, declared=declared, html=html))


def without_controls(text: str) -> str:
    """``text`` without the control characters a tree cannot hold (vertical tab and form feed
    become spaces)."""
    # Most pages hold none: 31 scans for one character each (in C, memchr-like) tell so in a
    # third of the time of one search for the class (0.26 against 0.87 ms on a 230 KB page).
    if not any(char in text for char in _TREE_UNSAFE_CHARS):
        return text
    return _TREE_UNSAFE.sub(lambda match: " " if match.group() in _SPACE_LIKE else "", text)


def _decode(body: bytes, *, declared: str | None, html: bool) -> str:
    bom = bom_codec(body)
    if bom is not None:
        return body.decode(bom, errors="replace").removeprefix("\ufeff")

    for codec in (codec_for_label(declared), _prescan(body, html=html)):
        if codec is None:
            continue
        text = _decode_declared(body, codec)
        if text is not None:
            return text

    if _is_utf8(body):
        return body.decode(_UTF8)
    damaged = _damaged_utf8(body)
    if damaged is not None:
        return damaged
    detected = _detect(_detection_sample(body) if html else body[:DETECT_BYTES])
    if detected is not None:
        text = _decode_tolerant(body, detected)
        if text is not None:
            return text
    return body.decode(_UTF8, errors="replace")


def _prescan(body: bytes, *, html: bool) -> str | None:
    """The charset an HTML <meta> or an XML declaration near the start of the body names."""
    head = body[:PRESCAN_BYTES]
    codec = None
    if html:
        # A charset mentioned inside a comment is not a declaration.
        match = _META_RE.search(_COMMENT_RE.sub(b"", head))
        if match:
            codec = codec_for_label(match.group(1).decode("ascii"))
            # A document that could be read far enough to find this tag is not UTF-16 (WHATWG).
            if codec is not None and codec.startswith("utf-16"):
                codec = _UTF8
    if codec is None:
        match = _XML_DECL_RE.match(head.lstrip())
        if match:
            codec = codec_for_label(match.group(1).decode("ascii"))
            if codec is not None and codec.startswith("utf-16"):
                codec = None  # UTF-16 without a BOM would not have matched this ASCII pattern
    return codec


def _decode_declared(body: bytes, codec: str) -> str | None:
    """Decode with a declared charset, or None if the declaration is evidently wrong."""
    if codec != _UTF8 and not codec.startswith("utf-16") and not body.isascii():
        utf8 = _damaged_utf8(body)
        if utf8 is not None:
            logger.debug("declared charset %s ignored: the body is UTF-8", codec)
            return utf8
    return _decode_tolerant(body, codec)


def _decode_tolerant(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except UnicodeDecodeError:
        pass
    except LookupError:
        return None
    if codec == _CP1252:
        # windows-1252 leaves five bytes undefined; browsers show them as the C1 controls of the
        # same number rather than failing, and so do we.
        return body.decode(codec, errors="mcp_web_c1")
    if codec == _UTF8:
        damaged = _damaged_utf8(body)
        if damaged is not None:
            return damaged
    text = body.decode(codec, errors="replace")
    errors = text.count("\ufffd")
    non_ascii = len(body.translate(None, _ASCII))
    if errors <= max(_TOLERATED_ERRORS, non_ascii // _NON_ASCII_PER_ERROR):
        return text
    logger.debug("charset %s rejected: %d undecodable sequences", codec, errors)
    return None


def _damaged_utf8(body: bytes) -> str | None:
    """The body as UTF-8 with its bad bytes replaced, if it is mostly valid UTF-8; else None."""
    text = body.decode(_UTF8, errors="replace")
    errors = text.count("\ufffd")
    non_ascii = len(body.translate(None, _ASCII))
    # ASCII bytes decode one to one and are never swallowed by a bad sequence, so every other
    # character of the text is either a valid multi-byte sequence or a replacement.
    valid = len(text) - (len(body) - non_ascii) - errors
    if valid == 0 or valid < _UTF8_VALID_PER_ERROR * errors:
        return None
    if errors:
        logger.debug("UTF-8 body with %d bad sequences among %d valid ones", errors, valid)
    return text


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode(_UTF8)
    except UnicodeDecodeError:
        return False
    return True


def _detection_sample(body: bytes) -> bytes:
    """The text of an HTML document, without markup, for detection to look at.

    Markup is ASCII; a page's worth of it drowns the few non-ASCII words that tell one legacy
    encoding from another.
    """
    window = body[: DETECT_BYTES * 4]
    text = _TAG_RE.sub(b" ", _INVISIBLE_RE.sub(b" ", window))
    return text[:DETECT_BYTES]


def _detect(sample: bytes) -> str | None:
    # Cutting the sample may split a multi-byte character; detection copes with a ragged end.
    try:
        # Not preemptive: any declaration in the text was already tried (or rejected) above.
        best = from_bytes(sample, preemptive_behaviour=False).best()
    except Exception:  # detection is a heuristic; a bug in it must not fail the fetch
        logger.debug("charset detection failed", exc_info=True)
        return None
    if best is None:
        return None
    # Only encodings a browser would use: never utf-7, EBCDIC and the like.
    return codec_for_label(best.encoding)


def _c1_passthrough(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(chr(b) for b in bad), error.end


codecs.register_error("mcp_web_c1", _c1_passthrough)
