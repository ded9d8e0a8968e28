"""Answering requests: protocol -> dispatch -> handler, and back. No transport in sight.

For a modern request (spec ``basic/index.mdx``): read and check ``_meta`` (-32602 for a
missing field, -32022 for an unsupported version), find the handler (-32601 for methods
that do not exist in this era or belong to a capability the server lacks), build the
:class:`~mcpkit.server.context.Context`, run the handler, and stamp the result with
``resultType``, ``_meta.serverInfo`` and, for cacheable methods, the cache hints.
Errors raised as :class:`~mcpkit.errors.ProtocolError` become error responses; any other
exception becomes -32603 and is logged, never sent as a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import (
    InternalError,
    InvalidParams,
    MethodNotFound,
    MissingRequiredClientCapability,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol.jsonrpc import JSONRPC_VERSION, Notification, Request, error_response
from mcpkit.protocol.meta import SERVER_INFO, has_modern_meta, read_request_meta
from mcpkit.server.context import Context
from mcpkit.server.registry import call_result, error_result, exception_result
from mcpkit.transports.base import Channel
from mcpkit.types.methods import CLIENT_REQUESTS

if TYPE_CHECKING:
    from mcpkit.server.app import Server

logger = logging.getLogger("mcpkit.server")

Handler = Callable[[Context, dict[str, Any]], Awaitable[dict[str, Any]]]

__all__ = ["Dispatcher"]


class Dispatcher:
    """The method table of one server, and the request pipeline around it."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._all_handlers: dict[str, Handler] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        self._handlers: dict[str, Handler] = {}
        self._meta: dict[str, Any] = {}
        self.refresh()

    def refresh(self) -> None:
        """Recompute which methods are live (capabilities changed, identity changed)."""
        capabilities = self.server.capabilities()
        live: dict[str, Handler] = {}
        for method, handler in self._all_handlers.items():
            spec = CLIENT_REQUESTS[method]
            if "modern" in spec.eras and (
                spec.capability is None or spec.capability in capabilities
            ):
                live[method] = handler
        self._handlers = live
        self._meta = {SERVER_INFO: self.server.server_info()}

    async def handle_request(self, request: Request, channel: Channel) -> dict[str, Any] | None:
        """The response message (result or error) for one request."""
        method = request.method
        params = request.params if request.params is not None else {}
        try:
            if method == "initialize" and not has_modern_meta(params):
                raise self._initialize_refused(params)
            meta = read_request_meta(params, self.server.supported_versions)
            handler = self._handlers.get(method)
            if handler is None:
                raise MethodNotFound(f"Method not found: {method}")
            context = Context(self.server, request.id, method, params, meta, channel)
            try:
                result = await handler(context, params)
            finally:
                context.finish()
        except ProtocolError as exc:
            return error_response(request.id, exc)
        except Exception:
            logger.exception("internal error handling %s", method)
            return error_response(request.id, InternalError())
        self._stamp(method, result)
        return {"jsonrpc": JSONRPC_VERSION, "id": request.id, "result": result}

    async def handle_notification(self, notification: Notification, channel: Channel) -> None:
        """Client notifications need no action here (cancellation is the transport's)."""
        logger.debug("notification %s", notification.method)

    def _stamp(self, method: str, result: dict[str, Any]) -> None:
        if "resultType" not in result:
            result["resultType"] = "complete"
        existing = result.get("_meta")
        result["_meta"] = self._meta if existing is None else {**existing, **self._meta}
        if CLIENT_REQUESTS[method].cacheable and result["resultType"] == "complete":
            hint = self.server.cache.hint(method)
            result.setdefault("ttlMs", hint.ttl_ms)
            result.setdefault("cacheScope", hint.scope)

    def _initialize_refused(self, params: dict[str, Any]) -> ProtocolError:
        """A legacy ``initialize`` on a modern-only server: name the versions we speak."""
        supported = list(self.server.supported_versions)
        requested = params.get("protocolVersion")
        return UnsupportedProtocolVersion(
            supported,
            requested,
            f"Unsupported protocol version: this server speaks only {', '.join(supported)}, "
            "which has no initialize handshake; send requests with per-request _meta instead",
        )

    # -- methods ----------------------------------------------------------------------

    async def _discover(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        server = self.server
        result: dict[str, Any] = {
            "supportedVersions": list(server.supported_versions),
            "capabilities": server.capabilities(),
        }
        if server.instructions:
            result["instructions"] = server.instructions
        return result

    async def _tools_list(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [tool.wire for tool in self.server.tools]}

    async def _tools_call(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if type(name) is not str:
            raise InvalidParams("tools/call needs a string name")
        tool = self.server.tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("tools/call arguments must be an object")
        if tool.required_capabilities:
            _require(tool.required_capabilities, context.client_capabilities)
        problems = tool.problems(arguments)
        if problems:
            listing = "\n".join(f"- {p}" for p in problems)
            return error_result(f"Invalid arguments for tool '{name}':\n{listing}")
        try:
            value = await tool.invoke(arguments, context)
        except Exception as exc:
            return exception_result(exc, name)
        return call_result(value)


def _require(required: dict[str, Any], declared: dict[str, Any]) -> None:
    missing = {key: value for key, value in required.items() if key not in declared}
    if missing:
        raise MissingRequiredClientCapability(
            missing, f"This request requires client capabilities: {', '.join(missing)}"
        )
