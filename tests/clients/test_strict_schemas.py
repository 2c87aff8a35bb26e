"""Strict clients: our tools/list schemas as openai-agents converts them for strict function
calling (`ensure_strict_json_schema`: every property required, no extra ones) and as
google-genai converts an MCP tool for Gemini (`mcp_to_gemini_tool`: an OpenAPI-style Schema).
A model bound by the converted schema that wants none of the optional arguments sends null for
each one it must or may send; that call must be valid under the converted schema and mean what
the call with only the required arguments means: a strict model is never made to pin a
snapshot (the first read of a URL would be snapshot_expired) or a search provider (no
fallback)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp_types import CallToolResult

from mcp_server_web.server.app import build_server
from tests.clients.stage import (
    SEARCH_QUERY,
    SEARCH_RESULTS,
    Stage,
    client_python,
    finish_driver,
    start_driver,
)
from tests.server.conftest import fenced_text, make_settings, text_of

CONVERTERS = {
    "openai-agents-strict": ("clients-openai-agents", "strict_schemas.py"),
    "google-genai": ("clients-genai", "genai_schemas.py"),
}
TOOLS = ("web_fetch", "web_search")
MUST_NOT_BE_PINNED = {"web_fetch": "snapshot", "web_search": "provider"}


def server_settings(stage: Stage) -> Any:
    return make_settings(search_providers=("tavily",), **stage.tavily.settings())


async def _listed(stage: Stage) -> list[dict[str, Any]]:
    async with Client(build_server(server_settings(stage))) as client:
        tools = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


@pytest.fixture(scope="module")
def listed(stage: Stage) -> dict[str, dict[str, Any]]:
    """Our tools/list, as a client receives it."""
    return {tool["name"]: tool for tool in asyncio.run(_listed(stage))}


@pytest.fixture(scope="module")
def converted(listed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each converter's output for each tool, both converters run at once."""
    plan = {"tools": list(listed.values())}
    started = {}
    for name, (group, driver) in CONVERTERS.items():
        try:
            python = client_python(group)
        except pytest.skip.Exception:
            continue
        started[name] = start_driver(python, driver, (), plan)
    return {name: finish_driver(process, name) for name, process in started.items()}


def as_json_schema(name: str, output: dict[str, Any]) -> dict[str, Any]:
    if name == "openai-agents-strict":
        assert output["strict"], f"openai-agents could not make the schema strict: {output.get('error')}"
        schema: dict[str, Any] = output["schema"]
        return schema
    return from_openapi(output)


def from_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """Gemini's Schema (OpenAPI 3.0 style: upper-case types, `nullable`) as the JSON Schema
    that constrains a model the same way."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            out["type"] = value.lower()
        elif key == "properties":
            out["properties"] = {prop: from_openapi(sub) for prop, sub in value.items()}
        elif key == "items":
            out["items"] = from_openapi(value)
        elif key in ("any_of", "anyOf"):
            out["anyOf"] = [from_openapi(sub) for sub in value]
        elif key in ("min_length", "max_length", "min_items", "max_items"):
            head, tail = key.split("_")
            out[head + tail.capitalize()] = value
        elif key in ("enum", "pattern", "minimum", "maximum", "required", "minLength", "maxLength"):
            out[key] = value
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def required_arguments(stage: Stage) -> dict[str, dict[str, Any]]:
    return {"web_fetch": {"url": stage.page_url}, "web_search": {"query": SEARCH_QUERY}}


def null_call(tool: dict[str, Any], schema: dict[str, Any], required: dict[str, Any]) -> dict[str, Any]:
    """The required arguments, and null for every other property the converted schema has."""
    assert set(tool["inputSchema"].get("required", [])) == set(required), "the required arguments changed"
    return {prop: required.get(prop) for prop in schema["properties"]}


def check_converter(converted: dict[str, dict[str, Any]], name: str) -> None:
    client_python(CONVERTERS[name][0])  # skips (or fails under MCP_WEB_REQUIRE_CLIENTS=1) without it
    assert name in converted


@pytest.mark.parametrize("tool_name", TOOLS)
@pytest.mark.parametrize("converter", CONVERTERS)
def test_a_strict_model_may_send_null_for_every_optional_argument(
    stage: Stage,
    listed: dict[str, dict[str, Any]],
    converted: dict[str, dict[str, Any]],
    converter: str,
    tool_name: str,
) -> None:
    check_converter(converted, converter)
    schema = as_json_schema(converter, converted[converter][tool_name])
    call = null_call(listed[tool_name], schema, required_arguments(stage)[tool_name])
    errors = [
        f"{'/'.join(map(str, error.absolute_path)) or '(call)'}: {error.message}"
        for error in Draft202012Validator(schema).iter_errors(call)
    ]
    assert not errors, f"after {converter}'s conversion a model cannot send {json.dumps(call)}: {errors}"


@pytest.mark.parametrize("converter", CONVERTERS)
def test_a_strict_model_pins_neither_a_snapshot_nor_a_provider(
    listed: dict[str, dict[str, Any]], converted: dict[str, dict[str, Any]], converter: str
) -> None:
    check_converter(converted, converter)
    for tool_name, prop in MUST_NOT_BE_PINNED.items():
        schema = as_json_schema(converter, converted[converter][tool_name])
        assert prop in schema["properties"], f"{tool_name} lost {prop}"
        subschema = {**schema["properties"][prop], "$defs": schema.get("$defs", {})}
        assert Draft202012Validator(subschema).is_valid(None), (
            f"after {converter}'s conversion {tool_name}.{prop} must be given a value: "
            f"{json.dumps(schema['properties'][prop])}"
        )


async def call_both(
    stage: Stage, tool_name: str, nulls: dict[str, Any]
) -> tuple[CallToolResult, CallToolResult]:
    required = required_arguments(stage)[tool_name]
    async with Client(build_server(server_settings(stage))) as client:
        plain = await client.call_tool(tool_name, required)
        with_nulls = await client.call_tool(tool_name, nulls)
    return plain, with_nulls


@pytest.mark.parametrize("tool_name", TOOLS)
@pytest.mark.parametrize("converter", CONVERTERS)
async def test_the_null_call_means_the_call_with_only_the_required_arguments(
    stage: Stage,
    listed: dict[str, dict[str, Any]],
    converted: dict[str, dict[str, Any]],
    converter: str,
    tool_name: str,
) -> None:
    check_converter(converted, converter)
    schema = as_json_schema(converter, converted[converter][tool_name])
    nulls = null_call(listed[tool_name], schema, required_arguments(stage)[tool_name])
    plain, with_nulls = await call_both(stage, tool_name, nulls)
    assert not plain.is_error, text_of(plain)
    assert not with_nulls.is_error, f"{json.dumps(nulls)} was refused: {text_of(with_nulls)}"
    if tool_name == "web_fetch":
        assert fenced_text(with_nulls) == fenced_text(plain)
        return
    found = [(result["title"], result["url"]) for result in with_nulls.structured_content["results"]]
    assert found == [(result["title"], result["url"]) for result in SEARCH_RESULTS]
    assert with_nulls.structured_content["provider"] == plain.structured_content["provider"]
