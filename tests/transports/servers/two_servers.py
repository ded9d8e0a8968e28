"""A module defining two servers: ``mcpkit run`` must be told which one to serve."""

from __future__ import annotations

from mcpkit import Server

first = Server("first", "1.0.0")
second = Server("second", "2.0.0")


@first.tool
def which() -> str:
    """Name this server."""
    return "first"


@second.tool
def which_one() -> str:
    """Name this server."""
    return "second"
