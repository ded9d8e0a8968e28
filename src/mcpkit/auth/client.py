"""The httpx adapter for the OAuth client flow: :class:`OAuth`, an :class:`httpx.Auth`.

Give it to any ``httpx.AsyncClient`` request (the Streamable HTTP client transport takes
it as ``auth=``)::

    auth = OAuth(
        "https://mcp.example.com/mcp",
        ClientConfig(redirect_uri="http://127.0.0.1:33418/callback"),
        redirect_handler=LoopbackRedirectHandler(),
        store=FileTokenStore("~/.config/app/tokens.json"),
    )
    response = await http.send(request, auth=auth)

With :class:`mcpkit.Client` it is ``Client.http(url, auth=auth)``; ``Client.http(url,
oauth=True, token_store=path)`` builds one with :meth:`OAuth.interactive` (the system
browser, a loopback callback on a free port, tokens in a 0600 file).

The protected request goes out with the current bearer token; a ``401`` or a ``403
insufficient_scope`` runs :class:`~mcpkit.auth.flow.OAuthFlow` to completion and the
request is replayed. Discovery, registration and token requests go through a separate
client that **never follows redirects** and never carries the MCP client's headers or
cookies; bodies are capped. Concurrent requests share one flow: the first one that
meets a challenge authorizes, the others wait and then use its token. The token state
is loaded from the store on first use and saved after every change.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import NoReturn

import httpx

from mcpkit.auth.errors import OAuthFlowError
from mcpkit.auth.flow import (
    Authorize,
    ClientConfig,
    HTTPRequest,
    HTTPResponse,
    OAuthFlow,
    Reply,
    SendResource,
)
from mcpkit.auth.redirect import LoopbackRedirectHandler, RedirectHandler
from mcpkit.auth.tokens import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = ["OAuth"]


class OAuth(httpx.Auth):
    """Bearer authentication for one MCP server, obtained through the MCP OAuth flow."""

    requires_request_body = True

    def __init__(
        self,
        server_url: str,
        config: ClientConfig,
        *,
        redirect_handler: RedirectHandler,
        store: TokenStore | None = None,
        http: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
        max_response_bytes: int = 1 << 20,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.flow = OAuthFlow(server_url, config, clock=clock)
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.redirect_handler = redirect_handler
        self.timeout = timeout
        self.max_response_bytes = max_response_bytes
        self._http = http
        self._lock = asyncio.Lock()
        self._loaded = False
        self._saved: dict[str, object] | None = None

    @classmethod
    def interactive(
        cls,
        server_url: str,
        *,
        store: TokenStore | str | os.PathLike[str] | None = None,
        client_name: str = "mcpkit",
        port: int | None = None,
        client_metadata_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        open_browser: Callable[[str], bool] | None = None,
        timeout: float = 300.0,
    ) -> OAuth:
        """OAuth for a person at this machine: the system browser for sign-in, a one-shot
        loopback callback on ``http://127.0.0.1:<port>/callback`` (RFC 8252 §7.3; a free
        port when ``port`` is None), and tokens kept in ``store`` -- a path means a
        :class:`~mcpkit.auth.tokens.FileTokenStore` (mode 0600), None keeps them in memory
        for this process only.

        The client identifies itself with ``client_metadata_url`` where the authorization
        server supports Client ID Metadata Documents, with ``client_id``/``client_secret``
        when pre-registered, else by Dynamic Client Registration as ``client_name``.
        ``open_browser`` replaces :func:`webbrowser.open` (return False to have the URL
        logged for the user instead); ``timeout`` bounds the wait for the callback.
        """
        chosen = port if port is not None else _free_loopback_port()
        config = ClientConfig(
            redirect_uri=f"http://127.0.0.1:{chosen}/callback",
            client_name=client_name,
            client_metadata_url=client_metadata_url,
            client_id=client_id,
            client_secret=client_secret,
        )
        if isinstance(store, str | os.PathLike):
            store = FileTokenStore(store)
        handler = LoopbackRedirectHandler(open_browser=open_browser, timeout=timeout)
        return cls(server_url, config, redirect_handler=handler, store=store)

    @property
    def authorizing(self) -> bool:
        """True while a request is going through discovery, sign-in or a token request.

        Callers that time requests out (``mcpkit.Client``) stop the clock meanwhile: a
        person in a browser is not a server that stopped answering."""
        return self._lock.locked()

    async def wait_authorized(self) -> None:
        """Return once no authorization is in progress (at once when none is)."""
        if self._lock.locked():
            async with self._lock:
                pass

    def token_only(self) -> httpx.Auth:
        """An auth that sends the token in hand (if any) and never starts a sign-in or a
        refresh: for requests not worth one, such as ending a session at shutdown."""
        return _TokenInHand(self)

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("mcpkit's OAuth runs on httpx.AsyncClient only")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self._loaded:
            async with self._lock:
                await self._load()
        session = _Session(self)
        gen = self.flow.run()
        try:
            event = next(gen)
            while True:
                reply: Reply
                if isinstance(event, SendResource):
                    await session.release()
                    _set_authorization(request, event.authorization)
                    response = yield request
                    if response.status_code in (401, 403):
                        await session.acquire()  # decide and act under the lock
                    reply = HTTPResponse(
                        response.status_code, tuple(response.headers.multi_items())
                    )
                else:
                    await session.acquire()
                    reply = await session.handle(event)
                try:
                    event = gen.send(reply)
                except StopIteration:
                    return
        finally:
            gen.close()
            await session.close()

    async def _load(self) -> None:
        if not self._loaded:
            self.flow.state = await self.store.load()
            self._saved = self.flow.state.to_json()
            self._loaded = True

    async def _save(self) -> None:
        current = self.flow.state.to_json()
        if current != self._saved:
            await self.store.save(self.flow.state)
            self._saved = current


class _TokenInHand(httpx.Auth):
    """See :meth:`OAuth.token_only`."""

    def __init__(self, auth: OAuth) -> None:
        self.auth = auth

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self.auth._loaded:
            async with self.auth._lock:
                await self.auth._load()
        _set_authorization(request, self.auth.flow.authorization())
        yield request


class _Session:
    """The I/O side of one run of the flow: the shared lock, the auxiliary client."""

    def __init__(self, auth: OAuth) -> None:
        self.auth = auth
        self.held = False
        self.own: httpx.AsyncClient | None = None

    async def acquire(self) -> None:
        if not self.held:
            await self.auth._lock.acquire()
            self.held = True

    async def release(self) -> None:
        if self.held:
            try:
                await self.auth._save()
            finally:
                self.held = False
                self.auth._lock.release()

    async def close(self) -> None:
        try:
            if self.own is not None:
                await self.own.aclose()
        finally:
            await self.release()

    async def handle(self, event: HTTPRequest | Authorize) -> Reply:
        if isinstance(event, Authorize):
            return await self.auth.redirect_handler(event)
        http = self.auth._http
        if http is None:
            if self.own is None:
                self.own = httpx.AsyncClient(timeout=self.auth.timeout)
            http = self.own
        return await self.exchange(http, event)

    async def exchange(self, http: httpx.AsyncClient, event: HTTPRequest) -> HTTPResponse:
        """Send one discovery/registration/token request; no redirects, capped body."""
        request = http.build_request(
            event.method, event.url, headers=list(event.headers), content=event.body or None
        )
        limit = self.auth.max_response_bytes
        try:
            response = await http.send(request, stream=True, follow_redirects=False)
        except httpx.HTTPError as exc:
            _fail(event, type(exc).__name__)
        chunks: list[bytes] = []
        try:
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    _fail(event, f"response larger than {limit} bytes")
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            _fail(event, type(exc).__name__)
        finally:
            await response.aclose()
        headers = tuple(response.headers.multi_items())
        return HTTPResponse(response.status_code, headers, b"".join(chunks))


def _free_loopback_port() -> int:
    """A port that is free on 127.0.0.1 right now, for a loopback redirect URI."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _fail(event: HTTPRequest, reason: str) -> NoReturn:
    raise OAuthFlowError(f"{event.method} {event.url} failed: {reason}")


def _set_authorization(request: httpx.Request, value: str | None) -> None:
    if value is None:
        request.headers.pop("Authorization", None)
    else:
        request.headers["Authorization"] = value
