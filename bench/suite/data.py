"""The shared extraction data sets, read with the scorer's own loader."""

from __future__ import annotations

import gzip
import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from suite.paths import DATASETS, SCORER


@cache
def scorer() -> ModuleType:
    """shared/bench/score_extraction.py imported as a module (standard library only)."""
    spec = importlib.util.spec_from_file_location("score_extraction", SCORER)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the scorer {SCORER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def items(dataset: str) -> tuple[dict[str, Any], ...]:
    """[{id, url, truth, path, type}] sorted by id, as the scorer sees them."""
    return tuple(scorer().load_dataset(DATASETS[dataset]))


def page_bytes(path: Path) -> bytes:
    return gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes()


def spread(ids: list[str], count: int) -> list[str]:
    """count ids evenly spaced over the sorted list (all of them when count <= 0 or too large)."""
    ordered = sorted(ids)
    if count <= 0 or count >= len(ordered):
        return ordered
    return [ordered[(i * len(ordered)) // count] for i in range(count)]


def subset(dataset: str, count: int) -> list[str]:
    """A fixed, deterministic subset of about count page ids: evenly spaced by id, per page type."""
    rows = items(dataset)
    if count <= 0 or count >= len(rows):
        return [row["id"] for row in rows]
    by_type: dict[str, list[str]] = {}
    for row in rows:
        by_type.setdefault(row["type"] or "", []).append(row["id"])
    per_type = max(1, count // len(by_type))
    chosen: list[str] = []
    for ids in by_type.values():
        chosen.extend(spread(ids, per_type))
    return sorted(chosen)
