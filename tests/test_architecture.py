"""The layering, read from the source (ast, nothing imported): what may import what.

* ``fetch/`` and ``providers/`` are libraries: they never import the face (``server/``,
  ``cli/``, the settings in ``config.py``) or the MCP SDK, so they can be used, tested and
  replaced without either.
* A leading underscore means "this package's business": a private name (or private module) is
  imported only from inside the package that holds it. What another package needs is public.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT_PACKAGE = "mcp_server_web"

LIBRARIES = ("fetch", "providers")
SURFACED = (*LIBRARIES, "state")
"""Packages the rest of the project reaches only through their ``__init__`` (``__all__``)."""
"""Packages of ROOT_PACKAGE that stand on their own."""
FORBIDDEN_IN_LIBRARIES = (
    f"{ROOT_PACKAGE}.server",
    f"{ROOT_PACKAGE}.cli",
    f"{ROOT_PACKAGE}.config",
    "mcp",
    "mcp_types",
)
"""What a library never imports: the face, the server's Settings (a library takes its own config
object, built in server/compose.py), and the MCP SDK (mcp_types ships with it)."""


@dataclass(frozen=True)
class Import:
    importer: str
    """The importing module's dotted name (a package's own name for its __init__.py)."""
    target: str
    """The dotted name imported: a module, or a module's attribute (``pkg.module.name``)."""
    line: int


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute module of a ``from ... import`` (relative imports resolved)."""
    if level == 0:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imports_of(path: Path, src: Path) -> list[Import]:
    """Every name a module imports, wherever the import sits (lazy imports in functions too), and
    every private attribute it reads from a module it imported whole (``module._name``)."""
    importer = module_name(path, src)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []
    bound: dict[str, str] = {}  # local name -> the module or package an import bound to it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(importer, alias.name, node.lineno))
                # `import a.b.c` binds a; `import a.b.c as m` binds m to a.b.c
                local = alias.asname or alias.name.split(".")[0]
                bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, importer, is_package)
            found.append(Import(importer, module, node.lineno))
            for alias in node.names:
                if alias.name != "*":
                    found.append(Import(importer, f"{module}.{alias.name}", node.lineno))
                    bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    # `from pkg import module` then `module._name`: the same private import, spelt differently.
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            chain = _dotted(node.value)
            if chain is not None and chain[0] in bound:
                target = ".".join([bound[chain[0]], *chain[1:], node.attr])
                found.append(Import(importer, target, node.lineno))
    return found


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as [a, b, c]; None for anything that is not a plain dotted name."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else [*head, node.attr]
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_owner(target: str, src: Path) -> str | None:
    """The package a private name belongs to, or None when ``target`` names nothing private.

    ``pkg.module._name`` and ``pkg._module`` (and anything under it) belong to ``pkg``.
    """
    parts = target.split(".")
    for i, part in enumerate(parts):
        if not _private(part):
            continue
        owner = parts[:i]
        if (src / Path(*owner)).with_suffix(".py").is_file():
            owner = owner[:-1]  # a name in a module: private to the module's package
        return ".".join(owner)
    return None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layering_violations(src: Path) -> list[str]:
    """Imports of the face or of MCP from a library package."""
    violations = []
    for library in LIBRARIES:
        for path in sorted((src / ROOT_PACKAGE / library).rglob("*.py")):
            for found in imports_of(path, src):
                for forbidden in FORBIDDEN_IN_LIBRARIES:
                    if _within(found.target, forbidden):
                        violations.append(
                            f"{path.relative_to(src)}:{found.line}: {found.importer} imports {found.target}"
                        )
    return sorted(set(violations))


def private_name_violations(src: Path) -> list[str]:
    """Private names (or modules) of ours imported from outside the package that holds them."""
    violations = []
    for path in sorted((src / ROOT_PACKAGE).rglob("*.py")):
        for found in imports_of(path, src):
            if not _within(found.target, ROOT_PACKAGE):
                continue
            owner = private_owner(found.target, src)
            if owner is not None and not _within(found.importer, owner):
                violations.append(
                    f"{path.relative_to(src)}:{found.line}: {found.importer} imports {found.target}, "
                    f"private to {owner}"
                )
    return sorted(set(violations))


def surface_violations(src: Path) -> list[str]:
    """Imports, from outside a surfaced package, of anything but the package itself."""
    violations = []
    for path in sorted((src / ROOT_PACKAGE).rglob("*.py")):
        importer = module_name(path, src)
        for package in (f"{ROOT_PACKAGE}.{name}" for name in SURFACED):
            if _within(importer, package):
                continue
            folder = src.joinpath(*package.split("."))
            for found in imports_of(path, src):
                if not _within(found.target, package) or found.target == package:
                    continue
                first = found.target.removeprefix(package + ".").split(".")[0]
                if (folder / f"{first}.py").is_file() or (folder / first).is_dir():
                    violations.append(
                        f"{path.relative_to(src)}:{found.line}: {importer} imports {found.target}"
                    )
    return sorted(set(violations))


# --- the source ----------------------------------------------------------------------------------


def test_the_source_is_where_the_checks_look() -> None:
    # A moved tree would leave the checks below nothing to read, and they would pass.
    assert len(list((SRC / ROOT_PACKAGE).rglob("*.py"))) > 20
    for library in LIBRARIES:
        assert (SRC / ROOT_PACKAGE / library / "__init__.py").is_file()


def test_libraries_do_not_import_the_face_or_mcp() -> None:
    assert layering_violations(SRC) == []


def test_private_names_stay_in_their_package() -> None:
    assert private_name_violations(SRC) == []


def test_fetch_providers_and_state_are_used_through_their_surface() -> None:
    assert surface_violations(SRC) == []


def test_reaching_past_a_surface_is_caught(tmp_path: Path) -> None:
    src = _write(
        tmp_path,
        {
            **_BASE,
            "server/tools.py": (
                "from mcp_server_web.fetch.client import Fetcher\nfrom mcp_server_web.fetch import X\n"
            ),
        },
    )
    assert [v.split(": ", 1)[1] for v in surface_violations(src)] == [
        "mcp_server_web.server.tools imports mcp_server_web.fetch.client",
        "mcp_server_web.server.tools imports mcp_server_web.fetch.client.Fetcher",
    ]


# --- the checks themselves, on small packages written here ------------------------------------------


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / ROOT_PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for directory in [root / ROOT_PACKAGE, *(root / ROOT_PACKAGE).rglob("*")]:
        if directory.is_dir() and not (directory / "__init__.py").exists():
            (directory / "__init__.py").write_text("", encoding="utf-8")
    return root


_BASE = {
    "fetch/client.py": "_SECRET = 1\nPUBLIC = 2\n",
    "fetch/_helpers.py": "def helper() -> None: ...\n",
    "providers/base.py": "",
    "server/app.py": "",
    "cli/commands.py": "",
}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("fetch/convert.py", "from mcp_server_web.server.app import build\n"),
        ("fetch/net/client.py", "import mcp_server_web.cli.commands\n"),
        ("providers/exa.py", "def lazy() -> None:\n    from mcp_server_web.server import app\n"),
        ("providers/base.py", "from mcp.server.mcpserver import Context\n"),
        ("fetch/types.py", "import mcp_types\n"),
        ("fetch/convert.py", "from ..server import app\n"),
        ("providers/registry.py", "def lazy() -> None:\n    from mcp_server_web.config import Settings\n"),
        ("fetch/service.py", "from mcp_server_web import config\n"),
    ],
)
def test_a_library_importing_the_face_or_mcp_is_caught(tmp_path: Path, name: str, text: str) -> None:
    src = _write(tmp_path, {**_BASE, name: text})
    assert layering_violations(src)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("server/http_request_tool.py", "from mcp_server_web.fetch.client import _SECRET, PUBLIC\n"),
        ("server/tools.py", "from mcp_server_web.fetch import client\nx = client._SECRET\n"),
        ("server/tools.py", "import mcp_server_web.fetch.client as c\nx = c._SECRET\n"),
        ("server/tools.py", "import mcp_server_web.fetch.client\nx = mcp_server_web.fetch.client._SECRET\n"),
        ("providers/base.py", "from mcp_server_web.fetch._helpers import helper\n"),
        ("cli/commands.py", "from ..fetch.client import _SECRET\n"),
        ("config.py", "def lazy() -> None:\n    from mcp_server_web.fetch.client import _SECRET\n"),
    ],
)
def test_a_private_name_imported_from_another_package_is_caught(tmp_path: Path, name: str, text: str) -> None:
    src = _write(tmp_path, {**_BASE, name: text})
    assert private_name_violations(src)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("fetch/service.py", "from mcp_server_web.fetch.client import _SECRET\n"),
        ("fetch/service.py", "from ._helpers import helper\nfrom .client import _SECRET\n"),
        ("fetch/__init__.py", "from mcp_server_web.fetch._helpers import helper\n"),
        ("server/app.py", "from mcp_server_web.fetch.client import PUBLIC\nimport mcp\n"),
        ("server/app.py", "from mcp_server_web import __version__\n"),
        ("fetch/service.py", "from mcp_server_web.errors import FetchFailed\n"),
    ],
)
def test_what_is_allowed_passes(tmp_path: Path, name: str, text: str) -> None:
    src = _write(tmp_path, {**_BASE, name: text})
    assert layering_violations(src) == []
    assert private_name_violations(src) == []
