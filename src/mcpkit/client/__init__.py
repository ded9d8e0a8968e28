"""MCP clients."""

from mcpkit.client.client import CallToolResult, Client, ClientTransport

__all__ = ["CallToolResult", "Client", "ClientTransport"]
