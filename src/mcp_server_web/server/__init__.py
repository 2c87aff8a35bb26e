"""The MCP face of the project: tool registration, schemas and transports."""
