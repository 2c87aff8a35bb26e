"""What every driver shares. Standard library only: it runs in each client's own venv.

A driver reads a plan on stdin ({"server": {"command", "args", "env"}, "calls": [{"label",
"tool", "arguments"}]}), starts that one server over stdio through its framework, makes every
call in order on it, and writes one JSON object on stdout: for each call's label, "to_model",
the exact text the framework would put in front of the model for that tool result.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

_STDOUT: TextIO = sys.stdout


def read_plan() -> dict[str, Any]:
    """The plan, and stdout kept for the report alone: a framework that prints (a banner, a
    warning) writes to stderr instead, so the JSON on stdout stays parseable."""
    sys.stdout = sys.stderr
    plan: dict[str, Any] = json.load(sys.stdin)
    return plan


def emit(report: dict[str, Any]) -> None:
    _STDOUT.write(json.dumps(report))
    _STDOUT.write("\n")
    _STDOUT.flush()


def text_parts(value: Any) -> str:
    """The text of a content value as a model API gets it: a string as it is, a list of parts
    (each framework's text blocks, {"type": "text" | "input_text", "text": ...}) joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_parts(part) for part in value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return json.dumps(value)
