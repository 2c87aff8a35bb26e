"""How the project names itself to the sites and services it talks to.

Its own module, not ``fetch``'s: the settings (read before anything else is imported, so that
``--help`` stays fast) and the libraries both need these, and importing ``fetch`` costs httpx.
"""

from mcp_server_web import __version__

# The product and its version, and what it is: the project has no home of its own to link to.
DEFAULT_USER_AGENT = f"mcp-server-web/{__version__} (MCP web tools for AI agents)"
ROBOTS_TOKEN = "mcp-server-web"
"""The product token matched against robots.txt User-agent lines (RFC 9309 section 2.2.1)."""
