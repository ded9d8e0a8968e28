"""Streamable HTTP, server end (spec ``basic/transports/streamable-http.mdx``).

:class:`StreamableHTTPApp` is a plain ASGI application serving one MCP endpoint. It
mounts inside Starlette or FastAPI (it needs no lifespan to work; with one it ends
``subscriptions/listen`` streams gracefully on shutdown) and :func:`run_http` serves it
with uvicorn.

Every POST is checked in this order, each failure answered with its HTTP status and a
JSON-RPC error that echoes the request id:

1. Host and Origin against allow-lists (DNS rebinding, ``security.md`` §1.1): a Host
   outside the list -> 421, an Origin outside it -> 403.
2. Method (POST only: GET and DELETE -> 405), ``Content-Type`` (415), ``Accept`` (406),
   body size (413, default 4 MiB) and a body-read deadline (408).
3. The JSON-RPC envelope (-32700 / -32600, 400) from the protocol core.
4. Required ``_meta`` fields (-32602, 400).
5. ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` (base64 sentinel decoded) and
   ``Mcp-Param-*`` against the body (-32020, 400).
6. The protocol version (-32022, 400); then the method (-32601, 404) and required client
   capabilities (-32021, 400) in the dispatcher.

A request is answered with ``application/json``, or with ``text/event-stream`` as soon as
its handler emits a request-scoped notification (progress, log): the notifications come
first and the response is the last event. An accepted notification gets 202 and no body.
If the client disconnects, the handler is cancelled and nothing more is sent.

Legacy sessions share the endpoint when the server is dual-era (spec
``2025-11-25/basic/transports.mdx`` §Streamable HTTP, §Session Management). Traffic is
told apart as ``conformance.md`` §6.1 describes: a request with an ``Mcp-Session-Id``
belongs to that session; an ``initialize`` without modern ``_meta`` opens one (the id is
minted, unguessable and of visible ASCII, and returned in ``Mcp-Session-Id``); any other
request without modern ``_meta`` whose ``MCP-Protocol-Version`` is absent or legacy is a
legacy request without its session id (400); everything else is modern and validated as
above. Within a session:

* an unknown or expired id, or one created by another authenticated caller, gets 404
  (a request with modern ``_meta`` is modern whatever session id it carries);
* ``MCP-Protocol-Version``, when sent, must be the negotiated version (400);
* JSON-RPC errors travel with status 200 (a 404 would tell the client its session ended);
* a POST may carry the client's response to a server-to-client request (202 once
  handed over) and ``notifications/cancelled`` cancels the named call;
* GET opens the session's standalone SSE stream (one at a time, 409 for a second;
  keep-alive comments while idle), DELETE ends the session (200);
* GET and DELETE without a session id remain 405;
* a client that disconnects from a POST still cancels its call: the endpoint keeps no
  event log to resume a stream from (``§Resumability and Redelivery`` is optional), so
  an answer could never be delivered.

Sessions live in a :class:`~mcpkit.transports.session.SessionStore`, bounded in number
and idle time (:class:`~mcpkit.transports.session.MemorySessionStore` by default). The
deprecated HTTP+SSE transport of 2024-11-05 can be mounted beside the endpoint with
``legacy_sse=True`` (see :mod:`mcpkit.transports.sse_server`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import ipaddress
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.errors import (
    HTTP_STATUS_BY_CODE,
    HeaderMismatch,
    InvalidRequest,
    ProtocolError,
    RequestId,
)
from mcpkit.protocol import codec, jsonrpc
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.protocol.jsonrpc import ErrorResponse, Notification, Request, Response
from mcpkit.protocol.meta import check_version, has_modern_meta, read_request_meta
from mcpkit.protocol.versions import LEGACY_VERSIONS
from mcpkit.transports.base import ServerApp
from mcpkit.transports.session import (
    MemorySessionStore,
    Session,
    SessionStore,
    cancel_request,
    new_session_id,
    owner_of,
)
from mcpkit.transports.sse import KEEPALIVE, event
from mcpkit.types.methods import CLIENT_REQUESTS

if TYPE_CHECKING:
    from mcpkit.transports.sse_server import SseServerApp

logger = logging.getLogger("mcpkit.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_MAX_BODY = DEFAULT_MAX_LINE
DEFAULT_BODY_TIMEOUT = 10.0
DEFAULT_KEEPALIVE = 15.0
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY",
    "HostPolicy",
    "ParamHeaders",
    "ResourceGuard",
    "StreamableHTTPApp",
    "create_app",
    "decode_header_value",
    "run_http",
    "uvicorn_server",
]

_JSON_HEADERS = [(b"content-type", b"application/json")]
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


class ParamHeaders(Protocol):
    """Optional server hook: the ``Mcp-Param-*`` headers a tools/call must carry.

    Returns header name suffix -> the body value it mirrors (a str, int or bool), for
    every ``x-mcp-header`` parameter present and non-null in ``arguments``, plus the set
    of all header names the tool declares.
    """

    def param_headers(
        self, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[dict[str, Any], frozenset[str]]: ...


class ResourceGuard(Protocol):
    """The OAuth resource-server side the endpoint consults (``mcpkit.auth.ProtectedResource``).

    Spec ``basic/authorization/index.mdx``: the Protected Resource Metadata documents
    are served, every request must carry a valid bearer token (401 with
    ``WWW-Authenticate`` otherwise), and an operation needing scopes the token lacks
    gets 403 ``insufficient_scope``. The verified principal reaches handlers as
    ``ctx.principal`` and is bound into sealed ``requestState``.
    """

    def metadata_response(self, method: str, path: str) -> Any: ...

    async def authenticate(self, headers: Iterable[tuple[bytes, bytes]]) -> Any: ...

    def authorize(self, principal: Any, method: str, params: Mapping[str, Any] | None) -> Any: ...


# -- Host and Origin ------------------------------------------------------------------


class HostPolicy:
    """Which ``Host`` and ``Origin`` values the endpoint accepts (DNS-rebinding defence).

    By default only loopback names are accepted (``localhost``, ``127.0.0.1``,
    ``[::1]``, with ``port`` when one is given, else any port). Deployments behind a
    proxy list their public names in ``hosts`` (``"example.com"``, ``"*.example.com"``,
    ``"example.com:8443"``) and, for browsers, ``origins``; ``hosts=["*"]`` disables the
    Host check (the Origin check stays on: an Origin must then match the Host it came to).
    """

    def __init__(
        self,
        hosts: Iterable[str] | None = None,
        origins: Iterable[str] | None = None,
        port: int | None = None,
    ) -> None:
        if hosts is None:
            names = LOOPBACK_NAMES
            hosts = (
                [f"{n}:{port}" for n in names]
                if port is not None
                else [*names, *(f"{n}:*" for n in names)]
            )
        self.hosts = [h.lower() for h in hosts]
        self.origins = {o.lower().rstrip("/") for o in origins or ()}
        self.any_host = "*" in self.hosts
        self._patterns = [_split_authority(pattern) for pattern in self.hosts]
        # Verdicts by header value: the same few Host values arrive on every request.
        self._seen: dict[str, bool] = {}

    @classmethod
    def for_bind(cls, host: str, port: int) -> HostPolicy:
        """The default policy for a server bound to ``host:port``."""
        if _is_wildcard(host):
            logger.warning(
                "binding %s without allowed hosts: Host checking is off; pass allowed_hosts", host
            )
            return cls(["*"], port=port)
        if _is_loopback(host):
            return cls(port=port)
        name = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return cls([f"{name}:{port}", *(f"{n}:{port}" for n in LOOPBACK_NAMES)], port=port)

    def host_allowed(self, host: str | None) -> bool:
        if self.any_host:
            return True
        if not host:
            return False
        verdict = self._seen.get(host)
        if verdict is None:
            verdict = _matches(host.lower(), self._patterns)
            if len(self._seen) < _MAX_REMEMBERED:
                self._seen[host] = verdict
        return verdict

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, sep, authority = origin.partition("://")
        if not sep or scheme not in ("http", "https") or not authority or "/" in authority:
            return False
        if self.any_host:
            return host is not None and authority == host.lower()
        return _matches(authority, self._patterns)


_MAX_REMEMBERED = 256
# Accept verdicts by header value: clients send the same one on every request.
_ACCEPT_SEEN: dict[str, bool] = {}


def _matches(authority: str, patterns: list[tuple[str, str]]) -> bool:
    name, port = _split_authority(authority)
    for p_name, p_port in patterns:
        if p_port not in ("*", port):
            continue
        if p_name == name or (p_name.startswith("*.") and name.endswith(p_name[1:])):
            return True
    return False


def _split_authority(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        end = authority.find("]")
        return authority[: end + 1], authority[end + 2 :] if end + 1 < len(authority) else ""
    name, _, port = authority.partition(":")
    return name, port


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- header values ----------------------------------------------------------------------


def decode_header_value(value: str) -> str:
    """Decode the ``=?base64?...?=`` sentinel form; plain values pass through.

    Raises :class:`HeaderMismatch` for invalid base64 or characters a header value may
    not carry (spec §Value Encoding).
    """
    if value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX) and len(value) >= 11:
        encoded = value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)]
        try:
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise HeaderMismatch("Header value is not valid base64-encoded UTF-8") from None
    if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) > 0x7E for ch in value):
        raise HeaderMismatch("Header value contains characters that are not allowed")
    return value


def _header_matches(header: str, body: Any) -> bool:
    """Compare a decoded header with a body value: integers numerically, booleans as words."""
    if isinstance(body, bool):
        return header == ("true" if body else "false")
    if isinstance(body, int):
        try:
            return float(header) == body
        except ValueError:
            return False
    if isinstance(body, float):
        try:
            return float(header) == body
        except ValueError:
            return False
    return isinstance(body, str) and header == body


def check_content_type(headers: _Headers) -> None:
    """Refuse a body that is not ``application/json`` (415)."""
    content_type = headers.get("content-type") or ""
    if content_type != "application/json" and (
        content_type.split(";", 1)[0].strip().lower() != "application/json"
    ):
        raise _Reject(415, InvalidRequest("Content-Type must be application/json"))


def check_host(hosts: HostPolicy, headers: _Headers) -> None:
    """Refuse a Host (421) or Origin (403) outside ``hosts`` (DNS rebinding defence)."""
    host = headers.get("host")
    if not hosts.host_allowed(host):
        raise _Reject(421, InvalidRequest("Invalid Host header"))
    origin = headers.get("origin")
    if origin is not None and not hosts.origin_allowed(origin, host):
        raise _Reject(403, InvalidRequest("Invalid Origin header"))


async def read_body(headers: _Headers, receive: Receive, max_body: int, timeout: float) -> bytes:
    """The request body: 413 past ``max_body`` bytes, 408 when it takes over ``timeout`` s.

    The deadline is one loop timer that cancels the reading task (cheaper than
    ``asyncio.timeout``, which matters on every request); a body that is already
    buffered is read without waiting at all.
    """
    declared = headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise _Reject(400, InvalidRequest("Invalid Content-Length"))
        if int(declared) > max_body:
            raise _Reject(413, InvalidRequest(f"Message exceeds the limit of {max_body} bytes"))
    reader = asyncio.current_task()
    if reader is None:
        raise RuntimeError("read_body must run inside a task")
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        reader.cancel()

    timer = reader.get_loop().call_later(timeout, expire)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Reject(400)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_body:
                raise _Reject(413, InvalidRequest(f"Message exceeds the limit of {max_body} bytes"))
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if not expired:
            raise
        reader.uncancel()
        raise _Reject(408, InvalidRequest("The request body did not arrive in time")) from None
    finally:
        timer.cancel()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# -- the ASGI application ---------------------------------------------------------------


class _Reject(Exception):
    """An HTTP-level refusal decided before the request reaches the dispatcher."""

    def __init__(
        self, status: int, error: ProtocolError | None = None, request_id: RequestId | None = None
    ) -> None:
        super().__init__(status)
        self.status = status
        self.error = error
        self.request_id = request_id


class _HttpChannel:
    """The response of one POST: JSON until the first notification, then SSE.

    ``session`` is the legacy session the POST belongs to; ``opener`` stores a session
    that ``initialize`` negotiates, whose id then goes out in ``Mcp-Session-Id``.
    """

    __slots__ = ("_opener", "_send", "closed", "opened", "principal", "session", "streaming")

    def __init__(
        self,
        send: Send,
        principal: Any = None,
        session: Session | None = None,
        opener: Callable[[Session, Any], None] | None = None,
    ) -> None:
        self._send = send
        self.principal = principal
        self.session = session
        self._opener = opener
        self.opened: str | None = None
        self.streaming = False
        self.closed = False

    def open_session(self, session: Session) -> None:
        if self._opener is None:
            raise InvalidRequest("This endpoint does not offer legacy sessions")
        self._opener(session, self.principal)
        self.session = session
        self.opened = session.id

    def _headers(self, base: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        if self.opened is None:
            return base
        return [*base, (b"mcp-session-id", self.opened.encode())]

    async def start_stream(self) -> None:
        if not self.streaming:
            self.streaming = True
            await self._send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": self._headers(_SSE_HEADERS),
                }
            )

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        await self.start_stream()
        await self._send(
            {"type": "http.response.body", "body": event(codec.dumps(message)), "more_body": True}
        )

    async def keepalive(self) -> None:
        if self.streaming and not self.closed:
            await self._send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})

    async def finish(self, message: dict[str, Any] | None, status: int) -> None:
        self.closed = True
        if self.streaming:
            body = event(codec.dumps(message)) if message is not None else b""
            await self._send({"type": "http.response.body", "body": body, "more_body": False})
            return
        if message is None:
            await _respond(self._send, 202, b"")
            return
        await _respond(self._send, status, codec.dumps(message), self._headers(_JSON_HEADERS))

    async def end_unanswered(self) -> None:
        """End the response of a call cancelled by the client: an SSE stream without
        its response (a request is never answered 202)."""
        self.closed = True
        await self.start_stream()
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    head = [*(headers or ()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _send_reject(send: Send, reject: _Reject) -> None:
    if reject.error is None:
        await _respond(send, reject.status, b"")
        return
    body = codec.dumps(jsonrpc.error_response(reject.request_id, reject.error))
    await _respond(send, reject.status, body, _JSON_HEADERS)


def _relative_path(scope: Scope) -> str:
    """The request path below the mount point (``root_path``), without a trailing slash."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.rstrip("/")


