"""The one :class:`Context` every handler may receive.

A tool, resource or prompt function gets it by declaring a parameter annotated with
``Context``. It tells the handler who is asking (client info, capabilities, principal,
protocol version) and lets it talk back within the request: progress
(``basic/patterns/progress.mdx``) and log messages (``server/utilities/logging.mdx``).
Cancellation reaches the handler as ordinary task cancellation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.errors import RequestId
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.meta import LOG_SEVERITY, RequestMeta
from mcpkit.transports.base import Channel

if TYPE_CHECKING:
    from mcpkit.server.app import Server

__all__ = ["Context"]


class Context:
    """Everything a handler knows about the request it serves."""

    __slots__ = (
        "_done",
        "_last_progress",
        "channel",
        "meta",
        "method",
        "params",
        "request_id",
        "server",
    )

    def __init__(
        self,
        server: Server,
        request_id: RequestId,
        method: str,
        params: dict[str, Any],
        meta: RequestMeta,
        channel: Channel,
    ) -> None:
        self.server = server
        self.request_id = request_id
        self.method = method
        self.params = params
        self.meta = meta
        self.channel = channel
        self._last_progress: float | None = None
        self._done = False

    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's self-reported name and version (display only, never trust it)."""
        return self.meta.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def progress_token(self) -> str | int | None:
        return self.meta.progress_token

    @property
    def log_level(self) -> str | None:
        return self.meta.log_level

    @property
    def principal(self) -> Any:
        """The authenticated caller the transport verified, or None."""
        return self.channel.principal

    def finish(self) -> None:
        """Mark the request answered: later progress or log calls send nothing."""
        self._done = True

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the request asked for progress.

        Without a ``progressToken`` in the request this does nothing. ``progress`` must
        increase with every call (``progress.mdx``).
        """
        token = self.meta.progress_token
        if token is None or self._done:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(
                "progress must increase with each notification "
                f"({progress} after {self._last_progress})"
            )
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.channel.send(jsonrpc.notification("notifications/progress", params))

    def wants_log(self, level: str) -> bool:
        """True when a message at ``level`` would be sent for this request."""
        threshold = self.meta.log_level
        if threshold is None or self._done:
            return False
        return LOG_SEVERITY[level] >= LOG_SEVERITY[threshold]

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the request's log level lets it through.

        Nothing is sent when the request carries no ``io.modelcontextprotocol/logLevel``.
        """
        if level not in LOG_SEVERITY:
            raise ValueError(f"unknown log level {level!r}")
        if not self.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.channel.send(jsonrpc.notification("notifications/message", params))

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)
