"""convert(): the response -> text dispatcher, with the sniffing and bot-wall detection it relies on."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import json
import lzma
import re
import struct
import zipfile
import zlib

import pytest
from pypdf import PdfReader, PdfWriter

from mcp_server_web.errors import ExtractionFailed, UnsupportedContentType
from mcp_server_web.fetch.doc.challenge import detect_challenge
from mcp_server_web.fetch.doc.convert import convert
from mcp_server_web.fetch.doc.sniff import ContentKind, classify
from mcp_server_web.fetch.types import Converted, FetchResponse, OutputFormat
from tests.support.responses import response

URL = "https://example.com/docs/page"
PARAGRAPH = (
    "Rivers carry sediment downstream, cutting into rock over thousands of years. Erosion and "
    "deposition work together to shape the valley floor, meander by meander."
)


def run(
    resp: FetchResponse, output_format: OutputFormat = "markdown", main_content: bool = True
) -> Converted:
    return convert(resp, output_format=output_format, main_content=main_content)


def article(title: str = "Valleys", body: str = "") -> str:
    paragraphs = "".join(f"<p>{PARAGRAPH} ({i})</p>" for i in range(8))
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body>"
        "<nav><a href='/'>Home</a><a href='/about'>About</a></nav>"
        f"<article><h1>{title}</h1><p>See <a href='other'>the other page</a>.</p>{paragraphs}{body}</article>"
        "</body></html>"
    )


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\xff\0\0"))
        + chunk(b"IEND", b"")
    )


def pdf(pages: list[str | None], title: str | None = None) -> bytes:
    """A PDF with one line of Helvetica text per page (None: a page with no text at all)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    first_page = 3
    font = first_page + 2 * len(pages)
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, text in enumerate(pages):
        stream = b"" if text is None else b"BT /F1 18 Tf 72 700 Td (" + text.encode("latin-1") + b") Tj ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {first_page + 2 * i + 1} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(b"<< /Title (" + (title or "").encode("latin-1") + b") >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = f" /Info {len(objects)} 0 R" if title else ""
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# --- HTML ------------------------------------------------------------------------------------


def test_html_article() -> None:
    result = run(response(article("How Rivers Shape Valleys")))
    assert result.content_type == "text/html"
    assert result.title == "How Rivers Shape Valleys"
    assert result.used_fallback is False and result.warnings == ()
    assert re.search(r"^# How Rivers Shape Valleys$", result.text, re.M)
    assert "[the other page](https://example.com/docs/other)" in result.text
    assert "Home" not in result.text


def test_relative_links_resolve_against_the_final_url() -> None:
    resp = FetchResponse(
        url="https://short.example/x",
        final_url="https://example.com/a/b/final",
        status=200,
        headers={},
        media_type="text/html",
        charset=None,
        body=article().encode(),
        redirects=("https://short.example/x",),
    )
    assert "(https://example.com/a/b/other)" in run(resp).text


@pytest.mark.parametrize(
    ("encoding", "meta", "text"),
    [
        (
            "shift_jis",
            '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
            "川は谷を削ります。",
        ),
        ("gbk", '<meta charset="GBK">', "长江和黄河是中国最重要的两条河流。"),
        ("cp1251", '<meta charset="windows-1251">', "Реки переносят осадки вниз по течению."),
    ],
)
def test_legacy_encodings_declared_only_in_meta(encoding: str, meta: str, text: str) -> None:
    page = f"<html><head>{meta}<title>{text[:4]}</title></head><body><article>" + f"<p>{text * 6}</p>" * 6
    result = run(response(page.encode(encoding), "text/html"))
    assert text in result.text
    assert result.title == text[:4]


def test_utf16_page_with_bom_and_no_charset() -> None:
    body = codecs.BOM_UTF16_LE + article("Grüße aus Köln").encode("utf-16-le")
    result = run(response(body, "text/html"))
    assert result.title == "Grüße aus Köln" and "Rivers carry sediment" in result.text


