"""A header-read deadline for uvicorn connections (``security.md`` §0.5, R-13).

uvicorn waits forever for a request's headers: a client that connects and sends
nothing, or trickles header bytes, pins a connection and a file descriptor. The class
:func:`guarded_protocol` builds extends uvicorn's httptools protocol with a deadline that
starts when a connection opens (or a kept-alive connection finishes a response) and ends
when the next request's headers are complete; a connection that misses it gets
``408 Request Timeout`` and is closed. The body deadline is enforced by the ASGI
application itself (:mod:`mcpkit.transports.http`).

The deadline costs a timestamp per request, not a timer: one sweep, every third of the
timeout while connections are open, closes those whose headers are overdue (so a
deadline is enforced within 4/3 of its length).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

DEFAULT_HEADER_TIMEOUT = 10.0

_BODY = b"request headers not received in time"
_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\n"
    b"content-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)

logger = logging.getLogger("mcpkit.http")

__all__ = ["DEFAULT_HEADER_TIMEOUT", "guarded_protocol"]


def guarded_protocol(header_timeout: float = DEFAULT_HEADER_TIMEOUT) -> type[Any] | str:
    """uvicorn's httptools protocol with a header-read deadline ("h11" if unavailable)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:
        logger.warning("httptools is not installed: serving without a header-read deadline")
        return "h11"
    base: type[Any] = HttpToolsProtocol
    sweeper = _Sweeper(header_timeout)

    def connection_made(self: Any, transport: Any) -> None:
        base.connection_made(self, transport)
        self._mcpkit_since = self.loop.time()
        sweeper.watch(self)

    def on_message_begin(self: Any) -> None:
        base.on_message_begin(self)
        if getattr(self, "_mcpkit_since", None) is None:
            self._mcpkit_since = self.loop.time()

    def on_headers_complete(self: Any) -> None:
        self._mcpkit_since = None
        base.on_headers_complete(self)

    def on_response_complete(self: Any) -> None:
        base.on_response_complete(self)
        self._mcpkit_since = self.loop.time()

    namespace = {
        "__doc__": "uvicorn's httptools protocol with a header-read deadline.",
        "connection_made": connection_made,
        "on_message_begin": on_message_begin,
        "on_headers_complete": on_headers_complete,
        "on_response_complete": on_response_complete,
    }
    return type("GuardedHttpToolsProtocol", (base,), namespace)


class _Sweeper:
    """Closes the watched connections whose request headers are overdue."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.interval = max(timeout / 3, 0.01)
        self._connections: set[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, protocol: Any) -> None:
        # uvicorn keeps every open connection's protocol in one shared set.
        self._connections = protocol.connections
        if self._timer is None:
            self._timer = protocol.loop.call_later(self.interval, self._sweep, protocol.loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        connections = self._connections
        if not connections:
            return
        now = loop.time()
        for protocol in list(connections):
            since = getattr(protocol, "_mcpkit_since", None)
            if since is not None and now - since >= self.timeout:
                _expire(protocol)
        self._timer = loop.call_later(self.interval, self._sweep, loop)


def _expire(protocol: Any) -> None:
    protocol._mcpkit_since = None
    transport = protocol.transport
    cycle = getattr(protocol, "cycle", None)
    if transport.is_closing() or (cycle is not None and not cycle.response_complete):
        return
    transport.write(_TIMEOUT_RESPONSE)
    transport.close()
