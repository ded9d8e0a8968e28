"""MCP servers: registration, dispatch, the handler context."""

from mcpkit.server.app import Server
from mcpkit.server.caching import CacheHint, CachePolicy
from mcpkit.server.context import Context

__all__ = ["CacheHint", "CachePolicy", "Context", "Server"]
