"""The Streamable HTTP endpoint as an OAuth 2.1 protected resource (issue 7).

Real tokens, minted here with generated keys, against a real uvicorn: every refusal
gets the right status and ``WWW-Authenticate`` header, the verified principal reaches
the tool, and sealed ``requestState`` issued to one principal is refused for another
(spec ``basic/authorization/index.mdx``, ``basic/patterns/mrtr.mdx`` §Security).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from auth.support import ISSUER, RESOURCE, Signer
from conftest import RunningServer
from mcpkit import Context, Server
from mcpkit.auth.resource import ProtectedResource, ScopeRequirements
from mcpkit.auth.verifiers import JWTVerifier, StaticKeys
from mcpkit.transports.http import create_app

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
SIGNER = Signer.rsa("key-1")
STRANGER = Signer.rsa("key-1")


def unsigned(token: str) -> str:
    """The same claims with ``alg: none`` and no signature."""
    header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT","kid":"key-1"}').rstrip(b"=")
    return header.decode() + "." + token.split(".")[1] + "."


def build_server() -> Server:
    server = Server("protected", "1.0.0")

    @server.tool
    async def whoami(ctx: Context) -> str:
        """The subject of the caller's token."""
        return str(ctx.principal.subject)

    @server.tool
    async def write_note(text: str) -> str:
        """Needs the mcp:write scope."""
        return f"wrote {text}"

    @server.tool
    async def confirm(ctx: Context) -> str:
        """Asks the user to confirm, through multi round-trip input."""
        answer = await ctx.elicit(
            "Proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok"
        )
        return f"confirmed by {ctx.principal.subject}: {answer.content}"

    return server


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    verifier = JWTVerifier(
        issuer=ISSUER, audience=RESOURCE, keys=StaticKeys({"keys": [SIGNER.jwk]})
    )
    guard = ProtectedResource(
        RESOURCE,
        [ISSUER],
        verifier,
        requirements=ScopeRequirements("mcp:basic", tools={"write_note": "mcp:write"}),
    )
    with RunningServer(create_app(build_server(), auth=guard)) as running:
        yield running


def post(
    http: RunningServer,
    method: str,
    params: dict[str, Any],
    token: str | None,
    *,
    name: str | None = None,
) -> httpx.Response:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        headers["mcp-name"] = name
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return httpx.post(f"{http.base}/mcp", content=json.dumps(body), headers=headers, timeout=10)


def call_tool(http: RunningServer, tool: str, token: str | None, **params: Any) -> httpx.Response:
    return post(http, "tools/call", {"name": tool, **params}, token, name=tool)


def test_the_protected_resource_metadata_is_served(http: RunningServer) -> None:
    response = httpx.get(f"{http.base}/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200
    document = response.json()
    assert document["resource"] == RESOURCE
    assert document["authorization_servers"] == [ISSUER]


def test_a_request_without_a_token_gets_401_with_the_metadata_url(http: RunningServer) -> None:
    response = call_tool(http, "whoami", None)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert (
        'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"'
        in challenge
    )
    assert 'scope="mcp:basic"' in challenge


def test_a_valid_token_lets_the_principal_reach_the_tool(http: RunningServer) -> None:
    response = call_tool(http, "whoami", SIGNER.mint(sub="alice"))
    assert response.status_code == 200
    assert response.json()["result"]["content"] == [{"type": "text", "text": "alice"}]


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(lambda: SIGNER.mint(aud="https://other.example/mcp"), id="wrong-audience"),
        pytest.param(lambda: SIGNER.mint(iss="https://evil.example"), id="wrong-issuer"),
        pytest.param(lambda: SIGNER.mint(exp=1_000_000), id="expired"),
        pytest.param(lambda: SIGNER.mint(drop=("exp",)), id="no-exp"),
        pytest.param(lambda: unsigned(SIGNER.mint()), id="alg-none"),
        pytest.param(lambda: SIGNER.mint(headers={"kid": "unknown"}), id="unknown-key"),
        pytest.param(lambda: STRANGER.mint(), id="wrong-signature"),
    ],
)
def test_a_bad_token_gets_401_invalid_token(http: RunningServer, token: Any) -> None:
    response = call_tool(http, "whoami", token())
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_an_operation_beyond_the_tokens_scopes_gets_403_naming_the_scope(
    http: RunningServer,
) -> None:
    response = call_tool(http, "write_note", SIGNER.mint(), arguments={"text": "x"})
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge
    scopes = challenge.split('scope="', 1)[1].split('"', 1)[0].split()
    assert "mcp:write" in scopes
    allowed = call_tool(
        http, "write_note", SIGNER.mint(scope="mcp:basic mcp:write"), arguments={"text": "x"}
    )
    assert allowed.status_code == 200


def test_request_state_sealed_for_one_principal_is_refused_for_another(http: RunningServer) -> None:
    first = call_tool(http, "confirm", SIGNER.mint(sub="alice"))
    result = first.json()["result"]
    assert result["resultType"] == "input_required"
    state = result["requestState"]
    answer = {"ok": {"action": "accept", "content": {"ok": True}}}
    as_alice = call_tool(
        http, "confirm", SIGNER.mint(sub="alice"), inputResponses=answer, requestState=state
    )
    assert as_alice.status_code == 200
    assert as_alice.json()["result"]["content"][0]["text"].startswith("confirmed by alice")
    as_bob = call_tool(
        http, "confirm", SIGNER.mint(sub="bob"), inputResponses=answer, requestState=state
    )
    assert as_bob.status_code == 400
    assert as_bob.json()["error"]["code"] == -32602
