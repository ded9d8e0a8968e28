"""An in-memory transport: a client and a server in one process, no I/O.

Messages still travel as encoded lines through the same
:class:`~mcpkit.transports.stream.StreamServerConnection` the stdio transport uses, so
tests over this pair exercise the real codec, framing and dispatch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from mcpkit.errors import ConnectionClosed
from mcpkit.protocol import codec
from mcpkit.protocol.framing import LineReader
from mcpkit.transports.base import ServerApp
from mcpkit.transports.stream import StreamServerConnection

__all__ = ["MemoryClientTransport"]


class MemoryClientTransport:
    """A client transport whose server runs in the same event loop."""

    def __init__(self, app: ServerApp) -> None:
        self.app = app
        self._connection: StreamServerConnection | None = None
        self._receiver: Callable[[Any], None] | None = None
        self._on_close: Callable[[], None] | None = None
        self._client_reader = LineReader()

    @property
    def connection(self) -> StreamServerConnection:
        if self._connection is None:
            raise ConnectionClosed("the in-memory transport is not started")
        return self._connection

    async def start(self, receiver: Callable[[Any], None], on_close: Callable[[], None]) -> None:
        self._receiver = receiver
        self._on_close = on_close
        self._connection = StreamServerConnection(self.app, self._to_client)

    def _to_client(self, data: bytes) -> None:
        receiver = self._receiver
        if receiver is None:
            return
        for frame in self._client_reader.feed(data):
            receiver(frame)

    async def send(self, message: dict[str, Any]) -> None:
        connection = self._connection
        if connection is None or connection.closed:
            raise ConnectionClosed("the in-memory server is closed")
        data = codec.dumps(message) + b"\n"
        asyncio.get_running_loop().call_soon(connection.feed, data)

    async def send_raw(self, data: bytes) -> None:
        """Deliver raw bytes to the server, bypassing the client's encoder (for tests)."""
        self.connection.feed(data)

    async def close(self) -> None:
        connection = self._connection
        if connection is None:
            return
        connection.feed_eof()
        await connection.aclose()
        self._connection = None
        if self._on_close is not None:
            self._on_close()
