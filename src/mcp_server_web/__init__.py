"""mcp-server-web: web_search and web_fetch as native tools for any MCP client."""

__version__ = "0.1.0"
