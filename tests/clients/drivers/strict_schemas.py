"""openai-agents' strict conversion of each tool's inputSchema, as MCPUtil.to_function_tool does
it for an agent with convert_schemas_to_strict=True: stdin a tools/list array, stdout
{name: {"strict": bool, "schema": ...}} (a schema the conversion refuses is served non-strict,
as the SDK then does)."""

from __future__ import annotations

import copy
from typing import Any

from agents.strict_schema import ensure_strict_json_schema
from plan import emit, read_plan


def convert(tool: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(tool["inputSchema"])
    empty = schema == {}
    schema.setdefault("properties", {})
    try:
        strict = ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=not empty)
        return {"strict": True, "schema": strict}
    except Exception as error:
        return {"strict": False, "schema": schema, "error": str(error)}


if __name__ == "__main__":
    emit({tool["name"]: convert(tool) for tool in read_plan()["tools"]})
