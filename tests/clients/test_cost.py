"""What each client's model pays for our answers, counted in o200k_base tokens (the table in
the README's Clients section comes from tests/clients/measure.py, which counts the same way)."""

from __future__ import annotations

import logging
from typing import Any

from tests.clients.measure import HEADER, LABELS, rows

log = logging.getLogger(__name__)


def test_every_answer_is_counted_in_tokens(reports: dict[str, dict[str, Any]]) -> None:
    """The counter counts: English Markdown and JSON run between 2 and 8 characters a token, so
    a count outside that is a broken counter, not a measurement."""
    measured = rows(reports)
    assert measured, "no client ran"
    log.info(
        "what reaches the model (characters / tokens):\n%s\n%s",
        HEADER,
        "\n".join(r.markdown() for r in measured),
    )
    for row in measured:
        for label in LABELS:
            characters, tokens = row.characters[label], row.tokens[label]
            assert 2 * tokens <= characters <= 8 * tokens, (
                f"{row.mode.id} {label}: {characters} chars, {tokens} tokens"
            )
