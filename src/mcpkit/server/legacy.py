"""Serving legacy clients: the ``initialize`` handshake and everything a session carries
(spec ``2026-07-28/basic/versioning.mdx`` §Backward Compatibility, and the legacy
revision itself: ``2025-11-25/basic/lifecycle.mdx``, ``server/*.mdx``, ``client/*.mdx``).

A dual-era server selects its behaviour from how the client opens. An ``initialize``
without modern ``_meta`` negotiates a legacy version (the client's when we support it,
else our newest legacy one; never a modern version) and the transport binds the
:class:`~mcpkit.transports.session.Session` that results to the stdio process or the
HTTP session. Every later request of that session without modern ``_meta`` is served
here, by the same handlers modern requests use, with these differences:

* the client's capabilities, identity and log level are the session's (declared at
  ``initialize``, ``logging/setLevel``), the ``progressToken`` is the request's;
* ``ping``, ``logging/setLevel`` and ``resources/subscribe``/``unsubscribe`` exist, and
  answer exactly ``{}``; ``server/discover`` and ``subscriptions/listen`` do not;
* ``ctx.elicit``/``sample``/``list_roots`` send real ``elicitation/create``,
  ``sampling/createMessage`` and ``roots/list`` requests on the call's own stream and
  wait for the client's answer (:class:`LegacyInputs`, design §3.1);
* results are shaped for the legacy schema: no ``resultType``, ``ttlMs``,
  ``cacheScope`` or server ``_meta``; ``structuredContent`` and ``outputSchema`` only
  where they are objects (``2025-11-25/server/tools.mdx`` §Structured Content);
* list-changed notifications reach every session, ``notifications/resources/updated``
  the sessions subscribed to the URI, through the session's own stream;
* an unknown resource is -32002 (``2025-11-25/server/resources.mdx`` §Error Handling),
  where the modern revision uses -32602.

Requests that arrive after the ``initialize`` response but before
``notifications/initialized`` are served (the lifecycle only asks the *client* to wait
for the response); the server itself sends no request before ``initialized`` arrives
(``lifecycle.mdx`` §Initialization), so an input request made earlier waits for it.
Before ``initialize``, ``ping`` is answered (the one request a client may send then).
With no ``logging/setLevel`` every log message is sent, as the reference SDKs do: the
legacy revision leaves the initial level to the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit.errors import (
    ConnectionClosed,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ProtocolError,
    RequestTimeout,
    ToolError,
)
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import Notification, Request, error_response
from mcpkit.protocol.meta import LOG_LEVELS, LOG_SEVERITY, RequestMeta, progress_token
from mcpkit.server.bus import (
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
    BusSubscription,
    Event,
)
from mcpkit.server.context import Context
from mcpkit.server.mrtr import INPUT_METHODS, capability_refused
from mcpkit.server.resources import resource_not_found
from mcpkit.transports.base import Channel
from mcpkit.transports.session import MAX_SUBSCRIPTIONS, Session
from mcpkit.types.inputs import ELICIT

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.dispatch import Handler

T = TypeVar("T")

logger = logging.getLogger("mcpkit.server")

_LIST_CHANGED = frozenset({TOOLS_CHANGED, PROMPTS_CHANGED, RESOURCES_CHANGED})
_DROPPED_FIELDS = ("resultType", "ttlMs", "cacheScope")
_SEND_ALL = LOG_LEVELS[0]
_NOT_FOUND = resource_not_found("").message
RESOURCE_NOT_FOUND = -32002
# Form-mode elicitation gained its ``mode`` field in 2025-11-25 (client/elicitation.mdx).
_MODE_FIELD_SINCE = "2025-11-25"

__all__ = ["LegacyInputs", "LegacyServing", "legacy_result", "negotiate"]


def negotiate(requested: str, supported: tuple[str, ...]) -> str:
    """The version to answer an ``initialize`` with (``lifecycle.mdx`` §Version Negotiation).

    The client's own version when we support it, else our newest (``supported`` is
    newest first and holds legacy versions only, so a modern one is never chosen).
    """
    return requested if requested in supported else supported[0]


class LegacyInputs:
    """Input for a legacy session: a real server-to-client request on the call's stream.

    A client that did not declare the capability gets -32021, as on a modern request.
    The client's refusal (an error response), an answer that does not fit, a timeout
    (after which the client is sent ``notifications/cancelled``) and the end of the
    session all become a :class:`~mcpkit.errors.ToolError` in the handler: the call
    fails with a message, and a tool answers it with ``isError``. Cancelling the call
    cancels the wait, and the client is told to stop.
    """

    __slots__ = ("_channel", "_session", "_timeout")

    def __init__(self, session: Session, channel: Channel, timeout: float) -> None:
        self._session = session
        self._channel = channel
        self._timeout = timeout

    async def ask(
        self,
        method: str,
        params: dict[str, Any],
        required: dict[str, Any] | None,
        parse: Callable[[Any], T],
        key: str | None,
    ) -> T:
        if required is not None:
            raise capability_refused(required)
        session = self._session
        if method == ELICIT and session.protocol_version < _MODE_FIELD_SINCE:
            params = {k: v for k, v in params.items() if k != "mode"}
        try:
            if not session.initialized:
                async with asyncio.timeout(self._timeout):
                    await session.wait_initialized()
            raw = await session.request(method, params, self._channel.send, timeout=self._timeout)
        except TimeoutError:
            raise ToolError(
                f"The client did not send notifications/initialized, so {method} was not sent"
            ) from None
        except ProtocolError as exc:
            raise ToolError(f"The client refused {method}: {exc.message}") from exc
        except (RequestTimeout, ConnectionClosed) as exc:
            raise ToolError(f"No answer to {method}: {exc}") from exc
        try:
            return parse(raw)
        except ValueError as exc:
            raise ToolError(f"The client's answer to {method} is not valid: {exc}") from None


def legacy_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """Shape a handler's result for the legacy schema (in place; returns it)."""
    for field in _DROPPED_FIELDS:
        result.pop(field, None)
    if method == "tools/call":
        structured = result.get("structuredContent")
        if structured is not None and type(structured) is not dict:
            del result["structuredContent"]
    elif method == "tools/list":
        result["tools"] = [_legacy_tool(tool) for tool in result["tools"]]
    return result


