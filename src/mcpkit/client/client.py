"""The :class:`Client`: talk to any MCP server, modern or legacy, over any client transport.

On the first request the client learns the server's era (:mod:`mcpkit.client.probe`; a
``mode`` can force one) and from then on speaks it:

* **modern** (``2026-07-28``, spec ``basic/index.mdx``): every request carries ``_meta``
  with the protocol version, the client capabilities, the client info and, when set, the
  log level; on HTTP the transport mirrors them into headers, and ``x-mcp-header`` tool
  parameters into ``Mcp-Param-*`` headers (tools with invalid annotations are dropped with
  a warning). ``input_required`` results are driven to completion by
  :mod:`mcpkit.client.mrtr` with the client's :class:`~mcpkit.client.handlers.Handlers`.
  -32022 is answered by retrying at a mutually supported version.
* **legacy** (``2025-11-25`` and older, spec ``2025-11-25/basic/lifecycle.mdx``): an
  ``initialize`` handshake, then plain requests; the same handlers answer the server's
  ``elicitation/create``, ``sampling/createMessage``, ``roots/list`` and ``ping`` requests.

Around that: cacheable results are kept for their ``ttlMs`` and dropped on list-changed
notifications (:mod:`mcpkit.client.caching`); :meth:`Client.subscribe` gives change
notifications as an async iterator; progress and log callbacks; every request has a
timeout (``DEFAULT_TIMEOUT`` unless given) and is cancelled on the server when it times out
or its caller is cancelled (stdio: ``notifications/cancelled``; HTTP: the stream is
closed). A stdio server that dies is restarted with backoff up to a cap, subscriptions are
re-opened and idempotent requests retried; on HTTP, idempotent requests are retried after
connection failures. Errors the *server* sent are :class:`~mcpkit.errors.ProtocolError`
with ``remote=True``; local failures are :class:`~mcpkit.errors.TransportError`,
:class:`~mcpkit.errors.RequestTimeout` or :class:`~mcpkit.errors.ServerMisbehaved`.

>>> async with Client.stdio([sys.executable, "examples/notes_server.py"]) as client:
...     tools = await client.list_tools()
...     result = await client.call_tool("read_note", {"title": "standup"})
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from mcpkit._version import __version__
from mcpkit.client import probe
from mcpkit.client.caching import CACHEABLE, ResponseCache
from mcpkit.client.handlers import (
    ElicitationHandler,
    Handlers,
    RootsProvider,
    SamplingHandler,
)
from mcpkit.client.headers import HeaderPlan, InvalidHeaderAnnotation, header_plan, param_headers
from mcpkit.client.mrtr import DEFAULT_MAX_ROUNDS, ServerMisbehaved, drive, result_type
from mcpkit.client.subscriptions import Subscription, Subscriptions, notification_filter
from mcpkit.errors import (
    ConnectionClosed,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    MethodNotFound,
    ProtocolError,
    RequestId,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import jsonrpc, versions
from mcpkit.protocol.jsonrpc import ErrorResponse, Notification, Request, Response
from mcpkit.protocol.meta import (
    PROGRESS_TOKEN,
    SERVER_INFO,
    SUBSCRIPTION_ID,
    build_request_meta,
)
from mcpkit.protocol.schema import CompiledSchema, SchemaError, compile_schema
from mcpkit.transports.http_client import (
    AuthorizationRequired,
    HttpClientTransport,
    HttpStatusError,
    RequestFailed,
    SessionExpired,
)
from mcpkit.transports.sse_client import SseClientTransport
from mcpkit.transports.stdio_client import StdioClientTransport

if TYPE_CHECKING:
    from mcpkit.auth.tokens import TokenStore

logger = logging.getLogger("mcpkit.client")

DEFAULT_TIMEOUT = 60.0
DEFAULT_PROBE_TIMEOUT = 5.0

Mode = Literal["auto", "modern", "legacy"]

__all__ = [
    "DEFAULT_TIMEOUT",
    "CallToolResult",
    "Client",
    "ClientTransport",
    "RestartPolicy",
]

# Requests that may be sent again after a connection failure: they change nothing.
IDEMPOTENT = frozenset(
    {
        "server/discover",
        "initialize",
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)


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
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )

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


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """How a crashed stdio server is restarted: exponential backoff with jitter, at most
    ``max_restarts`` restarts within ``window`` seconds (then the client gives up)."""

    max_restarts: int = 5
    window: float = 60.0
    initial_delay: float = 0.1
    max_delay: float = 5.0


ProgressCallback = Callable[[float, float | None, str | None], Any]
LogCallback = Callable[[dict[str, Any]], Any]
NotificationCallback = Callable[[str, dict[str, Any]], Any]


@runtime_checkable
class _Authorizing(Protocol):
    """An ``auth`` that can be busy signing in (:class:`mcpkit.auth.OAuth`)."""

    @property
    def authorizing(self) -> bool: ...

    async def wait_authorized(self) -> None: ...


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Response | ErrorResponse]
    method: str


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
        legacy_version: str = versions.LATEST_LEGACY,
        mode: Mode = "auto",
        timeout: float = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        probe_process: Literal["same", "disposable"] = "same",
        log_level: str | None = None,
        on_log: LogCallback | None = None,
        on_notification: NotificationCallback | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsProvider | None = None,
        handlers: Handlers | None = None,
        cache: ResponseCache | bool = True,
        era_cache: probe.EraCache | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        restart: RestartPolicy | None = RestartPolicy(),
        retries: int = 2,
        validate_output: bool = True,
    ) -> None:
        if mode not in ("auto", "modern", "legacy"):
            raise ValueError(f"mode must be 'auto', 'modern' or 'legacy', not {mode!r}")
        if not versions.is_modern(protocol_version):
            raise ValueError(f"{protocol_version!r} is not a modern protocol version")
        if not versions.is_legacy(legacy_version):
            raise ValueError(f"{legacy_version!r} is not a legacy protocol version")
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.extra_capabilities: dict[str, Any] = dict(capabilities or {})
        self.protocol_version = protocol_version
        self.legacy_version = legacy_version
        self.mode: Mode = mode
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.probe_process = probe_process
        self.log_level = log_level
        self.on_log = on_log
        self.on_notification = on_notification
        self.handlers = handlers or Handlers(
            elicitation=elicitation, sampling=sampling, roots=roots
        )
        self.cache: ResponseCache | None = (
            cache if isinstance(cache, ResponseCache) else ResponseCache() if cache else None
        )
        self.era_cache = era_cache if era_cache is not None else probe.DEFAULT_ERA_CACHE
        self.max_rounds = max_rounds
        self.restart_policy = restart
        self.retries = retries
        self.validate_output = validate_output

        self.era: probe.Era | None = None
        self.negotiated_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.discover_result: dict[str, Any] | None = None
        self.initialize_result: dict[str, Any] | None = None
        self.restarts = 0

        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._subscriptions = Subscriptions(self)
        self._tool_plans: dict[str, HeaderPlan] = {}
        self._rejected_tools: dict[str, str] = {}
        self._output_schemas: dict[str, Any] = {}
        self._compiled_outputs: dict[str, CompiledSchema] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._restart_times: list[float] = []
        self._connect_lock = asyncio.Lock()
        self._ready = asyncio.Event()
        self._started = False
        self._establishing = False
        self._restarting = False
        self._verdict_cached = False
        self._closing = False
        self._closed = False
        self._dead: Exception | None = None

    # -- construction -------------------------------------------------------------------

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
        return cls(StdioClientTransport(command, env=env, cwd=cwd, stderr=stderr), **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        oauth: bool = False,
        token_store: TokenStore | str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a Streamable HTTP endpoint (falling back to HTTP+SSE for the oldest
        servers).

        ``auth`` is any :class:`httpx.Auth`, applied to every HTTP request; for a server
        that needs OAuth (spec ``basic/authorization/``) give it an
        :class:`mcpkit.auth.OAuth`, which answers the server's ``401``/``403`` challenges
        by discovering its authorization server, signing in and retrying::

            auth = OAuth(url, ClientConfig(redirect_uri=...), redirect_handler=..., store=...)
            async with Client.http(url, auth=auth) as client: ...

        ``oauth=True`` is the shortcut for a person at this machine:
        :meth:`mcpkit.auth.OAuth.interactive` -- the system browser, a loopback callback,
        the client ``name`` for registration, and tokens kept in ``token_store`` (a
        :class:`~mcpkit.auth.TokenStore`, or a path for a 0600 file; default: memory)::

            async with Client.http(url, oauth=True, token_store="~/.app/tokens.json") as c: ...

        Time spent signing in does not count against request or probe timeouts. Errors of
        the flow reach the caller as :class:`~mcpkit.auth.OAuthFlowError` (or its
        :class:`~mcpkit.auth.AuthorizationDenied`); a server that wants credentials it did
        not get raises :class:`~mcpkit.transports.http_client.AuthorizationRequired`.
        """
        if oauth:
            if auth is not None:
                raise ValueError("give either auth= or oauth=True, not both")
            from mcpkit.auth.client import OAuth

            auth = OAuth.interactive(
                url, store=token_store, client_name=options.get("name", "mcpkit")
            )
        elif token_store is not None:
            raise ValueError("token_store= only goes with oauth=True")
        return cls(HttpClientTransport(url, headers=headers, auth=auth), **options)

    # -- derived properties -------------------------------------------------------------

    @property
    def capabilities(self) -> dict[str, Any]:
        """The capabilities this client declares in the current era."""
        caps = self.handlers.capabilities(self.era or "modern")
        caps.update(self.extra_capabilities)
        return caps

    @property
    def is_http(self) -> bool:
        return isinstance(self.transport, HttpClientTransport | SseClientTransport)

    @property
    def _auth_context(self) -> str:
        auth = getattr(self.transport, "auth", None)
        return f"auth:{id(auth)}" if auth is not None else f"client:{id(self)}"

    def _wire(self) -> probe.Wire:
        if isinstance(self.transport, SseClientTransport):
            return "sse"
        if isinstance(self.transport, HttpClientTransport):
            return "streamable"
        return "stream"

    def _server_key(self) -> str | None:
        key = getattr(self.transport, "server_key", None)
        return key if isinstance(key, str) else None

    # -- lifecycle ----------------------------------------------------------------------

    async def connect(self) -> None:
        """Start the transport and learn the server's era (idempotent)."""
        async with self._connect_lock:
            if self._closed:
                raise ConnectionClosed("the client is closed")
            if self._ready.is_set():
                return
            if not self._started:
                await self.transport.start(self._receive, self._connection_lost)
                self._started = True
            await self._establish()
            self._ready.set()

    async def close(self) -> None:
        """Stop listening, close the transport (stdio: the full shutdown sequence)."""
        if self._closed:
            return
        self._closed = True
        self._closing = True
        self._subscriptions.end_all()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        try:
            await self.transport.close()
        finally:
            self._fail_pending(ConnectionClosed("the client was closed"))
            self._dead = ConnectionClosed("the client was closed")
            self._ready.set()

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

    async def _ensure_ready(self) -> None:
        if self._dead is not None:
            raise self._dead
        if not self._ready.is_set() and not self._restarting:
            await self.connect()
        await self._ready.wait()
        if self._dead is not None:
            raise self._dead

    # -- era ----------------------------------------------------------------------------

    async def _establish(self) -> None:
        """Decide the era (forced, cached or probed) and complete its handshake."""
        with self._handshaking():
            key = self._server_key()
            cached = self.era_cache.get(key) if self.mode == "auto" else None
            if cached is not None:
                try:
                    await self._adopt(cached, None)
                    self._verdict_cached = cached.era == "modern"
                    return
                except AuthorizationRequired:
                    raise
                except (ProtocolError, HttpStatusError) as exc:
                    logger.info("cached era verdict failed (%s); probing again", exc)
                    self.era_cache.forget(key)
            if self.mode == "modern":
                verdict = probe.Verdict("modern", self.protocol_version, self._wire())
                discovered = None
            elif self.mode == "legacy":
                verdict = probe.Verdict("legacy", self.legacy_version, self._wire())
                discovered = None
            else:
                verdict, discovered = await self._detect()
            verdict = await self._adopt(verdict, discovered)
            if self.mode == "auto":
                self.era_cache.put(key, verdict)

    @contextlib.contextmanager
    def _handshaking(self) -> Iterator[None]:
        """While the era is decided or a session opened: no retries, and a lost
        connection fails what is pending instead of restarting the server."""
        self._establishing = True
        try:
            yield
        finally:
            self._establishing = False

    async def _reprobe(self, reason: Exception) -> None:
        """The cached verdict said modern but the server answers like a legacy one."""
        logger.info("the cached era verdict failed (%s); probing again", reason)
        self._verdict_cached = False
        self.era_cache.forget(self._server_key())
        async with self._connect_lock:
            self._ready.clear()
            try:
                self.era = None
                with self._handshaking():
                    verdict, discovered = await self._detect()
                verdict = await self._adopt(verdict, discovered)
                self.era_cache.put(self._server_key(), verdict)
            finally:
                self._ready.set()

    async def _detect(self) -> tuple[probe.Verdict, dict[str, Any] | None]:
        """Probe the server's era (on a throwaway process when so configured)."""
        if self.probe_process == "disposable" and isinstance(self.transport, StdioClientTransport):
            return await self._probe_disposable()
        return await probe.detect(self)

    async def _adopt(
        self, verdict: probe.Verdict, discovered: dict[str, Any] | None
    ) -> probe.Verdict:
        if verdict.era == "modern":
            self.era = "modern"
            self.protocol_version = verdict.version
            self.negotiated_version = verdict.version
            if isinstance(self.transport, HttpClientTransport):
                self.transport.use_modern()
            if discovered is not None:
                self._take_discover(discovered)
            return verdict
        self.era = "legacy"
        wire = await self._initialize(prefer_sse=verdict.wire == "sse")
        return probe.Verdict("legacy", self.legacy_version, wire)

    async def _probe_discover(self, version: str) -> dict[str, Any]:
        """``server/discover`` at ``version`` with a short timeout (used by the probe)."""
        if isinstance(self.transport, HttpClientTransport):
            self.transport.use_modern()
        params = {"_meta": self._meta(version)}
        return await self._send_raw(
            "server/discover", params, timeout=self.probe_timeout, cancel=False, retry=False
        )

    def _probe_failure_means_legacy(self, exc: TransportError) -> bool:
        """A non-modern HTTP status, or a stdio process that died on the probe. A server
        that wants authorization says nothing about its era: that is the caller's error."""
        if isinstance(exc, AuthorizationRequired):
            return False
        if isinstance(exc, HttpStatusError):
            return True
        return bool(getattr(self.transport, "restartable", False)) and isinstance(
            exc, ConnectionClosed
        )

    async def _recover_after_probe(self) -> None:
        if getattr(self.transport, "restartable", False) and not isinstance(
            self.transport, HttpClientTransport
        ):
            logger.info("the server exited on the probe; starting it again")
            await self.transport.start(self._receive, self._connection_lost)

    async def _probe_disposable(self) -> tuple[probe.Verdict, dict[str, Any] | None]:
        """Probe a throwaway process of the same server, so the real one never sees a
        message it might choke on."""
        assert isinstance(self.transport, StdioClientTransport)
        clone = self.transport.clone()
        scout = Client(
            clone,
            mode="modern",
            name=self.client_info["name"],
            version=self.client_info["version"],
            capabilities=self.extra_capabilities,
            protocol_version=self.protocol_version,
            legacy_version=self.legacy_version,
            probe_timeout=self.probe_timeout,
            handlers=self.handlers,
            restart=None,
            cache=False,
        )
        scout.era = "modern"
        await clone.start(scout._receive, scout._connection_lost)
        scout._started = True
        scout._establishing = True
        try:
            verdict, discovered = await probe.detect(scout)
        finally:
            await scout.close()
        return probe.Verdict(verdict.era, verdict.version, "stream"), discovered

    async def _initialize(self, *, prefer_sse: bool = False) -> probe.Wire:
        """The legacy handshake; on HTTP, fall back to HTTP+SSE when the endpoint refuses."""
        if prefer_sse and isinstance(self.transport, HttpClientTransport):
            await self._switch_to_sse()
        if isinstance(self.transport, HttpClientTransport | SseClientTransport):
            self.transport.use_legacy(None)
        try:
            result = await self._send_initialize()
        except HttpStatusError as exc:
            if not isinstance(self.transport, HttpClientTransport) or exc.status not in (
                400,
                404,
                405,
            ):
                raise
            logger.info("initialize refused with HTTP %s; trying HTTP+SSE", exc.status)
            await self._switch_to_sse()
            result = await self._send_initialize()
        version = result.get("protocolVersion")
        if not versions.is_legacy(version):
            raise UnsupportedProtocolVersion(
                list(versions.LEGACY_VERSIONS),
                version,
                f"the server answered initialize with version {version!r}, which this "
                "client does not speak",
            )
        assert isinstance(version, str)
        self.negotiated_version = version
        if isinstance(self.transport, HttpClientTransport | SseClientTransport):
            self.transport.use_legacy(version)
        self.initialize_result = result
        self._take_identity(result, result.get("serverInfo"))
        await self.notify("notifications/initialized")
        self._open_listen_stream()
        if self.log_level is not None and "logging" in self.server_capabilities:
            await self._send_raw("logging/setLevel", {"level": self.log_level})
        return self._wire()

    async def _send_initialize(self) -> dict[str, Any]:
        params = {
            "protocolVersion": self.legacy_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        return await self._send_raw("initialize", params)

    async def _switch_to_sse(self) -> None:
        old = self.transport
        assert isinstance(old, HttpClientTransport)
        sse = SseClientTransport(old.url, headers=old.headers, auth=old.auth)
        await sse.start(self._receive, self._connection_lost)
        self.transport = sse
        await old.close()

    def _open_listen_stream(self) -> None:
        """Legacy Streamable HTTP: server messages that belong to no request (list
        changes, resource updates) arrive on the session's GET stream."""
        if isinstance(self.transport, HttpClientTransport):
            self.transport.open_listen_stream()

    def _take_discover(self, result: dict[str, Any]) -> None:
        self.discover_result = result
        meta = result.get("_meta")
        info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
        if not isinstance(info, dict):
            info = result.get("serverInfo")
        self._take_identity(result, info)

    def _take_identity(self, result: dict[str, Any], info: Any) -> None:
        """Capabilities, identity and instructions from ``initialize`` or ``server/discover``
        (whatever is malformed is taken as absent)."""
        caps = result.get("capabilities")
        instructions = result.get("instructions")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        self.server_info = info if isinstance(info, dict) else {}
        self.instructions = instructions if isinstance(instructions, str) else None

    # -- sending ------------------------------------------------------------------------

    def _meta(self, version: str | None = None) -> dict[str, Any]:
        return build_request_meta(
            version or self.protocol_version, self.capabilities, self.client_info, self.log_level
        )

    async def _transmit(self, message: dict[str, Any], headers: Mapping[str, str] | None) -> None:
        transport = self.transport
        if headers and isinstance(transport, HttpClientTransport):
            await transport.send(message, headers=headers)
        else:
            await transport.send(message)

    async def _send_raw(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        cancel: bool = True,
        retry: bool | None = None,
    ) -> dict[str, Any]:
        """One JSON-RPC request (plus retries of idempotent ones after connection loss)."""
        may_retry = (method in IDEMPOTENT) if retry is None else retry
        attempt = 0
        while True:
            try:
                return await self._send_once(method, params, timeout, headers, cancel)
            except (ConnectionClosed, TransportError) as exc:
                if (
                    not may_retry
                    or isinstance(exc, HttpStatusError)
                    or attempt >= self.retries
                    or self._closing
                    or self._establishing
                ):
                    raise
                attempt += 1
                logger.info("%s failed (%s); retrying (%d/%d)", method, exc, attempt, self.retries)
                await asyncio.sleep(0.05 * 2**attempt)
                await self._ready.wait()
                if self._dead is not None:
                    raise self._dead from exc

    async def _send_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        headers: Mapping[str, str] | None,
        cancel: bool,
    ) -> dict[str, Any]:
        request_id = next(self._ids)
        future = self._expect_reply(request_id, method)
        limit = self.timeout if timeout is None else timeout
        try:
            await self._transmit(jsonrpc.request(request_id, method, params), headers)
            reply = await self._wait_reply(future, limit)
        except TimeoutError:
            if cancel:
                await self._cancel_on_server(request_id, "timed out")
            raise RequestTimeout(f"{method} got no answer within {limit:g}s") from None
        except asyncio.CancelledError:
            if cancel:
                await self._cancel_on_server(request_id, "cancelled by the caller")
            raise
        finally:
            self._pending.pop(request_id, None)
            if not future.done():
                future.cancel()
        if isinstance(reply, ErrorResponse):
            raise reply.exception
        return reply.result

    def _expect_reply(
        self, request_id: RequestId, method: str
    ) -> asyncio.Future[Response | ErrorResponse]:
        """The future that :meth:`_receive` resolves with the answer to ``request_id``."""
        future: asyncio.Future[Response | ErrorResponse] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[request_id] = _Pending(future, method)
        return future

    async def _wait_reply(
        self, future: asyncio.Future[Response | ErrorResponse], limit: float
    ) -> Response | ErrorResponse:
        """The answer within ``limit`` seconds, not counting time spent signing in: when
        the deadline passes while the transport's auth is authorizing (a person in a
        browser), the request gets its full ``limit`` again once that is over."""
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(future), limit)
            except TimeoutError:
                auth = getattr(self.transport, "auth", None)
                if not isinstance(auth, _Authorizing) or not auth.authorizing:
                    raise
            waiter: asyncio.Future[Any] = asyncio.ensure_future(auth.wait_authorized())
            either: list[asyncio.Future[Any]] = [future, waiter]
            try:
                await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
            if future.done():
                return future.result()

    async def _cancel_on_server(self, request_id: RequestId, reason: str) -> None:
        """HTTP: close the request's stream; otherwise send ``notifications/cancelled``."""
        if self._closing:
            return
        cancel = getattr(self.transport, "cancel", None)
        try:
            if cancel is not None and await cancel(request_id):
                return
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )
        except (TransportError, ProtocolError) as exc:
            logger.debug("could not cancel request %r: %s", request_id, exc)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        await self.transport.send(jsonrpc.notification(method, params))

    # -- requests -----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        idempotent: bool | None = None,
    ) -> dict[str, Any]:
        """Send a request in the server's era and return its final result (or raise its error).

        Modern: ``_meta`` is added, ``input_required`` is driven to completion and -32022 is
        retried at a mutual version. Cacheable results are served from and stored in the
        cache. ``timeout`` bounds each round trip; ``idempotent`` overrides whether the
        request may be retried after a connection failure.
        """
        result, _ = await self._request(method, params, timeout, on_progress, idempotent)
        return result

    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        idempotent: bool | None,
        use_cache: bool = True,
    ) -> tuple[dict[str, Any], bool]:
        await self._ensure_ready()
        body = dict(params) if params else {}
        cache = self.cache if use_cache and method in CACHEABLE else None
        if cache is not None and not on_progress:
            hit = cache.get(method, body, self._auth_context)
            if hit is not None:
                return hit, True
        token: int | None = None
        if on_progress is not None:
            token = next(self._tokens)
            self._progress[token] = on_progress
        try:
            if self.era == "legacy":
                result = await self._legacy_request(method, body, timeout, token, idempotent)
                rounds = 0
            else:
                try:
                    result, rounds = await self._modern_request(
                        method, body, timeout, token, idempotent
                    )
                except ProtocolError as exc:
                    if not self._verdict_cached or isinstance(
                        exc, (*probe.RECOGNISED_MODERN_ERRORS, InvalidParams)
                    ):
                        raise
                    await self._reprobe(exc)
                    return await self._request(
                        method, params, timeout, on_progress, idempotent, use_cache
                    )
                self._verdict_cached = False
        finally:
            if token is not None:
                self._progress.pop(token, None)
        if cache is not None and rounds == 0:
            cache.put(method, body, result, self._auth_context)
        return result, False

    async def _modern_request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        token: int | None,
        idempotent: bool | None,
    ) -> tuple[dict[str, Any], int]:
        refreshed_tools = False

        async def send_round(body: dict[str, Any]) -> dict[str, Any]:
            nonlocal refreshed_tools
            version_retried = False
            while True:
                full = dict(body)
                full["_meta"] = self._request_meta(body.get("_meta"), token)
                headers = await self._param_headers(method, body)
                try:
                    return await self._send_raw(
                        method, full, timeout=timeout, headers=headers, retry=idempotent
                    )
                except UnsupportedProtocolVersion as exc:
                    mutual = probe.pick_modern(exc.supported, self.protocol_version)
                    if mutual is None or version_retried:
                        raise
                    version_retried = True
                    logger.info("retrying %s at protocol version %s", method, mutual)
                    self.protocol_version = mutual
                    self.negotiated_version = mutual
                except HeaderMismatch:
                    if method != "tools/call" or refreshed_tools or not self.is_http:
                        raise
                    refreshed_tools = True
                    logger.info("header mismatch on tools/call; refreshing the tool list")
                    await self.list_tools(use_cache=False)

        return await drive(method, params, send_round, self.handlers, self.max_rounds)

    def _request_meta(self, extra: Any, token: int | None) -> dict[str, Any]:
        meta = self._meta()
        if isinstance(extra, dict):
            meta = {**extra, **meta}
        if token is not None:
            meta[PROGRESS_TOKEN] = token
        return meta

    async def _legacy_request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        token: int | None,
        idempotent: bool | None,
    ) -> dict[str, Any]:
        if method == "server/discover":
            return self._synthetic_discover()
        body = dict(params)
        if token is not None:
            extra = body.get("_meta")
            body["_meta"] = {**(extra if isinstance(extra, dict) else {}), PROGRESS_TOKEN: token}
        try:
            result = await self._send_raw(method, body or None, timeout=timeout, retry=idempotent)
        except SessionExpired:
            logger.info("the legacy session expired; initializing a new one")
            await self._initialize()
            result = await self._send_raw(method, body or None, timeout=timeout, retry=idempotent)
        if result_type(result) != "complete":
            raise ServerMisbehaved(f"a legacy server answered {method} with input_required")
        return result

    def _synthetic_discover(self) -> dict[str, Any]:
        """What ``discover()`` shows for a legacy server: the initialize result, reshaped."""
        result: dict[str, Any] = {
            "supportedVersions": [self.negotiated_version] if self.negotiated_version else [],
            "capabilities": self.server_capabilities,
            "_meta": {SERVER_INFO: self.server_info},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    # -- the methods --------------------------------------------------------------------

    async def discover(self) -> dict[str, Any]:
        """``server/discover``: versions, capabilities, identity (legacy: from initialize)."""
        result = await self.request("server/discover")
        if self.era == "modern":
            self._take_discover(result)
        return result

    async def ping(self) -> dict[str, Any]:
        """``ping`` (legacy sessions only; removed in 2026-07-28)."""
        return await self.request("ping")

    async def set_log_level(self, level: str) -> None:
        """Ask for log messages at ``level`` and above (modern: per-request ``_meta``)."""
        self.log_level = level
        if self.era == "legacy":
            await self.request("logging/setLevel", {"level": level})

    async def _paginate(
        self, method: str, key: str, use_cache: bool = True
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params = {"cursor": cursor} if cursor else None
            result, _ = await self._request(method, params, None, None, None, use_cache)
            page = result.get(key)
            if isinstance(page, list):
                items.extend(item for item in page if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                return items
            seen.add(cursor)

    async def list_tools(self, *, use_cache: bool = True) -> list[dict[str, Any]]:
        """Every tool the server offers (all pages). Over HTTP, tools whose ``x-mcp-header``
        annotations are invalid are left out, with a warning (spec ``server/tools.mdx``)."""
        tools = await self._paginate("tools/list", "tools", use_cache)
        kept: list[dict[str, Any]] = []
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str):
                continue
            self._output_schemas[name] = tool.get("outputSchema")
            self._compiled_outputs.pop(name, None)
            if self.is_http:
                try:
                    self._tool_plans[name] = header_plan(tool.get("inputSchema"))
                except InvalidHeaderAnnotation as exc:
                    logger.warning("rejecting tool %r: %s", name, exc)
                    self._rejected_tools[name] = str(exc)
                    self._tool_plans.pop(name, None)
                    continue
                self._rejected_tools.pop(name, None)
            kept.append(tool)
        return kept

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """Call a tool; a tool that failed gives ``is_error=True``, not an exception."""
        if name in self._rejected_tools:
            raise InvalidParams(
                f"tool {name!r} was rejected: {self._rejected_tools[name]}", remote=False
            )
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if meta:
            params["_meta"] = dict(meta)
        result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        call = CallToolResult.from_wire(result)
        if self.validate_output and not call.is_error and "structuredContent" in result:
            self._check_output(name, call.structured)
        return call

    def _check_output(self, name: str, structured: Any) -> None:
        schema = self._output_schemas.get(name)
        if not isinstance(schema, dict):
            return
        compiled = self._compiled_outputs.get(name)
        if compiled is None:
            try:
                compiled = compile_schema(schema)
            except SchemaError as exc:
                raise ServerMisbehaved(
                    f"tool {name!r} has an unusable outputSchema: {exc}"
                ) from exc
            self._compiled_outputs[name] = compiled
        problems = compiled.problems(structured)
        if problems:
            raise ServerMisbehaved(
                f"tool {name!r} returned structured content that breaks its outputSchema: "
                + "; ".join(problems)
            )

    async def _param_headers(self, method: str, body: Mapping[str, Any]) -> dict[str, str] | None:
        """``Mcp-Param-*`` headers for a modern tools/call over HTTP."""
        if method != "tools/call" or not isinstance(self.transport, HttpClientTransport):
            return None
        name = body.get("name")
        if not isinstance(name, str):
            return None
        if name not in self._tool_plans and name not in self._rejected_tools:
            await self.list_tools()
        plan = self._tool_plans.get(name)
        if plan is None:
            return None
        arguments = body.get("arguments")
        return param_headers(plan, arguments if isinstance(arguments, Mapping) else None) or None

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._paginate("prompts/list", "prompts")

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.request("prompts/get", params, timeout=timeout)

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._paginate("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._paginate("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri}, timeout=timeout)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context is not None:
            params["context"] = dict(context)
        return await self.request("completion/complete", params)

    async def notify_roots_changed(self) -> None:
        """Tell a legacy server the roots changed (modern servers ask on every request)."""
        if self.era == "legacy" and "roots" in self.capabilities:
            await self.notify("notifications/roots/list_changed")

    # -- subscriptions ------------------------------------------------------------------

    def subscribe(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        ack_timeout: float | None = None,
    ) -> Subscription:
        """A subscription to change notifications; use ``async with`` and ``async for``."""
        filter_ = notification_filter(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        )
        return Subscription(self, filter_, self.timeout if ack_timeout is None else ack_timeout)

    # -- incoming -----------------------------------------------------------------------

    def _receive(self, frame: Any) -> None:
        if isinstance(frame, RequestFailed):
            self._fail_request(frame.request_id, frame.error)
            return
        if isinstance(frame, ProtocolError):
            logger.warning("unreadable message from the server: %s", frame.message)
            return
        try:
            message = jsonrpc.parse_message(frame)
        except ProtocolError as exc:
            logger.warning("invalid message from the server: %s", exc.message)
            return
        if isinstance(message, Response | ErrorResponse):
            pending = self._pending.get(message.id) if message.id is not None else None
            if pending is not None and not pending.future.done():
                pending.future.set_result(message)
            elif message.id is None and isinstance(message, ErrorResponse):
                logger.warning("server error without an id: %s", message.error)
            return
        if isinstance(message, Notification):
            self._notification(message)
        else:
            self._server_request(message)

    def _fail_request(self, request_id: RequestId, error: Exception) -> None:
        pending = self._pending.get(request_id)
        if pending is not None and not pending.future.done():
            pending.future.set_exception(error)

    def _notification(self, message: Notification) -> None:
        method = message.method
        params = message.params or {}
        meta = params.get("_meta")
        subscription_id = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if method == "notifications/progress":
            token = params.get("progressToken")
            callback = self._progress.get(token) if isinstance(token, str | int) else None
            if callback is not None:
                self._call_back(
                    callback, params.get("progress", 0), params.get("total"), params.get("message")
                )
        elif method == "notifications/message":
            if self.on_log is not None:
                self._call_back(self.on_log, params)
        elif method == "notifications/subscriptions/acknowledged":
            self._subscriptions.acknowledged(subscription_id, params.get("notifications"))
        elif method == "notifications/cancelled":
            self._subscriptions.server_cancelled(params)
        else:
            if self.cache is not None:
                self.cache.notify(method, params)
            self._subscriptions.route(method, params, subscription_id)
        if self.on_notification is not None:
            self._call_back(self.on_notification, method, params)

    def _call_back(self, callback: Callable[..., Any], *args: Any) -> None:
        try:
            value = callback(*args)
        except Exception:
            logger.exception("a client callback failed")
            return
        if asyncio.iscoroutine(value):
            self._spawn(value)

    def _server_request(self, message: Request) -> None:
        if self.era == "modern":
            logger.warning("a modern server sent a %s request; refusing it", message.method)
            error = MethodNotFound(
                "server-to-client requests are not part of this protocol version; "
                "use input_required"
            )
            self._spawn(self._reply(jsonrpc.error_response(message.id, error)))
            return
        self._spawn(self._answer_server_request(message))

    async def _answer_server_request(self, message: Request) -> None:
        try:
            result = await self.handlers.answer(message.method, message.params)
            reply = jsonrpc.result_response(message.id, result)
        except ProtocolError as exc:
            reply = jsonrpc.error_response(message.id, exc)
        except Exception:
            logger.exception("the handler for %s failed", message.method)
            reply = jsonrpc.error_response(message.id, InternalError("the client's handler failed"))
        await self._reply(reply)

    async def _reply(self, reply: dict[str, Any]) -> None:
        try:
            await self.transport.send(reply)
        except TransportError as exc:
            logger.info("could not answer the server: %s", exc)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("client task failed", exc_info=task.exception())

    # -- losing the connection ----------------------------------------------------------

    def _connection_lost(self) -> None:
        if self._closing:
            self._fail_pending(ConnectionClosed("the client was closed"))
            return
        error = ConnectionClosed("the server closed the connection")
        if self._establishing:
            self._fail_pending(error)
            return
        self._ready.clear()
        self._fail_pending(error)
        if self._can_restart():
            self._restarting = True
            self._spawn(self._restart())
        elif self.restart_policy is not None and getattr(self.transport, "restartable", False):
            self._give_up(ConnectionClosed("the server keeps exiting; giving up restarting it"))
        else:
            self._give_up(error)

    def _can_restart(self) -> bool:
        policy = self.restart_policy
        if policy is None or not getattr(self.transport, "restartable", False):
            return False
        now = time.monotonic()
        self._restart_times = [t for t in self._restart_times if now - t < policy.window]
        return len(self._restart_times) < policy.max_restarts

    async def _restart(self) -> None:
        """Start the server again with backoff, redo the handshake, resume subscriptions."""
        policy = self.restart_policy
        assert policy is not None
        try:
            await self._restart_loop(policy)
        finally:
            self._restarting = False

    async def _restart_loop(self, policy: RestartPolicy) -> None:
        while self._can_restart() and not self._closing:
            # The delay doubles with every restart still inside the window, so a server
            # that starts and then crashes at once backs off as surely as one that
            # cannot be started at all.
            delay = min(policy.initial_delay * 2 ** len(self._restart_times), policy.max_delay)
            self._restart_times.append(time.monotonic())
            await asyncio.sleep(delay * (1 + random.random() / 4))
            try:
                await self.transport.start(self._receive, self._connection_lost)
                with self._handshaking():
                    if self.era == "legacy":
                        await self._initialize()
                self.restarts += 1
                logger.info("the server was restarted (%d restarts)", self.restarts)
                self._ready.set()
                self._subscriptions.resubscribe_legacy()
                return
            except (TransportError, ProtocolError, RequestTimeout, OSError) as exc:
                logger.warning("restarting the server failed: %s", exc)
        self._give_up(ConnectionClosed("the server keeps exiting; giving up restarting it"))

    def _give_up(self, error: Exception) -> None:
        self._dead = error
        self._ready.set()
        self._subscriptions.end_all(error)

    def _fail_pending(self, error: Exception) -> None:
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(error)
