"""fetch/ is a library: it takes its own FetchConfig and never reads the server's Settings."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_server_web.fetch
from mcp_server_web.fetch import FetchConfig

FETCH_ROOT = Path(mcp_server_web.fetch.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, as dotted names (``from a import b`` gives a and a.b)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_fetch_never_imports_the_server_settings() -> None:
    sources = sorted(FETCH_ROOT.rglob("*.py"))
    assert len(sources) > 10  # the walk found the package
    offenders = {
        str(path.relative_to(FETCH_ROOT)): sorted(
            name for name in imported_modules(path) if name.split(".")[:2] == ["mcp_server_web", "config"]
        )
        for path in sources
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_default_config_is_usable_as_is() -> None:
    config = FetchConfig()
    assert config.timeout > 0 and config.max_response_bytes > 0 and config.cache_max_bytes > 0
    assert not config.allow_private and config.respect_robots  # safe unless told otherwise
