"""The deprecated HTTP+SSE transport of 2024-11-05, server end (spec
``2024-11-05/basic/transports.mdx`` §HTTP with SSE), for clients that predate
Streamable HTTP (``2025-11-25/basic/transports.mdx`` §Backwards Compatibility).

A client opens ``GET <sse_path>``: the response is an SSE stream whose first event,
``endpoint``, names the URI to POST messages to (``<messages_path>?session_id=<id>``,
the id unguessable). Every message the client POSTs there is accepted with 202 and
handled as on stdio; every message the server sends (responses, notifications, its own
requests) is a ``message`` event on the stream, compact single-line JSON. Idle streams
get keep-alive comments. Closing the stream ends the connection: running calls are
cancelled and the legacy session (if ``initialize`` opened one) ends with it.

Each stream drives one :class:`~mcpkit.transports.stream.StreamServerConnection`, the
same connection stdio uses, so the request tasks, cancellation and the legacy session
behave exactly as there. The protections are those of the Streamable HTTP endpoint:
Host and Origin allow-lists (421, 403), ``Content-Type`` (415), body size and read
deadline (413, 408), and with ``auth`` a bearer token on both requests, the connection
bound to the caller who opened it (404 for anyone else). A client that stops reading
its stream while messages pile up past ``max_queue`` is disconnected.

:class:`SseServerApp` is an ASGI application of its own; ``create_app(server,
legacy_sse=True)`` mounts one beside the Streamable HTTP endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

from mcpkit.errors import InvalidRequest, ProtocolError
from mcpkit.protocol import codec
from mcpkit.transports.base import ServerApp
from mcpkit.transports.http import (
    _SSE_HEADERS,
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_KEEPALIVE,
    DEFAULT_MAX_BODY,
    HostPolicy,
    Receive,
    ResourceGuard,
    Scope,
    Send,
    _Headers,
    _pump_events,
    _refusal_type,
    _Reject,
    _relative_path,
    _respond,
    _send_reject,
    _serve_lifespan,
    check_content_type,
    check_host,
    read_body,
)
from mcpkit.transports.session import new_session_id, owner_of
from mcpkit.transports.sse import event
from mcpkit.transports.stream import StreamServerConnection

logger = logging.getLogger("mcpkit.http")

DEFAULT_MAX_QUEUE = 10_000

__all__ = ["SseServerApp", "create_sse_app"]


class _Connection:
    """One client's stream: what the server writes waits here until the GET sends it."""

    def __init__(self, app: ServerApp, principal: Any, max_depth: int, max_queue: int) -> None:
        self.owner = owner_of(principal)
        self._max_queue = max_queue
        self.outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.overflowed = False
        self.connection = StreamServerConnection(
            app, self._write, max_depth=max_depth, principal=principal
        )

    def _write(self, data: bytes) -> None:
        if self.overflowed:
            return
        if self.outgoing.qsize() >= self._max_queue:
            logger.warning("an SSE client stopped reading its stream: disconnecting it")
            self.overflowed = True
            self.outgoing.put_nowait(None)
            return
        self.outgoing.put_nowait(data)