async def _serve_lifespan(
    receive: Receive, send: Send, shutdown: Callable[[], Awaitable[Any]]
) -> None:
    """Answer the ASGI lifespan protocol, running ``shutdown`` when the server stops."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return


def _refusal_type(auth: ResourceGuard | None) -> type[Any]:
    """What ``auth.authenticate`` returns instead of a principal when it refuses."""
    if auth is None:
        return type(None)
    from mcpkit.auth.resource import AuthResponse

    return AuthResponse


def _status_for(response: dict[str, Any]) -> int:
    error = response.get("error")
    if error is None:
        return 200
    code = error.get("code") if isinstance(error, dict) else None
    return HTTP_STATUS_BY_CODE.get(code, 500) if isinstance(code, int) else 500


class StreamableHTTPApp:
    """The MCP endpoint as an ASGI application.

    For a dual-era ``app`` (one with ``legacy_versions``), ``sessions`` is the table of
    legacy sessions (default: a bounded :class:`MemorySessionStore`). ``legacy_sse``
    also serves the HTTP+SSE transport of 2024-11-05 at ``sse_path`` and
    ``messages_path``, with the same host policy, limits and ``auth``.
    """

    def __init__(
        self,
        app: ServerApp,
        *,
        path: str = "/mcp",
        hosts: HostPolicy | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
        keepalive_interval: float = DEFAULT_KEEPALIVE,
        max_depth: int = codec.DEFAULT_MAX_DEPTH,
        auth: ResourceGuard | None = None,
        sessions: SessionStore | None = None,
        legacy_sse: bool = False,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
    ) -> None:
        self.app = app
        self.auth = auth
        self._refusal = _refusal_type(auth)
        self.path = "/" + path.strip("/") if path.strip("/") else ""
        self.hosts = hosts or HostPolicy()
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.keepalive_interval = keepalive_interval
        self.max_depth = max_depth
        self.supported_versions: tuple[str, ...] = tuple(getattr(app, "supported_versions", ()))
        legacy: tuple[str, ...] = tuple(getattr(app, "legacy_versions", ()))
        self.sessions: SessionStore | None = None
        if legacy:
            self.sessions = sessions if sessions is not None else MemorySessionStore()
        self.sse: SseServerApp | None = None
        if legacy_sse:
            from mcpkit.transports.sse_server import SseServerApp

            self.sse = SseServerApp(
                app,
                sse_path=sse_path,
                messages_path=messages_path,
                hosts=self.hosts,
                max_body=max_body,
                body_timeout=body_timeout,
                keepalive_interval=keepalive_interval,
                max_depth=max_depth,
                auth=auth,
            )
        self._streams: set[asyncio.Task[Any]] = set()
        self._shutting_down = False

    # -- ASGI entry ---------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await _serve_lifespan(receive, send, self.shutdown)
        else:
            raise RuntimeError(f"unsupported ASGI scope type {kind!r}")

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncIterator[None]:
        """A lifespan for a host application (``Starlette(lifespan=mcp.lifespan)``)."""
        try:
            yield
        finally:
            await self.shutdown()

    async def shutdown(self, grace: float = 2.0) -> None:
        """End long-lived streams: first gracefully (each ``subscriptions/listen`` gets
        its completion result, spec ``basic/patterns/subscriptions.mdx`` §Graceful
        Closure), then by cancellation for whatever is still open after ``grace``."""
        self._shutting_down = True
        stop = getattr(self.app, "shutdown", None)
        if callable(stop):
            stop()
        if self.sessions is not None:
            for session in self.sessions:
                self.sessions.remove(session.id or "")
        if self.sse is not None:
            await self.sse.shutdown(grace)
        streams = list(self._streams)
        if streams:
            _, pending = await asyncio.wait(streams, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=grace)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.sse is not None and self.sse.serves(_relative_path(scope)):
            await self.sse(scope, receive, send)
            return
        headers = _Headers(scope["headers"])
        auth = self.auth
        principal: Any = None
        session: Session | None = None
        try:
            check_host(self.hosts, headers)
            if auth is not None:
                document = auth.metadata_response(scope["method"], scope.get("path", ""))
                if document is not None:
                    await document.send(send)
                    return
            if _relative_path(scope) != self.path:
                raise _Reject(404)
            method = scope["method"]
            session_id = headers.get("mcp-session-id") if self.sessions is not None else None
            if method != "POST" and (session_id is None or method not in ("GET", "DELETE")):
                allow = b"GET, POST, DELETE" if session_id is not None else b"POST"
                await _respond(send, 405, b"", [(b"allow", allow)])
                return
            if auth is not None:
                outcome = await auth.authenticate(scope["headers"])
                if isinstance(outcome, self._refusal):
                    await outcome.send(send)
                    return
                principal = outcome
            if method == "GET":
                assert session_id is not None
                session = self._session(session_id, principal)
                await self._standalone_stream(session, headers, receive, send)
                return
            if method == "DELETE":
                assert session_id is not None
                self._end_session(self._session(session_id, principal))
                await _respond(send, 200, b"")
                return
            self._check_content_negotiation(headers)
            body = await read_body(headers, receive, self.max_body, self.body_timeout)
            message = self._parse(body, responses=session_id is not None)
            if session_id is not None and _legacy_message(message):
                session = self._session(session_id, principal)
        except _Reject as reject:
            await _send_reject(send, reject)
            return
        if isinstance(message, Response | ErrorResponse):
            assert session is not None
            session.resolve(message)
            await _respond(send, 202, b"")
            return
        if auth is not None:
            denied = auth.authorize(principal, message.method, message.params)
            if denied is not None:
                await denied.send(send)
                return
        if session is not None:
            await self._session_message(session, message, headers, receive, send, principal)
            return
        if isinstance(message, Notification):
            await self.app.handle_notification(message, _HttpChannel(send, principal))
            await _respond(send, 202, b"")
            return
        if message.method == "initialize" and not has_modern_meta(message.params):
            # A legacy handshake: the dispatcher opens a session (or names the versions it
            # speaks when it is modern-only, spec basic/versioning.mdx).
            opener = self._open if self.sessions is not None else None
            channel = _HttpChannel(send, principal, None, opener)
            await self._serve(message, receive, send, channel)
            return
        try:
            if self.sessions is not None and self._legacy_without_session(message, headers):
                raise _Reject(
                    400,
                    InvalidRequest(
                        "Bad Request: Mcp-Session-Id header is required "
                        "(a legacy session begins with initialize)"
                    ),
                    message.id,
                )
            self._validate(message, headers)
        except _Reject as reject:
            await _send_reject(send, reject)
            return
        await self._serve(message, receive, send, _HttpChannel(send, principal))

    # -- checks -------------------------------------------------------------------------

    def _check_content_negotiation(self, headers: _Headers) -> None:
        check_content_type(headers)
        accept = headers.get("accept") or ""
        verdict = _ACCEPT_SEEN.get(accept)
        if verdict is None:
            verdict = _accepts(accept.lower())
            if len(_ACCEPT_SEEN) < _MAX_REMEMBERED:
                _ACCEPT_SEEN[accept] = verdict
        if not verdict:
            raise _Reject(
                406, InvalidRequest("Accept must list application/json and text/event-stream")
            )

    def _parse(self, body: bytes, *, responses: bool = False) -> jsonrpc.Message:
        """The message in ``body``; a response only within a legacy session."""
        try:
            message = jsonrpc.parse(body, self.max_depth)
        except ProtocolError as exc:
            raise _Reject(400, exc, exc.request_id) from None
        if responses or isinstance(message, Request | Notification):
            return message
        raise _Reject(
            400, InvalidRequest("Clients must not send responses to this endpoint"), message.id
        )

    def _validate(self, request: Request, headers: _Headers) -> None:
        """Steps 4-6 of the module docstring, up to the version check."""
        params = request.params or {}
        try:
            meta = read_request_meta(params)
            self._check_headers(request, params, meta.protocol_version, headers)
            if self.supported_versions:
                check_version(meta.protocol_version, self.supported_versions)
        except ProtocolError as exc:
            raise _Reject(exc.http_status, exc, request.id) from None

    def _check_headers(
        self, request: Request, params: dict[str, Any], version: str, headers: _Headers
    ) -> None:
        header_version = headers.single("mcp-protocol-version")
        if header_version is None:
            raise HeaderMismatch("Missing required header MCP-Protocol-Version")
        if header_version != version:
            raise HeaderMismatch(
                f"Header mismatch: MCP-Protocol-Version header value {header_version!r} "
                f"does not match _meta protocolVersion {version!r}"
            )
        header_method = headers.single("mcp-method")
        if header_method is None:
            raise HeaderMismatch("Missing required header Mcp-Method")
        if header_method != request.method:
            raise HeaderMismatch(
                f"Header mismatch: Mcp-Method header value {header_method!r} "
                f"does not match body value {request.method!r}"
            )
        spec = CLIENT_REQUESTS.get(request.method)
        if spec is not None and spec.name_param is not None:
            raw_name = headers.single("mcp-name")
            if raw_name is None:
                raise HeaderMismatch("Missing required header Mcp-Name")
            name = decode_header_value(raw_name)
            body_name = params.get(spec.name_param)
            if name != body_name:
                raise HeaderMismatch(
                    f"Header mismatch: Mcp-Name header value {name!r} "
                    f"does not match body value {body_name!r}"
                )
        if request.method == "tools/call":
            self._check_param_headers(params, headers)

    def _check_param_headers(self, params: dict[str, Any], headers: _Headers) -> None:
        hook = getattr(self.app, "param_headers", None)
        name = params.get("name")
        arguments = params.get("arguments")
        if hook is None or not isinstance(name, str):
            return
        expected, declared = hook(name, arguments if isinstance(arguments, dict) else {})
        for suffix in declared:
            raw = headers.single("mcp-param-" + suffix.lower())
            if suffix not in expected:
                if raw is not None:
                    raise HeaderMismatch(
                        f"Header mismatch: Mcp-Param-{suffix} sent but the argument is absent"
                    )
                continue
            if raw is None:
                raise HeaderMismatch(f"Missing required header Mcp-Param-{suffix}")
            if not _header_matches(decode_header_value(raw), expected[suffix]):
                raise HeaderMismatch(
                    f"Header mismatch: Mcp-Param-{suffix} header value does not match the argument"
                )

    # -- legacy sessions ---------------------------------------------------------------

    def _session(self, session_id: str, principal: Any) -> Session:
        """The live session ``session_id`` of this caller; 404 for anything else."""
        assert self.sessions is not None
        session = self.sessions.get(session_id)
        if session is None or session.principal != owner_of(principal):
            raise _Reject(404, InvalidRequest("Session not found"))
        return session

    def _open(self, session: Session, principal: Any) -> None:
        """Store a session ``initialize`` negotiated, under a fresh id, bound to its caller."""
        assert self.sessions is not None
        session.id = new_session_id()
        session.principal = owner_of(principal)
        self.sessions.add(session)

    def _end_session(self, session: Session) -> None:
        assert self.sessions is not None
        self.sessions.remove(session.id or "")

    @staticmethod
    def _legacy_without_session(request: Request, headers: _Headers) -> bool:
        """A legacy request (no modern ``_meta``; no or a legacy protocol header) that
        arrived without the session id every request after ``initialize`` must carry."""
        if has_modern_meta(request.params):
            return False
        version = headers.get("mcp-protocol-version")
        return version is None or version in LEGACY_VERSIONS

    @staticmethod
    def _check_session_version(session: Session, headers: _Headers, request_id: Any) -> None:
        version = headers.get("mcp-protocol-version")
        if version is not None and version != session.protocol_version:
            raise _Reject(
                400,
                InvalidRequest(
                    f"Bad Request: MCP-Protocol-Version {version!r} is not the version "
                    f"negotiated for this session ({session.protocol_version})"
                ),
                request_id,
            )

    async def _session_message(
        self,
        session: Session,
        message: Request | Notification,
        headers: _Headers,
        receive: Receive,
        send: Send,
        principal: Any,
    ) -> None:
        """A POST of a legacy session: a notification (202) or a call to serve."""
        request_id = message.id if isinstance(message, Request) else None
        try:
            self._check_session_version(session, headers, request_id)
        except _Reject as reject:
            await _send_reject(send, reject)
            return
        channel = _HttpChannel(send, principal, session)
        if isinstance(message, Notification):
            if message.method == "notifications/cancelled":
                cancel_request(session.inflight, message.params)
            else:
                await self.app.handle_notification(message, channel)
            await _respond(send, 202, b"")
            return
        if message.id in session.inflight:
            error = InvalidRequest(f"Request id {message.id!r} is already in flight")
            await channel.finish(jsonrpc.error_response(message.id, error), 200)
            return
        await self._serve(message, receive, send, channel, session)

    async def _standalone_stream(
        self, session: Session, headers: _Headers, receive: Receive, send: Send
    ) -> None:
        """GET: the session's stream for messages outside any call (list changes,
        resource updates), with keep-alive comments while idle; one at a time."""
        if not _accepts_sse((headers.get("accept") or "").lower()):
            raise _Reject(406, InvalidRequest("Accept must list text/event-stream"))
        self._check_session_version(session, headers, None)
        if session.streaming:
            raise _Reject(409, InvalidRequest("This session's stream is already open"))
        session.streaming = True
        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            if await self._pump(session, receive, send):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            session.streaming = False
            if task is not None:
                self._streams.discard(task)

    async def _pump(self, session: Session, receive: Receive, send: Send) -> bool:
        """Write what the session queues until it ends (True) or the client leaves."""

        async def next_event() -> bytes | None:
            message = await session.next_pushed()
            return None if message is None else event(codec.dumps(message))

        return await _pump_events(
            next_event, receive, send, self.keepalive_interval, on_keepalive=session.touch
        )

    # -- serving ------------------------------------------------------------------------

    async def _serve(
        self,
        request: Request,
        receive: Receive,
        send: Send,
        channel: _HttpChannel,
        session: Session | None = None,
    ) -> None:
        """Run the handler and answer; within a session errors travel with status 200
        and the call can be cancelled by ``notifications/cancelled``."""
        long_lived = request.method == "subscriptions/listen"
        if not long_lived and session is None:
            await self._serve_inline(request, receive, channel)
            return
        handler = asyncio.create_task(self.app.handle_request(request, channel))
        watcher = asyncio.create_task(_disconnected(receive))
        if long_lived:
            self._streams.add(handler)
            handler.add_done_callback(self._streams.discard)
        if session is not None:
            session.inflight[request.id] = handler
        try:
            gone = await self._await_handler(
                handler, watcher, channel, long_lived or session is not None
            )
        finally:
            watcher.cancel()
            if session is not None and session.inflight.get(request.id) is handler:
                del session.inflight[request.id]
        if handler.cancelled():
            channel.closed = True
            if gone:
                return
            if long_lived and self._shutting_down and channel.streaming:
                await channel.finish(None, 200)
            elif session is not None:
                await channel.end_unanswered()
            return
        response = handler.result()
        if response is None:
            status = 202
        elif session is not None:
            status = 200
        else:
            status = _status_for(response)
        await channel.finish(response, status)

    async def _serve_inline(
        self, request: Request, receive: Receive, channel: _HttpChannel
    ) -> None:
        """The common case: run the handler in this task, watching for a disconnect only
        once it has run for a moment (most handlers finish first, and a watcher task per
        request costs more than the handler). A disconnect cancels the handler, and
        nothing more is sent (spec §Cancellation)."""
        # The task serving this request; one app may serve several loops (in tests or
        # threads), so neither the task nor the loop is cached on the app.
        watch = _DisconnectWatch(receive, asyncio.current_task())
        try:
            response = await self.app.handle_request(request, channel)
        except asyncio.CancelledError:
            if not watch.stop():
                raise
            channel.closed = True
            return
        if watch.stop():
            channel.closed = True
            return
        await channel.finish(response, 202 if response is None else _status_for(response))

    async def _await_handler(
        self,
        handler: asyncio.Task[dict[str, Any] | None],
        watcher: asyncio.Task[None],
        channel: _HttpChannel,
        keepalive: bool,
    ) -> bool:
        """Wait for the handler; True when the client disconnected (handler cancelled)."""
        interval = self.keepalive_interval if keepalive else None
        while True:
            done, _ = await asyncio.wait(
                {handler, watcher}, timeout=interval, return_when=asyncio.FIRST_COMPLETED
            )
            if handler in done:
                return False
            if watcher in done:
                handler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handler
                return True
            await channel.keepalive()


def _legacy_message(message: jsonrpc.Message) -> bool:
    """A message a legacy session may carry: a response, or one without modern ``_meta``
    (a modern request that happens to carry a session id stays modern, and the id is
    ignored, ``basic/versioning.mdx``)."""
    if isinstance(message, Response | ErrorResponse):
        return True
    return not has_modern_meta(message.params)


class _DisconnectWatch:
    """Cancels the current task if the client disconnects while it is handling a request.

    The watcher task that reads ``receive`` starts only after ``delay`` seconds, so quick
    requests never create one. :meth:`stop` ends the watch and tells whether the client
    went away (then the task's cancellation came from here and is taken back).
    """

    __slots__ = ("_receive", "_task", "_timer", "_watcher", "gone")

    def __init__(
        self, receive: Receive, task: asyncio.Task[Any] | None, delay: float = 0.02
    ) -> None:
        if task is None:
            raise RuntimeError("a disconnect watch needs a task")
        self._task = task
        self._receive = receive
        self._watcher: asyncio.Task[None] | None = None
        self.gone = False
        self._timer = task.get_loop().call_later(delay, self._start)

    def _start(self) -> None:
        self._watcher = self._task.get_loop().create_task(self._watch())

    async def _watch(self) -> None:
        await _disconnected(self._receive)
        self.gone = True
        self._task.cancel()

    def stop(self) -> bool:
        self._timer.cancel()
        if self._watcher is not None:
            self._watcher.cancel()
        if self.gone:
            self._task.uncancel()
        return self.gone


async def _pump_events(
    next_event: Callable[[], Awaitable[bytes | None]],
    receive: Receive,
    send: Send,
    keepalive_interval: float,
    on_keepalive: Callable[[], None] | None = None,
) -> bool:
    """Send the SSE events ``next_event`` yields, and a keep-alive comment whenever none
    came for ``keepalive_interval`` seconds, until it yields None (True) or the client
    disconnects (False)."""
    pending = asyncio.ensure_future(next_event())
    watcher = asyncio.ensure_future(_disconnected(receive))
    try:
        while True:
            done, _ = await asyncio.wait(
                {pending, watcher}, timeout=keepalive_interval, return_when=asyncio.FIRST_COMPLETED
            )
            if pending in done:
                body = pending.result()
                if body is None:
                    return True
                await send({"type": "http.response.body", "body": body, "more_body": True})
                pending = asyncio.ensure_future(next_event())
            elif watcher in done:
                return False
            else:
                await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
                if on_keepalive is not None:
                    on_keepalive()
    finally:
        watcher.cancel()
        pending.cancel()


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def _accepts_sse(accept: str) -> bool:
    kinds = {part.split(";", 1)[0].strip() for part in accept.split(",")}
    return bool(kinds & {"text/event-stream", "text/*", "*/*"})


def _accepts(accept: str) -> bool:
    if not accept:
        return False
    kinds = {part.split(";", 1)[0].strip() for part in accept.split(",")}
    if "*/*" in kinds:
        return True
    json_ok = "application/json" in kinds or "application/*" in kinds
    sse_ok = "text/event-stream" in kinds or "text/*" in kinds
    return json_ok and sse_ok


class _Headers:
    """Request headers by lower-case name, remembering duplicates; decoded on first use."""

    __slots__ = ("_values",)

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        values: dict[bytes, list[bytes]] = {}
        for name, value in raw:
            key = name.lower()
            found = values.get(key)
            if found is None:
                values[key] = [value]
            else:
                found.append(value)
        self._values = values

    def get(self, name: str) -> str | None:
        found = self._values.get(name.encode("latin-1"))
        return _text(found[0]) if found else None

    def single(self, name: str) -> str | None:
        """A routing header that must appear at most once (-32020 when repeated)."""
        found = self._values.get(name.encode("latin-1"))
        if not found:
            return None
        if len(found) > 1:
            raise HeaderMismatch(f"Header {name} appears more than once")
        return _text(found[0])


def _text(value: bytes) -> str:
    # RFC 9110 §5.5: optional whitespace around a field value is not part of it.
    return value.decode("latin-1").strip(" \t")


def create_app(app: ServerApp, **options: Any) -> StreamableHTTPApp:
    """The ASGI application serving ``app`` at ``path`` (default ``/mcp``); with
    ``legacy_sse=True`` also the HTTP+SSE transport at ``/sse`` and ``/messages``."""
    return StreamableHTTPApp(app, **options)


def run_http(
    app: ServerApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    allowed_hosts: Iterable[str] | None = None,
    allowed_origins: Iterable[str] | None = None,
    log_level: str = "warning",
    **options: Any,
) -> None:
    """Serve ``app`` over Streamable HTTP with uvicorn (blocking)."""
    import uvicorn

    from mcpkit.transports.guard import guarded_protocol

    policy = (
        HostPolicy(allowed_hosts, allowed_origins, port=port)
        if allowed_hosts is not None or allowed_origins is not None
        else HostPolicy.for_bind(host, port)
    )
    asgi = StreamableHTTPApp(app, path=path, hosts=policy, **options)
    config = uvicorn.Config(
        asgi,
        # X-Forwarded-* is not trusted by default (deployments behind a proxy configure
        # uvicorn themselves); it also costs a middleware layer on every request.
        proxy_headers=False,
        # At the default "warning" level nothing is logged per request, but uvicorn would
        # still build each access-log line's arguments.
        access_log=log_level in ("debug", "info", "trace"),
        host=host,
        port=port,
        log_level=log_level,
        http=guarded_protocol(),
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    uvicorn_server(config, asgi).run()


def uvicorn_server(config: Any, *endpoints: StreamableHTTPApp) -> Any:
    """A ``uvicorn.Server`` that ends MCP streams gracefully when it shuts down.

    uvicorn waits for open connections to close before it sends the lifespan shutdown
    event, so a ``subscriptions/listen`` stream would hold shutdown until the graceful
    timeout and then be cut without its completion result. This server first asks each
    endpoint to end its streams (they send their results and close), then shuts down as
    usual. Use it when running an app that mounts MCP endpoints with uvicorn yourself.
    """
    import uvicorn

    base: type[Any] = uvicorn.Server

    async def shutdown(self: Any, sockets: Any = None) -> None:
        for endpoint in endpoints:
            await endpoint.shutdown()
        await base.shutdown(self, sockets)

    server_class = type("MCPUvicornServer", (base,), {"shutdown": shutdown})
    return server_class(config)
