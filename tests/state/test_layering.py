"""state/ is neutral ground: fetch/ and providers/ import it, it imports neither of them (nor the
server, the CLI or the MCP SDK), so a backend can be swapped without touching its users."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_server_web.state

FORBIDDEN = (
    "mcp_server_web.fetch",
    "mcp_server_web.providers",
    "mcp_server_web.server",
    "mcp_server_web.cli",
    "mcp",
)


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_state_imports_none_of_its_users() -> None:
    package = Path(mcp_server_web.state.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert {m.name for m in modules} >= {"__init__.py", "port.py", "memory.py"}
    for module in modules:
        for name in imported_modules(module):
            assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), f"{module.name}: {name}"
