"""Getting the user through the authorization endpoint and back: redirect handlers.

A redirect handler answers the flow's :class:`~mcpkit.auth.flow.Authorize` event with
the parameters of the redirect back to ``redirect_uri``.

* :class:`LoopbackRedirectHandler` -- interactive: listens on the loopback address of
  the ``redirect_uri`` (RFC 8252 §7.3), opens the browser with :mod:`webbrowser` and
  waits for the callback. Only ``http``/``https`` URLs without whitespace or control
  characters are ever handed to the browser, and never through a shell (``security.md``
  A-02, A-10; the CVE-2025-6514 shape).
* :class:`HeadlessRedirectHandler` -- for tests, CI and the conformance suite: fetches
  the authorization URL without following redirects and reads ``code``, ``state`` and
  ``iss`` from the ``Location`` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import webbrowser
from collections.abc import Callable
from typing import Protocol
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx

from mcpkit.auth.errors import OAuthFlowError
from mcpkit.auth.flow import AuthorizationResponse, Authorize
from mcpkit.auth.metadata import check_endpoint_url, is_loopback_host

__all__ = [
    "HeadlessRedirectHandler",
    "LoopbackRedirectHandler",
    "RedirectHandler",
    "browser_url",
    "callback_params",
]

logger = logging.getLogger("mcpkit.auth")

_MAX_REQUEST_HEAD = 16_384
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class RedirectHandler(Protocol):
    """Takes the user agent to ``request.url``; returns the redirect's parameters."""

    async def __call__(self, request: Authorize) -> AuthorizationResponse: ...


def browser_url(url: str) -> str:
    """``url`` if it is safe to hand to a browser (an absolute http(s) URL with no
    whitespace, control characters or user information), else OAuthFlowError."""
    return check_endpoint_url(url, "authorization URL", allow_http=True)


def callback_params(query: str) -> dict[str, str]:
    """The parameters of a redirect's query; a repeated one is an error (RFC 6749 §3.1)."""
    pairs = parse_qsl(query, keep_blank_values=True)
    params = dict(pairs)
    if len(params) != len(pairs):
        raise OAuthFlowError("the authorization response repeats a parameter")
    return params


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme.lower(), (a.hostname or "").lower(), a.port, a.path) == (
        b.scheme.lower(),
        (b.hostname or "").lower(),
        b.port,
        b.path,
    )


class HeadlessRedirectHandler:
    """Fetch the authorization URL and read the answer from the redirect, no browser.

    The authorization server must answer with a redirect (as the conformance mocks and
    test servers do after auto-approving); the ``Location`` must point at the
    ``redirect_uri`` (scheme, host, port and path), and is never followed.
    """

    def __init__(self, http: httpx.AsyncClient | None = None, *, timeout: float = 30.0) -> None:
        self._http = http
        self.timeout = timeout

    async def __call__(self, request: Authorize) -> AuthorizationResponse:
        url = browser_url(request.url)
        http = self._http or httpx.AsyncClient(timeout=self.timeout, trust_env=False)
        try:
            response = await http.get(url, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise OAuthFlowError(
                f"the authorization request failed: {type(exc).__name__}"
            ) from None
        finally:
            if self._http is None:
                await http.aclose()
        location = response.headers.get("location")
        if response.status_code not in _REDIRECTS or not location:
            raise OAuthFlowError(
                f"the authorization endpoint answered HTTP {response.status_code}, not a redirect"
            )
        target = urljoin(url, location)
        if not _same_endpoint(target, request.redirect_uri):
            raise OAuthFlowError("the authorization endpoint redirected away from redirect_uri")
        return AuthorizationResponse(callback_params(urlsplit(target).query))


_DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>{title}</title>"
    "<p>{text}</p><p>You can close this window.</p>"
)


class LoopbackRedirectHandler:
    """Interactive: a one-shot HTTP listener on the loopback ``redirect_uri``, and the
    system browser.

    ``redirect_uri`` must be ``http://localhost:PORT/path`` or a loopback IP literal
    with an explicit port (it has to match what was registered). The listener binds
    only that loopback address, answers only ``GET`` on the path, ignores callbacks
    whose ``state`` is not the one expected (a stray page cannot end the wait), and is
    closed when the first valid callback arrives or after ``timeout`` seconds.

    ``open_browser`` (default :func:`webbrowser.open`) receives a URL that passed
    :func:`browser_url`; when it returns False the URL is handed to ``show_url`` (by
    default logged) for the user to open.
    """

    def __init__(
        self,
        *,
        open_browser: Callable[[str], bool] | None = None,
        show_url: Callable[[str], None] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self._open_browser = open_browser
        self._show_url = show_url or (lambda url: logger.warning("open this URL: %s", url))
        self.timeout = timeout

    async def __call__(self, request: Authorize) -> AuthorizationResponse:
        url = browser_url(request.url)
        host, port, path = self._listen_address(request.redirect_uri)
        loop = asyncio.get_running_loop()
        result: asyncio.Future[dict[str, str]] = loop.create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await asyncio.wait_for(self._serve(reader, writer, path, request.state, result), 10)
            except (
                TimeoutError,
                ConnectionError,
                asyncio.IncompleteReadError,
                asyncio.LimitOverrunError,
            ):
                logger.debug("ignored a malformed or slow request on the callback listener")
            finally:
                writer.close()
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()

        server = await asyncio.start_server(handle, host, port, limit=_MAX_REQUEST_HEAD)
        try:
            opener = self._open_browser or webbrowser.open
            if not await asyncio.to_thread(opener, url):
                self._show_url(url)
            try:
                params = await asyncio.wait_for(result, self.timeout)
            except TimeoutError:
                raise OAuthFlowError("no authorization callback arrived in time") from None
        finally:
            server.close()
            await server.wait_closed()
        return AuthorizationResponse(params)

    @staticmethod
    def _listen_address(redirect_uri: str) -> tuple[str, int, str]:
        parts = urlsplit(redirect_uri)
        host = (parts.hostname or "").lower()
        if parts.scheme != "http" or not is_loopback_host(host) or not parts.port:
            raise OAuthFlowError(
                "the loopback redirect handler needs redirect_uri http://<loopback>:<port>/..."
            )
        bind = "127.0.0.1" if host == "localhost" else host
        return bind, parts.port, parts.path or "/"

    @staticmethod
    async def _serve(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        path: str,
        state: str,
        result: asyncio.Future[dict[str, str]],
    ) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        target = rest.rpartition(" ")[0]
        parts = urlsplit(target)
        status, title, text = 404, "Not found", "Nothing here."
        if method == "GET" and parts.path == path:
            try:
                params = callback_params(parts.query)
            except OAuthFlowError:
                params = {}
            if params.get("state") == state and not result.done():
                result.set_result(params)
                status, title, text = 200, "Authorization received", "Authorization received."
            else:
                status, title, text = 400, "Unexpected callback", "This callback was not expected."
        body = _DONE_PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
        writer.write(
            f"HTTP/1.1 {status} {title}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
            "Cache-Control: no-store\r\n\r\n".encode("latin-1")
            + body
        )
        await writer.drain()
