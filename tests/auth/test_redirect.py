"""Redirect handlers: the headless one the conformance mocks expect, and the interactive
loopback one that opens the browser (``security.md`` A-02, A-10)."""

from __future__ import annotations

import os
import socket
import subprocess
import webbrowser
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from conftest import RunningServer
from mcpkit.auth.errors import OAuthFlowError
from mcpkit.auth.flow import Authorize
from mcpkit.auth.redirect import (
    HeadlessRedirectHandler,
    LoopbackRedirectHandler,
    browser_url,
    callback_params,
)

BAD_URLS = [
    "javascript:alert(1)",
    "file:///etc/passwd",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "-https://as.example/authorize",
    "https://as.example/authorize\n--new-window",
    "https://as.example/authorize $(calc)",
    "https://as.example/authorize\x00",
    "ftp://as.example/authorize",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------ URL checks


@pytest.mark.parametrize("url", BAD_URLS)
def test_only_plain_http_urls_are_handed_to_a_browser(url: str) -> None:
    with pytest.raises(OAuthFlowError):
        browser_url(url)


def test_a_shell_looking_query_is_fine_because_no_shell_is_involved() -> None:
    url = "https://as.example/authorize?x=$(id)&y=%26calc"
    assert browser_url(url) == url


def test_repeated_callback_parameters_are_refused() -> None:
    assert callback_params("code=a&state=b") == {"code": "a", "state": "b"}
    with pytest.raises(OAuthFlowError, match="repeats"):
        callback_params("code=a&code=b")


# ------------------------------------------------------------------ headless


@pytest.fixture(scope="module")
def authorization_server() -> Iterator[RunningServer]:
    async def authorize(request: Request) -> Response:
        q = request.query_params
        if q.get("mode") == "page":
            return PlainTextResponse("log in please")
        if q.get("mode") == "elsewhere":
            return RedirectResponse("https://evil.example/callback?code=x", status_code=302)
        target = f"{q['redirect_uri']}?code=the-code&state={q['state']}&iss=http%3A%2F%2Fas"
        return RedirectResponse(target, status_code=302)

    app = Starlette(routes=[Route("/authorize", authorize)])
    with RunningServer(app) as running:
        yield running


def authorize_event(base: str, redirect: str, state: str = "st", **extra: str) -> Authorize:
    params = httpx.QueryParams({"redirect_uri": redirect, "state": state, **extra})
    return Authorize(f"{base}/authorize?{params}", redirect, state)


async def test_headless_reads_code_state_and_iss_from_the_location(
    authorization_server: RunningServer,
) -> None:
    event = authorize_event(authorization_server.base, "http://localhost:3000/callback")
    answer = await HeadlessRedirectHandler()(event)
    assert answer.params == {"code": "the-code", "state": "st", "iss": "http://as"}


async def test_headless_refuses_a_page_instead_of_a_redirect(
    authorization_server: RunningServer,
) -> None:
    event = authorize_event(authorization_server.base, "http://localhost:3000/cb", mode="page")
    with pytest.raises(OAuthFlowError, match="HTTP 200"):
        await HeadlessRedirectHandler()(event)


async def test_headless_refuses_a_redirect_away_from_redirect_uri(
    authorization_server: RunningServer,
) -> None:
    event = authorize_event(
        authorization_server.base, "http://localhost:3000/callback", mode="elsewhere"
    )
    with pytest.raises(OAuthFlowError, match="away from redirect_uri"):
        await HeadlessRedirectHandler()(event)


@pytest.mark.parametrize("url", BAD_URLS[:4])
async def test_headless_never_fetches_a_non_http_url(url: str) -> None:
    with pytest.raises(OAuthFlowError):
        await HeadlessRedirectHandler()(Authorize(url, "http://localhost:3000/cb", "st"))


# ------------------------------------------------------------------ loopback


class Browser:
    """A stand-in for the system browser: records the URL, then plays the authorization
    server's redirect by requesting the callback URLs it was given."""

    def __init__(self, *callbacks: str, opened: bool = True) -> None:
        self.callbacks = callbacks
        self.opened = opened
        self.urls: list[str] = []
        self.statuses: list[int] = []

    def __call__(self, url: str) -> bool:
        self.urls.append(url)
        for callback in self.callbacks:
            self.statuses.append(httpx.get(callback, timeout=5).status_code)
        return self.opened


async def test_loopback_opens_the_browser_and_waits_for_the_matching_callback() -> None:
    port = free_port()
    redirect = f"http://localhost:{port}/callback"
    browser = Browser(
        f"http://127.0.0.1:{port}/favicon.ico",
        f"http://127.0.0.1:{port}/callback?code=forged&state=wrong",
        f"http://127.0.0.1:{port}/callback?code=real&state=s-1&iss=https%3A%2F%2Fas",
    )
    event = Authorize("https://as.example/authorize?x=1", redirect, "s-1")
    answer = await LoopbackRedirectHandler(open_browser=browser, timeout=10)(event)
    assert answer.params == {"code": "real", "state": "s-1", "iss": "https://as"}
    assert browser.urls == ["https://as.example/authorize?x=1"]
    assert browser.statuses == [404, 400, 200]
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError):  # the listener is gone
            await client.get(f"http://127.0.0.1:{port}/callback", timeout=2)


