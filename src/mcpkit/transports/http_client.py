"""The Streamable HTTP transport, client end (spec ``basic/transports/streamable-http.mdx``,
and ``2025-11-25/basic/transports.mdx`` for the legacy shape), built on httpx.

Every JSON-RPC request is its own POST; the answer is one JSON object or an SSE stream of
related notifications ending with the response. Outcomes reach the client through the same
``receiver`` the stream transports use: decoded messages, and :class:`RequestFailed` when a
request ends without an answer (a refused connection, an HTTP error without a JSON-RPC
body, a stream that closed early). A request is cancelled by closing its stream
(:meth:`HttpClientTransport.cancel`), which is the modern cancellation signal.

Two wire shapes, chosen by the client after it has learnt the server's era:

* **modern** (``2026-07-28``): every POST carries ``MCP-Protocol-Version`` (copied from the
  body's ``_meta``), ``Mcp-Method`` and, for ``tools/call``, ``prompts/get`` and
  ``resources/read``, ``Mcp-Name``, plus any ``Mcp-Param-*`` headers the client mirrors from
  ``x-mcp-header`` tool parameters. Session ids are ignored.
* **legacy** (``2025-03-26`` .. ``2025-11-25``): ``Mcp-Session-Id`` from the ``initialize``
  answer, ``MCP-Protocol-Version`` once negotiated, server-to-client requests on SSE
  streams, answers POSTed back, an optional GET stream, resumption of a stream the server
  closed early with ``Last-Event-ID`` after the advertised ``retry`` delay, and a DELETE of
  the session on close.

Header values that are not plain visible ASCII use the Base64 sentinel
``=?base64?...?=`` (:func:`encode_header_value`). Connection failures are retried with
exponential backoff before anything was sent; everything else is reported, never
swallowed. ``auth`` takes any :class:`httpx.Auth` and is applied to every request, so an
OAuth flow can answer ``401``/``403`` challenges and resend (see :mod:`mcpkit.auth`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from mcpkit.errors import ConnectionClosed, MCPError, ProtocolError, RequestId, TransportError
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.protocol.meta import PROTOCOL_VERSION
from mcpkit.transports.sse import SseEvent, SseParser
from mcpkit.types.methods import CLIENT_REQUESTS

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("mcpkit.transport")

__all__ = [
    "AuthorizationRequired",
    "HttpClientTransport",
    "HttpStatusError",
    "RequestFailed",
    "SessionExpired",
    "SseEvent",
    "SseParser",
    "encode_header_value",
    "header_safe",
]

Receiver = Callable[[Any], None]
HttpEra = Literal["modern", "legacy"]

ACCEPT_BOTH = "application/json, text/event-stream"
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
DEFAULT_RETRY_MS = 1000
MAX_RESUMPTIONS = 5
_ERROR_BODY_LIMIT = 64 * 1024


def load_httpx() -> Any:
    """httpx, imported on first use: the core install works without the ``http`` extra."""
    try:
        import httpx
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ImportError("the HTTP transports need httpx: pip install 'mcpkit[http]'") from exc
    return httpx


class HttpStatusError(TransportError):
    """The server answered with an HTTP error status and no JSON-RPC error in the body."""

    def __init__(self, status: int, body: str, message: str | None = None) -> None:
        self.status = status
        self.body = body
        super().__init__(message or f"HTTP {status}: {body[:200]!r}")


class SessionExpired(HttpStatusError):
    """A legacy session id was answered with 404: the session is gone, re-initialize."""


class AuthorizationRequired(HttpStatusError):
    """The server wants credentials it did not get: a ``401``, or a ``403`` carrying a
    ``WWW-Authenticate`` challenge (spec ``basic/authorization/index.mdx`` §Error
    Handling). ``challenge`` is that header, for the caller to act on.

    With an OAuth ``auth`` the challenge is answered before this is ever raised; it means
    no ``auth`` was given, or the one given (a fixed header, basic auth) was refused.
    """

    def __init__(self, status: int, body: str, challenge: str | None, has_auth: bool) -> None:
        self.challenge = challenge
        if has_auth:
            message = f"the server refused the credentials (HTTP {status})"
        else:
            message = (
                f"the server requires authorization (HTTP {status}); give the client "
                "auth= (for instance mcpkit.auth.OAuth) or oauth=True"
            )
        super().__init__(status, body, message)


def has_credentials(auth: httpx.Auth | None, headers: Mapping[str, str]) -> bool:
    """Whether a transport sends credentials: an ``auth``, or an Authorization header."""
    return auth is not None or any(k.lower() == "authorization" for k in headers)


def status_error(
    status: int, body: str, headers: Mapping[str, str], has_auth: bool
) -> HttpStatusError:
    """The error for an HTTP error status without a JSON-RPC answer."""
    challenge = headers.get("www-authenticate")
    if status == 401 or (status == 403 and challenge is not None):
        return AuthorizationRequired(status, body, challenge, has_auth)
    return HttpStatusError(status, body)


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """A request ended without an answer from the server; ``error`` says why."""

    request_id: RequestId
    error: Exception


# -- header values ----------------------------------------------------------------------


def header_safe(value: str) -> bool:
    """True when ``value`` can travel as a plain header value (spec §Value Encoding):
    visible ASCII and inner spaces only, no leading/trailing whitespace, and not itself
    shaped like the Base64 sentinel."""
    if value != value.strip(" \t"):
        return False
    if value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX):
        return False
    return all(0x20 <= ord(ch) <= 0x7E for ch in value)


def encode_header_value(value: str) -> str:
    """``value`` as is when safe, else ``=?base64?<base64 of its UTF-8>?=``."""
    if header_safe(value):
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"


# -- server-sent events -----------------------------------------------------------------


def decode_event(event: SseEvent) -> Any:
    """The JSON-RPC message an event carries, a ProtocolError for garbage, None if empty."""
    if not event.data.strip():
        return None
    try:
        return codec.loads(event.data)
    except ProtocolError as exc:
        return exc


# -- the transport ----------------------------------------------------------------------


def same_origin(a: str, b: str) -> bool:
    """Scheme, host and port agree (default ports made explicit)."""
    first, second = urlsplit(a), urlsplit(b)
    defaults = {"http": 80, "https": 443}
    first_port = first.port or defaults.get(first.scheme)
    second_port = second.port or defaults.get(second.scheme)
    return (
        first.scheme == second.scheme
        and first.hostname == second.hostname
        and first_port == second_port
    )


class HttpClientTransport:
    """Talks Streamable HTTP to one MCP endpoint."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        http: httpx.AsyncClient | None = None,
        connect_timeout: float = 10.0,
        connect_retries: int = 3,
        retry_backoff: float = 0.1,
        max_message: int = DEFAULT_MAX_LINE,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.auth = auth
        self._own_http = http is None
        client_lib = load_httpx()
        self.http = http or client_lib.AsyncClient(
            timeout=client_lib.Timeout(connect_timeout, read=None, write=connect_timeout)
        )
        self.connect_retries = connect_retries
        self.retry_backoff = retry_backoff
        self.max_message = max_message
        self.era: HttpEra = "modern"
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self._receiver: Receiver | None = None
        self._on_close: Callable[[], None] | None = None
        self._requests: dict[RequestId, asyncio.Task[None]] = {}
        self._get_stream: asyncio.Task[None] | None = None
        self._closed = False

    # -- identity -------------------------------------------------------------------------

    @property
    def server_key(self) -> str:
        """What identifies the server for the era cache: the endpoint URL."""
        return f"http:{self.url}"

    @property
    def pid(self) -> None:
        return None

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        self._receiver = receiver
        self._on_close = on_close
        self._closed = False

    def use_modern(self) -> None:
        self.era = "modern"
        self.session_id = None
        self.protocol_version = None

    def use_legacy(self, version: str | None = None) -> None:
        self.era = "legacy"
        self.protocol_version = version

    async def close(self) -> None:
        """Close every open stream, end a legacy session, release the connection pool."""
        if self._closed:
            return
        self._closed = True
        tasks = list(self._requests.values())
        if self._get_stream is not None:
            tasks.append(self._get_stream)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._requests.clear()
        if self.era == "legacy" and self.session_id is not None:
            # Best effort, and never worth a sign-in (an OAuth auth sends only the token in
            # hand): a session the server cannot be told about expires on its own.
            token_only = getattr(self.auth, "token_only", None)
            auth = token_only() if callable(token_only) else self.auth
            with contextlib.suppress(load_httpx().HTTPError, MCPError):
                request = self.http.build_request(
                    "DELETE", self.url, headers=self._base_headers(None)
                )
                response = await self.http.send(request, auth=auth)
                await response.aclose()
            self.session_id = None
        if self._own_http:
            await self.http.aclose()

    # -- sending --------------------------------------------------------------------------

    async def send(
        self, message: dict[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> None:
        """POST one message. A request's outcome arrives later through the receiver."""
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        if "method" in message and "id" in message:
            request_id: RequestId = message["id"]
            task = asyncio.get_running_loop().create_task(
                self._run_request(request_id, message, headers)
            )
            self._requests[request_id] = task
            task.add_done_callback(lambda _: self._requests.pop(request_id, None))
            return
        response = await self._post(message, headers)
        try:
            if response.status_code >= 400:
                body = await _read_limited(response, _ERROR_BODY_LIMIT)
                raise self._status_error(response, body.decode("utf-8", "replace"))
        finally:
            await response.aclose()

    async def cancel(self, request_id: RequestId) -> bool:
        """Close the request's stream: the server treats that as cancellation."""
        task = self._requests.pop(request_id, None)
        if task is None:
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return self.era == "modern"

    def _status_error(self, response: httpx.Response, body: str) -> HttpStatusError:
        return status_error(
            response.status_code, body, response.headers, has_credentials(self.auth, self.headers)
        )

    def _base_headers(self, message: dict[str, Any] | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT_BOTH, **self.headers}
        if self.era == "modern":
            if message is not None:
                headers.update(standard_headers(message))
        else:
            method = message.get("method") if message is not None else None
            if self.protocol_version is not None and method != "initialize":
                headers["MCP-Protocol-Version"] = self.protocol_version
            if self.session_id is not None:
                headers["Mcp-Session-Id"] = self.session_id
        return headers

    async def _post(
        self, message: dict[str, Any], extra: Mapping[str, str] | None
    ) -> httpx.Response:
        headers = self._base_headers(message)
        headers["Content-Type"] = "application/json"
        if extra:
            headers.update(extra)
        body = codec.dumps(message)
        request = self.http.build_request("POST", self.url, content=body, headers=headers)
        return await self._send_with_retries(request)

    async def _send_with_retries(self, request: httpx.Request) -> httpx.Response:
        """Send, retrying connection failures (nothing reached the server) with backoff."""
        lib = load_httpx()
        delay = self.retry_backoff
        attempt = 0
        while True:
            try:
                return await self.http.send(request, stream=True, auth=self.auth)
            except (lib.ConnectError, lib.ConnectTimeout) as exc:
                attempt += 1
                if attempt > self.connect_retries:
                    raise ConnectionClosed(f"cannot connect to {self.url}: {exc}") from exc
                logger.info("connection to %s failed (%s); retrying in %.2fs", self.url, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            except lib.HTTPError as exc:
                raise ConnectionClosed(f"HTTP request to {self.url} failed: {exc}") from exc

    # -- one request ----------------------------------------------------------------------

    async def _run_request(
        self, request_id: RequestId, message: dict[str, Any], extra: Mapping[str, str] | None
    ) -> None:
        try:
            response = await self._post(message, extra)
            try:
                await self._handle_response(request_id, message, response)
            finally:
                await response.aclose()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._deliver(RequestFailed(request_id, exc))

    async def _handle_response(
        self, request_id: RequestId, message: dict[str, Any], response: httpx.Response
    ) -> None:
        status = response.status_code
        if self.era == "legacy" and message.get("method") == "initialize" and status < 300:
            self._take_session_id(response)
        if status >= 400:
            await self._error_response(request_id, response)
            return
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "text/event-stream":
            await self._read_stream(request_id, response)
        elif content_type == "application/json" or status == 200:
            body = await _read_limited(response, self.max_message)
            self._deliver(_decode_body(body, request_id))
        else:
            raise TransportError(f"HTTP {status} with no response to request {request_id!r}")

    async def _error_response(self, request_id: RequestId, response: httpx.Response) -> None:
        body = await _read_limited(response, _ERROR_BODY_LIMIT)
        text = body.decode("utf-8", "replace")
        status = response.status_code
        error = self._status_error(response, text)
        if isinstance(error, AuthorizationRequired):
            raise error
        if self.era == "legacy" and status == 404 and self.session_id is not None:
            self.session_id = None
            raise SessionExpired(status, text, "the server ended the session (HTTP 404)")
        try:
            value = codec.loads(body) if body.strip() else None
        except ProtocolError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            if value.get("id") is None:
                value = {**value, "id": request_id}
            if value.get("id") == request_id:
                self._deliver(value)
                return
        raise error

    def _take_session_id(self, response: httpx.Response) -> None:
        session = response.headers.get("mcp-session-id")
        if session is None:
            return
        if session and all(0x21 <= ord(ch) <= 0x7E for ch in session):
            self.session_id = session
        else:
            logger.warning("ignoring an Mcp-Session-Id that is not visible ASCII")

    async def _read_stream(self, request_id: RequestId, response: httpx.Response) -> None:
        """Deliver the stream's messages until our response; resume it if it ends early."""
        parser = SseParser(self.max_message)
        done = await self._consume(request_id, response, parser)
        resumptions = 0
        while not done:
            last_id = parser.last_event_id
            if self.era != "legacy" or last_id is None or resumptions >= MAX_RESUMPTIONS:
                raise ConnectionClosed(f"the response stream for request {request_id!r} ended")
            resumptions += 1
            await asyncio.sleep(retry_delay(parser))
            resumed = await self._open_get(last_id)
            try:
                if resumed.status_code >= 400:
                    await self._error_response(request_id, resumed)
                    return
                done = await self._consume(request_id, resumed, parser)
            finally:
                await resumed.aclose()

    async def _consume(
        self, request_id: RequestId, response: httpx.Response, parser: SseParser
    ) -> bool:
        """Read one SSE connection; True once the response to ``request_id`` was seen."""
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                message = decode_event(event)
                if message is None:
                    continue
                self._deliver(message)
                if _answers(message, request_id):
                    return True
        return False

    async def _open_get(self, last_event_id: str | None) -> httpx.Response:
        headers = self._base_headers(None)
        headers["Accept"] = "text/event-stream"
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        request = self.http.build_request("GET", self.url, headers=headers)
        return await self._send_with_retries(request)

    # -- the legacy GET stream --------------------------------------------------------------

    def open_listen_stream(self) -> None:
        """Open the legacy standalone GET stream for server-initiated messages (idempotent)."""
        if self.era != "legacy" or self._get_stream is not None:
            return
        self._get_stream = asyncio.get_running_loop().create_task(self._listen())

    async def _listen(self) -> None:
        parser = SseParser(self.max_message)
        while not self._closed:
            try:
                response = await self._open_get(parser.last_event_id)
            except MCPError as exc:  # a transport failure, or an authorization that failed
                logger.info("the GET stream could not be opened: %s", exc)
                return
            try:
                if response.status_code == 405:
                    logger.info("the server offers no GET stream (405)")
                    return
                if response.status_code >= 400:
                    logger.info("the GET stream was refused (HTTP %s)", response.status_code)
                    return
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        message = decode_event(event)
                        if message is not None:
                            self._deliver(message)
            except load_httpx().HTTPError as exc:
                logger.info("the GET stream broke: %s", exc)
            finally:
                await response.aclose()
            await asyncio.sleep(retry_delay(parser))

    def _deliver(self, message: Any) -> None:
        if self._receiver is not None:
            self._receiver(message)


def retry_delay(parser: SseParser) -> float:
    """Seconds to wait before reconnecting: the stream's last ``retry``, or the default."""
    return (DEFAULT_RETRY_MS if parser.retry_ms is None else parser.retry_ms) / 1000


def standard_headers(message: dict[str, Any]) -> dict[str, str]:
    """``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` for a modern request
    (spec ``streamable-http.mdx`` §Standard Request Headers)."""
    headers: dict[str, str] = {}
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    if isinstance(meta, dict):
        version = meta.get(PROTOCOL_VERSION)
        if isinstance(version, str):
            headers["MCP-Protocol-Version"] = version
    if isinstance(method, str):
        headers["Mcp-Method"] = encode_header_value(method)
        spec = CLIENT_REQUESTS.get(method)
        if spec is not None and spec.name_param is not None:
            name = params.get(spec.name_param)
            if isinstance(name, str):
                headers["Mcp-Name"] = encode_header_value(name)
    return headers


def _answers(message: Any, request_id: RequestId) -> bool:
    return (
        isinstance(message, dict)
        and message.get("id") == request_id
        and ("result" in message or "error" in message)
        and "method" not in message
    )


def _decode_body(body: bytes, request_id: RequestId) -> Any:
    try:
        return codec.loads(body)
    except ProtocolError as exc:
        return RequestFailed(request_id, TransportError(f"unreadable response body: {exc}"))


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            raise TransportError(f"response body exceeds the limit of {limit} bytes")
    return bytes(data)
