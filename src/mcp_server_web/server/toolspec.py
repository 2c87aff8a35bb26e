"""How a tool is published: its function, names, description, its one input schema, annotations."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations

ToolFunction = Callable[..., Awaitable[CallToolResult]]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
"""What web_search and web_fetch are: they read the open web and change nothing."""


@dataclass(frozen=True)
class ToolSpec:
    """Everything app.py needs to register a tool: every tool's input schema is hand-written, one
    declaration (server/schemas.py), and published as it is; the function takes lenient
    arguments (server/arguments.py) so that a model's "8000" or an out-of-range number is coerced
    instead of rejected by the SDK with a pydantic dump."""

    fn: ToolFunction
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY)

    def to_tool(self) -> Tool:
        """The SDK Tool, publishing ``input_schema`` instead of one derived from the signature
        (the function takes lenient ``Any`` arguments, coerced in the body)."""
        tool = Tool.from_function(
            self.fn,
            name=self.name,
            title=self.title,
            description=self.description,
            annotations=self.annotations.model_copy(update={"title": self.title}),
        )
        return tool.model_copy(update={"parameters": self.input_schema})
