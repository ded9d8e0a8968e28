"""Answering requests: protocol -> dispatch -> handler, and back. No transport in sight.

For a modern request (spec ``basic/index.mdx``): read and check ``_meta`` (-32602 for a
missing field, -32022 for an unsupported version), find the handler (-32601 for methods
that do not exist in this era or belong to a capability the server lacks), build the
:class:`~mcpkit.server.context.Context`, run the handler, and stamp the result with
``resultType``, ``_meta.serverInfo`` and, for cacheable methods, the cache hints.
Errors raised as :class:`~mcpkit.errors.ProtocolError` become error responses (also
from inside a tool: ``ctx.require(...)`` in a tool is -32021, not a tool error); any other
exception becomes -32603 and is logged, never sent as a traceback. A tool's own
exceptions are tool errors (``isError: true``), per ``server/tools.mdx`` §Error Handling.

``tools/call``, ``prompts/get`` and ``resources/read`` may ask the client for input
(``basic/patterns/mrtr.mdx``): their ``inputResponses`` and ``requestState`` are read
before the handler runs (a malformed one is -32602), and a handler stopped for missing
input is answered ``input_required`` (see :mod:`mcpkit.server.mrtr`). No other method
ever answers ``input_required``.

A tool that declares an ``outputSchema`` has its ``structuredContent`` validated before
the result leaves: a mismatch is a bug in the tool, so the call is answered -32603 and
the schema problems are logged at ERROR level for the author (the client never receives
a result that breaks the advertised schema).

The era is chosen per request (``basic/versioning.mdx`` §Backward Compatibility): a
request that carries modern ``_meta`` is served as above; on a dual-era server an
``initialize`` without it opens a legacy session, and every later request of that session
without modern ``_meta`` is served by :mod:`mcpkit.server.legacy` with the same handlers.
A modern-only server answers ``initialize`` with -32022 naming the versions it speaks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import (
    InternalError,
    InvalidParams,
    MethodNotFound,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol.jsonrpc import JSONRPC_VERSION, Notification, Request, error_response
from mcpkit.protocol.meta import has_modern_meta, read_request_meta
from mcpkit.server.caching import CacheHint
from mcpkit.server.completion import CompletionRef, choices_completion, completion_result
from mcpkit.server.context import Context
from mcpkit.server.legacy import LegacyServing
from mcpkit.server.mrtr import INPUT_METHODS, ModernInputs
from mcpkit.server.pagination import paginate
from mcpkit.server.registry import call_result, error_result, exception_result
from mcpkit.server.resources import resource_not_found
from mcpkit.server.subscriptions import listen
from mcpkit.transports.base import Channel
from mcpkit.types.methods import CLIENT_REQUESTS

if TYPE_CHECKING:
    from mcpkit.server.app import Server

logger = logging.getLogger("mcpkit.server")

Handler = Callable[[Context, dict[str, Any]], Awaitable[dict[str, Any]]]

_RETRY_HINT = CacheHint(0, "private")
_NOT_INTERRUPTIBLE = (asyncio.CancelledError, KeyboardInterrupt, SystemExit)
# Requests a legacy client may send before it has a session (lifecycle.mdx).
_SESSION_OPENERS = frozenset({"initialize", "ping"})

__all__ = ["Dispatcher"]


class Dispatcher:
    """The method table of one server, and the request pipeline around it."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._all_handlers: dict[str, Handler] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
            "subscriptions/listen": self._listen,
        }
        self._handlers: dict[str, Handler] = {}
        self._legacy_handlers: dict[str, Handler] = {}
        self._meta: dict[str, Any] = {}
        self._hints: dict[str, CacheHint] = {}
        self.legacy = (
            LegacyServing(server, lambda: self._legacy_handlers) if server.legacy_versions else None
        )
        self.refresh()

    def refresh(self) -> None:
        """Recompute which methods are live (capabilities changed, identity changed)."""
        capabilities = self.server.capabilities()
        live: dict[str, Handler] = {}
        legacy: dict[str, Handler] = {}
        for method, handler in self._all_handlers.items():
            spec = CLIENT_REQUESTS[method]
            if method == "subscriptions/listen":
                if not any(kind in capabilities for kind in ("tools", "prompts", "resources")):
                    continue
            elif spec.capability is not None and spec.capability not in capabilities:
                continue
            if "modern" in spec.eras:
                live[method] = handler
            if "legacy" in spec.eras:
                legacy[method] = handler
        self._handlers = live
        self._legacy_handlers = legacy
        self._meta = self.server.result_meta()
        self._hints = {
            method: self.server.cache.hint(method)
            for method, spec in CLIENT_REQUESTS.items()
            if spec.cacheable
        }

    async def handle_request(self, request: Request, channel: Channel) -> dict[str, Any] | None:
        """The response message (result or error) for one request."""
        method = request.method
        params = request.params if request.params is not None else {}
        session = channel.session
        if session is not None and not has_modern_meta(params):
            if self.legacy is not None:
                return await self.legacy.handle(request, params, channel, session)
        elif method in _SESSION_OPENERS and not has_modern_meta(params):
            if self.legacy is not None:
                return await self.legacy.open(request, params, channel)
            if method == "initialize":
                return error_response(request.id, self._initialize_refused(params))
        try:
            meta = read_request_meta(params, self.server.supported_versions)
            handler = self._handlers.get(method)
            if handler is None:
                raise MethodNotFound(f"Method not found: {method}")
            inputs = None
            if method in INPUT_METHODS and ("inputResponses" in params or "requestState" in params):
                inputs = ModernInputs.from_request(
                    self.server.state_sealer, method, params, channel.principal
                )
            context = Context(self.server, request.id, method, params, meta, channel, inputs)
            try:
                result = await handler(context, params)
            except BaseException as exc:
                if context.interrupted_inputs is None or isinstance(exc, _NOT_INTERRUPTIBLE):
                    raise
                result = {}
            finally:
                context.finish()
            interrupted = context.interrupted_inputs
            if interrupted is not None:
                result = interrupted.outcome(
                    self.server.state_sealer, method, params, channel.principal
                )
        except ProtocolError as exc:
            return error_response(request.id, exc)
        except Exception:
            logger.exception("internal error handling %s", method)
            return error_response(request.id, InternalError())
        self._stamp(method, result)
        return {"jsonrpc": JSONRPC_VERSION, "id": request.id, "result": result}

    async def handle_notification(self, notification: Notification, channel: Channel) -> None:
        """Legacy session notifications (``initialized``) update the session; others need
        no action here (cancellation is the transport's)."""
        session = channel.session
        if session is not None and self.legacy is not None:
            self.legacy.notify(notification, session)
        else:
            logger.debug("notification %s", notification.method)

    def _stamp(self, method: str, result: dict[str, Any]) -> None:
        if "resultType" not in result:
            result["resultType"] = "complete"
        existing = result.get("_meta")
        result["_meta"] = self._meta if existing is None else {**existing, **self._meta}
        hint = self._hints.get(method)
        if hint is not None and result["resultType"] == "complete":
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

    # -- discovery --------------------------------------------------------------------

    async def _discover(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        server = self.server
        result: dict[str, Any] = {
            "supportedVersions": list(server.supported_versions),
            "capabilities": server.capabilities(),
        }
        if server.instructions:
            result["instructions"] = server.instructions
        return result

    # -- tools ------------------------------------------------------------------------

    async def _tools_list(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return self._page("tools", self.server.tools.wires(), params, "tools/list")

    async def _tools_call(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        tool = self.server.tools.find(params.get("name"), "tools/call")
        name = tool.name
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("tools/call arguments must be an object")
        if tool.required_capabilities:
            context.require(tool.required_capabilities)
        problems = tool.problems(arguments)
        if problems:
            listing = "\n".join(f"- {p}" for p in problems)
            return error_result(f"Invalid arguments for tool '{name}':\n{listing}")
        try:
            value = await tool.call(tool.bind(arguments), context)
        except ProtocolError:
            raise
        except Exception as exc:
            return exception_result(exc, name)
        result = call_result(value)
        mismatch = tool.output_problems(result)
        if mismatch:
            logger.error(
                "tool %r returned a result that does not match its outputSchema: %s",
                name,
                "; ".join(mismatch),
            )
            raise InternalError(f"Tool '{name}' produced a result that breaks its outputSchema")
        return result

    # -- resources --------------------------------------------------------------------

    async def _resources_list(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return self._page("resources", self.server.resources.wires(), params, "resources/list")

    async def _templates_list(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return self._page(
            "resourceTemplates",
            self.server.resource_templates.wires(),
            params,
            "resources/templates/list",
        )

    async def _resources_read(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParams("resources/read needs a string uri")
        found = self.server.find_resource(uri)
        if found is None:
            raise resource_not_found(uri)
        target, arguments = found
        if target.required_capabilities:
            context.require(target.required_capabilities)
        contents = await target.read(uri, arguments, context)
        if not contents:
            raise resource_not_found(uri)
        result: dict[str, Any] = {"contents": contents}
        hint = target.cache
        if "inputResponses" in params or "requestState" in params:
            hint = _RETRY_HINT
        if hint is not None:
            result["ttlMs"] = hint.ttl_ms
            result["cacheScope"] = hint.scope
        return result

    # -- prompts ----------------------------------------------------------------------

    async def _prompts_list(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return self._page("prompts", self.server.prompts.wires(), params, "prompts/list")

    async def _prompts_get(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        prompt = self.server.prompts.find(params.get("name"), "prompts/get")
        if prompt.required_capabilities:
            context.require(prompt.required_capabilities)
        kwargs = prompt.bind(params.get("arguments"))
        return await prompt.render(kwargs, context)

    # -- completion -------------------------------------------------------------------

    async def _complete(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        ref = CompletionRef.from_params(params)
        server = self.server
        choices: tuple[str, ...] | None = None
        if ref.kind == "ref/prompt":
            prompt = server.prompts.find(ref.target, "completion/complete")
            argument = prompt.arguments.get(ref.argument)
            if argument is None:
                raise InvalidParams(f"Prompt '{ref.target}' has no argument '{ref.argument}'")
            choices = argument.choices
        else:
            template = server.resource_templates.find(ref.target, "completion/complete")
            if ref.argument not in template.template.variables:
                raise InvalidParams(
                    f"Resource template '{ref.target}' has no variable '{ref.argument}'"
                )
        completer = server.completers.get((ref.kind, ref.target, ref.argument))
        if completer is not None:
            found = await completer.complete(ref.value, ref.context, context)
        elif choices is not None:
            found = choices_completion(choices, ref.value)
        else:
            found = []
        return completion_result(found)

    # -- subscriptions ----------------------------------------------------------------

    async def _listen(self, context: Context, params: dict[str, Any]) -> dict[str, Any]:
        return await listen(self.server, context, params)

    # -- helpers ----------------------------------------------------------------------

    def _page(
        self, field: str, items: list[dict[str, Any]], params: dict[str, Any], method: str
    ) -> dict[str, Any]:
        page, next_cursor = paginate(items, params, method, self.server.page_size)
        result: dict[str, Any] = {field: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result
