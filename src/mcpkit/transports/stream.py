"""A server driven over one newline-delimited byte stream (stdio, in-memory, sockets).

:class:`StreamServerConnection` is the transport-independent half of the stdio
transport: bytes come in through :meth:`~StreamServerConnection.feed`, complete lines go
out through a ``write`` callable. Every request runs in its own task, so a slow handler
never delays a fast one; ``notifications/cancelled`` cancels the matching task, after
which nothing is sent for that request, not even by a handler that swallows the
cancellation (spec ``basic/patterns/cancellation.mdx``): each request gets its own
channel, which goes quiet the moment the request is cancelled or answered.
Every malformed line gets exactly one error response; a request id that is already in
flight is refused (-32600) instead of producing two responses with one id.

A legacy client (``initialize`` without modern ``_meta``) makes the connection hold one
:class:`~mcpkit.transports.session.Session` for the rest of its life (spec
``2026-07-28/basic/versioning.mdx``: legacy semantics scoped to the stdio process). Its
server-to-client requests go out on the stream like any message, the client's responses
to them come back here and are handed to the session, and the messages the session
queues outside any request (list-changed, resource updates) are written as they come.
Without a session a message shaped like a response (a modern client must not send any,
spec ``stdio.mdx`` §Sending Messages) is logged and dropped, never answered: an error
reply would carry an id from the client's own id space and could be mistaken for the
answer to one of its requests.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from mcpkit.errors import InternalError, InvalidRequest, ProtocolError, RequestId
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE, LineReader
from mcpkit.protocol.jsonrpc import (
    ErrorResponse,
    Notification,
    Request,
    Response,
    error_response,
    parse_message,
)
from mcpkit.transports.base import ServerApp
from mcpkit.transports.session import Session, cancel_request, owner_of

logger = logging.getLogger("mcpkit.transport")

__all__ = ["StreamServerConnection"]


class _StreamChannel:
    """The way back to the client for notifications: the same stream responses use."""

    __slots__ = ("_connection",)

    def __init__(self, connection: StreamServerConnection) -> None:
        self._connection = connection

    async def send(self, message: dict[str, Any]) -> None:
        self._connection.write_message(message)

    @property
    def principal(self) -> Any:
        return self._connection.principal

    @property
    def session(self) -> Session | None:
        return self._connection.session

    def open_session(self, session: Session) -> None:
        self._connection.open_session(session)


class _RequestChannel(_StreamChannel):
    """The way back to the client for one request; silent once it is cancelled or done."""

    __slots__ = ("request_id", "task")

    def __init__(self, connection: StreamServerConnection, request_id: RequestId) -> None:
        self._connection = connection
        self.request_id = request_id
        self.task: asyncio.Task[None] | None = None

    @property
    def live(self) -> bool:
        """True while the request is in flight and not cancelled."""
        return self._connection._inflight.get(self.request_id) is self.task

    async def send(self, message: dict[str, Any]) -> None:
        if self.live:
            self._connection.write_message(message)
        else:
            logger.debug("dropping a message for finished request %r", self.request_id)


class StreamServerConnection:
    """Reads requests from a byte stream and writes responses back, one per line.

    ``principal`` is the authenticated caller when the transport carrying the stream
    authenticated one (the HTTP+SSE transport), else None.
    """

    def __init__(
        self,
        app: ServerApp,
        write: Callable[[bytes], None],
        *,
        max_line: int = DEFAULT_MAX_LINE,
        max_depth: int = codec.DEFAULT_MAX_DEPTH,
        principal: Any = None,
    ) -> None:
        self.app = app
        self._write = write
        self._reader = LineReader(max_line, max_depth)
        self._inflight: dict[RequestId, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.channel = _StreamChannel(self)
        self.principal = principal
        self.session: Session | None = None
        self._drain: asyncio.Task[None] | None = None
        self._batch: list[bytes] | None = None
        # Looked up once: on Python 3.11 every get_running_loop() call costs a getpid().
        self._loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    # -- input ------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Handle the bytes just read; complete lines become tasks or immediate errors.

        Bytes that arrive after end-of-file (a late in-memory delivery) are ignored.
        """
        if self.closed:
            return
        frames = self._reader.feed(data)
        if not frames:
            return
        # Handlers that finish without waiting answer during this call (see
        # _start_request); their lines go out together in one write.
        batch: list[bytes] = []
        self._batch = batch
        try:
            for frame in frames:
                self._frame(frame)
        finally:
            self._batch = None
            if batch:
                self._write(b"".join(batch))

    def feed_eof(self) -> None:
        """The peer closed its side; a last line without a newline still counts.

        A legacy session ends with it: nothing the client could still answer will arrive.
        """
        for frame in self._reader.close():
            self._frame(frame)
        self.closed = True
        if self.session is not None:
            self.session.close()

    def receive(self, frame: Any) -> None:
        """Handle one already-decoded message (a transport that frames messages itself)."""
        if not self.closed:
            self._frame(frame)

    def _frame(self, frame: Any) -> None:
        if isinstance(frame, ProtocolError):
            self.write_message(error_response(frame.request_id, frame))
            return
        try:
            message = parse_message(frame)
        except ProtocolError as exc:
            if _response_shaped(frame):
                logger.warning("dropping an invalid response from the client: %s", exc.message)
            else:
                self.write_message(error_response(exc.request_id, exc))
            return
        if isinstance(message, Request):
            self._start_request(message)
        elif isinstance(message, Notification):
            self._notification(message)
        else:
            self._response(message)

    def _start_request(self, request: Request) -> None:
        if request.id in self._inflight:
            error = InvalidRequest(f"Request id {request.id!r} is already in flight")
            self.write_message(error_response(request.id, error))
            return
        channel = _RequestChannel(self, request.id)
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        task, start = _eager_task(loop, self._run(request, channel))
        channel.task = task
        self._inflight[request.id] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        start()

    async def _run(self, request: Request, channel: _RequestChannel) -> None:
        try:
            try:
                response = await self.app.handle_request(request, channel)
            except Exception:
                logger.exception("internal error handling request %r", request.id)
                response = error_response(request.id, InternalError())
            if not channel.live:
                logger.debug("request %r was cancelled; its answer is not sent", request.id)
            elif response is not None:
                self._respond(request.id, response)
        finally:
            if channel.live:
                del self._inflight[request.id]

    def _respond(self, request_id: RequestId, response: dict[str, Any]) -> None:
        """Write the response; one that cannot be encoded becomes -32603, never silence."""
        try:
            data = codec.dumps(response)
        except (TypeError, ValueError):
            logger.exception("the response to request %r cannot be encoded", request_id)
            data = codec.dumps(error_response(request_id, InternalError()))
        self._emit(data + b"\n")

    def _notification(self, notification: Notification) -> None:
        if notification.method == "notifications/cancelled":
            cancel_request(self._inflight, notification.params)
            return
        task = asyncio.get_running_loop().create_task(self._notify(notification))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _notify(self, notification: Notification) -> None:
        try:
            await self.app.handle_notification(notification, self.channel)
        except Exception:
            logger.exception("error handling notification %s", notification.method)

    def _response(self, message: Response | ErrorResponse) -> None:
        session = self.session
        if session is not None and session.resolve(message):
            return
        logger.warning("ignoring a response with id %r: no request of ours is pending", message.id)

    # -- legacy session ---------------------------------------------------------------

    def open_session(self, session: Session) -> None:
        """Hold ``session`` for the rest of the connection and write what it queues."""
        if self.session is not None:
            raise InvalidRequest("This connection is already initialized")
        self.session = session
        session.principal = owner_of(self.principal)
        self._drain = asyncio.get_running_loop().create_task(self._write_pushed(session))

    async def _write_pushed(self, session: Session) -> None:
        while (message := await session.next_pushed()) is not None:
            self.write_message(message)

    # -- output -----------------------------------------------------------------------

    def write_message(self, message: dict[str, Any]) -> None:
        self._emit(codec.dumps(message) + b"\n")

    def _emit(self, line: bytes) -> None:
        batch = self._batch
        if batch is not None:
            batch.append(line)
        else:
            self._write(line)

    # -- shutdown ---------------------------------------------------------------------

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def wait_idle(self, grace: float) -> None:
        """Let running handlers finish for up to ``grace`` seconds, then cancel them."""
        tasks = set(self._tasks)
        if tasks:
            _, still_running = await asyncio.wait(tasks, timeout=grace)
            for task in still_running:
                task.cancel()
            if still_running:
                await asyncio.wait(still_running)

    async def aclose(self) -> None:
        """Cancel everything still running and wait for it; end the legacy session."""
        await self.wait_idle(0)
        if self.session is not None:
            self.session.close()
        if self._drain is not None:
            await asyncio.wait({self._drain})


