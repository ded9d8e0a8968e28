"""Public test helpers: connect a client to a server in memory."""

from mcpkit.testing.pair import connect

__all__ = ["connect"]
