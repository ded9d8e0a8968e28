"""Thin async drivers around the protocol core: stdio, in-memory, Streamable HTTP."""

from mcpkit.transports.base import Channel, ServerApp

__all__ = ["Channel", "ServerApp"]
