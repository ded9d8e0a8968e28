"""A header-read deadline for uvicorn connections (``security.md`` §0.5, R-13).

uvicorn waits forever for a request's headers: a client that connects and sends
nothing, or trickles header bytes, pins a connection and a file descriptor. The class
:func:`guarded_protocol` builds extends uvicorn's httptools protocol with a deadline that
starts when a connection opens (or a kept-alive connection finishes a response) and ends
when the next request's headers are complete; a connection that misses it gets
``408 Request Timeout`` and is closed. The body deadline is enforced by the ASGI
application itself (:mod:`mcpkit.transports.http`).
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

    def arm(self: Any) -> None:
        disarm(self)
        self._mcpkit_timer = asyncio.get_running_loop().call_later(header_timeout, expired, self)

    def disarm(self: Any) -> None:
        timer = getattr(self, "_mcpkit_timer", None)
        if timer is not None:
            timer.cancel()
            self._mcpkit_timer = None

    def expired(self: Any) -> None:
        self._mcpkit_timer = None
        transport = self.transport
        cycle = getattr(self, "cycle", None)
        if transport.is_closing() or (cycle is not None and not cycle.response_complete):
            return
        transport.write(_TIMEOUT_RESPONSE)
        transport.close()

    def connection_made(self: Any, transport: Any) -> None:
        base.connection_made(self, transport)
        arm(self)

    def on_message_begin(self: Any) -> None:
        base.on_message_begin(self)
        if getattr(self, "_mcpkit_timer", None) is None:
            arm(self)

    def on_headers_complete(self: Any) -> None:
        disarm(self)
        base.on_headers_complete(self)

    def on_response_complete(self: Any) -> None:
        base.on_response_complete(self)
        if not self.transport.is_closing():
            arm(self)

    def connection_lost(self: Any, exc: Exception | None) -> None:
        disarm(self)
        base.connection_lost(self, exc)

    namespace = {
        "__doc__": "uvicorn's httptools protocol with a header-read deadline.",
        "connection_made": connection_made,
        "on_message_begin": on_message_begin,
        "on_headers_complete": on_headers_complete,
        "on_response_complete": on_response_complete,
        "connection_lost": connection_lost,
    }
    return type("GuardedHttpToolsProtocol", (base,), namespace)
