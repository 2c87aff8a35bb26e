"""The provider registry is the only list of providers: everything else is derived from it.

A throwaway provider is registered in a fresh interpreter (the settings and the tool schema are
built at import), and must then show up everywhere a provider does: the settings and their
flags, MCP_WEB_SEARCH_PROVIDERS, web_search's input schema, the CLI's choices, `doctor`, the
setup messages, and a real search through the server. Nothing outside the registry names it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from mcp_server_web.config import KNOWN_PROVIDERS, OPTIONS, Settings
from mcp_server_web.errors import NoProvider
from mcp_server_web.providers import ProvidersConfig, key_parameter, url_parameter
from mcp_server_web.providers.base import ProviderError, SearchProvider, SearchQuery, SearchResult
from mcp_server_web.providers.registry import (
    PROVIDERS,
    adapter_class,
    build_chain,
    provider_classes,
    provider_config,
    spec_for,
    spec_named,
    why_unconfigured,
)
from mcp_server_web.server.compose import providers_config

ROOT = Path(__file__).resolve().parents[2]


class AcmeProvider(SearchProvider):
    """The throwaway adapter: answers every query with one result, contacting nothing."""

    default_url: ClassVar[str] = "https://api.acme.invalid"

    async def search(self, query: SearchQuery, *, timeout: float) -> list[SearchResult]:  # noqa: ASYNC109
        return [
            SearchResult(
                f"{self.title} on {query.query}", "https://acme.invalid/r", self.config.api_key or ""
            )
        ]


_PROBE = """
import io, json, sys
from mcp_server_web.providers import registry

# Where a contributor adds one: before DuckDuckGo, which needs nothing and so closes the chain.
*others, last = registry.PROVIDERS
acme = registry.ProviderSpec(
    "acme", "Acme Search", "tests.providers.test_registry:AcmeProvider", needs="key",
    hint="Set {setting} to switch Acme on.",
)
registry.PROVIDERS = (*others, acme, last)

import anyio
from mcp import Client
from mcp_server_web.cli import build_parser
from mcp_server_web.cli.commands import doctor
from mcp_server_web.config import OPTIONS, load_settings
from mcp_server_web.server.app import build_server

seen = {}
env = {"ACME_API_KEY": "acme-key", "MCP_WEB_ACME_URL": "http://127.0.0.1:9", "TAVILY_API_KEY": "t"}
settings = load_settings({}, {**env, "MCP_WEB_SEARCH_PROVIDERS": "acme,duckduckgo"})
seen["settings"] = [settings.provider_key("acme"), settings.provider_url("acme")]
seen["order"] = list(settings.search_providers)
seen["options"] = [[o.env, o.cli_flag, o.secret, o.help] for o in OPTIONS if "acme" in o.attr]
flags = ["search", "q", "--provider", "acme", "--acme-api-key", "k"]
seen["flags"] = build_parser().parse_args(flags).provider

out = io.StringIO()
doctor(load_settings({}, env), out)
seen["doctor_on"] = out.getvalue()
out = io.StringIO()
doctor(load_settings({}, {}), out)
seen["doctor_off"] = out.getvalue()

async def tools():
    async with Client(build_server(settings)) as client:
        listed = await client.list_tools()
        schema = next(t for t in listed.tools if t.name == "web_search").input_schema
        found = await client.call_tool("web_search", {"query": "anvils", "provider": "acme"})
    async with Client(build_server(load_settings({}, {"MCP_WEB_SEARCH_PROVIDERS": "acme"}))) as client:
        missing = await client.call_tool("web_search", {"query": "anvils", "provider": "acme"})
    async with Client(build_server(load_settings({}, {"MCP_WEB_SEARCH_PROVIDERS": "acme"}))) as client:
        none = await client.call_tool("web_search", {"query": "anvils"})
    text = lambda result: result.content[0].text
    # Nullable, as every optional argument: the enum is the non-null branch.
    provider = schema["properties"]["provider"]
    enum = next(branch["enum"] for branch in provider["anyOf"] if "enum" in branch)
    return enum, text(found), text(missing), text(none)

