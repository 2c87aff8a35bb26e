"""Sample documents the tests serve: built here, so every byte is known."""

from __future__ import annotations

import gzip
import json
import struct
import zlib
from random import Random

ARTICLE_TITLE = "How Rivers Shape Valleys"


def article_html(paragraphs: int = 12) -> str:
    body = "\n".join(
        f"<p>Paragraph {i}: rivers carry sediment downstream, cutting into rock over thousands of years. "
        f"Erosion and deposition work together to shape the valley floor, meander by meander, "
        f"and the slope of the land decides how fast the water moves (note {i}).</p>"
        for i in range(1, paragraphs + 1)
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{ARTICLE_TITLE} | Geo Blog</title>
<style>body {{ color: red }}</style>
<script>var tracking = "SECRET_SCRIPT_TEXT";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/contact">Contact</a></nav>
<article>
<h1>{ARTICLE_TITLE}</h1>
<p>An introduction with a <a href="/glossary/erosion">relative link</a> and an
<a href="https://example.org/abs">absolute one</a>.</p>
<h2>Erosion</h2>
{body}
<pre><code class="language-python">def flow(rate):
    return rate * 2
</code></pre>
<table><tr><th>River</th><th>Length km</th></tr><tr><td>Nile</td><td>6650</td></tr></table>
</article>
<footer>Copyright Geo Blog.
<form action="/subscribe"><input name="email"><button>Subscribe</button></form></footer>
</body></html>"""


def long_markdown_html(sections: int = 40) -> str:
    """An article long enough to need several pages at the default page size."""
    parts = []
    for s in range(sections):
        parts.append(f"<h2>Section {s}</h2>")
        parts.extend(
            f"<p>Section {s} paragraph {p}. " + "The quick brown fox jumps over the lazy dog. " * 6 + "</p>"
            for p in range(4)
        )
    return (
        "<!DOCTYPE html><html><head><title>Long Read</title></head><body><article><h1>Long Read</h1>"
        + "".join(parts)
        + "</article></body></html>"
    )


def shift_jis_page() -> bytes:
    """A Japanese page whose encoding is declared only in <meta>, not in the HTTP header."""
    text = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        "<title>日本語のページ</title></head><body><article><h1>川と谷</h1>"
        + "<p>川は長い時間をかけて谷を削ります。侵食と堆積が一緒に働き、谷底の形を作ります。</p>" * 8
        + "</article></body></html>"
    )
    return text.encode("shift_jis")


def minimal_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A valid PDF with one line of Helvetica text per page (a real text layer)."""
    objects: list[bytes] = []
    n = len(pages)
    page_ids = [3 + 2 * i for i in range(n)]
    font_id = 3 + 2 * n
    info_id = font_id + 1
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{pid} 0 R" for pid in page_ids).encode()
    objects.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(n).encode() + b" >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
        stream = b"BT /F1 18 Tf 72 700 Td (" + escaped + b") Tj ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
            + str(page_ids[i] + 1).encode()
            + b" 0 R /Resources << /Font << /F1 "
            + str(font_id).encode()
            + b" 0 R >> >> >>"
        )
        objects.append(
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"
        )
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(b"<< /Title (" + (title or "").encode("latin-1") + b") >>")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R"
    if title is not None:
        trailer += f" /Info {info_id} 0 R"
    out += (trailer + f" >>\nstartxref\n{xref_at}\n%%EOF\n").encode()
    return bytes(out)


