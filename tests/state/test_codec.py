"""The codec of shared state: every stored type round-trips, keys hash stably, and bytes from
anyone who can write to Redis decode to a registered value or raise CorruptEntry, never more."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

import pytest

from mcp_server_web.fetch import Document, FetchResponse, PageMetadata, RenderedPage
from mcp_server_web.providers import Attempt, SearchAnswer, SearchQuery, SearchResult
from mcp_server_web.server.shared_types import shared_types
from mcp_server_web.state import Codec, CorruptEntry, Unencodable, encode_key, key_text
from mcp_server_web.state.codec import MAGIC, MAX_HEADER_BYTES, VERSION

LIMIT = 64 << 20
CODEC = Codec(shared_types())
BODY = bytes(range(256)) * (5 * 1024 * 1024 // 256)  # 5 MB, every byte value: not UTF-8
TEXT = "Grüße, 東京, emoji 🙂, a right-to-left ‏עברית and a NUL \x00.\n" * 3500  # ~200 KB


def response(body: bytes = BODY) -> FetchResponse:
    return FetchResponse(
        url="http://127.0.0.1:8000/start?q=ä",
        final_url="http://127.0.0.1:8000/päge",
        status=200,
        headers={"content-type": "text/html; charset=iso-8859-1", "x-note": "naïve, ok", "set-cookie": ""},
        media_type="text/html",
        charset="iso-8859-1",
        body=body,
        redirects=("http://127.0.0.1:8000/start?q=ä", "http://127.0.0.1:8000/next"),
    )


def document(text: str = TEXT) -> Document:
    return Document(
        url="http://127.0.0.1:8000/doc",
        final_url="http://127.0.0.1:8000/doc/",
        status=203,
        content_type="application/pdf",
        title="Über «Titel»",
        format="text",
        main_content=False,
        text=text,
        used_fallback=True,
        warnings=("the PDF was cut at its page limit",),
        snapshot="0123456789ab",
        fetched_at="2025-01-02T03:04:05Z",
        via="browser",
        metadata=METADATA,
    )


METADATA = PageMetadata(
    author="Jane Doe, John Roe",
    published="2024-03-01T09:30:00+01:00",
    modified=None,
    site_name="The Valley Times",
    language="en-GB",
    description="How rivers cut valleys.",
    canonical_url="https://news.example/2024/03/valleys",
)


def answer() -> SearchAnswer:
    query = SearchQuery(
        query="café 東京",
        max_results=7,
        topic="news",
        time_range="week",
        include_domains=("example.org", "bücher.de"),
        exclude_domains=(),
        country="DE",
        language="de",
        page=2,
        safesearch="strict",
        published_after=date(2025, 1, 1),
        published_before=date(2025, 12, 31),
    )
    results = (
        SearchResult(
            "One", "https://example.org/1", "first snippet", "2025-01-02T03:04:05+00:00", 0.5, ("brave",)
        ),
        SearchResult("Two", "https://example.org/2", "x" * 2000, None, None, ()),
        SearchResult("Three", "https://example.org/3", "", None, 3.0, ("tavily", "exa")),
    )
    attempts = (
        Attempt("tavily", "error", "rate limited (429)", 120, ("no country parameter",)),
        Attempt("brave", "ok", None, 80),
        Attempt("exa", "skipped", None, 0),
    )
    return SearchAnswer(query, "brave", results, attempts, cached=True)


SAMPLES: dict[str, list[Any]] = {
    "fetch.response": [
        response(),
        response(b""),
        replace(response(b"ok"), charset=None, headers={}, redirects=()),
    ],
    "fetch.document": [
        document(),
        document(""),
        replace(document("short"), title=None, warnings=(), via="direct", metadata=PageMetadata()),
    ],
    "fetch.metadata": [
        METADATA,
        PageMetadata(),
        replace(METADATA, description="é" * 300),  # past LONG_TEXT: stored as a blob
    ],
    "fetch.rendered": [
        RenderedPage(response(), ("a note", "another")),
        RenderedPage(response(b"<html></html>")),
    ],
    "search.answer": [
        answer(),
        SearchAnswer(SearchQuery("nothing"), None, (), (Attempt("duckduckgo", "empty", None, 5),)),
    ],
    "search.query": [
        SearchQuery("q"),
        SearchQuery("q", published_before=date(2024, 2, 29)),
        SearchQuery("q", published_after=date(2024, 1, 31), published_before=date(2024, 12, 31)),
    ],
    "search.result": [SearchResult("t", "u", "s")],
    "search.attempt": [Attempt("p", "ok", None, 1)],
}


def test_every_registered_type_has_samples() -> None:
    assert set(SAMPLES) == set(shared_types())


@pytest.mark.parametrize(
    "value",
    [v for values in SAMPLES.values() for v in values] + [None, "", "0123456789ab", "é" * 5000, "\ud800"],
)
def test_values_round_trip(value: Any) -> None:
    back = CODEC.decode(CODEC.encode(value), max_bytes=LIMIT)
    assert back == value
    assert type(back) is type(value)


def test_containers_keep_their_types() -> None:
    back = CODEC.decode(CODEC.encode(answer()), max_bytes=LIMIT)
    assert isinstance(back, SearchAnswer)
    assert type(back.results) is tuple and type(back.results[0]) is SearchResult
    assert type(back.query.include_domains) is tuple
    assert type(back.results[2].score) is float
    page = CODEC.decode(CODEC.encode(RenderedPage(response())), max_bytes=LIMIT)
    assert isinstance(page, RenderedPage)
    assert type(page.response.headers) is dict and type(page.response.redirects) is tuple


def test_bodies_and_long_texts_are_stored_raw() -> None:
    data = CODEC.encode(response())
    assert BODY in data  # not base64, not escaped
    assert len(data) < len(BODY) + 1024
    text = CODEC.encode(document())
    assert TEXT.encode() in text
    assert len(text) < len(TEXT.encode()) + 1024


def test_a_float_field_given_an_int_comes_back_a_float() -> None:
    value = SearchResult("t", "u", "s", score=2)
    back = CODEC.decode(CODEC.encode(value), max_bytes=LIMIT)
    assert back == value and type(back.score) is float


# --- keys ------------------------------------------------------------------------------------------

KEYS: list[Any] = [
    "a",
    ("a",),
    ("a", "b"),
    ("a,b",),
    ('a","b',),
    ("a", 1),
    ("a", True),
    ("a", 1.0),
    ("a", "1"),
    ("a", 0.0),
    ("a", -0.0),
    ("a", False),
    ("a", 0),
    ("a", None),
    ("a", "None"),
    ("a", "null"),
    ("a", ()),
    (),
    ((),),
    (("a", 1),),
    ("a", (1,)),
    ("a", 1, ()),
    ("a", float("inf")),
    ("a", "\ud800"),
    ("current", "http://127.0.0.1/x", "markdown", True, "auto"),
]


def test_keys_hash_to_distinct_hex_digests() -> None:
    texts = [key_text(key) for key in KEYS]
    assert len(set(texts)) == len(KEYS)
    digests = [encode_key(key) for key in KEYS]
    assert len(set(digests)) == len(KEYS)
    for digest in digests:
        assert len(digest) == 64 and set(digest) <= set("0123456789abcdef")
    assert "127.0.0.1" not in "".join(digests)


def test_keys_hash_the_same_in_every_process() -> None:
    script = (
        "import sys, json; from mcp_server_web.state import encode_key; "
        "print(json.dumps([encode_key(k) for k in [('a', 1), ('x', 1.5, None, ('y', True)), 'u']]))"
    )
    seen = set()
    for seed in ("1", "2", "random"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
            text=True,
        ).stdout
        seen.add(out)
    assert seen == {
        json.dumps([encode_key(("a", 1)), encode_key(("x", 1.5, None, ("y", True))), encode_key("u")]) + "\n"
    }


@pytest.mark.parametrize("key", [["a"], ("a", b"b"), ("a", {"b": 1}), ("a", ["b"]), 3j])
def test_a_key_of_another_type_is_refused(key: Any) -> None:
    with pytest.raises(TypeError):
        encode_key(key)


def test_the_fingerprint_names_the_classes_and_their_fields() -> None:
    @dataclass(frozen=True)
    class Wider:
        x: str
        y: int = 0

    @dataclass(frozen=True)
    class Other:
        x: int

    same = Codec({"thing": Stranger}).fingerprint
    assert same == Codec({"thing": Stranger}).fingerprint == Codec({"thing": Twin}).fingerprint
    assert same != Codec({"thing": Wider}).fingerprint  # a field added
    assert same != Codec({"thing": Other}).fingerprint  # a field's type changed
    assert same != Codec({"renamed": Stranger}).fingerprint
    assert CODEC.fingerprint == Codec(shared_types()).fingerprint


# --- what the codec refuses to write -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stranger:
    x: str


@pytest.mark.parametrize(
    "value",
    [
        Stranger("x"),
        b"bytes",
        1,
        ("tuple",),
        replace(response(b""), status="200"),
        replace(response(b""), redirects=["a list"]),
        replace(response(b""), headers={"x": 1}),
        replace(document(""), format="exe"),
        replace(document(""), main_content=1),
        RenderedPage(document("")),  # type: ignore[arg-type]
        # A datetime is a date to isinstance, but its time would be lost: it is not one here.
        SearchQuery("q", published_after=datetime(2025, 1, 1, 12, 0)),
        SearchQuery("q", published_before="2025-01-01"),  # type: ignore[arg-type]
    ],
)
def test_what_is_not_a_registered_value_is_not_encoded(value: Any) -> None:
    with pytest.raises(Unencodable):
        CODEC.encode(value)


def test_a_header_past_its_limit_is_not_encoded() -> None:
    many = replace(response(b""), headers={f"h{i}": "v" * 200 for i in range(MAX_HEADER_BYTES // 200)})
    with pytest.raises(Unencodable):
        CODEC.encode(many)


def test_registering_what_cannot_be_stored_is_refused() -> None:
    @dataclass(frozen=True)
    class Listy:
        items: list[str]

    with pytest.raises(TypeError):
        Codec({"listy": Listy})
    with pytest.raises(TypeError):
        Codec({"holder": Holder})  # Stranger is not registered
    with pytest.raises(TypeError):
        Codec({"not.a.dataclass": dict})
    with pytest.raises(TypeError):
        Codec({"a": Stranger, "b": Stranger})
    Codec({"holder": Holder, "stranger": Stranger})


# --- what a poisoned entry cannot do ---------------------------------------------------------------


def forge(value: Any, blobs: bytes = b"", *, magic: bytes = MAGIC, version: int = VERSION) -> bytes:
    header = value if isinstance(value, bytes) else json.dumps(value).encode()
    return struct.pack(">4sBI", magic, version, len(header)) + header + blobs


def corrupt(data: bytes, max_bytes: int = LIMIT) -> str:
    with pytest.raises(CorruptEntry) as caught:
        CODEC.decode(data, max_bytes=max_bytes)
    assert len(str(caught.value)) < 200
    return str(caught.value)


def parts_of(value: Any) -> tuple[Any, bytes]:
    """The header and the blobs of a value written by the codec, to be altered and forged again."""
    data = CODEC.encode(value)
    (length,) = struct.unpack(">I", data[5:9])
    return json.loads(data[9 : 9 + length]), data[9 + length :]


def fields_of(value: Any) -> Any:
    return parts_of(value)[0]


def test_the_forge_speaks_the_format() -> None:
    small = response(b"abc")
    assert CODEC.decode(forge(fields_of(small), b"abc"), max_bytes=LIMIT) == small


def test_an_entry_larger_than_max_bytes_is_refused_before_it_is_read() -> None:
    data = CODEC.encode(response(b"abc"))
    assert CODEC.decode(data, max_bytes=len(data)) == response(b"abc")
    assert "bytes" in corrupt(data, max_bytes=len(data) - 1)
    # Not even the magic is looked at: a huge blob of anything is refused by its length alone.
    corrupt(b"\xff" * 1000, max_bytes=999)


def test_every_truncation_is_refused() -> None:
    data = CODEC.encode(replace(response(b"body bytes"), headers={"a": "b"}))
    for cut in range(len(data)):
        corrupt(data[:cut])
    big = CODEC.encode(response())
    for cut in (0, 4, 8, 100, len(big) // 2, len(big) - 1):
        corrupt(big[:cut])


def test_trailing_bytes_are_refused() -> None:
    corrupt(CODEC.encode(response(b"abc")) + b"x")
    corrupt(CODEC.encode("snapshot") + b"\x00")


def test_another_format_is_refused() -> None:
    header = fields_of("x")
    corrupt(forge(header, magic=b"\x80\x04\x95\x00"))  # a pickle's opening bytes
    corrupt(forge(header, version=VERSION + 1))
    corrupt(b"")
    corrupt(json.dumps("x").encode())


def test_huge_declared_lengths_are_refused() -> None:
    corrupt(struct.pack(">4sBI", MAGIC, VERSION, 0xFFFFFFFF) + b'"x"')
    header = fields_of(response(b"abc"))
    header["f"]["body"] = {"b": 2**62}
    corrupt(forge(header, b"abc"))
    header["f"]["body"] = {"b": -1}
    corrupt(forge(header, b"abc"))
    corrupt(forge({"s": 10**30}, b"x"))


def test_a_header_longer_than_its_limit_is_refused() -> None:
    corrupt(forge(b" " * (MAX_HEADER_BYTES + 1) + b'"x"'))


@pytest.mark.parametrize(
    "header",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        json.dumps(
            {
                "t": "search.answer",
                "f": {"query": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]},
            }
        ).encode(),
    ],
)
def test_deep_nesting_is_refused(header: bytes) -> None:
    corrupt(forge(header))


def test_too_many_items_are_refused() -> None:
    header = fields_of(replace(document("x"), warnings=()))
    header["f"]["warnings"] = [""] * 200_000
    corrupt(forge(header))


def test_undecodable_headers_and_texts_are_refused() -> None:
    corrupt(forge(b"\xff\xfe"))
    corrupt(forge(b'{"t": '))
    corrupt(forge(b"NaN garbage"))
    corrupt(forge(b"1" * 5000))  # an int past Python's digit limit
    corrupt(forge({"s": 2}, b"\xff\xfe"))  # a long text's bytes are not UTF-8


def test_an_unknown_tag_is_refused() -> None:
    header = fields_of(SearchQuery("q"))
    header["t"] = "builtins.eval"
    message = corrupt(forge(header))
    assert "builtins.eval" in message
    header["t"] = "x" * 100_000
    corrupt(forge(header))  # and the message stays short


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("status", "200"),  # str where int
        ("status", True),  # bool where int
        ("status", 200.0),  # float where int
        ("status", None),
        ("url", 5),  # int where str
        ("url", None),
        ("url", ["a"]),
        ("charset", 5),  # int where str | None
        ("headers", [["a", "b"]]),  # list where dict
        ("headers", {"a": 1}),  # int where a str value
        ("headers", {"a": None}),
        ("redirects", "abc"),  # str where tuple
        ("redirects", [1]),
        ("redirects", {"a": "b"}),
        ("body", "Ym9keQ=="),  # base64 text where bytes
        ("body", 3),
        ("body", {"s": 3}),  # a text's blob where bytes
        ("body", {"b": 3, "x": 1}),
    ],
)
def test_type_confusion_is_refused(field: str, bad: Any) -> None:
    header = fields_of(response(b"abc"))
    header["f"][field] = bad
    message = corrupt(forge(header, b"abc"))
    assert field in message


@pytest.mark.parametrize(
    ("value", "field", "bad"),
    [
        (document("x"), "format", "exe"),  # a Literal outside its values
        (document("x"), "via", None),
        (document("x"), "main_content", 1),  # int where bool
        (document("x"), "main_content", "true"),
        (document("x"), "title", {"t": "fetch.document", "f": {}}),
        (answer(), "results", [{"t": "search.attempt", "f": {}}]),  # another registered type in a tuple
        (answer(), "query", {"t": "fetch.response", "f": fields_of(response(b""))["f"]}),  # the wrong tag
        (answer(), "query", fields_of(SearchQuery("q"))["f"]),  # a dataclass without its tag
        (answer(), "cached", "yes"),
        # A date is its ISO text, YYYY-MM-DD, and nothing else: not a number, a datetime, 2025-02-30.
        (answer().query, "published_after", 20250101),
        (answer().query, "published_after", "2025-01-01T00:00:00"),
        (answer().query, "published_after", "2025-02-30"),
        (answer().query, "published_after", "20250101"),
        (answer().query, "published_before", ["2025", 1, 1]),
        (answer(), "provider", 1),
    ],
)
def test_type_confusion_in_other_types_is_refused(value: Any, field: str, bad: Any) -> None:
    header, blobs = parts_of(value)
    header["f"][field] = bad
    corrupt(forge(header, blobs))


@pytest.mark.parametrize("bad", ["2024-13-01", "2024-01-01T00:00", 20240101, ["2024-01-01"], {"s": 10}])
def test_a_date_is_an_iso_day_or_refused(bad: Any) -> None:
    header, blobs = parts_of(SearchQuery("q", published_after=date(2024, 1, 1)))
    assert header["f"]["published_after"] == "2024-01-01"
    header["f"]["published_after"] = bad
    corrupt(forge(header, blobs))


@dataclass(frozen=True, slots=True)
class Twin:
    x: str


@dataclass(frozen=True, slots=True)
class Holder:
    inner: Stranger


def test_a_nested_value_of_another_registered_class_is_refused_even_with_the_same_fields() -> None:
    codec = Codec({"stranger": Stranger, "twin": Twin, "holder": Holder})
    data = codec.encode(Holder(Stranger("x")))
    assert codec.decode(data, max_bytes=LIMIT) == Holder(Stranger("x"))
    with pytest.raises(CorruptEntry, match="expected stranger, got 'twin'"):
        codec.decode(data.replace(b'"t":"stranger"', b'"t":"twin"    '), max_bytes=LIMIT)


def test_extra_and_missing_fields_are_refused() -> None:
    header = fields_of(SearchQuery("q"))
    header["f"]["__class__"] = "x"
    assert "__class__" in corrupt(forge(header))
    header = fields_of(SearchQuery("q"))
    del header["f"]["page"]  # even one that has a default
    assert "page" in corrupt(forge(header))
    header = fields_of(SearchQuery("q"))
    header["x"] = 1
    corrupt(forge(header))


@pytest.mark.parametrize(
    "header", [[], 1, 1.5, True, {"t": "search.query"}, {"f": {}}, {"b": 0}, {"s": "x"}, {}]
)
def test_other_shapes_at_the_top_are_refused(header: Any) -> None:
    corrupt(forge(header))


def test_random_damage_decodes_or_is_refused() -> None:
    rng = random.Random(17)
    values = [answer(), document("short text ü"), response(b"abc"), "snap", None]
    encoded = [CODEC.encode(value) for value in values]
    outcomes = {"decoded": 0, "refused": 0}
    for _ in range(3000):
        data = bytearray(rng.choice(encoded))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            CODEC.decode(bytes(data), max_bytes=LIMIT)
            outcomes["decoded"] += 1
        except CorruptEntry:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 1000  # the damage was mostly noticed, and nothing else was raised
