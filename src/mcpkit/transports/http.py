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
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import ipaddress
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any, Protocol

from mcpkit.errors import (
    HeaderMismatch,
    InvalidRequest,
    ProtocolError,
    RequestId,
)
from mcpkit.protocol import codec, jsonrpc
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.protocol.jsonrpc import Notification, Request
from mcpkit.protocol.meta import check_version, has_modern_meta, read_request_meta
from mcpkit.transports.base import ServerApp
from mcpkit.transports.sse import KEEPALIVE, event
from mcpkit.types.methods import CLIENT_REQUESTS

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
        return _matches(host.lower(), self.hosts)

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, sep, authority = origin.partition("://")
        if not sep or scheme not in ("http", "https") or not authority or "/" in authority:
            return False
        if self.any_host:
            return host is not None and authority == host.lower()
        return _matches(authority, self.hosts)


def _matches(authority: str, patterns: list[str]) -> bool:
    name, port = _split_authority(authority)
    for pattern in patterns:
        p_name, p_port = _split_authority(pattern)
        if p_port not in ("*", port) and not (p_port == "" and port == ""):
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
    """The response of one POST: JSON until the first notification, then SSE."""

    __slots__ = ("_send", "closed", "principal", "streaming")

    def __init__(self, send: Send, principal: Any = None) -> None:
        self._send = send
        self.principal = principal
        self.streaming = False
        self.closed = False

    async def start_stream(self) -> None:
        if not self.streaming:
            self.streaming = True
            await self._send(
                {"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS}
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
        await _respond(self._send, status, codec.dumps(message), _JSON_HEADERS)


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    head = [*(headers or ()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _status_for(response: dict[str, Any]) -> int:
    error = response.get("error")
    if error is None:
        return 200
    code = error.get("code") if isinstance(error, dict) else None
    return _STATUS_BY_CODE.get(code, 500) if isinstance(code, int) else 500


_STATUS_BY_CODE = {
    -32700: 400,
    -32600: 400,
    -32601: 404,
    -32602: 400,
    -32603: 500,
    -32020: 400,
    -32021: 400,
    -32022: 400,
}


class StreamableHTTPApp:
    """The MCP endpoint as an ASGI application."""

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
    ) -> None:
        self.app = app
        self.auth = auth
        self._refusal: type[Any] = type(None)
        if auth is not None:
            from mcpkit.auth.resource import AuthResponse

            self._refusal = AuthResponse
        self.path = "/" + path.strip("/") if path.strip("/") else ""
        self.hosts = hosts or HostPolicy()
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.keepalive_interval = keepalive_interval
        self.max_depth = max_depth
        self.supported_versions: tuple[str, ...] = tuple(getattr(app, "supported_versions", ()))
        self._streams: set[asyncio.Task[Any]] = set()
        self._shutting_down = False

    # -- ASGI entry ---------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:
            raise RuntimeError(f"unsupported ASGI scope type {kind!r}")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

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
        streams = list(self._streams)
        if streams:
            _, pending = await asyncio.wait(streams, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=grace)

    def _relative_path(self, scope: Scope) -> str:
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return path.rstrip("/")

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _Headers(scope["headers"])
        auth = self.auth
        principal: Any = None
        try:
            self._check_host(headers)
            if auth is not None:
                document = auth.metadata_response(scope["method"], scope.get("path", ""))
                if document is not None:
                    await document.send(send)
                    return
            if self._relative_path(scope) != self.path:
                raise _Reject(404)
            method = scope["method"]
            if method != "POST":
                await _respond(send, 405, b"", [(b"allow", b"POST")])
                return
            if auth is not None:
                outcome = await auth.authenticate(scope["headers"])
                if isinstance(outcome, self._refusal):
                    await outcome.send(send)
                    return
                principal = outcome
            self._check_content_negotiation(headers)
            body = await self._read_body(headers, receive)
            message = self._parse(body)
        except _Reject as reject:
            await self._reject(send, reject)
            return
        if auth is not None:
            denied = auth.authorize(principal, message.method, message.params)
            if denied is not None:
                await denied.send(send)
                return
        if isinstance(message, Notification):
            await self.app.handle_notification(message, _HttpChannel(send, principal))
            await _respond(send, 202, b"")
            return
        if message.method == "initialize" and not has_modern_meta(message.params):
            # A legacy handshake: the dispatcher answers it (or names the versions it
            # speaks when it is modern-only, spec basic/versioning.mdx).
            await self._serve(message, receive, send, principal)
            return
        try:
            self._validate(message, headers)
        except _Reject as reject:
            await self._reject(send, reject)
            return
        await self._serve(message, receive, send, principal)

    # -- checks -------------------------------------------------------------------------

    def _check_host(self, headers: _Headers) -> None:
        host = headers.get("host")
        if not self.hosts.host_allowed(host):
            raise _Reject(421, InvalidRequest("Invalid Host header"))
        origin = headers.get("origin")
        if origin is not None and not self.hosts.origin_allowed(origin, host):
            raise _Reject(403, InvalidRequest("Invalid Origin header"))

    def _check_content_negotiation(self, headers: _Headers) -> None:
        content_type = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            raise _Reject(415, InvalidRequest("Content-Type must be application/json"))
        accept = (headers.get("accept") or "").lower()
        if not _accepts(accept):
            raise _Reject(
                406, InvalidRequest("Accept must list application/json and text/event-stream")
            )

    async def _read_body(self, headers: _Headers, receive: Receive) -> bytes:
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                raise _Reject(400, InvalidRequest("Invalid Content-Length"))
            if int(declared) > self.max_body:
                raise _Reject(
                    413, InvalidRequest(f"Message exceeds the limit of {self.max_body} bytes")
                )
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _Reject(400)
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body:
                        raise _Reject(
                            413,
                            InvalidRequest(f"Message exceeds the limit of {self.max_body} bytes"),
                        )
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            raise _Reject(408, InvalidRequest("The request body did not arrive in time")) from None
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _parse(self, body: bytes) -> Request | Notification:
        try:
            message = jsonrpc.parse(body, self.max_depth)
        except ProtocolError as exc:
            raise _Reject(400, exc, exc.request_id) from None
        if isinstance(message, Request | Notification):
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

    async def _reject(self, send: Send, reject: _Reject) -> None:
        if reject.error is None:
            await _respond(send, reject.status, b"")
            return
        body = codec.dumps(jsonrpc.error_response(reject.request_id, reject.error))
        await _respond(send, reject.status, body, _JSON_HEADERS)

    # -- serving ------------------------------------------------------------------------

    async def _serve(self, request: Request, receive: Receive, send: Send, principal: Any) -> None:
        channel = _HttpChannel(send, principal)
        long_lived = request.method == "subscriptions/listen"
        handler = asyncio.create_task(self.app.handle_request(request, channel))
        watcher = asyncio.create_task(_disconnected(receive))
        if long_lived:
            self._streams.add(handler)
            handler.add_done_callback(self._streams.discard)
        try:
            await self._await_handler(handler, watcher, channel, long_lived)
        finally:
            watcher.cancel()
        if handler.cancelled():
            channel.closed = True
            if long_lived and self._shutting_down and channel.streaming:
                await channel.finish(None, 200)
            return
        response = handler.result()
        await channel.finish(response, _status_for(response) if response is not None else 202)

    async def _await_handler(
        self,
        handler: asyncio.Task[dict[str, Any] | None],
        watcher: asyncio.Task[None],
        channel: _HttpChannel,
        long_lived: bool,
    ) -> None:
        interval = self.keepalive_interval if long_lived else None
        while True:
            done, _ = await asyncio.wait(
                {handler, watcher}, timeout=interval, return_when=asyncio.FIRST_COMPLETED
            )
            if handler in done:
                return
            if watcher in done:
                handler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handler
                return
            await channel.keepalive()


async def _disconnected(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


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
    """Request headers by lower-case name, remembering duplicates."""

    __slots__ = ("_values",)

    def __init__(self, raw: Iterable[tuple[bytes, bytes]]) -> None:
        values: dict[str, list[str]] = {}
        for name, value in raw:
            # RFC 9110 §5.5: optional whitespace around a field value is not part of it.
            text = value.decode("latin-1").strip(" \t")
            values.setdefault(name.decode("latin-1").lower(), []).append(text)
        self._values = values

    def get(self, name: str) -> str | None:
        found = self._values.get(name)
        return found[0] if found else None

    def single(self, name: str) -> str | None:
        """A routing header that must appear at most once (-32020 when repeated)."""
        found = self._values.get(name)
        if not found:
            return None
        if len(found) > 1:
            raise HeaderMismatch(f"Header {name} appears more than once")
        return found[0]


def create_app(app: ServerApp, **options: Any) -> StreamableHTTPApp:
    """The ASGI application serving ``app`` at ``path`` (default ``/mcp``)."""
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
