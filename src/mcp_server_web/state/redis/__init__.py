"""The Redis backend of the state port (imported only when MCP_WEB_REDIS_URL is set: the redis
client takes ~90 ms to import, which a server without Redis does not pay)."""

from mcp_server_web.state.redis.backend import RedisState

__all__ = ["RedisState"]
