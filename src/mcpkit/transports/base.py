"""The small interfaces between transports and the applications they drive.

A transport owns bytes and connections; an application (a :class:`mcpkit.Server`, or
anything shaped like :class:`ServerApp`) owns meaning. Each request reaches the
application with a :class:`Channel`: the way back to the peer for messages that relate
to that request (progress, log messages, and on legacy sessions server-to-client
requests). The dispatcher never learns which transport it runs on.

A channel also carries the legacy :class:`~mcpkit.transports.session.Session` its request
belongs to, if any (spec ``2026-07-28/basic/versioning.mdx`` §Backward Compatibility: an
``initialize`` selects legacy semantics for the stdio process or the HTTP session), and
binds a new one when the server answers ``initialize``: the transport decides where the
session lives (the stdio connection, an HTTP session table with a minted id).
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpkit.protocol.jsonrpc import Notification, Request
from mcpkit.transports.session import Session

__all__ = ["Channel", "ServerApp"]


class Channel(Protocol):
    """The path back to the client for one request."""

    async def send(self, message: dict[str, Any]) -> None:
        """Send a message that relates to the request, never its response: a notification
        (progress, log) or, on a legacy session, a server-to-client request."""
        ...

    @property
    def principal(self) -> Any:
        """The authenticated caller, or None when the transport authenticates no one."""
        ...

    @property
    def session(self) -> Session | None:
        """The legacy session the request belongs to, or None (modern, stateless)."""
        ...

    def open_session(self, session: Session) -> None:
        """Bind ``session`` (just negotiated by ``initialize``) to this channel's client.

        Raises :class:`~mcpkit.errors.ProtocolError` when the transport cannot hold one.
        """
        ...


class ServerApp(Protocol):
    """What a transport needs from a server."""

    async def handle_request(self, request: Request, channel: Channel) -> dict[str, Any] | None:
        """The response message for ``request`` (None only when nothing may be sent)."""
        ...

    async def handle_notification(self, notification: Notification, channel: Channel) -> None:
        """React to a notification; it is never answered."""
        ...