def png_bytes() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def gzip_bomb(decoded_megabytes: int) -> bytes:
    """gzip of that many MB of zeros: tiny on the wire, huge when decoded."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1024 * 1024)
    out = bytearray()
    for _ in range(decoded_megabytes):
        out += compressor.compress(block)
    out += compressor.flush()
    return bytes(out)


def deeply_nested_html(depth: int) -> str:
    return "<html><body>" + "<div>" * depth + "deep inner text" + "</div>" * depth + "</body></html>"


def gzip_text(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"))


GLACIER_PARAGRAPHS = (
    "Glaciers move slowly downhill, grinding the rock beneath them into fine flour. Over thousands of "
    "years they widen river valleys into the broad U shapes seen across the Alps and Norway.",
    "When the ice retreats it leaves moraines, lakes and hanging valleys behind, and rivers begin "
    "their own slower work on the landscape again.",
)


def next_data_shell() -> str:
    """A Next.js page whose visible body is a spinner and whose article is in __NEXT_DATA__."""
    content = "".join(f"<p>{paragraph}</p>" for paragraph in GLACIER_PARAGRAPHS)
    data = {"props": {"pageProps": {"post": {"title": "Glaciers Carve Valleys", "content": content}}}}
    return (
        "<!DOCTYPE html><html><head><title>Loading</title>"
        f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script>'
        '<script src="/_next/static/chunks/main.js"></script></head>'
        '<body><div id="__next"><div class="spinner">Loading...</div></div></body></html>'
    )


def json_ld_shell() -> str:
    """An Angular-style shell whose article is only in JSON-LD."""
    data = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": "Delta Formation Explained",
        "articleBody": (
            "A river delta forms where a river meets a body of slower water and drops its sediment. "
            "Over centuries the deposits build outward into a fan of channels, marshes and islands, "
            "which shifts whenever floods cut a new path to the sea."
        ),
    }
    return (
        "<!DOCTYPE html><html><head><title>Story</title>"
        f'<script type="application/ld+json">{json.dumps(data)}</script></head>'
        f"<body><app-root></app-root><script>{'var x = 1;' * 500}</script></body></html>"
    )


def brotli_bomb(decoded_megabytes: int) -> bytes:
    """brotli of that many MB of zeros: a few hundred bytes on the wire for a gigabyte decoded."""
    import brotli

    compressor = brotli.Compressor(quality=5)
    block = b"\0" * (1024 * 1024)
    out = bytearray()
    for _ in range(decoded_megabytes):
        out += compressor.process(block)
    out += compressor.finish()
    return bytes(out)


def pdf_from_objects(objects: list[bytes]) -> bytes:
    """A PDF whose numbered objects (1, 2, ...) are these bodies; object 1 must be the catalog."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)


def _flate_stream(data: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(data, 9)
    return b"<< /Length %d /Filter /FlateDecode %s>>\nstream\n%s\nendstream" % (len(packed), extra, packed)


_PDF_LINE = b"BT /F1 12 Tf 72 700 Td (x) Tj ET\n"
_PDF_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf_content_bomb(decoded_megabytes: int) -> bytes:
    """A one-page PDF whose content stream inflates to that many MB of text operators."""
    operators = _PDF_LINE * (decoded_megabytes * 1024 * 1024 // len(_PDF_LINE))
    return pdf_from_objects(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            _flate_stream(operators),
            _PDF_FONT,
        ]
    )


def pdf_form_bomb(form_lines: int, invocations: int, pages: int = 1) -> bytes:
    """A PDF whose pages each draw one form (form_lines lines of text) ``invocations`` times.

    A few KB, and pypdf re-reads the form at every invocation: 20,000 lines drawn 5,000 times is
    most of an hour of CPU for an unbounded reader. Milder forms on many pages make a document
    that is quick to open and slow to read to its end.
    """
    contents, font, form = pages + 3, pages + 4, pages + 5
    kids = " ".join(f"{3 + page} 0 R" for page in range(pages))
    page = (
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R "
        f"/Resources << /Font << /F1 {font} 0 R >> /XObject << /X1 {form} 0 R >> >> >>"
    ).encode()
    return pdf_from_objects(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
            *[page] * pages,
            _flate_stream(b"/X1 Do\n" * invocations),
            _PDF_FONT,
            _flate_stream(
                _PDF_LINE * form_lines,
                b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> "
                % font,
            ),
        ]
    )


COMMON_WORDS = (
    "the of and a to in is it you that he was for on are with as i his they be at one have this from or "
    "had by hot word but what some we can out other were all there when up use your how said an each she "
    "which do their time if will way about many then them write would like so these her long make thing "
    "see him two has look more day could go come did number sound no most people"
)
"""English's most common words: text of them has English's share of words per first letter."""
SHORT_WORDS_QUERY = (" ".join("bcdefghjklmnopqrstuvwxyz") + " go he we up no me my us ox hi" * 12)[:400]
"""A 400-character query of one- and two-letter words (none a stop word): its terms start most
words of a page."""


def english_like(length: int, seed: int = 7) -> str:
    """Markdown of about length characters: a "## " heading every ten paragraphs of common words."""
    words = COMMON_WORDS.split()
    random = Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < length:
        paragraph = " ".join(random.choice(words) for _ in range(80)) + "."
        paragraphs.append(f"## {paragraph[:40]}\n\n{paragraph}" if len(paragraphs) % 10 == 0 else paragraph)
        size += len(paragraphs[-1]) + 2
    return "\n\n".join(paragraphs)
