"""The stage the client drivers play on: a loopback origin with known pages, a fake Tavily with
known results, our server's stdio command pointed at both, and the client venvs that
scripts/install-clients makes (.clients/<group>/).

Without a client venv its tests skip, unless MCP_WEB_REQUIRE_CLIENTS=1 (CI sets it, having run
scripts/install-clients): there a missing client is a failure, never a silent skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes.tavily import FakeTavily
from tests.support.origin import Origin
from tests.support.samples import article_html

ROOT = Path(__file__).resolve().parents[2]
CLIENT_VENVS = ROOT / ".clients"
DRIVERS = Path(__file__).resolve().parent / "drivers"
DRIVER_PATIENCE = 100.0
"""Seconds a driver run may take at most: a framework that hangs fails its test instead of the
whole session (a run takes a few seconds, most of them starting Python twice)."""

KNOWN_SENTENCE = "The grey heron waits at the old weir until the evening light turns silver."
QUERY = "heron weir evening light"
SEARCH_QUERY = "how rivers shape valleys"
SEARCH_RESULTS = (
    {
        "title": "Meanders and oxbow lakes",
        "url": "https://rivers.example/meanders",
        "snippet": "A meander grows as the outer bank erodes and the inner bank gathers sediment.",
    },
    {
        "title": "Valley profiles: V-shaped and U-shaped",
        "url": "https://geology.example/valley-profiles",
        "snippet": "Rivers cut V-shaped valleys; glaciers carve U-shaped ones.",
    },
    {
        "title": "Sediment transport in upland streams",
        "url": "https://streams.example/sediment",
        "snippet": "Bed load moves by rolling and saltation along the stream bed.",
    },
)


def page_html() -> str:
    """The sample article, about as long as one default page (8,000 characters), with one
    section that holds the known sentence."""
    section = f"<h2>Herons at the weir</h2>\n<p>{KNOWN_SENTENCE}</p>\n<h2>Erosion</h2>"
    return article_html(paragraphs=30).replace("<h2>Erosion</h2>", section, 1)


@dataclass(frozen=True)
class ClientMode:
    """One framework in one configuration: the venv group and the driver that plays it."""

    client: str
    mode: str
    group: str
    driver: str
    args: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.client}[{self.mode}]"


CLIENT_MODES = (
    ClientMode("langchain-mcp-adapters", "load_mcp_tools", "clients-langchain", "langchain_driver.py"),
    ClientMode("pydantic-ai", "MCPToolset", "clients-pydantic-ai", "pydantic_ai_driver.py"),
    ClientMode("openai-agents", "default", "clients-openai-agents", "openai_agents_driver.py", ("default",)),
    ClientMode(
        "openai-agents",
        "use_structured_content",
        "clients-openai-agents",
        "openai_agents_driver.py",
        ("structured",),
    ),
)


def client_python(group: str) -> Path:
    """The python of a client venv; skips (fails under MCP_WEB_REQUIRE_CLIENTS=1) without it."""
    python = CLIENT_VENVS / group / "bin" / "python"
    if not (CLIENT_VENVS / group / ".installed").is_file() or not python.exists():
        message = f"no {group} venv in .clients/: run scripts/install-clients"
        if os.environ.get("MCP_WEB_REQUIRE_CLIENTS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return python


@dataclass(frozen=True)
class Stage:
    origin: Origin
    tavily: FakeTavily
    page_url: str
    missing_url: str

    def server(self) -> dict[str, Any]:
        """Our server over stdio, from our own venv, pointed at the stage and nothing else."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "MCP_WEB_ALLOW_CIDRS": "127.0.0.1/32",
            "MCP_WEB_RENDER": "off",
            "MCP_WEB_LOG_LEVEL": "warning",
            "MCP_WEB_SEARCH_PROVIDERS": "tavily",
            "TAVILY_API_KEY": self.tavily.api_key,
            "MCP_WEB_TAVILY_URL": self.tavily.origin.base,
        }
        return {"command": sys.executable, "args": ["-m", "mcp_server_web"], "env": env}

    def calls(self) -> list[dict[str, Any]]:
        return [
            {"label": "page", "tool": "web_fetch", "arguments": {"url": self.page_url}},
            {"label": "error", "tool": "web_fetch", "arguments": {"url": self.missing_url}},
            {"label": "search", "tool": "web_search", "arguments": {"query": SEARCH_QUERY}},
            {"label": "query", "tool": "web_fetch", "arguments": {"url": self.page_url, "query": QUERY}},
        ]

    def plan(self) -> dict[str, Any]:
        return {"server": self.server(), "calls": self.calls()}


@contextmanager
def staged() -> Iterator[Stage]:
    with Origin("127.0.0.1") as origin, FakeTavily() as tavily:
        tavily.answer([dict(result) for result in SEARCH_RESULTS])
        page_url = origin.serve("/rivers", page_html())
        yield Stage(origin, tavily, page_url, origin.url("/gone"))  # type: ignore[arg-type]


def start_driver(
    python: Path, driver: str, args: Sequence[str], plan: dict[str, Any]
) -> subprocess.Popen[str]:
    with tempfile.TemporaryFile("w+") as stdin:
        json.dump(plan, stdin)
        stdin.seek(0)
        return subprocess.Popen(
            [str(python), str(DRIVERS / driver), *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # The client venv's own imports only: no PYTHONPATH of ours leaks into it.
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )


def finish_driver(process: subprocess.Popen[str], name: str) -> dict[str, Any]:
    try:
        stdout, stderr = process.communicate(timeout=DRIVER_PATIENCE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"{name}: the driver did not finish in {DRIVER_PATIENCE:.0f} s") from None
    assert process.returncode == 0, f"{name} driver failed ({process.returncode}):\n{stderr[-4000:]}"
    report: dict[str, Any] = json.loads(stdout)
    return report


def run_driver(python: Path, driver: str, plan: dict[str, Any], args: Sequence[str] = ()) -> dict[str, Any]:
    return finish_driver(start_driver(python, driver, args, plan), driver)
