"""The small interfaces between transports and the applications they drive.

A transport owns bytes and connections; an application (a :class:`mcpkit.Server`, or
anything shaped like :class:`ServerApp`) owns meaning. Each request reaches the
application with a :class:`Channel`: the way back to the peer for messages that relate
to that request (progress, log messages, and on legacy sessions server-to-client
requests). The dispatcher never learns which transport it runs on.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpkit.protocol.jsonrpc import Notification, Request

__all__ = ["Channel", "ServerApp"]


class Channel(Protocol):
    """The path back to the client for one request."""

    async def send(self, message: dict[str, Any]) -> None:
        """Send a notification that relates to the request (never its response)."""
        ...

    @property
    def principal(self) -> Any:
        """The authenticated caller, or None when the transport authenticates no one."""
        ...


class ServerApp(Protocol):
    """What a transport needs from a server."""

    async def handle_request(self, request: Request, channel: Channel) -> dict[str, Any] | None:
        """The response message for ``request`` (None only when nothing may be sent)."""
        ...

    async def handle_notification(self, notification: Notification, channel: Channel) -> None:
        """React to a notification; it is never answered."""
        ...