def test_main_content_false_and_other_formats() -> None:
    whole = run(response(article()), main_content=False)
    assert "[About](https://example.com/about)" in whole.text
    text = run(response(article()), output_format="text")
    assert "See the other page." in text.text and "](" not in text.text and "#" not in text.text
    fragment = run(response(article()), output_format="html")
    assert '<a href="https://example.com/docs/other">the other page</a>' in fragment.text


def test_listing_page_reports_the_fallback() -> None:
    items = "".join(
        f"<div class='item'><a href='/i/{i}'>Item {i}</a><p>Price {i} EUR, in stock.</p></div>"
        for i in range(50)
    )
    result = run(response(f"<html><body><div class='list'>{items}</div></body></html>"))
    assert result.used_fallback is True
    assert "Price 0 EUR" in result.text and "Price 49 EUR" in result.text


def test_deeply_nested_html() -> None:
    page = "<html><body>" + "<div>" * 100_000 + "deep inner text" + "</div>" * 100_000 + "</body></html>"
    assert "deep inner text" in run(response(page)).text


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   \r\n\t  ",
        b"<html><head><title>App</title></head><body><div id='root'></div><script>go()</script></body>",
    ],
)
def test_html_without_text_is_an_extraction_failure(body: bytes) -> None:
    with pytest.raises(ExtractionFailed) as caught:
        run(response(body, "text/html"))
    assert str(caught.value).startswith("extraction_failed: ")


def test_empty_plain_text_is_an_extraction_failure() -> None:
    with pytest.raises(ExtractionFailed, match="empty body"):
        run(response(b"", "text/plain"))


# --- text, Markdown, JSON, XML ---------------------------------------------------------------


def test_plain_text_passes_through() -> None:
    body = "plain words\r\nsecond line\n\n   indented *not markdown*"
    result = run(response(body, "text/plain", "utf-8"))
    assert result.text == "plain words\nsecond line\n\n   indented *not markdown*"
    assert result.content_type == "text/plain" and result.title is None


def test_markdown_passes_through_unchanged() -> None:
    body = "# Title\n\nSome *markdown* with a [link](/relative) and\n\n```py\ncode\n```\n"
    result = run(response(body, "text/markdown", "utf-8"))
    assert result.text == body and result.content_type == "text/markdown"


def test_plain_text_as_html_is_escaped_in_pre() -> None:
    result = run(response("a < b & <script>", "text/plain"), output_format="html")
    assert result.text == "<pre>a &lt; b &amp; &lt;script&gt;</pre>"


def test_json_is_pretty_printed_in_a_fence() -> None:
    data = {"name": "río", "lengths": [1, 2], "nested": {"ok": True}}
    result = run(response(json.dumps(data), "application/json"))
    assert result.content_type == "application/json"
    assert result.text.startswith("```json\n{\n") and result.text.endswith("\n}\n```")
    assert '  "name": "río",' in result.text and '    "ok": true' in result.text
    plain = run(response(json.dumps(data), "application/json"), output_format="text")
    assert plain.text == json.dumps(data, indent=2, ensure_ascii=False)


def test_vendor_json_and_json_labelled_html() -> None:
    assert run(response('{"a": 1}', "application/problem+json")).text == '```json\n{\n  "a": 1\n}\n```'
    mislabelled = run(response('[{"a": 1}]', "text/html"))
    assert mislabelled.content_type == "application/json" and mislabelled.text.startswith("```json\n[")


def test_invalid_json_is_shown_as_text_not_an_error() -> None:
    result = run(response('{"a": 1,,}', "application/json"))
    assert result.text == '```\n{"a": 1,,}\n```'
    assert result.warnings and "not valid JSON" in result.warnings[0]


def test_rss_is_fenced_xml_with_declared_encoding() -> None:
    feed = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<rss><channel><title>Café</title></channel></rss>'
    result = run(response(feed.encode("latin-1"), "application/rss+xml"))
    assert result.content_type == "application/rss+xml"
    assert result.text.startswith("```xml\n<?xml") and "<title>Café</title>" in result.text
    assert result.text.endswith("</rss>\n```")


