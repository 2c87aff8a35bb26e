"""The block model (fetch/doc/block_model.py): the shipped file, its evaluation, and when trafilatura
still reads the page (extract.MODEL_AGREEMENT)."""

from __future__ import annotations

import importlib
import json
import random
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import pytest

from mcp_server_web.fetch.doc import block_model
from mcp_server_web.fetch.doc.block_model import INPUTS, MODEL_FILE, ModelFileError, load, shipped_model
from mcp_server_web.fetch.doc.extract import extract_html

URL = "https://example.com/story"


def _shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files(block_model.__package__).joinpath(MODEL_FILE).read_text(encoding="utf-8")
    )
    return data


def _walk(model: dict[str, Any], row: list[float]) -> float:
    """The model's raw score for one row, one tree after another, node by node (the plain reading
    of the file, against which the vectorised one is checked)."""
    total = float(model["baseline"])
    for tree in model["trees"]:
        node = 0
        while tree["feature"][node] >= 0:
            feature = tree["feature"][node]
            node = tree["left"][node] if row[feature] <= tree["threshold"][node] else tree["right"][node]
        total += tree["value"][node]
    return total


def test_the_shipped_model_reads_the_inputs_the_code_gives() -> None:
    data = _shipped()
    assert tuple(data["inputs"]) == INPUTS
    assert len(data["trees"]) >= 50
    assert "WCXB" in data["about"] and "CC-BY-4.0" in data["about"]


def test_a_model_file_for_other_inputs_is_refused() -> None:
    data = _shipped()
    data["inputs"] = data["inputs"][:-1]
    with pytest.raises(ModelFileError, match=r"build_model\.py"):
        load(json.dumps(data))


def test_all_trees_at_once_give_what_each_tree_walked_in_turn_gives() -> None:
    import math

    data = _shipped()
    model = shipped_model()
    chance = random.Random(26)
    # Rows near the thresholds the trees split on, and far from them, for every input.
    thresholds: dict[int, list[float]] = {}
    for tree in data["trees"]:
        for feature, threshold in zip(tree["feature"], tree["threshold"], strict=True):
            if feature >= 0:
                thresholds.setdefault(feature, []).append(threshold)
    rows = []
    for _ in range(300):
        row = []
        for i in range(len(INPUTS)):
            cuts = thresholds.get(i) or [0.0]
            cut = chance.choice(cuts)
            row.append(chance.choice((cut, cut - 1e-9, cut + 1e-9, cut * 3 + 1, -1.0, 0.0)))
        rows.append(row)
    got = model.probabilities(rows)
    for row, probability in zip(rows, got, strict=True):
        assert probability == pytest.approx(1 / (1 + math.exp(-_walk(data, row))), abs=1e-12)
    assert model.probabilities(rows) == got  # the same every time
    assert model.probabilities([]) == []


@pytest.fixture
def trafilatura_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Counts the pages trafilatura reads (its reading of a tree, wrapped, still does the work)."""
    calls: list[str] = []
    core = importlib.import_module("trafilatura.core")
    real: Callable[..., Any] = core.trafilatura_sequence

    def counted(tree: Any, options: Any, url: str | None = None) -> Any:
        calls.append(str(url))
        return real(tree, options, url)

    monkeypatch.setattr(core, "trafilatura_sequence", counted)
    yield calls


STORY = " ".join(
    f"<p>The council met on day {i} to weigh the proposal for the river crossing, and the engineers "
    f"answered questions about cost number {i}, the schedule, and the effect on the town's traffic.</p>"
    for i in range(12)
)


def test_an_article_the_model_and_readability_agree_on_is_not_read_by_trafilatura(
    trafilatura_calls: list[str],
) -> None:
    page = (
        "<html><head><title>Crossing</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/n'>News</a></nav>"
        f"<article><h1>The crossing</h1>{STORY}</article><footer>© Town paper</footer></body></html>"
    )
    result = extract_html(page, URL, output_format="markdown", main_content=True)
    assert "river crossing" in result.text and "cost number 11" in result.text
    assert "Town paper" not in result.text
    assert trafilatura_calls == []


def test_a_listing_where_they_part_is_read_by_trafilatura_too(trafilatura_calls: list[str]) -> None:
    cards = "".join(
        f"<li class='card'><a href='/item/{i}'><h3>Item {i}</h3></a><p>Oak shelf {i}, 80 cm</p>"
        f"<span class='price'>{20 + i} EUR</span></li>"
        for i in range(30)
    )
    page = (
        "<html><body><main><h1>Shelves</h1><p>Our shelves are made to order from local oak.</p>"
        f"<ul class='products'>{cards}</ul></main></body></html>"
    )
    result = extract_html(page, URL, output_format="markdown", main_content=True)
    assert "Oak shelf 29" in result.text
    assert trafilatura_calls == [URL]


def _shelf_page(declared_type: str) -> str:
    """A product's page with 30 related products below its description, declaring itself a
    ``declared_type``: the model and readability agree on about half of their words there."""
    declared = json.dumps({"@context": "https://schema.org", "@type": declared_type, "name": "Oak shelf"})
    about = " ".join(
        f"<p>Each shelf is cut from one board of local oak, planed by hand, and oiled {i} times, so "
        "that the grain shows and the wood keeps its colour for years.</p>"
        for i in range(8)
    )
    cards = "".join(
        f"<li class='card'><a href='/item/{i}'><h3>Item {i}</h3></a><p>Oak shelf {i}, 80 cm</p>"
        f"<span class='price'>{20 + i} EUR</span></li>"
        for i in range(30)
    )
    return (
        f"<html><head><title>Oak shelf</title><script type='application/ld+json'>{declared}</script>"
        f"</head><body><main><h1>Oak shelf</h1>{about}<h2>You may also like</h2>"
        f"<ul class='products'>{cards}</ul></main></body></html>"
    )


@pytest.mark.parametrize(
    ("declared_type", "read_by_trafilatura"), [("Article", True), ("Product", False), ("Thing", False)]
)
def test_where_the_votes_half_agree_only_an_article_is_read_by_trafilatura(
    trafilatura_calls: list[str], declared_type: str, read_by_trafilatura: bool
) -> None:
    """Cross-validated by site, trafilatura's vote was a coin toss on pages that declare no article
    where the two votes agree on more than a fifth of their words (extract.UNDECLARED_AGREEMENT)."""
    result = extract_html(_shelf_page(declared_type), URL, output_format="markdown", main_content=True)
    assert "oiled 7 times" in result.text
    assert trafilatura_calls == ([URL] if read_by_trafilatura else [])
