"""The package imports and a tool answers through the in-memory pair."""

from __future__ import annotations

import mcpkit
from mcpkit import Server
from mcpkit.testing import connect


async def test_a_tool_answers_through_the_in_memory_pair() -> None:
    server = Server("smoke", "1.0.0")

    @server.tool
    async def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    async with connect(server) as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result.text == "5"
    assert result.raw["resultType"] == "complete"
    assert mcpkit.__version__