def test_atom_served_as_text_xml_is_a_feed() -> None:
    atom = '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>News</title></feed>'
    assert classify(response(atom, "text/xml")) == (ContentKind.FEED, "application/atom+xml")
    assert "<title>News</title>" in run(response(atom, "text/xml")).text


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_text_with_page_markers_and_title() -> None:
    result = run(response(pdf(["First page words", "Second page words"], title="A Paper"), "application/pdf"))
    assert result.content_type == "application/pdf"
    assert result.title == "A Paper"
    assert result.text == "--- Page 1 ---\n\nFirst page words\n\n--- Page 2 ---\n\nSecond page words"
    assert result.warnings == ()


def test_pdf_is_recognised_by_its_bytes() -> None:
    result = run(response(pdf(["Sniffed words"]), "application/octet-stream"))
    assert result.content_type == "application/pdf" and "Sniffed words" in result.text


def test_pdf_page_limit_is_reported() -> None:
    body = pdf([f"Words on page {n}" for n in range(1, 6)])
    result = convert(
        response(body, "application/pdf"), output_format="markdown", main_content=True, pdf_max_pages=2
    )
    assert "Words on page 2" in result.text and "Words on page 3" not in result.text
    assert result.warnings == ("Only pages 1-2 of 5 were converted: the limit is 2 pages.",)
    assert result.text.endswith("--- Only pages 1-2 of 5 were converted: the limit is 2 pages. ---")


def test_pdf_time_budget_is_checked_between_pages() -> None:
    body = pdf([f"Words on page {n}" for n in range(1, 4)])
    result = convert(
        response(body, "application/pdf"), output_format="text", main_content=True, pdf_time_budget=0.0
    )
    assert "Words on page 1" in result.text and "Words on page 2" not in result.text
    assert "longer than 0 seconds" in result.warnings[0]


def test_scanned_pdf_without_text_layer() -> None:
    with pytest.raises(ExtractionFailed, match="no text layer"):
        run(response(pdf([None, None]), "application/pdf"))


@pytest.mark.parametrize("body", [b"%PDF-1.7\n this is not really a pdf", b"not a pdf at all"])
def test_broken_pdf(body: bytes) -> None:
    with pytest.raises(ExtractionFailed, match="could not be read"):
        run(response(body, "application/pdf"))


