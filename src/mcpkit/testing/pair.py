"""An in-memory client/server pair for tests.

>>> async with connect(server) as client:
...     result = await client.call_tool("add", {"a": 2, "b": 3})
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcpkit.client.client import Client
from mcpkit.transports.base import ServerApp
from mcpkit.transports.memory import MemoryClientTransport

__all__ = ["connect"]


@asynccontextmanager
async def connect(app: ServerApp, **client_options: Any) -> AsyncIterator[Client]:
    """A connected :class:`~mcpkit.Client` for ``app``, closed on exit."""
    client = Client(MemoryClientTransport(app), **client_options)
    async with client:
        yield client
