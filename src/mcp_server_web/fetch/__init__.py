"""URL -> clean, paginated document. Knows nothing about MCP; usable as a library."""