def test_password_protected_pdf() -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf(["Secret words"]))))
    writer.encrypt("open sesame", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(ExtractionFailed, match="password"):
        run(response(out.getvalue(), "application/pdf"))


# --- binary ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["image/png", "text/html", "text/plain", "application/octet-stream", ""])
def test_png_is_never_decoded_as_text(label: str) -> None:
    with pytest.raises(UnsupportedContentType) as caught:
        run(response(png(), label))
    message = str(caught.value)
    assert message.startswith("unsupported_content_type: image/png is not text;")
    assert "cannot read images, archives or other binary files" in message


def zip_bytes(name: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(name, "x")
    return out.getvalue()


@pytest.mark.parametrize(
    ("body", "media_type"),
    [
        (b"GIF89a\x01\x00\x01\x00", "image/gif"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00" + b"\x28" + b"\x00" * 40, "image/bmp"),
        (b"\x00\x00\x01\x00\x01\x00\x10\x10", "image/vnd.microsoft.icon"),
        (b"II*\x00\x08\x00\x00\x00", "image/tiff"),
        (zip_bytes("notes.txt"), "application/zip"),
        (
            zip_bytes("word/document.xml"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        (gzip.compress(b"<html>hi</html>"), "application/gzip"),
        (b"7z\xbc\xaf\x27\x1c\x00\x04", "application/x-7z-compressed"),
        (b"Rar!\x1a\x07\x01\x00", "application/vnd.rar"),
        (bz2.compress(b"text"), "application/x-bzip2"),
        (lzma.compress(b"text"), "application/x-xz"),
        (b"ID3\x04\x00\x00\x00\x00\x00\x00", "audio/mpeg"),
        (b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00", "video/mp4"),
        (b"OggS\x00\x02\x00\x00", "audio/ogg"),
        (b"\x00asm\x01\x00\x00\x00", "application/wasm"),
        (b"\x7fELF\x02\x01\x01\x00", "application/x-elf"),
        (b"\xcf\xfa\xed\xfe\x07\x00\x00\x01", "application/x-mach-binary"),
        (
            b"MZ" + b"\x90" * 58 + b"\x40\x00\x00\x00" + b"PE\x00\x00",
            "application/vnd.microsoft.portable-executable",
        ),
        (b"some\x00binary\x00data\x01\x02", "application/octet-stream"),
    ],
)
def test_binary_signatures_win_over_a_text_label(body: bytes, media_type: str) -> None:
    assert classify(response(body, "text/html")) == (ContentKind.BINARY, media_type)
    with pytest.raises(UnsupportedContentType, match=re.escape(media_type)):
        run(response(body, "text/html"))


def test_a_specific_binary_label_is_kept() -> None:
    docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert classify(response(zip_bytes("x.txt"), docx)) == (ContentKind.BINARY, docx)
    assert classify(response(b"\x01\x02garbage", "image/heic")) == (ContentKind.BINARY, "image/heic")


def test_text_that_starts_like_a_weak_signature_is_text() -> None:
    assert classify(response("MZ Wallace bags are on sale.", "text/plain")).kind is ContentKind.TEXT
    assert classify(response("BM: a plain note", "")).kind is ContentKind.TEXT


# --- sniffing labels -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "label", "kind", "media_type"),
    [
        ("<!DOCTYPE html><html><body>x</body></html>", "", ContentKind.HTML, "text/html"),
        ("\ufeff  <!-- c --> <html><p>x</p>", "application/octet-stream", ContentKind.HTML, "text/html"),
        ("<p>Just a paragraph</p>", "", ContentKind.HTML, "text/html"),
        ("<!doctype html><title>x</title>", "text/plain", ContentKind.HTML, "text/html"),
        ("<p>markup shown as text</p>", "text/plain", ContentKind.TEXT, "text/plain"),
        ("<html><body>x</body></html>", "application/xhtml+xml", ContentKind.HTML, "application/xhtml+xml"),
        (
            '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>',
            "text/xml",
            ContentKind.HTML,
            "application/xhtml+xml",
        ),
        ('{"a": [1, 2]}', "", ContentKind.JSON, "application/json"),
        ('{"a": [1, 2]}', "text/plain", ContentKind.JSON, "application/json"),
        ("{not json", "", ContentKind.TEXT, "text/plain"),
        ('<?xml version="1.0"?><rss version="2.0"></rss>', "", ContentKind.FEED, "application/rss+xml"),
        (
            "<rss version='2.0'><channel/></rss>",
            "application/octet-stream",
            ContentKind.FEED,
            "application/rss+xml",
        ),
        ('<?xml version="1.0"?><catalog/>', "", ContentKind.XML, "application/xml"),
        ("<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", ContentKind.XML, "image/svg+xml"),
        ("# Heading\n\ntext", "text/markdown", ContentKind.MARKDOWN, "text/markdown"),
        ("body { color: red }", "text/css", ContentKind.TEXT, "text/css"),
        ("console.log(1)", "application/javascript", ContentKind.TEXT, "application/javascript"),
        ("plain words", "", ContentKind.TEXT, "text/plain"),
        ("<html>an error page</html>", "application/pdf", ContentKind.HTML, "text/html"),
    ],
)
def test_classify(body: str, label: str, kind: ContentKind, media_type: str) -> None:
    assert classify(response(body, label)) == (kind, media_type)


def test_utf16_text_is_not_mistaken_for_binary() -> None:
    body = codecs.BOM_UTF16_LE + "<html><body>Hallo</body></html>".encode("utf-16-le")
    assert classify(response(body, "")).kind is ContentKind.HTML
    assert classify(response("plain".encode("utf-16-le"), "text/plain", "utf-16le")).kind is ContentKind.TEXT


# --- bot walls -------------------------------------------------------------------------------


CLOUDFLARE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body><div class="main-wrapper" role="main">
<div class="main-content"><h1 class="zone-name-title h1">example.com</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to continue</span>
</div></noscript>
</div></div><script>(function(){window._cf_chl_opt={cvId: '2',cZone: 'example.com'};}());</script>
</body></html>"""

RECAPTCHA_WALL = """<html><head><title>Security check</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head><body>
<form action="/verify" method="post"><p>Please complete the security check to continue.</p>
<div class="g-recaptcha" data-sitekey="6Lc_aCMTAAAAABx7u2W0WPXnVbI_v6ZdbM6rYf16"></div>
<input type="hidden" name="return" value="/"><input type="submit" value="Continue"></form></body></html>"""


@pytest.mark.parametrize(
    ("resp", "reason"),
    [
        (response("<html><body>wait</body></html>", status=403, headers={"cf-mitigated": "challenge"}),
         "Cloudflare challenge"),
        (response(CLOUDFLARE, status=403), "Cloudflare challenge"),
        (response(CLOUDFLARE.replace("_cf_chl_opt", "x"), status=503), "Cloudflare challenge"),
        (response("<html><head><title>Attention Required! | Cloudflare</title></head><body>Blocked</body>",
                  status=403), "Cloudflare block page"),
        (response("<html><head><title>DDoS-Guard</title></head><body>Checking your browser</body></html>"),
         "DDoS-Guard browser check"),
        (response("<html><body>x</body></html>", status=403, headers={"server": "ddos-guard"}),
         "DDoS-Guard browser check"),
        (response("<title>Sucuri WebSite Firewall - Access Denied</title>", status=403), "Sucuri firewall"),
        (response("<html><body>Request unsuccessful. Incapsula incident ID: 123-456</body></html>"),
         "Imperva/Incapsula block"),
        (response("<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY>Reference #18.1 "
                  "https://errors.edgesuite.net/18.1</BODY></HTML>", status=403), "Akamai block page"),
        (response('<html><body><div id="px-captcha"></div><p>Press &amp; Hold</p></body></html>', status=403),
         "PerimeterX/HUMAN challenge"),
        (response("<html><body><script src='https://ct.captcha-delivery.com/c.js'></script></body></html>",
                  status=403), "DataDome challenge"),
        (response("<html></html>", status=405, headers={"x-amzn-waf-action": "captcha"}),
         "AWS WAF challenge"),
        (response(RECAPTCHA_WALL), "CAPTCHA page"),
        (response("<html><body><div class='h-captcha' data-sitekey='x'></div></body></html>"),
         "CAPTCHA page"),
    ],
)  # fmt: skip
def test_challenge_pages_are_detected(resp: FetchResponse, reason: str) -> None:
    assert detect_challenge(resp) == reason


def test_article_with_a_recaptcha_comment_form_is_not_a_challenge() -> None:
    comment_form = (
        "<section id='comments'><h2>Leave a comment</h2><form action='/comment' method='post'>"
        "<textarea name='comment'></textarea><input name='author'>"
        "<div class='g-recaptcha' data-sitekey='6Lc_x'></div><input type='submit' value='Post'>"
        "</form></section>"
        "<script src='https://www.google.com/recaptcha/api.js'></script>"
    )
    assert detect_challenge(response(article(body=comment_form))) is None


def test_short_page_with_a_captcha_script_but_real_text_is_not_a_challenge() -> None:
    page = "<html><head><script src='https://www.google.com/recaptcha/api.js'></script></head><body>"
    page += f"<article><p>{PARAGRAPH * 8}</p></article></body></html>"
    assert detect_challenge(response(page)) is None


def test_ordinary_responses_are_not_challenges() -> None:
    # Cloudflare injects its challenge-platform script into ordinary pages too.
    injected = "<script>a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js'</script>"
    assert detect_challenge(response(article(body=injected), headers={"server": "cloudflare"})) is None
    assert detect_challenge(response('{"captcha-delivery.com": "g-recaptcha"}', "application/json")) is None
    assert detect_challenge(response(b"", "text/html", status=204)) is None
    assert detect_challenge(response("<html><body>Not found</body></html>", status=404)) is None