def _eager_task(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]
) -> tuple[asyncio.Task[None], Callable[[], None]]:
    """A task for ``coro`` and a function that runs its first step right now.

    A request whose handler never waits (most tools/call) then answers within the read
    that brought it, saving an event-loop turn and letting a burst of answers leave in one
    write; one that waits continues as an ordinary task. The first step runs inside the
    task (``asyncio.current_task()``, ``asyncio.timeout`` work as usual). Python 3.12+
    does this natively (``eager_start``); on 3.11 the step the loop just scheduled is taken
    back from its ready queue and run at once. Loops without that queue (uvloop), and
    calls made from inside another task, start the task on the loop's next turn.
    """
    if _NATIVE_EAGER:
        task: asyncio.Task[None] = _TASK(coro, loop=loop, eager_start=True)
        return task, _nothing
    ready: Any = getattr(loop, "_ready", None)
    if not isinstance(ready, collections.deque) or asyncio.current_task(loop) is not None:
        # A task cannot start inside another task's step: from a task (a transport
        # that feeds from a coroutine) the new one starts on the next turn.
        return loop.create_task(coro), _nothing
    before = len(ready)
    task = loop.create_task(coro)
    if len(ready) != before + 1:
        return task, _nothing
    handle: asyncio.Handle = ready.pop()
    return task, handle._run


def _nothing() -> None:
    return None


_NATIVE_EAGER = sys.version_info >= (3, 12)
# Typed loosely: the eager_start argument exists only from Python 3.12.
_TASK: Any = asyncio.Task


def _response_shaped(frame: Any) -> bool:
    """A decoded object with no method but a result or an error: a (bad) response."""
    return type(frame) is dict and "method" not in frame and ("result" in frame or "error" in frame)
