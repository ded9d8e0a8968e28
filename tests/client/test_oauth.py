"""``Client.http`` with OAuth end to end (spec ``basic/authorization/``): a real mcpkit
server behind :func:`mcpkit.auth.resource.protect`, a real authorization server, both on
127.0.0.1 sockets, and a client that knows only the MCP endpoint URL.

Proves that the flow runs inside the client's requests in both eras, that its errors
reach the caller as they are, that time spent signing in never counts against a request
or probe timeout, that a protected server without ``auth=`` is a clear error, that
redirects are never followed with credentials, and the ``oauth=True`` convenience.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from auth.servers import Deferred, LocalAuthorizationServer
from client.test_http import Peer
from conftest import RunningServer
from mcpkit import Client, Server
from mcpkit.auth import (
    AuthorizationDenied,
    ClientConfig,
    FileTokenStore,
    HeadlessRedirectHandler,
    LoopbackRedirectHandler,
    OAuth,
    OAuthFlowError,
    ProtectedResource,
    TokenStore,
    protect,
)
from mcpkit.auth.flow import AuthorizationResponse, Authorize
from mcpkit.client import AuthorizationRequired, EraCache
from mcpkit.errors import ConnectionClosed, TransportError
from mcpkit.transports.http import create_app

REDIRECT = "http://127.0.0.1:38124/callback"


def build_server() -> Server:
    server = Server("oauth-test", "1.0.0")

    @server.tool
    async def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    return server


@dataclass
class Recorder:
    """An ASGI wrapper that notes each request's method and path, then passes it on."""

    app: Any
    seen: list[tuple[str, str]] = field(default_factory=list)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append((scope["method"], scope["path"]))
        await self.app(scope, receive, send)


@dataclass
class Stack:
    auth_server: LocalAuthorizationServer
    mcp_url: str
    recorder: Recorder

    def posts(self) -> int:
        return sum(1 for method, path in self.recorder.seen if (method, path) == ("POST", "/mcp"))


@contextlib.contextmanager
def serve(inner: Any = None, claimed_path: str = "/mcp") -> Iterator[Stack]:
    """The authorization server and a protected MCP server at ``/mcp`` (``inner``, by
    default a modern mcpkit server); another ``claimed_path`` makes its protected
    resource metadata name another resource."""
    auth_server = LocalAuthorizationServer()
    auth_app = Deferred()
    mcp_app = Deferred()
    recorder = Recorder(mcp_app)
    with RunningServer(auth_app) as as_running, RunningServer(recorder) as mcp_running:
        auth_server.issuer = as_running.base
        auth_app.target = auth_server.app()
        mcp_url = mcp_running.base + "/mcp"
        resource = ProtectedResource.with_jwt(
            mcp_running.base + claimed_path, as_running.base, as_running.base + "/jwks"
        )
        app = inner if inner is not None else create_app(build_server())
        mcp_app.target = protect(app, resource, path="/mcp")
        yield Stack(auth_server, mcp_url, recorder)


@pytest.fixture
def stack() -> Iterator[Stack]:
    with serve() as running:
        yield running


def oauth(
    stack: Stack,
    store: TokenStore | None = None,
    *,
    handler: Any = None,
) -> OAuth:
    return OAuth(
        stack.mcp_url,
        ClientConfig(redirect_uri=REDIRECT, client_name="client-oauth-test"),
        redirect_handler=handler or HeadlessRedirectHandler(),
        store=store,
    )