def _legacy_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool without an ``outputSchema`` the legacy schema cannot carry (not an object)."""
    output = tool.get("outputSchema")
    if output is None or output.get("type") == "object":
        return tool
    return {k: v for k, v in tool.items() if k != "outputSchema"}


class LegacyServing:
    """The legacy half of a server's dispatcher: handshake, session methods, shaping."""

    def __init__(self, server: Server, handlers: Callable[[], dict[str, Handler]]) -> None:
        self.server = server
        self._handlers = handlers
        self._feeds: set[asyncio.Task[None]] = set()
        # Methods answered from the session itself, all with ``{}`` (None: nothing to do;
        # ``ping``, ``basic/utilities/ping.mdx``).
        self._session_methods: dict[str, Callable[[Session, dict[str, Any]], None] | None] = {
            "initialize": _already_initialized,
            "ping": None,
            "logging/setLevel": _set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
        }

    # -- requests -----------------------------------------------------------------------

    async def open(
        self, request: Request, params: dict[str, Any], channel: Channel
    ) -> dict[str, Any]:
        """Answer a request that arrives with neither a session nor modern ``_meta``:
        ``initialize`` opens a session, ``ping`` gets ``{}``."""
        try:
            if request.method == "ping":
                return jsonrpc.result_response(request.id, {})
            return jsonrpc.result_response(request.id, self._initialize(params, channel))
        except ProtocolError as exc:
            return error_response(request.id, exc)

    def _initialize(self, params: dict[str, Any], channel: Channel) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if type(requested) is not str:
            raise InvalidParams("initialize needs a string protocolVersion")
        capabilities = params.get("capabilities")
        if type(capabilities) is not dict:
            raise InvalidParams("initialize needs a capabilities object")
        client_info = params.get("clientInfo")
        if client_info is not None and type(client_info) is not dict:
            raise InvalidParams("initialize clientInfo must be an object")
        server = self.server
        version = negotiate(requested, server.legacy_versions)
        session = Session(version, capabilities, client_info)
        channel.open_session(session)
        self._feed(session)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": server.capabilities(),
            "serverInfo": server.server_info(),
        }
        if server.instructions:
            result["instructions"] = server.instructions
        return result

    async def handle(
        self, request: Request, params: dict[str, Any], channel: Channel, session: Session
    ) -> dict[str, Any]:
        """The response to one request of a legacy session."""
        method = request.method
        try:
            if method in self._session_methods:
                update = self._session_methods[method]
                if update is not None:
                    update(session, params)
                return jsonrpc.result_response(request.id, {})
            handler = self._handlers().get(method)
            if handler is None:
                raise MethodNotFound(f"Method not found: {method}")
            inputs = (
                LegacyInputs(session, channel, self.server.input_timeout)
                if method in INPUT_METHODS
                else None
            )
            meta = _request_meta(session, params)
            context = Context(self.server, request.id, method, params, meta, channel, inputs)
            try:
                result = await handler(context, params)
            finally:
                context.finish()
        except ProtocolError as exc:
            return error_response(request.id, _legacy_error(method, exc))
        except Exception:
            logger.exception("internal error handling %s", method)
            return error_response(request.id, InternalError())
        return jsonrpc.result_response(request.id, legacy_result(method, result))

    def _subscribe(self, session: Session, params: dict[str, Any]) -> None:
        """``resources/subscribe`` (``2025-11-25/server/resources.mdx`` §Subscriptions)."""
        uri = self._subscription_uri("resources/subscribe", params)
        if uri not in session.subscriptions and len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise InvalidParams(f"at most {MAX_SUBSCRIPTIONS} resource subscriptions per session")
        session.subscriptions.add(uri)

    def _unsubscribe(self, session: Session, params: dict[str, Any]) -> None:
        session.subscriptions.discard(self._subscription_uri("resources/unsubscribe", params))

    def _subscription_uri(self, method: str, params: dict[str, Any]) -> str:
        if "resources" not in self.server.capabilities():
            raise MethodNotFound(f"Method not found: {method} (this server has no resources)")
        uri = params.get("uri")
        if type(uri) is not str or not uri:
            raise InvalidParams(f"{method} needs a string uri")
        return uri

    # -- notifications ------------------------------------------------------------------

    def notify(self, notification: Notification, session: Session) -> None:
        """Client notifications of a session (cancellation is the transport's)."""
        if notification.method == "notifications/initialized":
            session.mark_initialized()
        else:
            logger.debug("notification %s", notification.method)

    # -- what a session hears without asking --------------------------------------------

    def _feed(self, session: Session) -> None:
        """Forward list changes, and updates of the resources it subscribed to, to
        ``session`` until it ends (``server/tools.mdx`` §List Changed Notification)."""

        def accepts(event: Event) -> bool:
            if event.method == RESOURCE_UPDATED:
                return event.uri in session.subscriptions
            return event.method in _LIST_CHANGED

        subscription = self.server.bus.subscribe(accepts)
        session.on_close(subscription.close)
        task = asyncio.get_running_loop().create_task(_forward(subscription, session))
        self._feeds.add(task)
        task.add_done_callback(self._feeds.discard)

    @property
    def feeds(self) -> int:
        """How many sessions are being fed change notifications."""
        return len(self._feeds)