async def test_loopback_shows_the_url_when_no_browser_opens() -> None:
    port = free_port()
    shown: list[str] = []
    browser = Browser(f"http://127.0.0.1:{port}/cb?code=c&state=s", opened=False)
    event = Authorize("https://as.example/authorize", f"http://127.0.0.1:{port}/cb", "s")
    handler = LoopbackRedirectHandler(open_browser=browser, show_url=shown.append, timeout=10)
    assert (await handler(event)).params["code"] == "c"
    assert shown == ["https://as.example/authorize"]


async def test_loopback_gives_up_after_its_timeout() -> None:
    port = free_port()
    event = Authorize("https://as.example/authorize", f"http://127.0.0.1:{port}/cb", "s")
    handler = LoopbackRedirectHandler(open_browser=Browser(), timeout=0.2)
    with pytest.raises(OAuthFlowError, match="in time"):
        await handler(event)


@pytest.mark.parametrize("url", BAD_URLS)
async def test_loopback_never_opens_an_unsafe_url(url: str) -> None:
    browser = Browser()
    event = Authorize(url, f"http://127.0.0.1:{free_port()}/cb", "s")
    with pytest.raises(OAuthFlowError):
        await LoopbackRedirectHandler(open_browser=browser)(event)
    assert browser.urls == []


@pytest.mark.parametrize(
    "redirect",
    ["https://app.example/cb", "http://example.com:8080/cb", "http://127.0.0.1/cb"],
)
async def test_loopback_needs_a_loopback_redirect_uri_with_a_port(redirect: str) -> None:
    browser = Browser()
    with pytest.raises(OAuthFlowError, match="loopback"):
        await LoopbackRedirectHandler(open_browser=browser)(
            Authorize("https://as.example/authorize", redirect, "s")
        )
    assert browser.urls == []


async def test_the_default_browser_is_webbrowser_open_and_no_shell_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = free_port()
    opened: list[str] = []

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a process or shell was started: {args!r}")

    def fake_open(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)
        return Browser(f"http://127.0.0.1:{port}/cb?code=c&state=s")(url)

    monkeypatch.setattr(webbrowser, "open", fake_open)
    monkeypatch.setattr(os, "system", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    event = Authorize("https://as.example/authorize?q=$(id)", f"http://127.0.0.1:{port}/cb", "s")
    answer = await LoopbackRedirectHandler(timeout=10)(event)
    assert answer.params["code"] == "c"
    assert opened == ["https://as.example/authorize?q=$(id)"]
