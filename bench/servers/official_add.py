"""The ``add`` tool written with the official MCP Python SDK (``mcp==2.3.0``), over stdio.

Run by ``.venv-bench/bin/python`` (the SDK is never installed into mcpkit's own
environment). It is the SDK's documented way to write a server: ``MCPServer``, the
``@tool()`` decorator on a type-hinted function, and ``run()`` (stdio by default).
"""

from __future__ import annotations

from mcp.server import MCPServer

mcp = MCPServer("calculator")


@mcp.tool()
async def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    mcp.run()