seen["enum"], seen["found"], seen["missing"], seen["none"] = anyio.run(tools)
json.dump(seen, sys.stdout)
"""


def _probe() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def test_a_registered_provider_appears_everywhere_a_provider_does() -> None:
    seen = _probe()
    # Settings: its key (a secret, with a _FILE form like every key) and its endpoint override,
    # named by the rule every provider follows; and it may be listed in the chain's order.
    assert seen["settings"] == ["acme-key", "http://127.0.0.1:9"]
    assert seen["order"] == ["acme", "duckduckgo"]
    assert seen["options"] == [
        ["ACME_API_KEY", "--acme-api-key", True, "Acme Search API key"],
        ["MCP_WEB_ACME_URL", "--acme-url", False, "Acme Search endpoint override"],
        ["MCP_WEB_ACME_RPS", "--acme-rps", False, "requests per second sent to Acme Search"],
        ["MCP_WEB_ACME_DAILY_LIMIT", "--acme-daily-limit", False, "Acme Search calls per UTC day"],
    ]
    assert seen["flags"] == "acme"
    # The tool's input schema offers it, in the registry's order.
    assert seen["enum"] == [*KNOWN_PROVIDERS[:-1], "acme", KNOWN_PROVIDERS[-1]]
    # doctor: in the default chain (keyed providers before DuckDuckGo's last resort) when its
    # key is set, masked among the settings; with how to switch it on when it is not.
    assert "  ACME_API_KEY " in seen["doctor_on"] and "= ***" in seen["doctor_on"]
    assert "1. tavily (Tavily)\n  2. acme (Acme Search)\n  3. duckduckgo (DuckDuckGo)" in seen["doctor_on"]
    assert "  acme: Set ACME_API_KEY to switch Acme on." in seen["doctor_off"]
    # A search reaches the adapter, which got its key, name and title from the registry.
    assert "from acme" in seen["found"] and "Acme Search on anvils" in seen["found"]
    assert seen["missing"].startswith("no_provider:")
    assert "provider 'acme' is not available: Set ACME_API_KEY to switch Acme on." in seen["missing"]
    # Listed alone and without its key: the answer asks for the key, not for the list already set.
    assert seen["none"] == (
        "no_provider: no search provider is configured: MCP_WEB_SEARCH_PROVIDERS lists acme, and it "
        "is not set up. Set ACME_API_KEY to switch Acme on."
    )


def test_every_registered_provider_is_an_adapter_that_knows_its_entry() -> None:
    classes = provider_classes()
    assert tuple(classes) == KNOWN_PROVIDERS == tuple(spec.name for spec in PROVIDERS)
    for spec in PROVIDERS:
        assert issubclass(classes[spec.name], SearchProvider)
        assert spec_for(classes[spec.name]) is spec
        assert spec.hint.format(setting="X") != spec.hint or spec.needs is None
    # The server names every value that configures a provider by one of its settings.
    declared = {option.env for option in OPTIONS}
    names = providers_config(Settings()).names
    for spec in PROVIDERS:
        assert names[url_parameter(spec.name)] in declared
        if spec.needs == "key":
            assert names[key_parameter(spec.name)] in declared


async def test_a_library_caller_is_told_its_own_parameter_names() -> None:
    """Without the server's names, messages speak of ProvidersConfig's own fields."""
    bare = ProvidersConfig(order=("tavily", "duckduckgo"))
    assert why_unconfigured(spec_named("tavily"), bare) == (
        'Set keys["tavily"] to switch Tavily on (get a key at https://app.tavily.com; '
        "the free tier includes monthly credits)."
    )
    assert "SEARXNG_URL" not in (why_unconfigured(spec_named("searxng"), bare) or "")
    async with httpx.AsyncClient() as http:
        with pytest.raises(NoProvider) as caught:
            await build_chain(ProvidersConfig(order=("brave",)), http).search(SearchQuery("q"))
        assert caught.value.message == (
            "no search provider is configured: order lists brave, and it is not set up. "
            'Set keys["brave"] to a Brave Search API key from https://brave.com/search/api/ '
            "(the free plan allows about 2,000 queries a month at 1 query per second)."
        )
        brave = adapter_class(spec_named("brave"))
        adapter = brave(
            provider_config(brave, ProvidersConfig(urls={"brave": "ftp://127.0.0.1:9"}, keys={"brave": "k"})),
            http,
        )
        with pytest.raises(ProviderError) as failed:
            await adapter.search(SearchQuery("q"), timeout=5)
        assert failed.value.kind == "config" and 'check urls["brave"]' in failed.value.message
        assert "MCP_WEB" not in failed.value.message


def test_the_server_names_its_settings_in_the_same_messages() -> None:
    served = providers_config(Settings(search_providers=("brave",)))
    assert why_unconfigured(spec_named("searxng"), served) == (
        "Set SEARXNG_URL to your SearXNG instance (e.g. http://localhost:8080) and enable the JSON "
        "output: add `json` to `search.formats` in its settings.yml."
    )
    assert provider_config(adapter_class(spec_named("brave")), served).url_name == "MCP_WEB_BRAVE_URL"
