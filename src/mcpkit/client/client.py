"""The :class:`Client`: talk to any MCP server over a client transport.

Every request carries the modern ``_meta`` (protocol version, client capabilities, client
info, and the log level when one is set). Responses are matched to requests by id;
an error response raises the matching :class:`~mcpkit.errors.ProtocolError` (with
``remote=True``), while a timeout or a dead connection raises a local
:class:`~mcpkit.errors.RequestTimeout` or :class:`~mcpkit.errors.ConnectionClosed`.
A request that times out or is cancelled is cancelled on the server too.

>>> async with Client.stdio([sys.executable, "examples/notes_server.py"]) as client:
...     tools = await client.list_tools()
...     result = await client.call_tool("read_note", {"title": "standup"})
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

from mcpkit._version import __version__
from mcpkit.errors import ConnectionClosed, ProtocolError, RequestId, RequestTimeout
from mcpkit.protocol import jsonrpc, versions
from mcpkit.protocol.jsonrpc import ErrorResponse, Notification, Request, Response
from mcpkit.protocol.meta import PROGRESS_TOKEN, build_request_meta

logger = logging.getLogger("mcpkit.client")

DEFAULT_TIMEOUT = 60.0

__all__ = ["CallToolResult", "Client", "ClientTransport"]


class ClientTransport(Protocol):
    """What the client needs from a transport."""

    async def start(
        self, receiver: Callable[[Any], None], on_close: Callable[[], None]
    ) -> None: ...

    async def send(self, message: dict[str, Any]) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class CallToolResult:
    """A ``tools/call`` result, read."""

    content: list[dict[str, Any]]
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (what a text-only host would show)."""
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text")

    @classmethod
    def from_wire(cls, result: dict[str, Any]) -> CallToolResult:
        content = result.get("content")
        meta = result.get("_meta")
        return cls(
            content=[c for c in content if isinstance(c, dict)]
            if isinstance(content, list)
            else [],
            structured=result.get("structuredContent"),
            is_error=result.get("isError") is True,
            meta=meta if isinstance(meta, dict) else {},
            raw=result,
        )


ProgressCallback = Callable[[float, float | None, str | None], Any]
LogCallback = Callable[[dict[str, Any]], Any]


class Client:
    """A connection to one MCP server."""

    def __init__(
        self,
        transport: ClientTransport,
        *,
        name: str = "mcpkit",
        version: str = __version__,
        capabilities: dict[str, Any] | None = None,
        protocol_version: str = versions.LATEST,
        timeout: float = DEFAULT_TIMEOUT,
        log_level: str | None = None,
        on_log: LogCallback | None = None,
    ) -> None:
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.capabilities: dict[str, Any] = capabilities if capabilities is not None else {}
        self.protocol_version = protocol_version
        self.timeout = timeout
        self.log_level = log_level
        self.on_log = on_log
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, asyncio.Future[Response | ErrorResponse]] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._connected = False
        self._closed = False

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], None] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server started as a child process."""
        from mcpkit.transports.stdio_client import StdioClientTransport

        return cls(StdioClientTransport(command, env=env, cwd=cwd, stderr=stderr), **options)

    # -- lifecycle --------------------------------------------------------------------

    async def connect(self) -> None:
        if self._connected:
            return
        await self.transport.start(self._receive, self._connection_lost)
        self._connected = True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.transport.close()
        self._fail_pending(ConnectionClosed("the client was closed"))

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- requests ---------------------------------------------------------------------

    def request_meta(self) -> dict[str, Any]:
        return build_request_meta(
            self.protocol_version, self.capabilities, self.client_info, self.log_level
        )

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """Send a request with full ``_meta`` and return its result (or raise its error)."""
        if not self._connected:
            await self.connect()
        request_id = next(self._ids)
        body = dict(params) if params else {}
        meta = self.request_meta()
        extra = body.get("_meta")
        if isinstance(extra, dict):
            meta.update(extra)
        if on_progress is not None:
            meta[PROGRESS_TOKEN] = request_id
            self._progress[request_id] = on_progress
        body["_meta"] = meta
        future: asyncio.Future[Response | ErrorResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[request_id] = future
        try:
            await self.transport.send(jsonrpc.request(request_id, method, body))
            reply = await asyncio.wait_for(future, timeout if timeout is not None else self.timeout)
        except TimeoutError:
            await self._cancel(request_id, "timed out")
            raise RequestTimeout(f"{method} got no answer in time") from None
        except asyncio.CancelledError:
            await self._cancel(request_id, "cancelled by the caller")
            raise
        finally:
            self._pending.pop(request_id, None)
            self._progress.pop(request_id, None)
        if isinstance(reply, ErrorResponse):
            raise reply.exception
        return reply.result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.transport.send(jsonrpc.notification(method, params))

    async def _cancel(self, request_id: RequestId, reason: str) -> None:
        if self._closed:
            return
        try:
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )
        except ConnectionClosed:
            return

    # -- the methods ------------------------------------------------------------------

    async def discover(self) -> dict[str, Any]:
        """``server/discover``: versions, capabilities, identity."""
        return await self.request("server/discover")

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server offers (following pagination cursors)."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            page = result.get("tools")
            if isinstance(page, list):
                tools.extend(t for t in page if isinstance(t, dict))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool; a tool that failed gives ``is_error=True``, not an exception."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        return CallToolResult.from_wire(result)

    # -- incoming ---------------------------------------------------------------------

    def _receive(self, frame: Any) -> None:
        if isinstance(frame, ProtocolError):
            logger.warning("unreadable message from the server: %s", frame.message)
            return
        try:
            message = jsonrpc.parse_message(frame)
        except ProtocolError as exc:
            logger.warning("invalid message from the server: %s", exc.message)
            return
        if isinstance(message, Response | ErrorResponse):
            future = self._pending.get(message.id) if message.id is not None else None
            if future is not None and not future.done():
                future.set_result(message)
            elif message.id is None and isinstance(message, ErrorResponse):
                logger.warning("server error without an id: %s", message.error)
            return
        if isinstance(message, Notification):
            self._notification(message)
        elif isinstance(message, Request):
            logger.warning(
                "ignoring server request %s: not supported on this connection", message.method
            )

    def _notification(self, message: Notification) -> None:
        params = message.params or {}
        if message.method == "notifications/progress":
            token = params.get("progressToken")
            callback = self._progress.get(token) if isinstance(token, str | int) else None
            if callback is not None:
                callback(params.get("progress", 0), params.get("total"), params.get("message"))
        elif message.method == "notifications/message" and self.on_log is not None:
            self.on_log(params)

    def _connection_lost(self) -> None:
        self._fail_pending(ConnectionClosed("the server closed the connection"))

    def _fail_pending(self, error: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