class SlowUser:
    """A person who takes ``delay`` seconds to approve in the browser."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls = 0

    async def __call__(self, request: Authorize) -> AuthorizationResponse:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return await HeadlessRedirectHandler()(request)


def browser(url: str) -> bool:
    """Stands in for the system browser: follows the authorization server's redirect to
    the loopback callback, as a real browser would after the user approves."""
    response = httpx.get(url, follow_redirects=True, timeout=10)
    return response.status_code == 200


def break_token(auth: OAuth) -> None:
    """Make the stored access token fail verification, as a revoked one would."""
    tokens = auth.flow.tokens
    assert tokens is not None
    tokens.access_token = tokens.access_token[:-4] + "AAAA"


# -- the flow inside the client's requests --------------------------------------------


async def test_a_modern_client_signs_in_once_and_a_new_process_reuses_the_stored_tokens(
    stack: Stack, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    client = Client.http(
        stack.mcp_url, auth=oauth(stack, FileTokenStore(path)), era_cache=EraCache()
    )
    async with client:
        assert client.era == "modern"
        assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
    assert stack.auth_server.hits["register"] == 1
    assert stack.auth_server.hits["authorize"] == 1
    before = dict(stack.auth_server.hits)
    again = Client.http(
        stack.mcp_url, auth=oauth(stack, FileTokenStore(path)), era_cache=EraCache()
    )
    async with again:
        assert (await again.call_tool("add", {"a": 1, "b": 1})).text == "2"
    assert stack.auth_server.hits == before


async def test_a_legacy_session_is_authorized_up_to_its_closing_delete() -> None:
    peer = Peer("legacy")
    with serve(peer) as stack:
        client = Client.http(stack.mcp_url, auth=oauth(stack), era_cache=EraCache())
        async with client:
            assert client.era == "legacy"
            assert "route" in {tool["name"] for tool in await client.list_tools()}
        assert stack.auth_server.hits["authorize"] == 1
    # The peer sits behind the guard: whatever reached it carried a valid token.
    reached = [(r["method"], (r["body"] or {}).get("method")) for r in peer.requests]
    assert ("POST", "initialize") in reached
    assert ("POST", "tools/list") in reached
    assert ("DELETE", None) in reached
    assert all(r["headers"]["authorization"].startswith("Bearer ") for r in peer.requests)


async def test_ending_a_legacy_session_with_an_expired_token_never_starts_a_sign_in() -> None:
    peer = Peer("legacy")
    with serve(peer) as stack:
        auth = oauth(stack)
        async with Client.http(stack.mcp_url, auth=auth, era_cache=EraCache()) as client:
            await client.list_tools()
            tokens = auth.flow.tokens
            assert tokens is not None
            tokens.expires_at = time.time() - 60
            tokens.refresh_token = None
            before = dict(stack.auth_server.hits)
        assert stack.auth_server.hits == before
        assert ("DELETE", "/mcp") in stack.recorder.seen  # tried, refused, not pursued
    assert all(r["method"] != "DELETE" for r in peer.requests)


async def test_a_rejected_token_mid_session_is_refreshed_without_the_user(stack: Stack) -> None:
    auth = oauth(stack)
    async with Client.http(stack.mcp_url, auth=auth, era_cache=EraCache()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        break_token(auth)
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
    assert stack.auth_server.hits["authorize"] == 1
    assert stack.auth_server.hits["token"] == 2


# -- errors reach the caller as they are ------------------------------------------------


async def test_a_refusal_mid_session_raises_authorization_denied_and_the_client_recovers(
    stack: Stack,
) -> None:
    auth = oauth(stack)
    async with Client.http(stack.mcp_url, auth=auth, era_cache=EraCache()) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        stack.auth_server.refresh_enabled = False
        stack.auth_server.deny = True
        break_token(auth)
        with pytest.raises(AuthorizationDenied) as caught:
            await client.call_tool("add", {"a": 1, "b": 2})
        assert caught.value.error == "access_denied"
        stack.auth_server.deny = False
        assert (await client.call_tool("add", {"a": 4, "b": 2})).text == "6"
    assert stack.auth_server.hits["authorize"] == 3


async def test_metadata_naming_another_resource_fails_connect_with_the_flow_error() -> None:
    with serve(claimed_path="/elsewhere") as stack:
        client = Client.http(stack.mcp_url, auth=oauth(stack), era_cache=EraCache())
        claim = re.escape(f"names '{stack.mcp_url.removesuffix('/mcp')}/elsewhere'")
        with pytest.raises(OAuthFlowError, match=claim) as caught:
            await client.connect()
        await client.close()
        assert not isinstance(caught.value, ConnectionClosed)
        assert stack.auth_server.hits == {}  # nothing was sent to the authorization server
        assert stack.posts() == 1  # and the probe was not retried as a legacy initialize


async def test_without_auth_a_protected_server_is_a_clear_error_not_a_legacy_fallback(
    stack: Stack,
) -> None:
    client = Client.http(stack.mcp_url, era_cache=EraCache())
    with pytest.raises(AuthorizationRequired, match="requires authorization") as caught:
        await client.connect()
    await client.close()
    assert caught.value.status == 401
    assert "resource_metadata=" in (caught.value.challenge or "")
    assert stack.posts() == 1


# -- signing in takes as long as it takes --------------------------------------------------


async def test_signing_in_does_not_count_against_the_probe_timeout(stack: Stack) -> None:
    user = SlowUser(delay=0.6)
    client = Client.http(
        stack.mcp_url, auth=oauth(stack, handler=user), probe_timeout=0.2, era_cache=EraCache()
    )
    async with client:
        assert client.era == "modern"
        assert (await client.call_tool("add", {"a": 1, "b": 1})).text == "2"
    assert user.calls == 1
    assert stack.posts() == 4  # the probe, its replay with the token, tools/list, the call


async def test_signing_in_again_mid_session_does_not_time_the_request_out(stack: Stack) -> None:
    user = SlowUser(delay=0.6)
    auth = oauth(stack, handler=user)
    client = Client.http(stack.mcp_url, auth=auth, timeout=0.4, era_cache=EraCache())
    async with client:
        await client.call_tool("add", {"a": 1, "b": 1})
        stack.auth_server.refresh_enabled = False
        break_token(auth)
        assert (await client.call_tool("add", {"a": 2, "b": 1})).text == "3"
    assert user.calls == 2


# -- no credentials leave the server's origin --------------------------------------------


async def test_a_redirect_is_never_followed_so_credentials_stay_with_the_server() -> None:
    async def ok(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    elsewhere = Recorder(ok)

    async def redirecting(scope: Any, receive: Any, send: Any) -> None:
        target = f"http://127.0.0.1:{other.port}/mcp".encode()
        await send(
            {"type": "http.response.start", "status": 307, "headers": [(b"location", target)]}
        )
        await send({"type": "http.response.body", "body": b""})

    with (
        RunningServer(elsewhere, lifespan="off") as other,
        RunningServer(redirecting, lifespan="off") as running,
    ):
        client = Client.http(
            running.base + "/mcp",
            headers={"Authorization": "Bearer secret-token"},
            era_cache=EraCache(),
        )
        with pytest.raises(TransportError, match="307"):
            await client.connect()
        await client.close()
    assert elsewhere.seen == []


# -- the convenience ---------------------------------------------------------------------


async def test_interactive_oauth_signs_in_through_the_browser_and_a_loopback_callback(
    stack: Stack, tmp_path: Path
) -> None:
    path = tmp_path / "tokens.json"
    auth = OAuth.interactive(stack.mcp_url, store=path, open_browser=browser)
    assert isinstance(auth.redirect_handler, LoopbackRedirectHandler)
    assert auth.flow.config.redirect_uri.startswith("http://127.0.0.1:")
    async with Client.http(stack.mcp_url, auth=auth, era_cache=EraCache()) as client:
        assert (await client.call_tool("add", {"a": 3, "b": 4})).text == "7"
    assert stack.auth_server.hits["authorize"] == 1
    assert json.loads(path.read_text())["tokens"]  # kept for the next run
    before = dict(stack.auth_server.hits)
    async with Client.http(
        stack.mcp_url, oauth=True, token_store=path, era_cache=EraCache()
    ) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 4})).text == "5"
    assert stack.auth_server.hits == before  # the stored tokens were enough


def test_oauth_true_builds_an_interactive_flow_named_after_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    client = Client.http(
        "http://127.0.0.1:1/mcp", oauth=True, token_store="~/tokens.json", name="my-agent"
    )
    auth = getattr(client.transport, "auth", None)
    assert isinstance(auth, OAuth)
    assert isinstance(auth.redirect_handler, LoopbackRedirectHandler)
    assert auth.flow.config.client_name == "my-agent"
    assert isinstance(auth.store, FileTokenStore)
    assert auth.store.path == tmp_path / "tokens.json"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"oauth": True, "auth": httpx.BasicAuth("a", "b")}, "not both"),
        ({"token_store": "tokens.json"}, "only goes with oauth=True"),
    ],
)
def test_oauth_options_that_contradict_each_other_are_refused(
    options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        Client.http("http://127.0.0.1:1/mcp", **options)
