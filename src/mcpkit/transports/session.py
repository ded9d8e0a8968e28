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
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

from mcpkit.errors import ConnectionClosed, ProtocolError, RequestId, RequestTimeout
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import ErrorResponse, Response

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_REQUEST_TIMEOUT",
    "MemorySessionStore",
    "Session",
    "SessionStore",
    "cancel_request",
    "new_session_id",
    "owner_of",
]

DEFAULT_REQUEST_TIMEOUT = 300.0
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_IDLE_TIMEOUT = 30 * 60.0
DEFAULT_BACKLOG = 1000
MAX_SUBSCRIPTIONS = 1000

_CLOSED: dict[str, Any] = {}


def new_session_id() -> str:
    """An unguessable id of visible ASCII characters (0x21-0x7E), as the spec requires."""
    return secrets.token_urlsafe(32)


def owner_of(principal: Any) -> str | None:
    """Who a session or connection belongs to: ``str`` of the authenticated caller, or
    None when the transport authenticates no one. Only the owner may use it."""
    return None if principal is None else str(principal)


def cancel_request(
    inflight: dict[RequestId, asyncio.Task[Any]], params: dict[str, Any] | None
) -> None:
    """``notifications/cancelled``: cancel the client's request it names, which then
    leaves ``inflight``; unknown or finished ids are ignored (spec
    ``basic/patterns/cancellation.mdx``)."""
    request_id = (params or {}).get("requestId")
    if type(request_id) is not str and type(request_id) is not int:
        return
    task = inflight.pop(request_id, None)
    if task is not None:
        task.cancel()


class Session:
    """One legacy client's state, shared by all its requests.

    ``principal`` is the identity (``str`` of the authenticated caller) that created the
    session when the transport authenticates, so that nobody else can use its id.
    ``inflight`` maps the ids of the client's requests being served (HTTP) to their tasks,
    for ``notifications/cancelled`` and for ending them with the session.
    """

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
        self.principal: str | None = None
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        self.inflight: dict[RequestId, asyncio.Task[Any]] = {}
        self.streaming = False
        self.last_seen = time.monotonic()
        self.closed = False
        self._initialized = asyncio.Event()
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[Response | ErrorResponse]] = {}
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(backlog)
        self._on_close: list[Callable[[], None]] = []

    def touch(self) -> None:
        self.last_seen = time.monotonic()

    # -- lifecycle (spec 2025-11-25/basic/lifecycle.mdx) ----------------------------------

    @property
    def initialized(self) -> bool:
        """True once the client sent ``notifications/initialized``."""
        return self._initialized.is_set()

    def mark_initialized(self) -> None:
        self._initialized.set()

    async def wait_initialized(self) -> None:
        """Return once the client has sent ``notifications/initialized``."""
        await self._initialized.wait()

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
        goes to the session's standalone stream (:meth:`push`). When no answer arrives
        within ``timeout`` seconds the client is told the request is cancelled (spec
        ``2025-11-25/basic/lifecycle.mdx`` §Timeouts) and :class:`RequestTimeout` raised.
        """
        if self.closed:
            raise ConnectionClosed("the session is closed")
        request_id = f"s-{next(self._ids)}"
        future: asyncio.Future[Response | ErrorResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[request_id] = future
        deliver = send if send is not None else self._push_async
        try:
            await deliver(jsonrpc.request(request_id, method, params))
            reply = await asyncio.wait_for(future, timeout)
        except TimeoutError:
            await deliver(_cancelled(request_id, f"no answer to {method} within {timeout:g} s"))
            raise RequestTimeout(f"the client did not answer {method} in time") from None
        except asyncio.CancelledError:
            # The call that asked was cancelled: tell the client to stop working on it
            # (on the standalone stream, since the call's own stream is finished).
            self.push(_cancelled(request_id, "the request that asked was cancelled"))
            raise
        finally:
            self._pending.pop(request_id, None)
        if isinstance(reply, ErrorResponse):
            raise ProtocolError.from_wire(reply.error)
        return reply.result

    async def _push_async(self, message: dict[str, Any]) -> None:
        self.push(message)

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

    async def next_pushed(self) -> dict[str, Any] | None:
        """The next message for the standalone stream (waits for one); None once closed."""
        if self.closed:
            return None
        message = await self._outbox.get()
        return None if message is _CLOSED else message

    # -- lifetime -----------------------------------------------------------------------

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the session ends (at once if it already has)."""
        if self.closed:
            callback()
        else:
            self._on_close.append(callback)

    def close(self) -> None:
        """End the session: pending server-to-client requests fail, in-flight calls are
        cancelled, the standalone stream ends, and every ``on_close`` callback runs."""
        if self.closed:
            return
        self.closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("the session ended"))
        for task in list(self.inflight.values()):
            task.cancel()
        while True:
            try:
                self._outbox.put_nowait(_CLOSED)
                break
            except asyncio.QueueFull:
                self._outbox.get_nowait()
        callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()


def _cancelled(request_id: RequestId, reason: str) -> dict[str, Any]:
    return jsonrpc.notification(
        "notifications/cancelled", {"requestId": request_id, "reason": reason}
    )


class SessionStore(Protocol):
    """Where an HTTP server keeps its legacy sessions.

    ``get`` returns a live session (refreshing its idle clock) or None for an unknown or
    expired id; ``add`` may evict others to stay within its bounds; ``remove`` closes the
    session it removes; iteration yields every live session (for shutdown).
    """

    def get(self, session_id: str) -> Session | None: ...

    def add(self, session: Session) -> None: ...

    def remove(self, session_id: str) -> Session | None: ...

    def __iter__(self) -> Iterator[Session]: ...

    def __len__(self) -> int: ...


class MemorySessionStore:
    """Sessions in this process, bounded in number and idle time.

    When the table is full the longest-idle session is evicted to make room; a session
    idle for longer than ``idle_timeout`` is gone (its id then gets 404, spec
    ``2025-11-25/basic/transports.mdx`` §Session Management). Expired sessions are swept
    at most once per ``idle_timeout / 10`` (and whenever the table is full), so a lookup
    does not walk the whole table.
    """

    def __init__(
        self, max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if idle_timeout <= 0:
            raise ValueError("idle_timeout must be positive")
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, Session] = {}
        self._next_sweep = 0.0

    def get(self, session_id: str) -> Session | None:
        now = time.monotonic()
        self._sweep(now)
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if session.closed or now - session.last_seen > self.idle_timeout:
            self.remove(session_id)
            return None
        session.last_seen = now
        return session

    def add(self, session: Session) -> None:
        if session.id is None:
            raise ValueError("a stored session needs an id")
        self._sweep(time.monotonic(), force=len(self._sessions) >= self.max_sessions)
        while len(self._sessions) >= self.max_sessions:
            oldest = min(self._sessions.values(), key=lambda s: s.last_seen)
            self.remove(oldest.id or "")
        self._sessions[session.id] = session

    def remove(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()
        return session

    def _sweep(self, now: float, *, force: bool = False) -> None:
        if not self._sessions or (now < self._next_sweep and not force):
            return
        self._next_sweep = now + self.idle_timeout / 10
        limit = now - self.idle_timeout
        for session_id in [k for k, s in self._sessions.items() if s.last_seen < limit]:
            self.remove(session_id)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)
