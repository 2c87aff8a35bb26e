"""langchain-mcp-adapters: the tools `load_mcp_tools` makes from one MCP session, invoked the way
an agent loop invokes a tool call. The model gets the ToolMessage's content; the artifact
(structuredContent) stays with the application."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_mcp_adapters.tools import load_mcp_tools
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from plan import emit, read_plan, text_parts


async def drive(plan: dict[str, Any]) -> dict[str, Any]:
    server = plan["server"]
    params = StdioServerParameters(command=server["command"], args=server["args"], env=server["env"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in await load_mcp_tools(session)}
        calls: dict[str, Any] = {}
        for call in plan["calls"]:
            message = await tools[call["tool"]].ainvoke(
                {
                    "type": "tool_call",
                    "id": f"call_{call['label']}",
                    "name": call["tool"],
                    "args": call["arguments"],
                }
            )
            calls[call["label"]] = {"to_model": text_parts(message.content), "status": message.status}
    return {"tools": sorted(tools), "calls": calls}


if __name__ == "__main__":
    emit(asyncio.run(drive(read_plan())))
