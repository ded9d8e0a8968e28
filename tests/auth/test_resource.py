"""The resource server as HTTP: RFC 9728 documents, challenges, scope requirements,
the ASGI guard and RFC 7662 introspection (spec ``basic/authorization/index.mdx``
§Error Handling, §Scope Challenge Handling; ``authorization-server-discovery.mdx``)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from auth.support import ISSUER, RESOURCE, Signer, read_form
from conftest import RunningServer
from mcpkit.auth.errors import InsufficientScope
from mcpkit.auth.metadata import ProtectedResourceMetadata, bearer_challenge
from mcpkit.auth.resource import AuthResponse, ProtectedResource, ScopeRequirements, protect
from mcpkit.auth.verifiers import IntrospectionVerifier, JWTVerifier, Principal, StaticKeys


def principal(*scopes: str) -> Principal:
    return Principal(subject="u", scopes=frozenset(scopes), client_id="c", issuer=ISSUER)


# ------------------------------------------------------------------ scopes


def test_requirements_per_tool_resource_and_prompt_add_to_the_default() -> None:
    req = ScopeRequirements(
        "mcp:basic",
        tools={"write_file": "files:write"},
        resources={"file:///secret": {"files:secret"}},
        prompts={"admin": ["mcp:admin"]},
    )
    assert req.for_request("tools/list", None) == {"mcp:basic"}
    assert req.for_request("tools/call", {"name": "write_file"}) == {"mcp:basic", "files:write"}
    assert req.for_request("tools/call", {"name": "other"}) == {"mcp:basic"}
    assert req.for_request("resources/read", {"uri": "file:///secret"}) == {
        "mcp:basic",
        "files:secret",
    }
    assert req.for_request("prompts/get", {"name": "admin"}) == {"mcp:basic", "mcp:admin"}
    assert req.for_request("tools/call", {"name": 5}) == {"mcp:basic"}


def test_broader_scopes_imply_narrower_ones_transitively() -> None:
    req = ScopeRequirements(
        tools={"t": "files:read"},
        implies={"admin": "files:write", "files:write": "files:read"},
    )
    assert req.allows(principal("admin"), req.for_tool("t"))
    assert not req.allows(principal("files:other"), req.for_tool("t"))
    req.check(principal("files:write"), req.for_tool("t"))


def test_check_names_every_required_scope_not_only_the_missing_one() -> None:
    req = ScopeRequirements("a", tools={"t": "b c"})
    with pytest.raises(InsufficientScope) as info:
        req.check(principal("a", "b"), req.for_tool("t"))
    assert info.value.required == ("a", "b", "c")


# ------------------------------------------------------------------ metadata


@dataclass
class FixedVerifier:
    """A verifier that knows a table of tokens (for HTTP-shape tests)."""

    table: dict[str, Principal] = field(default_factory=dict)

    async def verify(self, token: str) -> Principal:
        from mcpkit.auth.errors import InvalidToken

        if token not in self.table:
            raise InvalidToken("unknown token")
        return self.table[token]


def make_resource(**kwargs: Any) -> ProtectedResource:
    verifier = FixedVerifier({"good": principal("mcp:basic"), "weak": principal()})
    return ProtectedResource(RESOURCE, [ISSUER], verifier, **kwargs)


def test_prm_is_served_at_the_path_based_and_the_root_location() -> None:
    resource = make_resource(scopes_supported=["mcp:basic"], resource_name="Demo")
    assert resource.metadata_paths == (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    )
    assert resource.metadata_url == ("https://mcp.example/.well-known/oauth-protected-resource/mcp")
    for path in resource.metadata_paths:
        response = resource.metadata_response("GET", path)
        assert response is not None
        assert response.status == 200
        assert response.header("access-control-allow-origin") == "*"
        document = json.loads(response.body)
        assert document == {
            "resource": RESOURCE,
            "authorization_servers": [ISSUER],
            "scopes_supported": ["mcp:basic"],
            "bearer_methods_supported": ["header"],
            "resource_name": "Demo",
        }
        assert ProtectedResourceMetadata.from_json(document).resource == RESOURCE
    assert resource.metadata_response("GET", "/mcp") is None


def test_prm_answers_head_options_and_refuses_other_methods() -> None:
    resource = make_resource()
    path = resource.metadata_paths[0]
    head = resource.metadata_response("HEAD", path)
    assert head is not None
    assert head.status == 200
    assert head.body == b""
    options = resource.metadata_response("OPTIONS", path)
    assert options is not None
    assert options.status == 204
    post = resource.metadata_response("POST", path)
    assert post is not None
    assert post.status == 405
    assert post.header("allow") == "GET, HEAD, OPTIONS"


def test_scopes_supported_defaults_to_the_default_requirement() -> None:
    resource = make_resource(requirements=ScopeRequirements("b a"))
    assert resource.metadata.scopes_supported == ("a", "b")
    assert make_resource().metadata.scopes_supported is None


def test_a_server_at_the_root_serves_one_document() -> None:
    resource = ProtectedResource("https://mcp.example/", [ISSUER], FixedVerifier())
    assert resource.resource == "https://mcp.example"
    assert resource.metadata_paths == ("/.well-known/oauth-protected-resource",)


def test_challenges_carry_realm_and_omit_scope_when_none_is_known() -> None:
    resource = make_resource(realm="mcp")
    response = resource.challenge()
    challenge = bearer_challenge(response.header("www-authenticate") or "")
    assert challenge is not None
    assert challenge.params == {
        "realm": "mcp",
        "resource_metadata": "https://mcp.example/.well-known/oauth-protected-resource/mcp",
    }


# ------------------------------------------------------------------ the ASGI guard


async def app_echoing_principal(scope: Any, receive: Any, send: Any) -> None:
    who = scope.get("auth")
    body = json.dumps({"subject": who.subject if who else None, "path": scope["path"]}).encode()
    await AuthResponse(200, (("content-type", "application/json"),), body).send(send)


@pytest.fixture
def guarded() -> httpx.AsyncClient:
    resource = make_resource(requirements=ScopeRequirements("mcp:basic"))
    app = protect(app_echoing_principal, resource)
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="https://mcp.example")


async def test_protect_serves_metadata_without_a_token(guarded: httpx.AsyncClient) -> None:
    async with guarded:
        response = await guarded.get("/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200
    assert response.json()["resource"] == RESOURCE


async def test_protect_refuses_the_endpoint_without_a_token(guarded: httpx.AsyncClient) -> None:
    async with guarded:
        response = await guarded.post("/mcp", json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp"'
        ', scope="mcp:basic"'
    )


async def test_protect_passes_the_principal_to_the_app(guarded: httpx.AsyncClient) -> None:
    async with guarded:
        ok = await guarded.post("/mcp", json={}, headers={"Authorization": "Bearer good"})
        bad = await guarded.post("/mcp", json={}, headers={"Authorization": "Bearer nope"})
        query = await guarded.post("/mcp?access_token=good", json={})
        other = await guarded.get("/health")
    assert ok.status_code == 200
    assert ok.json() == {"subject": "u", "path": "/mcp"}
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert query.status_code == 401  # a token in the query string is never used
    assert other.json() == {"subject": None, "path": "/health"}


# ------------------------------------------------------------------ introspection


@dataclass
class IntrospectionApp:
    answers: dict[str, dict[str, Any]]
    calls: list[dict[str, str]] = field(default_factory=list)
    status: int = 200

    def app(self) -> Starlette:
        async def introspect(request: Request) -> Response:
            form = await read_form(request)
            auth = request.headers.get("authorization", "")
            self.calls.append({"token": str(form.get("token")), "authorization": auth})
            if self.status != 200:
                return Response(status_code=self.status)
            return JSONResponse(self.answers.get(str(form.get("token")), {"active": False}))

        return Starlette(routes=[Route("/introspect", introspect, methods=["POST"])])


@pytest.fixture
def introspection() -> Iterator[tuple[IntrospectionApp, str]]:
    answers: dict[str, dict[str, Any]] = {
        "t-good": {
            "active": True,
            "sub": "bob",
            "client_id": "cli",
            "scope": "mcp:basic mcp:write",
            "aud": [RESOURCE],
            "iss": ISSUER,
            "exp": 4_000_000_000,
        },
        "t-other-aud": {"active": True, "aud": "https://other", "exp": 4_000_000_000},
        "t-no-aud": {"active": True, "exp": 4_000_000_000},
        "t-expired": {"active": True, "aud": RESOURCE, "exp": 1_000},
        "t-other-iss": {"active": True, "aud": RESOURCE, "iss": "https://evil"},
    }
    state = IntrospectionApp(answers)
    with RunningServer(state.app()) as running:
        yield state, running.base + "/introspect"


def introspecting(url: str, **kwargs: Any) -> tuple[ProtectedResource, IntrospectionVerifier]:
    verifier = IntrospectionVerifier(
        url, audience=RESOURCE, client_id="rs", client_secret="s3cret", issuer=ISSUER, **kwargs
    )
    return ProtectedResource(RESOURCE, [ISSUER], verifier), verifier


async def test_introspection_accepts_an_active_token_for_us(
    introspection: tuple[IntrospectionApp, str],
) -> None:
    state, url = introspection
    resource, _ = introspecting(url)
    outcome = await resource.authenticate([(b"authorization", b"Bearer t-good")])
    assert isinstance(outcome, Principal)
    assert outcome.subject == "bob"
    assert outcome.scopes == {"mcp:basic", "mcp:write"}
    assert outcome.client_id == "cli"
    assert state.calls[0]["token"] == "t-good"
    expected = "Basic " + base64.b64encode(b"rs:s3cret").decode()
    assert state.calls[0]["authorization"] == expected


@pytest.mark.parametrize(
    ("token", "description"),
    [
        ("t-unknown", "token is not active"),
        ("t-other-aud", "token audience mismatch"),
        ("t-no-aud", "token audience mismatch"),
        ("t-expired", "token expired"),
        ("t-other-iss", "token issuer mismatch"),
    ],
)
async def test_introspection_refusals_are_401_invalid_token(
    introspection: tuple[IntrospectionApp, str], token: str, description: str
) -> None:
    _, url = introspection
    resource, _ = introspecting(url)
    outcome = await resource.authenticate([(b"authorization", f"Bearer {token}".encode())])
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 401
    challenge = bearer_challenge(outcome.header("www-authenticate") or "")
    assert challenge is not None
    assert challenge.error == "invalid_token"
    assert challenge.params["error_description"] == description


async def test_introspection_answers_are_cached_briefly(
    introspection: tuple[IntrospectionApp, str],
) -> None:
    state, url = introspection
    now = [1000.0]
    resource, verifier = introspecting(url, cache_ttl=30, clock=lambda: now[0])
    headers = [(b"authorization", b"Bearer t-good")]
    for _ in range(5):
        assert isinstance(await resource.authenticate(headers), Principal)
    assert len(state.calls) == 1
    now[0] += 31
    assert isinstance(await resource.authenticate(headers), Principal)
    assert len(state.calls) == 2
    assert verifier.requests == 2
    assert all("t-good" not in key for key in verifier._cache)


async def test_introspection_outage_is_503_not_401(
    introspection: tuple[IntrospectionApp, str],
) -> None:
    state, url = introspection
    state.status = 500
    resource, _ = introspecting(url)
    outcome = await resource.authenticate([(b"authorization", b"Bearer t-good")])
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 503


async def test_introspection_of_an_unreachable_endpoint_is_503() -> None:
    resource, _ = introspecting("http://127.0.0.1:9/introspect", timeout=1.0)
    outcome = await resource.authenticate([(b"authorization", b"Bearer t-good")])
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 503


# ------------------------------------------------------------------ JWT via protect()


async def test_protect_with_a_real_jwt_verifier() -> None:
    signer = Signer.ec("e1")
    verifier = JWTVerifier(
        issuer=ISSUER, audience=RESOURCE, keys=StaticKeys({"keys": [signer.jwk]})
    )
    resource = ProtectedResource(RESOURCE, [ISSUER], verifier)
    app = protect(app_echoing_principal, resource)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="https://mcp.example"
    ) as client:
        ok = await client.post("/mcp", headers={"Authorization": f"Bearer {signer.mint()}"})
        expired = await client.post(
            "/mcp", headers={"Authorization": f"Bearer {signer.mint(exp=1000)}"}
        )
    assert ok.json()["subject"] == "user-1"
    assert expired.status_code == 401
    assert 'error_description="token expired"' in expired.headers["www-authenticate"]


def test_with_jwt_binds_the_audience_to_the_canonical_resource() -> None:
    resource = ProtectedResource.with_jwt(
        "HTTPS://MCP.example/mcp",
        ISSUER,
        "https://as.example/jwks",
        requirements=ScopeRequirements("mcp:basic"),
        realm="mcp",
    )
    assert resource.resource == RESOURCE
    assert isinstance(resource.verifier, JWTVerifier)
    assert resource.verifier.audience == [RESOURCE]
    assert resource.verifier.issuer == ISSUER
    assert resource.metadata.authorization_servers == (ISSUER,)
    assert resource.realm == "mcp"
