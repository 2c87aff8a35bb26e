"""No ``except`` clause of the source is shadowed by an earlier one of the same ``try``.

An earlier clause for a base class takes every exception of its subclasses, so a later clause for
a subclass never runs: ``except OSError`` before ``except TimeoutError`` kept the browser proxy's
408 from ever being sent. Neither ruff nor mypy reports it, so this test reads each module's
``try`` statements and resolves the exception classes in the module's own namespace (a name it
cannot resolve, such as one imported inside a function, is left unjudged).
"""

from __future__ import annotations

import ast
import builtins
import importlib
from pathlib import Path
from types import ModuleType

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _classes(node: ast.expr | None, namespace: dict[str, object]) -> tuple[type[BaseException], ...] | None:
    """The exception classes an except clause names; None for a bare except or an unresolvable name."""
    if node is None:
        return None
    try:
        value = eval(compile(ast.Expression(node), "<except>", "eval"), {**vars(builtins), **namespace})
    except Exception:
        return None
    values = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(item, type) and issubclass(item, BaseException) for item in values):
        return None
    return values


def shadowed_clauses(tree: ast.AST, namespace: dict[str, object], where: str) -> list[str]:
    """'where:line: Sub after Base' for each clause whose every class an earlier clause catches."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try | ast.TryStar):
            continue
        earlier: list[type[BaseException]] = []
        for handler in node.handlers:
            classes = _classes(handler.type, namespace)
            if classes is None:
                continue
            catchers = [next((base for base in earlier if issubclass(cls, base)), None) for cls in classes]
            if all(catcher is not None for catcher in catchers):
                names = ", ".join(
                    f"{cls.__name__} (by {catcher.__name__})"
                    for cls, catcher in zip(classes, catchers, strict=True)
                    if catcher
                )
                found.append(f"{where}:{handler.lineno}: already caught: {names}")
            earlier.extend(classes)
    return found


def _module(path: Path) -> ModuleType:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return importlib.import_module(".".join(parts))


def test_no_except_clause_is_shadowed_by_an_earlier_one() -> None:
    found: list[str] = []
    paths = sorted(SRC.rglob("*.py"))
    assert len(paths) > 50
    for path in paths:
        try:
            module = _module(path)
        except ImportError as error:  # an optional extra that is not installed (render)
            pytest.skip(f"{path.name} needs {error.name}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.extend(shadowed_clauses(tree, vars(module), str(path.relative_to(SRC))))
    assert found == []


def test_a_shadowed_clause_is_caught() -> None:
    source = (
        "try:\n    pass\nexcept (ValueError, OSError):\n    pass\nexcept TimeoutError:\n    pass\n"
        "except (KeyError, ConnectionError):\n    pass\n"
    )
    found = shadowed_clauses(ast.parse(source), {}, "x.py")
    assert found == ["x.py:5: already caught: TimeoutError (by OSError)"]
