"""Legacy sessions (revisions 2025-11-25 back to 2024-11-05), transport side.

A legacy client opens with ``initialize``; from then on the stdio process or the HTTP
session (``Mcp-Session-Id``, spec ``2025-11-25/basic/transports.mdx`` §Session
Management) carries the negotiated version, the client's capabilities, its log level and
its resource subscriptions, and the server may send the client requests of its own
(``sampling/createMessage``, ``elicitation/create``, ``roots/list``).

A :class:`Session` holds that state and the machinery for server-to-client requests:
:meth:`Session.request` sends a request through a caller-given ``send`` (the originating
call's stream) and waits for the matching response, which the transport hands to
:meth:`Session.resolve`. Messages not tied to any request (list-changed, resource
updates) go to :meth:`Session.push`, which the HTTP GET stream or the stdio writer
drains. A :class:`SessionStore` bounds how many sessions exist and how long an idle one
lives; :class:`MemorySessionStore` is the in-process default.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from mcpkit.errors import ConnectionClosed, ProtocolError, RequestId, RequestTimeout
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import ErrorResponse, Response

__all__ = ["MemorySessionStore", "Session", "SessionStore", "new_session_id"]

DEFAULT_REQUEST_TIMEOUT = 300.0
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_IDLE_TIMEOUT = 30 * 60.0
DEFAULT_BACKLOG = 1000


def new_session_id() -> str:
    """An unguessable id of visible ASCII characters (0x21-0x7E), as the spec requires."""
    return secrets.token_urlsafe(32)


class Session:
    """One legacy client's state, shared by all its requests."""

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        backlog: int = DEFAULT_BACKLOG,
    ) -> None:
        self.id = id
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.initialized = False
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        self.last_seen = time.monotonic()
        self.closed = False
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[Response | ErrorResponse]] = {}
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(backlog)
        self._on_close: list[Callable[[], None]] = []

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    # -- server-to-client requests ------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        send: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        *,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> dict[str, Any]:
        """Send a request to the client and return its result (or raise its error).

        ``send`` is the stream of the call that needs the answer; without one the request
        goes to the session's standalone stream (:meth:`push`).
        """
        if self.closed:
            raise ConnectionClosed("the session is closed")
        request_id = f"s-{next(self._ids)}"
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Response | ErrorResponse] = loop.create_future()
        self._pending[request_id] = future
        message = jsonrpc.request(request_id, method, params)
        try:
            if send is not None:
                await send(message)
            else:
                self.push(message)
            reply = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise RequestTimeout(f"the client did not answer {method} in time") from None
        finally:
            self._pending.pop(request_id, None)
        if isinstance(reply, ErrorResponse):
            raise ProtocolError.from_wire(reply.error)
        return reply.result

    def resolve(self, message: Response | ErrorResponse) -> bool:
        """Deliver a client's response; False when no request of ours has that id."""
        future = self._pending.get(message.id) if message.id is not None else None
        if future is None or future.done():
            return False
        future.set_result(message)
        return True

    @property
    def pending_requests(self) -> int:
        return len(self._pending)

    # -- messages not tied to a request -------------------------------------------------

    def push(self, message: dict[str, Any]) -> bool:
        """Queue a message for the standalone stream; False when the backlog is full."""
        if self.closed:
            return False
        try:
            self._outbox.put_nowait(message)
        except asyncio.QueueFull:
            return False
        return True

    async def next_pushed(self) -> dict[str, Any]:
        """The next message for the standalone stream (waits until there is one)."""
        return await self._outbox.get()

    # -- lifetime -----------------------------------------------------------------------

    def on_close(self, callback: Callable[[], None]) -> None:
        self._on_close.append(callback)

    def close(self) -> None:
        """End the session: pending server-to-client requests fail, streams end."""
        if self.closed:
            return
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the session ended"))
        for callback in self._on_close:
            callback()


class SessionStore(Protocol):
    """Where an HTTP server keeps its legacy sessions."""

    def get(self, session_id: str) -> Session | None: ...

    def add(self, session: Session) -> None: ...

    def remove(self, session_id: str) -> Session | None: ...

    def __len__(self) -> int: ...


class MemorySessionStore:
    """Sessions in this process, bounded in number and idle time.

    When the table is full the longest-idle session is evicted to make room; a session
    idle for longer than ``idle_timeout`` is gone (its id then gets 404, spec
    ``2025-11-25/basic/transports.mdx`` §Session Management).
    """

    def __init__(
        self, max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, Session] = {}

    def get(self, session_id: str) -> Session | None:
        self._expire()
        session = self._sessions.get(session_id)
        if session is not None:
            session.touch()
        return session

    def add(self, session: Session) -> None:
        if session.id is None:
            raise ValueError("a stored session needs an id")
        self._expire()
        while len(self._sessions) >= self.max_sessions:
            oldest = min(self._sessions.values(), key=lambda s: s.last_seen)
            self.remove(oldest.id or "")
        self._sessions[session.id] = session

    def remove(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()
        return session

    def _expire(self) -> None:
        if not self._sessions:
            return
        limit = time.monotonic() - self.idle_timeout
        for session_id in [k for k, s in self._sessions.items() if s.last_seen < limit]:
            self.remove(session_id)

    def __len__(self) -> int:
        return len(self._sessions)
