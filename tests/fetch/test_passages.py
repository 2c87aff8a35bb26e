"""Focused reading: ranking passages of a converted document, and its outline (fetch/passages.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_server_web.fetch import OutlineEntry, Passage, outline, rank_passages
from mcp_server_web.fetch import passages as passages_module
from mcp_server_web.fetch.passages import HEADING_TEXT_LIMIT, query_terms
from tests.support.samples import SHORT_WORDS_QUERY, english_like
from tests.support.timing import least_cpu_time

GUIDE = """\
# Widget guide

Widgets are small tools for measuring rivers. This guide explains how to get one working.

## Install

Widgets need Python 3.12 or later and a working compiler.

### From source

Clone the repository and run make to build the extension modules.
Then run the test suite to check the build.

```
# this line is code, not a heading
make install
```

### With pip

Run pip install widgets from a virtual environment; wheels exist for Linux and macOS.

## Configuration

- timeout: seconds before a measurement is abandoned
- units: metric or imperial
- colour: the plot's line colour

## Troubleshooting

If the gauge reads zero, recalibrate the sensor with widget calibrate --reset.
"""


def texts(passages: list[Passage]) -> str:
    return "\n".join(passage.text for passage in passages)


def test_the_passage_that_answers_comes_with_its_heading_path() -> None:
    passages = rank_passages(GUIDE, "how do I recalibrate the gauge sensor?", max_chars=300)
    assert passages, "a passage names the gauge and the sensor"
    best = max(passages, key=lambda passage: passage.score)
    assert "recalibrate the sensor" in best.text
    assert best.heading == "Widget guide > Troubleshooting"
    assert "pip install" not in texts(passages)


def test_text_is_exactly_the_document_at_start_index() -> None:
    for query in ("build from source", "units metric", "python compiler", "widgets"):
        for passage in rank_passages(GUIDE, query, max_chars=2000):
            assert passage.text == GUIDE[passage.start_index : passage.start_index + passage.length]
            assert passage.score > 0


def test_passages_come_in_document_order_within_max_chars() -> None:
    passages = rank_passages(GUIDE, "widgets install build pip", max_chars=400)
    starts = [passage.start_index for passage in passages]
    assert starts == sorted(starts)
    assert len(passages) >= 2
    assert sum(passage.length for passage in passages) <= 400


def test_a_question_naming_a_section_finds_the_section() -> None:
    # "configuration" is only in the heading, not in the list under it.
    passages = rank_passages(GUIDE, "configuration", max_chars=1000)
    assert passages
    assert all(passage.heading == "Widget guide > Configuration" for passage in passages)
    assert "units: metric or imperial" in texts(passages)


def test_a_list_stays_with_its_block() -> None:
    passages = rank_passages(GUIDE, "imperial units", max_chars=1000)
    assert len(passages) == 1
    assert "- timeout:" in passages[0].text and "- colour:" in passages[0].text


def test_code_lines_are_not_headings() -> None:
    headings = [entry.heading for entry in outline(GUIDE)]
    assert "this line is code, not a heading" not in headings
    passage = rank_passages(GUIDE, "make install", max_chars=2000)
    assert any(
        p.heading == "Widget guide > Install > From source" and "make install" in p.text for p in passage
    )


def test_light_stemming_matches_word_forms() -> None:
    passages = rank_passages(GUIDE, "measurements abandoned", max_chars=1000)
    assert "measurement is abandoned" in texts(passages)
    passages = rank_passages(GUIDE, "building", max_chars=1000)
    assert "to build the extension" in texts(passages)


def test_case_and_unicode_words() -> None:
    document = "# Über\n\nDie Straße führt nach München.\n\n# Other\n\nNothing here."
    passages = rank_passages(document, "MÜNCHEN straße", max_chars=1000)
    assert [passage.heading for passage in passages] == ["Über"]


def test_empty_or_wordless_query_and_no_match_give_nothing() -> None:
    assert rank_passages(GUIDE, "", max_chars=1000) == []
    assert rank_passages(GUIDE, "?! ...", max_chars=1000) == []
    assert rank_passages(GUIDE, "zebra", max_chars=1000) == []
    assert rank_passages("", "widgets", max_chars=1000) == []


def test_a_query_of_stop_words_only_still_ranks() -> None:
    assert rank_passages("# A\n\nto be or not to be\n\n# B\n\nsomething else", "to be", max_chars=100)


def test_best_passage_is_cut_when_nothing_fits() -> None:
    passages = rank_passages(GUIDE, "recalibrate", max_chars=20)
    assert len(passages) == 1 and passages[0].length == 20
    assert passages[0].text == GUIDE[passages[0].start_index : passages[0].start_index + 20]


def test_long_paragraph_is_split_at_sentences() -> None:
    sentences = [
        f"Sentence number {n} talks about topic{n} at some length, padding it out." for n in range(200)
    ]
    document = "# Long\n\n" + " ".join(sentences)
    passages = rank_passages(document, "topic150", max_chars=5000)
    assert len(passages) == 1
    assert "topic150 " in passages[0].text
    assert passages[0].length <= 1200
    assert passages[0].text.rstrip().endswith(".")


def test_outline_levels_starts_and_lengths() -> None:
    entries = outline(GUIDE)
    assert [(entry.heading, entry.level) for entry in entries] == [
        ("Widget guide", 1),
        ("Install", 2),
        ("From source", 3),
        ("With pip", 3),
        ("Configuration", 2),
        ("Troubleshooting", 2),
    ]
    for entry in entries:
        section = GUIDE[entry.start_index : entry.start_index + entry.length]
        assert section.startswith("#" * entry.level + " " + entry.heading)
    by_name = {entry.heading: entry for entry in entries}
    assert by_name["Widget guide"].length == len(GUIDE)
    install = by_name["Install"]
    assert install.start_index + install.length == by_name["Configuration"].start_index
    assert (
        by_name["From source"].start_index + by_name["From source"].length == by_name["With pip"].start_index
    )
    troubleshooting = by_name["Troubleshooting"]
    assert troubleshooting.start_index + troubleshooting.length == len(GUIDE)


def test_outline_headings_lose_their_markup() -> None:
    assert outline("## The [`run`](https://x.test/run) *command* ##\n\ntext") == [
        OutlineEntry("The run command", 2, 0, 53)
    ]


def test_html_headings_and_blocks() -> None:
    document = (
        "<div><article><h1>Widget guide</h1><p>Widgets measure rivers.</p>"
        "<h2>Install</h2><p>Run <b>pip install widgets</b> in a virtual environment.</p>"
        '<h2 id="x">Troubleshooting</h2><p>Recalibrate the sensor when the gauge reads zero.</p>'
        "<ul><li>first step</li><li>second step</li></ul></article></div>"
    )
    entries = outline(document, "html")
    assert [(entry.heading, entry.level) for entry in entries] == [
        ("Widget guide", 1),
        ("Install", 2),
        ("Troubleshooting", 2),
    ]
    assert document[entries[2].start_index :].startswith('<h2 id="x">Troubleshooting')
    passages = rank_passages(document, "recalibrate sensor", max_chars=500, output_format="html")
    assert [passage.heading for passage in passages] == ["Widget guide > Troubleshooting"]
    # The section's first passage starts with its heading, so reading there shows it.
    assert passages[0].text.startswith('<h2 id="x">Troubleshooting</h2><p>Recalibrate')
    assert "<li>second step</li></ul>" in passages[0].text
    # Tag names and attributes are not words of the page.
    assert rank_passages(document, "li ul div", max_chars=500, output_format="html") == []


def test_plain_text_has_paragraphs_and_no_outline() -> None:
    filler = "Widgets measure rivers and lakes. " * 12
    document = (
        f"Widget guide\n\n{filler}\n\n# Not a heading in plain text\n\n{filler}\n\nRecalibrate the sensor."
    )
    assert outline(document, "text") == []
    passages = rank_passages(document, "recalibrate", max_chars=500, output_format="text")
    assert [passage.heading for passage in passages] == [""]
    assert passages[0].text == "Recalibrate the sensor."
    assert rank_passages(document, "heading", max_chars=500, output_format="text")[0].heading == ""


def prose(length: int) -> str:
    """Ordinary markdown of about length characters: the control a hostile shape is held to."""
    section = "## Section\n\nThe river flows through the valley and feeds the lake below the town.\n\n"
    return (section * (length // len(section) + 1))[:length]


# Each shape once took seconds in a pattern that backtracks or rescans: the heading line's adjacent
# optional runs (cubic in the spaces), a link's text running to the end of the line from every "["
# and a target from every "(", a tag's body from every "<", a lazy <h1>(.*?)</h1> from every <h1>.
HOSTILE_SHAPES = {
    "heading of spaces": ("# a" + " " * 2500 + "b\n\nThe river.", "markdown"),
    "heading of spaces, long": ("# a" + " " * 100_000 + "b\n\nThe river.", "markdown"),
    "heading of spaces in code": ("```\n# a" + " " * 2500 + "b\n```\n\nThe river.", "markdown"),
    "heading of brackets": ("# " + "[" * 50_000 + "\n\nThe river.", "markdown"),
    "heading of link openings": ("# " + "[a](" * 12_500 + "\n\nThe river.", "markdown"),
    "heading of parentheses": ("# [a](" + "(" * 50_000 + "\n\nThe river.", "markdown"),
    "unclosed html headings": ("<h1>" * 12_500 + "<p>The river.</p>", "html"),
    "html heading of angle brackets": ("<h2>" + "<" * 50_000 + "</h2><p>The river.</p>", "html"),
    "html block tags left open": ("<p" * 25_000 + "<p>The river.</p>", "html"),
}


@pytest.mark.parametrize("shape", HOSTILE_SHAPES)
def test_hostile_headings_cost_what_ordinary_text_of_their_size_costs(shape: str) -> None:
    document, output_format = HOSTILE_SHAPES[shape]
    control = prose(len(document))

    def focus(text: str) -> Callable[[], object]:
        return lambda: (
            outline(text, output_format),  # type: ignore[arg-type]
            rank_passages(text, "river a b", max_chars=2000, output_format=output_format),  # type: ignore[arg-type]
        )

    hostile, ordinary = least_cpu_time(focus(document)), least_cpu_time(focus(control))
    assert hostile <= 10 * ordinary + 0.05, f"{shape}: {hostile:.3f} s of CPU, ordinary text {ordinary:.3f} s"


def test_a_heading_is_cut_to_its_limit() -> None:
    document = "# " + "word " * 10_000 + "\n\ntext\n\n<h1>" + "word " * 10_000 + "</h1>"
    for output_format in ("markdown", "html"):
        (entry, *_) = outline(
            document if output_format == "markdown" else document.split("\n\n")[-1], output_format
        )  # type: ignore[arg-type]
        assert len(entry.heading) == HEADING_TEXT_LIMIT and entry.heading.endswith("…")


def test_closing_hashes_and_html_heading_pairs() -> None:
    document = "# C# ##\n\n## Title #\n\n### # \n\n#### tail#\n\ntext"
    assert [entry.heading for entry in outline(document)] == ["C#", "Title", "", "tail#"]
    html_document = "<h1>one<h2>two</h2><p>text</p><h3 class=x>three</H3 ><h4>open"
    entries = outline(html_document, "html")
    assert [(entry.level, entry.heading) for entry in entries] == [(2, "two"), (3, "three")]
    assert html_document[entries[1].start_index :].startswith("<h3 class=x>")


def test_a_link_target_with_parentheses_leaves_only_its_text() -> None:
    (entry,) = outline("# See [Foo (bar)](https://en.wikipedia.org/wiki/Foo_(bar)) now\n\ntext")
    assert entry.heading == "See Foo (bar) now"


def test_one_megabyte_paragraph_in_bounded_cpu_time() -> None:
    document = ("lorem ipsum dolor sit amet " * 40_000)[:1_000_000]
    passages: list[Passage] = []
    elapsed = least_cpu_time(lambda: passages.extend(rank_passages(document, "dolor amet", max_chars=3000)))
    assert sum(passage.length for passage in passages[: len(passages) // 3]) <= 3000
    assert all(passage.length <= 1200 for passage in passages)
    assert elapsed < 1.0, elapsed


def test_a_hundred_thousand_headings_in_bounded_cpu_time() -> None:
    document = "".join(f"{'#' * (1 + n % 6)} Heading {n}\n" for n in range(100_000))
    entries = outline(document)
    assert len(entries) == 100_000
    assert rank_passages(document, "heading 77777", max_chars=2000) == []  # headings alone are no passages
    elapsed = least_cpu_time(
        lambda: (outline(document), rank_passages(document, "heading 77777", max_chars=2000))
    )
    assert elapsed < 3.0, elapsed


@pytest.mark.parametrize("output_format", ["markdown", "text", "html"])
def test_a_realistic_megabyte_ranks_quickly(output_format: str) -> None:
    section = (
        "## Section {n}\n\nThe river {n} flows through the valley and feeds the lake. Fishermen use it "
        "in summer, and the town draws its water from it.\n\n- item one\n- item two about gauges\n\n"
    )
    document = "".join(section.format(n=n) for n in range(6000))
    assert len(document) > 1_000_000

    def rank() -> list[Passage]:
        return rank_passages(
            document, "which river feeds the lake 4321", max_chars=2000, output_format=output_format
        )  # type: ignore[arg-type]

    assert rank()
    elapsed = least_cpu_time(rank)
    assert elapsed < 0.5, elapsed


def test_a_query_of_every_letter_and_digit_on_a_megabyte_in_bounded_cpu_time() -> None:
    document = ("a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3.\n\n") * 16_000
    query = "a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9 (.*+?[]) \\"
    passages = rank_passages(document, query, max_chars=2000)
    assert passages and sum(passage.length for passage in passages) <= 2000
    elapsed = least_cpu_time(lambda: rank_passages(document, query, max_chars=2000))
    assert elapsed < 3.0, elapsed


def test_a_query_of_one_and_two_letter_words_costs_a_few_times_an_ordinary_query() -> None:
    """Such terms find most words of a page: counted word by word in Python they cost 7.7x an
    ordinary query on 10 MB (2.5 s); counted span by span in C, about 2.7x."""
    document = english_like(2_000_000)
    short = SHORT_WORDS_QUERY
    assert len(query_terms(short)) >= 30
    ordinary = least_cpu_time(lambda: rank_passages(document, "people sound number", max_chars=8000))
    many = least_cpu_time(lambda: rank_passages(document, short, max_chars=8000))
    assert many <= 4.5 * ordinary, f"{many:.2f} s against {ordinary:.2f} s"


@given(
    words=st.lists(
        st.sampled_from(["a", "ab", "abc", "abcs", "bab", "İab", "c_a", "aé", "cab"]), max_size=400
    ),
    breaks=st.sets(st.integers(min_value=0, max_value=400)),
    query=st.lists(st.sampled_from(["a", "ab", "abcs", "b", "ca", "ié"]), min_size=1, max_size=4),
)
@settings(max_examples=200, deadline=None)
def test_both_ways_of_counting_give_the_same_counts(
    words: list[str], breaks: set[int], query: list[str]
) -> None:
    document = "".join(word + ("\n\n" if number in breaks else " ") for number, word in enumerate(words))
    code = passages_module._code_ranges(document, "markdown")
    spans = [
        span
        for span in passages_module._passages(
            document,
            passages_module._blocks(
                document, "markdown", passages_module._headings(document, "markdown", code), code
            ),
        )
        if not span.heading_only
    ]
    terms = query_terms(" ".join(query))
    index = {term: number for number, term in enumerate(terms)}
    prefixes = {term[:-1] if len(term) > 3 else term for term in terms}
    pattern = re.compile(passages_module._matcher(terms).pattern)
    if len(document.lower()) != len(document):
        return  # "İ": only the pattern scans such a text (see _passage_counts)
    by_span = passages_module._counts_by_span(document, spans, passages_module._TermOf(index), pattern)
    by_find = passages_module._counts_by_find(document, spans, prefixes, passages_module._TermOf(index))
    assert by_span == by_find


def test_regular_expression_characters_in_a_query_are_words_or_nothing() -> None:
    assert rank_passages(GUIDE, "(.*+?[]) \\ ^$ |", max_chars=1000) == []
    passages = rank_passages(GUIDE, "widget.*calibrate", max_chars=1000)
    assert "widget calibrate --reset" in texts(passages)
