"""decode_text: BOM, then Content-Type charset, then <meta>/XML declaration, then detection."""

from __future__ import annotations

import codecs

import pytest

from mcp_server_web.fetch.doc.charset import PRESCAN_BYTES, codec_for_label, decode_text

JAPANESE = "川は長い時間をかけて谷を削ります。侵食と堆積が一緒に働き、谷底の形を作ります。"
CHINESE = "长江和黄河是中国最重要的两条河流，拥有悠久的历史和灿烂的文化。"
RUSSIAN = "Реки переносят осадки вниз по течению, прорезая горные породы на протяжении тысяч лет."


def meta_page(text: str, encoding: str, meta: str) -> bytes:
    html = f"<html><head>{meta}<title>t</title></head><body><p>{text}</p></body></html>"
    return html.encode(encoding)


@pytest.mark.parametrize(
    ("text", "encoding", "meta"),
    [
        (
            JAPANESE * 3,
            "shift_jis",
            '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">',
        ),
        (CHINESE * 3, "gbk", '<meta charset="gbk">'),
        (CHINESE * 3, "gb2312", "<meta charset=gb2312>"),
        (RUSSIAN * 3, "cp1251", "<meta charset='windows-1251'>"),
        ("Ελληνικά κείμενα για δοκιμή.", "iso-8859-7", '<META CHARSET="ISO-8859-7">'),
    ],
)
def test_charset_declared_only_in_meta(text: str, encoding: str, meta: str) -> None:
    decoded = decode_text(meta_page(text, encoding, meta), declared=None, html=True)
    assert text in decoded


def test_meta_is_ignored_for_non_html() -> None:
    body = meta_page(RUSSIAN, "cp1251", '<meta charset="koi8-r">')
    # As HTML the (wrong) meta would be believed; as plain text detection reads it correctly.
    assert RUSSIAN not in decode_text(body, declared=None, html=True)
    assert RUSSIAN in decode_text(body, declared=None, html=False)


def test_meta_inside_a_comment_is_not_a_declaration() -> None:
    body = b'<html><head><!-- <meta charset="koi8-r"> --></head><body>' + RUSSIAN.encode("cp1251") * 3
    assert RUSSIAN in decode_text(body, declared=None, html=True)


def test_meta_after_the_prescan_window_is_not_seen() -> None:
    filler = b"<!--" + b"x" * PRESCAN_BYTES + b"-->"
    body = b"<html><head>" + filler + b'<meta charset="koi8-r"></head><body>' + RUSSIAN.encode("cp1251") * 3
    # koi8-r would garble it; cp1251 detection gets it right, proving the late meta was ignored.
    assert RUSSIAN in decode_text(body, declared=None, html=True)


def test_header_charset_beats_meta() -> None:
    body = meta_page(RUSSIAN, "koi8-r", '<meta charset="windows-1251">')
    assert RUSSIAN in decode_text(body, declared="KOI8-R", html=True)


@pytest.mark.parametrize(
    ("bom_encoding", "declared"),
    [("utf-8-sig", "iso-8859-1"), ("utf-16", None), ("utf-16-le", "utf-8"), ("utf-16-be", "windows-1251")],
)
def test_byte_order_mark_wins_and_is_removed(bom_encoding: str, declared: str | None) -> None:
    text = "<p>Grüße, " + JAPANESE + "</p>"
    if bom_encoding == "utf-16-le":
        body = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    elif bom_encoding == "utf-16-be":
        body = codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    else:
        body = text.encode(bom_encoding)
    assert decode_text(body, declared=declared, html=True) == text


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("ISO-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("US-ASCII", "cp1252"),
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("Shift_JIS", "cp932"),
        ("sjis", "cp932"),
        ("EUC-KR", "cp949"),
        ("x-user-defined", "cp1252"),
        ('"utf-8"', "utf-8"),
        ("UTF8", "utf-8"),
        ("windows-1251", "cp1251"),
        ("utf-7", None),
        ("x-klingon", None),
        ("", None),
    ],
)
def test_labels_map_like_browsers(label: str, codec: str | None) -> None:
    assert codec_for_label(label) == codec


def test_latin1_label_decodes_as_windows_1252() -> None:
    # 0x93/0x94 are curly quotes in windows-1252 and C1 controls in ISO-8859-1.
    assert (
        decode_text(b"\x93quoted\x94 caf\xe9", declared="iso-8859-1", html=False) == "\u201cquoted\u201d café"
    )


def test_windows_1252_undefined_bytes_do_not_fail() -> None:
    assert decode_text(b"caf\xe9 \x81", declared="windows-1252", html=False) == "café \x81"


def test_shift_jis_label_gets_microsoft_extensions() -> None:
    # "①" exists in cp932 (what every Shift_JIS page really is) but not in strict Shift_JIS.
    body = ("① " + JAPANESE).encode("cp932")
    assert decode_text(body, declared="shift_jis", html=False) == "① " + JAPANESE


def test_unknown_label_is_ignored() -> None:
    assert (
        decode_text(("naïve " + JAPANESE).encode(), declared="x-klingon", html=False) == "naïve " + JAPANESE
    )


def test_wrong_declaration_falls_through_to_detection() -> None:
    body = (CHINESE * 6).encode("gbk")
    decoded = decode_text(body, declared="utf-8", html=False)
    assert CHINESE in decoded and "\ufffd" not in decoded


def test_legacy_declaration_of_a_utf8_body_is_overruled() -> None:
    # A server default of charset=iso-8859-1 in front of a UTF-8 page would produce "Ã©".
    assert decode_text("café — naïve".encode(), declared="iso-8859-1", html=False) == "café — naïve"


def test_a_few_bad_bytes_in_a_declared_utf8_page_are_replaced() -> None:
    good = ("Grüße aus Köln. " + JAPANESE) * 20
    body = good.encode() + b"\xff\xfe bad \xc3" + good.encode()
    decoded = decode_text(body, declared="utf-8", html=False)
    assert decoded.count(good) == 2
    assert 1 <= decoded.count("\ufffd") <= 3


def test_meta_utf16_means_utf8() -> None:
    body = b'<meta charset="utf-16"><p>' + "Grüße".encode() + b"</p>"
    assert "Grüße" in decode_text(body, declared=None, html=True)


def test_xml_declaration_encoding_is_honoured() -> None:
    body = '<?xml version="1.0" encoding="ISO-8859-1"?><rss><title>Café Ñandú</title></rss>'.encode("latin-1")
    assert "Café Ñandú" in decode_text(body, declared=None, html=False)


def test_undeclared_utf8_and_ascii() -> None:
    assert decode_text("Grüße ".encode() + JAPANESE.encode(), declared=None, html=True) == "Grüße " + JAPANESE
    assert decode_text(b"plain ascii", declared=None, html=False) == "plain ascii"
    assert decode_text(b"", declared=None, html=True) == ""


@pytest.mark.parametrize("encoding", ["shift_jis", "gbk", "cp1251"])
def test_undeclared_legacy_text_is_detected(encoding: str) -> None:
    text = {"shift_jis": JAPANESE, "gbk": CHINESE, "cp1251": RUSSIAN}[encoding] * 5
    assert decode_text(text.encode(encoding), declared=None, html=False) == text
