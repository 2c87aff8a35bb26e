"""What each client puts in front of its model, measured: the README's client table.

    .venv/bin/python -m tests.clients.measure

runs every driver on a fresh stage and prints the table in Markdown (the drivers and the token
counter come from scripts/install-clients). tests/clients/test_cost.py checks the same rows.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from tests.clients.stage import (
    CLIENT_MODES,
    KNOWN_SENTENCE,
    ClientMode,
    client_python,
    finish_driver,
    run_driver,
    staged,
    start_driver,
)

LABELS = ("page", "error", "search", "query")


@dataclass(frozen=True)
class Row:
    mode: ClientMode
    has_page_text: bool
    characters: dict[str, int]
    tokens: dict[str, int]

    def markdown(self) -> str:
        cells = [f"{self.characters[label]:,} / {self.tokens[label]:,}" for label in LABELS]
        text = "yes" if self.has_page_text else "**no**"
        return f"| {self.mode.client} | {self.mode.mode} | {text} | " + " | ".join(cells) + " |"


HEADER = (
    "| client | mode | page text reaches the model | web_fetch page | error | web_search "
    "| web_fetch query |\n"
    "|---|---|---|---|---|---|---|"
)


def rows(reports: dict[str, dict[str, Any]]) -> list[Row]:
    """One row per client mode that ran, its sizes in characters and o200k_base tokens."""
    texts = {
        f"{mode.id}/{label}": reports[mode.id]["calls"][label]["to_model"]
        for mode in CLIENT_MODES
        if "calls" in reports.get(mode.id, {})
        for label in LABELS
    }
    tokens = run_driver(client_python("clients-tokens"), "count_tokens.py", {"texts": texts})
    return [
        Row(
            mode,
            KNOWN_SENTENCE in texts[f"{mode.id}/page"],
            {label: len(texts[f"{mode.id}/{label}"]) for label in LABELS},
            {label: tokens[f"{mode.id}/{label}"] for label in LABELS},
        )
        for mode in CLIENT_MODES
        if "calls" in reports.get(mode.id, {})
    ]


def main() -> None:
    with staged() as stage:
        plan = stage.plan()
        started = [
            (mode, start_driver(client_python(mode.group), mode.driver, mode.args, plan))
            for mode in CLIENT_MODES
        ]
        reports = {mode.id: finish_driver(process, mode.id) for mode, process in started}
    sys.stdout.write("characters / tokens (o200k_base) of what reaches the model\n\n" + HEADER + "\n")
    sys.stdout.write("\n".join(row.markdown() for row in rows(reports)) + "\n")


if __name__ == "__main__":
    main()