async def _forward(subscription: BusSubscription, session: Session) -> None:
    async for event in subscription:
        params = None if event.uri is None else {"uri": event.uri}
        if not session.push(jsonrpc.notification(event.method, params)):
            logger.debug("session backlog full: dropping %s", event.method)


def _request_meta(session: Session, params: dict[str, Any]) -> RequestMeta:
    """The session's identity and settings, with this request's ``progressToken``."""
    raw = params.get("_meta")
    token = None
    if raw is not None:
        if type(raw) is not dict:
            raise InvalidParams("_meta must be an object")
        token = progress_token(raw)
    return RequestMeta(
        session.protocol_version,
        session.client_capabilities,
        session.client_info,
        session.log_level or _SEND_ALL,
        token,
        raw,
    )


def _legacy_error(method: str, exc: ProtocolError) -> ProtocolError | dict[str, Any]:
    """The error as the legacy revision spells it: -32002 for an unknown resource."""
    if (
        method == "resources/read"
        and isinstance(exc, InvalidParams)
        and exc.message == _NOT_FOUND
        and isinstance(exc.data, dict)
        and "uri" in exc.data
    ):
        return {"code": RESOURCE_NOT_FOUND, "message": exc.message, "data": exc.data}
    return exc


def _already_initialized(session: Session, params: dict[str, Any]) -> None:
    raise InvalidRequest("This session is already initialized")


def _set_level(session: Session, params: dict[str, Any]) -> None:
    """``logging/setLevel`` (``server/utilities/logging.mdx``): -32602 for a bad level."""
    level = params.get("level")
    if type(level) is not str or level not in LOG_SEVERITY:
        raise InvalidParams(f"level must be one of {', '.join(LOG_LEVELS)}")
    session.log_level = level
