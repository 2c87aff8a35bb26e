"""pydantic-ai: an Agent with the server as its MCP toolset and a FunctionModel standing in for
the model. The model asks for one tool call; on its next turn it reads the part the agent built
from the result and records what a model API is sent for it: a ToolReturnPart's
`model_response_str()` (an error is one whose outcome is "retried", its text wrapped as
{"error": ...}), or, should a version build one, a RetryPromptPart's `model_response()`."""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp.client.transports import StdioTransport
from plan import emit, read_plan
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


class ScriptedModel:
    """Calls the tool of the current plan entry once, then keeps what came back."""

    def __init__(self) -> None:
        self.call: dict[str, Any] = {}
        self.seen: dict[str, Any] = {}

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            for part in last.parts:
                if isinstance(part, ToolReturnPart):
                    self.seen = {
                        "to_model": part.model_response_str(),
                        "part": "ToolReturnPart",
                        "outcome": getattr(part, "outcome", None),
                    }
                    return ModelResponse(parts=[TextPart("done")])
                if isinstance(part, RetryPromptPart):
                    self.seen = {"to_model": part.model_response(), "part": "RetryPromptPart"}
                    return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(
            parts=[ToolCallPart(self.call["tool"], self.call["arguments"], tool_call_id=self.call["label"])]
        )


async def drive(plan: dict[str, Any]) -> dict[str, Any]:
    server = plan["server"]
    transport = StdioTransport(command=server["command"], args=server["args"], env=server["env"])
    # Room for a loaded machine: our server starts a Python and imports the SDK before it answers.
    toolset = MCPToolset(transport, init_timeout=60)
    model = ScriptedModel()
    agent = Agent(FunctionModel(model.respond), toolsets=[toolset])
    calls: dict[str, Any] = {}
    async with agent:
        for call in plan["calls"]:
            model.call, model.seen = call, {}
            await agent.run(f"Use {call['tool']}.")
            calls[call["label"]] = model.seen
    return {"calls": calls}


if __name__ == "__main__":
    emit(asyncio.run(drive(read_plan())))