class SseServerApp:
    """The two endpoints of the HTTP+SSE transport as one ASGI application."""

    def __init__(
        self,
        app: ServerApp,
        *,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        hosts: HostPolicy | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        keepalive_interval: float = DEFAULT_KEEPALIVE,
        max_depth: int = codec.DEFAULT_MAX_DEPTH,
        max_queue: int = DEFAULT_MAX_QUEUE,
        auth: ResourceGuard | None = None,
    ) -> None:
        self.app = app
        self.sse_path = "/" + sse_path.strip("/")
        self.messages_path = "/" + messages_path.strip("/")
        if self.sse_path == self.messages_path:
            raise ValueError("the SSE and message endpoints need different paths")
        self.hosts = hosts or HostPolicy()
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.keepalive_interval = keepalive_interval
        self.max_depth = max_depth
        self.max_queue = max_queue
        self.auth = auth
        self._refusal = _refusal_type(auth)
        self._connections: dict[str, _Connection] = {}
        self._streams: set[asyncio.Task[Any]] = set()

    def serves(self, path: str) -> bool:
        """True for the two paths this application answers (relative to its mount)."""
        return path in (self.sse_path, self.messages_path)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _serve_lifespan(receive, send, self.shutdown)
            return
        if kind != "http":
            raise RuntimeError(f"unsupported ASGI scope type {kind!r}")
        headers = _Headers(scope["headers"])
        try:
            check_host(self.hosts, headers)
            path = _relative_path(scope)
            if path == self.sse_path:
                if scope["method"] != "GET":
                    await _respond(send, 405, b"", [(b"allow", b"GET")])
                    return
                principal = await self._authenticate(scope, send)
                if principal is not _REFUSED:
                    await self._stream(scope, principal, receive, send)
            elif path == self.messages_path:
                if scope["method"] != "POST":
                    await _respond(send, 405, b"", [(b"allow", b"POST")])
                    return
                principal = await self._authenticate(scope, send)
                if principal is not _REFUSED:
                    await self._post(scope, headers, principal, receive, send)
            else:
                raise _Reject(404)
        except _Reject as reject:
            await _send_reject(send, reject)

    async def shutdown(self, grace: float = 2.0) -> None:
        """End every stream; calls still running after ``grace`` seconds are cancelled."""
        for connection in list(self._connections.values()):
            connection.outgoing.put_nowait(None)
        streams = list(self._streams)
        if streams:
            _, pending = await asyncio.wait(streams, timeout=grace)
            for task in pending:
                task.cancel()

    async def _authenticate(self, scope: Scope, send: Send) -> Any:
        if self.auth is None:
            return None
        outcome = await self.auth.authenticate(scope["headers"])
        if isinstance(outcome, self._refusal):
            await outcome.send(send)
            return _REFUSED
        return outcome

    # -- GET: the stream ----------------------------------------------------------------

    async def _stream(self, scope: Scope, principal: Any, receive: Receive, send: Send) -> None:
        connection_id = new_session_id()
        client = _Connection(self.app, principal, self.max_depth, self.max_queue)
        self._connections[connection_id] = client
        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
        endpoint = (
            scope.get("root_path", "")
            + self.messages_path
            + "?session_id="
            + urllib.parse.quote(connection_id)
        )
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            first = event(endpoint.encode(), name="endpoint")
            await send({"type": "http.response.body", "body": first, "more_body": True})
            if await self._pump(client, receive, send):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            del self._connections[connection_id]
            if task is not None:
                self._streams.discard(task)
            client.connection.feed_eof()
            await client.connection.aclose()

    async def _pump(self, client: _Connection, receive: Receive, send: Send) -> bool:
        """Send what the connection writes until it ends (True) or the client leaves."""

        async def next_event() -> bytes | None:
            data = await client.outgoing.get()
            return None if data is None else event(data.rstrip(b"\n"), name="message")

        return await _pump_events(next_event, receive, send, self.keepalive_interval)

    # -- POST: a message ----------------------------------------------------------------

    async def _post(
        self, scope: Scope, headers: _Headers, principal: Any, receive: Receive, send: Send
    ) -> None:
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ids = query.get("session_id")
        if not ids:
            raise _Reject(400, InvalidRequest("Missing session_id"))
        client = self._connections.get(ids[0])
        if client is None or client.owner != owner_of(principal):
            raise _Reject(404, InvalidRequest("Session not found"))
        check_content_type(headers)
        body = await read_body(headers, receive, self.max_body, self.body_timeout)
        try:
            frame = codec.loads(body, self.max_depth)
        except ProtocolError as exc:
            raise _Reject(400, exc) from None
        await _respond(send, 202, b"")
        client.connection.receive(frame)


_REFUSED = object()


def create_sse_app(app: ServerApp, **options: Any) -> SseServerApp:
    """The HTTP+SSE transport for ``app`` (``/sse`` and ``/messages`` by default)."""
    return SseServerApp(app, **options)
