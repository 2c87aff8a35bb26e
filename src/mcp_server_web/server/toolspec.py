"""How a tool is published: its body, names, description, its input and output models, icon and
annotations; and the one seam where a call's raw arguments become the input model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, Icon, ToolAnnotations
from pydantic import BaseModel, ConfigDict

from mcp_server_web.config import Settings
from mcp_server_web.server.contract import ToolInput
from mcp_server_web.server.failures import reports_errors

ToolBody = Callable[..., Awaitable[CallToolResult]]
"""A tool's body: ``(arguments: <its input model>, *, ctx) -> CallToolResult``."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
"""What web_search and web_fetch are: they read the open web and change nothing."""


class RawArguments(ArgModelBase):
    """The SDK's argument model for our tools: every argument the client sent, untouched.

    The SDK's own model, built from a function's signature, drops names it does not know and
    answers a wrong type with pydantic's dump; ours hands the whole dict to the tool's input model
    (ToolInput.from_arguments), which names an unknown argument, takes camelCase spellings and
    words its own errors. Being the SDK's seam, it holds over every transport."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


@dataclass(frozen=True)
class ToolSpec:
    """Everything app.py needs to register a tool."""

    fn: ToolBody
    name: str
    title: str
    description: str | Callable[[Settings], str]
    """The text, or a function of the server's Settings for a description that states a setting."""
    input_model: type[ToolInput]
    output_model: type[BaseModel]
    icon: Icon
    annotations: ToolAnnotations = field(default_factory=lambda: READ_ONLY)

    def to_tool(self, settings: Settings) -> Tool:
        """The SDK Tool: inputSchema from the input model, outputSchema from the output model, and
        a call that validates the raw arguments before the body runs."""
        body, model = self.fn, self.input_model

        async def call(arguments: Mapping[str, Any], ctx: Context[Any, Any]) -> CallToolResult:
            return await body(model.from_arguments(arguments), ctx=ctx)

        call.__name__ = self.name
        described = self.description if isinstance(self.description, str) else self.description(settings)
        tool = Tool.from_function(
            reports_errors(call),
            name=self.name,
            title=self.title,
            description=described,
            context_kwarg="ctx",
            annotations=self.annotations.model_copy(update={"title": self.title}),
            icons=[self.icon],
            structured_output=False,
        )
        return tool.model_copy(
            update={
                "parameters": model.input_schema(),
                "fn_metadata": FuncMetadata(arg_model=RawArguments, output_model=self.output_model),
            }
        )
