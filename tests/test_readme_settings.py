"""The README's configuration table and config.py declare the same settings (each fact once: the
table is checked against the declaration, so neither can drift)."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_server_web.config import OPTIONS

README = Path(__file__).resolve().parent.parent / "README.md"


def _table_rows() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if re.match(r"\| `[A-Z][A-Z0-9_]+`", line)]


def test_every_setting_is_in_the_readme_table_with_its_flag() -> None:
    rows = _table_rows()
    missing = []
    for option in OPTIONS:
        row = next((row for row in rows if re.search(rf"`{option.env}`", row.split("|")[1])), None)
        spellings = [option.cli_flag, *([option.negative_flag] if option.negative_flag else [])]
        if row is None or any(f"`{flag}`" not in row for flag in spellings):
            missing.append(f"{option.env} ({option.cli_flag})")
    assert not missing, f"settings missing from README's configuration table: {missing}"


def test_the_readme_table_names_no_setting_that_does_not_exist() -> None:
    declared = {option.env for option in OPTIONS}
    named = {name for row in _table_rows() for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}
    assert named - declared == set()
