"""The httpx adapter end to end: a real authorization server and a real protected
resource, each served by uvicorn on 127.0.0.1, and a client that knows only the
resource URL. The headless redirect handler stands in for the browser.

Proves the whole chain: discovery, DCR, PKCE, ``iss``, JWT issuance and verification
against a fetched JWKS, step-up on 403, refresh, persistence in a 0600 file store, and
one authorization shared by concurrent requests.
"""

from __future__ import annotations

import asyncio
import logging
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from auth.servers import Deferred, LocalAuthorizationServer, mcp_like_app
from conftest import RunningServer
from mcpkit.auth.client import OAuth
from mcpkit.auth.errors import OAuthFlowError
from mcpkit.auth.flow import ClientConfig
from mcpkit.auth.redirect import HeadlessRedirectHandler
from mcpkit.auth.resource import ProtectedResource, ScopeRequirements, protect
from mcpkit.auth.tokens import FileTokenStore, TokenStore
from mcpkit.auth.verifiers import JWKSCache, JWTVerifier

REDIRECT = "http://127.0.0.1:38123/callback"


@dataclass
class Stack:
    auth_server: LocalAuthorizationServer
    issuer: str
    mcp_url: str


@pytest.fixture
def stack() -> Iterator[Stack]:
    auth_server = LocalAuthorizationServer()
    auth_app = Deferred()
    resource_app = Deferred()
    with RunningServer(auth_app) as as_running, RunningServer(resource_app) as rs_running:
        auth_server.issuer = as_running.base
        auth_app.target = auth_server.app()
        mcp_url = rs_running.base + "/mcp"
        verifier = JWTVerifier(
            issuer=as_running.base,
            audience=mcp_url,
            keys=JWKSCache(as_running.base + "/jwks"),
        )
        resource = ProtectedResource(
            mcp_url,
            [as_running.base],
            verifier,
            requirements=ScopeRequirements("mcp:basic", tools={"write": "mcp:write"}),
        )
        resource_app.target = protect(mcp_like_app(resource), resource)
        yield Stack(auth_server, as_running.base, mcp_url)


def oauth(stack: Stack, store: TokenStore | None = None) -> OAuth:
    return OAuth(
        stack.mcp_url,
        ClientConfig(redirect_uri=REDIRECT, client_name="e2e"),
        redirect_handler=HeadlessRedirectHandler(),
        store=store,
    )


async def call(
    client: httpx.AsyncClient, url: str, method: str, **params: object
) -> httpx.Response:
    return await client.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    )


async def test_the_client_authorizes_then_steps_up_then_reuses_its_tokens(
    stack: Stack, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "state" / "tokens.json")
    async with httpx.AsyncClient(auth=oauth(stack, store=store)) as client:
        listed = await call(client, stack.mcp_url, "tools/list")
        assert listed.status_code == 200
        assert listed.json() == {"subject": "user-42", "scopes": ["mcp:basic", "offline_access"]}
        written = await call(client, stack.mcp_url, "tools/call", name="write")
        assert written.status_code == 200
        assert written.json()["scopes"] == ["mcp:basic", "mcp:write", "offline_access"]
    server = stack.auth_server
    assert server.hits["register"] == 1
    assert server.hits["authorize"] == 2
    assert server.authorize_scopes == [
        "mcp:basic offline_access",
        "mcp:basic mcp:write offline_access",
    ]
    path = tmp_path / "state" / "tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    before = dict(server.hits)
    async with httpx.AsyncClient(auth=oauth(stack, store=FileTokenStore(path))) as client:
        again = await call(client, stack.mcp_url, "tools/call", name="write")
    assert again.status_code == 200
    assert server.hits == before  # a new process with the same store needs no authorization


async def test_concurrent_requests_share_one_authorization(stack: Stack) -> None:
    async with httpx.AsyncClient(auth=oauth(stack)) as client:
        responses = await asyncio.gather(
            *(call(client, stack.mcp_url, "tools/list") for _ in range(8))
        )
    assert [r.status_code for r in responses] == [200] * 8
    assert stack.auth_server.hits["authorize"] == 1
    assert stack.auth_server.hits["register"] == 1


async def test_a_rejected_token_is_refreshed_not_reauthorized(stack: Stack) -> None:
    auth = oauth(stack)
    async with httpx.AsyncClient(auth=auth) as client:
        assert (await call(client, stack.mcp_url, "tools/list")).status_code == 200
        tokens = auth.flow.tokens
        assert tokens is not None
        tokens.access_token = tokens.access_token[:-4] + "AAAA"  # now fails verification
        assert (await call(client, stack.mcp_url, "tools/list")).status_code == 200
    assert stack.auth_server.hits["authorize"] == 1
    assert stack.auth_server.hits["token"] == 2


async def test_a_resource_that_names_someone_else_is_never_authorized(stack: Stack) -> None:
    other = OAuth(
        stack.mcp_url.replace("/mcp", "/other"),
        ClientConfig(redirect_uri=REDIRECT),
        redirect_handler=HeadlessRedirectHandler(),
    )
    async with httpx.AsyncClient(auth=other) as client:
        with pytest.raises(OAuthFlowError):
            await client.post(stack.mcp_url, json={})
    assert "authorize" not in stack.auth_server.hits


def test_the_adapter_refuses_sync_clients(stack: Stack) -> None:
    with httpx.Client(auth=oauth(stack)) as client, pytest.raises(RuntimeError, match="Async"):
        client.post(stack.mcp_url, json={})


async def test_oversized_discovery_responses_are_refused(stack: Stack) -> None:
    auth = OAuth(
        stack.mcp_url,
        ClientConfig(redirect_uri=REDIRECT),
        redirect_handler=HeadlessRedirectHandler(),
        max_response_bytes=64,
    )
    async with httpx.AsyncClient(auth=auth) as client:
        with pytest.raises(OAuthFlowError, match="larger than 64 bytes"):
            await call(client, stack.mcp_url, "tools/list")


async def test_an_unreachable_authorization_server_is_a_clear_error() -> None:
    app = Deferred()
    with RunningServer(app) as running:
        url = running.base + "/mcp"
        verifier = JWTVerifier(issuer="http://127.0.0.1:9", audience=url, jwks_url="http://x")
        resource = ProtectedResource(url, ["http://127.0.0.1:9"], verifier)
        app.target = protect(mcp_like_app(resource), resource)
        auth = OAuth(
            url, ClientConfig(redirect_uri=REDIRECT), redirect_handler=HeadlessRedirectHandler()
        )
        async with httpx.AsyncClient(auth=auth) as client:
            with pytest.raises(OAuthFlowError, match=r"127\.0\.0\.1:9.*failed: ConnectError"):
                await client.post(url, json={})


async def test_no_secret_reaches_the_logs(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    auth = oauth(stack)
    with caplog.at_level(logging.DEBUG):
        async with httpx.AsyncClient(auth=auth) as client:
            assert (
                await call(client, stack.mcp_url, "tools/call", name="write")
            ).status_code == 200
            tokens = auth.flow.tokens
            assert tokens is not None
            tokens.access_token += "x"  # rejected: 401 -> refresh
            assert (await call(client, stack.mcp_url, "tools/list")).status_code == 200
    tokens = auth.flow.tokens
    assert tokens is not None
    assert tokens.refresh_token is not None
    registration = auth.flow.state.registrations[stack.issuer]
    assert registration.client_secret is not None
    secrets = [tokens.access_token, tokens.refresh_token, registration.client_secret]
    secrets += list(stack.auth_server.refresh)
    assert caplog.records  # httpx and mcpkit did log
    for secret in secrets:
        assert secret not in caplog.text
