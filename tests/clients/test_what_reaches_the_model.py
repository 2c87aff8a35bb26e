"""What each agent framework's MCP layer puts in front of its model, for the calls an agent
makes: a page, a page that fails, a search and a query. Every framework must pass the page
text, the error text and the search results on, whether it reads a result's text blocks or,
as the MCP spec lets it when every block is text, its structuredContent alone (pydantic-ai;
openai-agents with use_structured_content=True)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.clients.stage import CLIENT_MODES, KNOWN_SENTENCE, SEARCH_RESULTS, ClientMode, client_python

log = logging.getLogger(__name__)

MODES = [pytest.param(mode, id=mode.id) for mode in CLIENT_MODES]


def to_model(reports: dict[str, dict[str, Any]], mode: ClientMode, label: str) -> str:
    client_python(mode.group)  # skips (or fails under MCP_WEB_REQUIRE_CLIENTS=1) without the venv
    report = reports[mode.id]
    assert "failed" not in report, report.get("failed")
    text: str = report["calls"][label]["to_model"]
    log.info(
        "%s %s: %d characters (~%d tokens at 4 characters a token)", mode.id, label, len(text), len(text) // 4
    )
    return text


@pytest.mark.parametrize("mode", MODES)
def test_the_page_text_reaches_the_model_once(reports: dict[str, dict[str, Any]], mode: ClientMode) -> None:
    """The page's text, exactly once: a client that sent both the text block and a
    structuredContent holding the same text would pay for the page twice."""
    text = to_model(reports, mode, "page")
    assert text.count(KNOWN_SENTENCE) == 1, f"{mode.id} gives the model {len(text)} characters: {text[:400]}"
    assert "untrusted-content" in text, "the page reaches the model without its fence"


@pytest.mark.parametrize("mode", MODES)
def test_the_error_text_reaches_the_model(reports: dict[str, dict[str, Any]], mode: ClientMode) -> None:
    text = to_model(reports, mode, "error")
    assert "http_error" in text and "404" in text, f"{mode.id} gives the model: {text[:400]}"


@pytest.mark.parametrize("mode", MODES)
def test_the_search_results_reach_the_model(reports: dict[str, dict[str, Any]], mode: ClientMode) -> None:
    text = to_model(reports, mode, "search")
    for result in SEARCH_RESULTS:
        assert result["title"] in text and result["url"] in text, (
            f"{mode.id} lost {result['url']}: {text[:400]}"
        )
        assert result["snippet"] in text, f"{mode.id} lost the snippet of {result['url']}"


@pytest.mark.parametrize("mode", MODES)
def test_the_passages_for_a_query_reach_the_model(
    reports: dict[str, dict[str, Any]], mode: ClientMode
) -> None:
    text = to_model(reports, mode, "query")
    assert text.count(KNOWN_SENTENCE) == 1, f"{mode.id} gives the model: {text[:400]}"
