"""A server module that prints while it is imported, and from its tool: for ``mcpkit run``."""

from __future__ import annotations

from mcpkit import Server

print("printed while importing")

server = Server("noisy", "1.0.0")


@server.tool
def echo(text: str) -> str:
    """Print, then return the text."""
    print("printed by echo")
    return text
