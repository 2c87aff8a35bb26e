"""openai-agents: an Agent with the server as its MCPServerStdio (argv[1]: "default", or
"structured" for use_structured_content=True) and a scripted Model in place of OpenAI's. The
model asks for one tool call; on its next turn it reads the function_call_output item the Runner
built from the result, which is exactly what the Responses API would be sent."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.mcp import MCPServerStdio
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from plan import emit, read_plan, text_parts


class ScriptedModel(Model):
    """Calls the tool of the current plan entry once, then keeps the output it was given."""

    def __init__(self) -> None:
        self.call: dict[str, Any] = {}
        self.seen: dict[str, Any] = {}

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        outputs = [
            item for item in input if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if outputs:
            output = outputs[-1]["output"]
            self.seen = {"to_model": text_parts(output), "raw_type": type(output).__name__}
            reply = ResponseOutputMessage(
                id="msg_done",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
            )
            return ModelResponse(output=[reply], usage=Usage(), response_id=None)
        request = ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{self.call['label']}",
            call_id=f"call_{self.call['label']}",
            name=self.call["tool"],
            arguments=json.dumps(self.call["arguments"]),
            status="completed",
        )
        return ModelResponse(output=[request], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the driver runs without streaming")


async def drive(plan: dict[str, Any], mode: str) -> dict[str, Any]:
    # Traces would be exported to OpenAI: nothing leaves loopback.
    set_tracing_disabled(True)
    server = plan["server"]
    params = {"command": server["command"], "args": server["args"], "env": server["env"]}
    model = ScriptedModel()
    calls: dict[str, Any] = {}
    async with MCPServerStdio(
        params=params,
        use_structured_content=mode == "structured",
        cache_tools_list=True,
        client_session_timeout_seconds=60,
    ) as mcp_server:
        agent = Agent(name="reader", model=model, mcp_servers=[mcp_server])
        for call in plan["calls"]:
            model.call, model.seen = call, {}
            await Runner.run(agent, f"Use {call['tool']}.")
            calls[call["label"]] = model.seen
    return {"calls": calls}


if __name__ == "__main__":
    emit(asyncio.run(drive(read_plan(), sys.argv[1])))
