"""google-genai's conversion of an MCP tool for Gemini (`_mcp_utils.mcp_to_gemini_tool`, what
`generate_content` applies to the tools of an MCP session): stdin a tools/list array, stdout
{name: the FunctionDeclaration's parameters, as the Schema's JSON}."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from google.genai._mcp_utils import mcp_to_gemini_tool
from plan import emit, read_plan


def convert(tool: dict[str, Any]) -> dict[str, Any]:
    # The converter reads only name, description and inputSchema off the mcp Tool.
    gemini = mcp_to_gemini_tool(SimpleNamespace(**tool))
    (declaration,) = gemini.function_declarations or []
    parameters = declaration.parameters
    assert parameters is not None
    dumped: dict[str, Any] = parameters.model_dump(mode="json", exclude_none=True)
    return dumped


if __name__ == "__main__":
    emit({tool["name"]: convert(tool) for tool in read_plan()["tools"]})
