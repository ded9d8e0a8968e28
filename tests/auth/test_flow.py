"""The client flow, driven step by step through every conformance §7.3 variant.

Each test builds the scenario's mock MCP server and authorization server
(:mod:`auth.world`), runs one or more protected requests through
:meth:`OAuthFlow.run` and asserts the exact requests the flow emitted, in order.
Spec: ``basic/authorization/`` (all four pages).
"""

from __future__ import annotations

from typing import Any

import pytest

from auth.world import AuthServer, IssMode, World, basic_credentials, json_response, query
from mcpkit.auth.errors import AuthorizationDenied, OAuthFlowError
from mcpkit.auth.flow import (
    AuthorizationResponse,
    ClientConfig,
    HTTPRequest,
    HTTPResponse,
    OAuthFlow,
    SendResource,
)
from mcpkit.auth.tokens import AuthState, ClientRegistration, TokenSet

SERVER = "http://localhost:3000/mcp"
AS = "http://localhost:4000"
REDIRECT = "http://localhost:3000/callback"
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def flow_for(world: World, **config: Any) -> OAuthFlow:
    return OAuthFlow(world.server, ClientConfig(redirect_uri=REDIRECT, **config))


# ------------------------------------------------------------------ discovery variants


def test_metadata_default_uses_the_advertised_prm_and_the_root_as_metadata() -> None:
    world = World()
    response = world.drive(flow_for(world))
    assert response.status == 200
    assert world.trace() == [
        "MCP",
        f"GET {SERVER.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp",
        f"GET {AS}/.well-known/oauth-authorization-server",
        f"POST {AS}/register",
        "AUTHORIZE",
        f"POST {AS}/token",
        "MCP+token",
    ]
    authorization = world.auth.authorizations[0]
    assert authorization["response_type"] == "code"
    assert authorization["client_id"] == "test-client-id"
    assert authorization["redirect_uri"] == REDIRECT
    assert authorization["code_challenge_method"] == "S256"
    assert len(authorization["state"]) >= 32
    assert authorization["resource"] == SERVER
    assert "scope" not in authorization
    form, header = world.auth.token_requests[0]
    assert form["grant_type"] == "authorization_code"
    assert form["resource"] == SERVER
    assert form["redirect_uri"] == REDIRECT
    assert form["client_id"] == "test-client-id"
    assert header is None


def test_metadata_var1_finds_unadvertised_path_prm_and_oidc_metadata() -> None:
    world = World(prm_in_header=False)
    world.auth.metadata_path = "/.well-known/openid-configuration"
    assert world.drive(flow_for(world)).status == 200
    assert world.trace()[:4] == [
        "MCP",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        f"GET {AS}/.well-known/oauth-authorization-server",
        f"GET {AS}/.well-known/openid-configuration",
    ]


def test_metadata_var2_falls_back_to_root_prm_and_path_issuer_metadata() -> None:
    world = World(prm_in_header=False, prm_path="/.well-known/oauth-protected-resource")
    world.auth.issuer_path = "/tenant1"
    world.auth.metadata_path = "/.well-known/oauth-authorization-server/tenant1"
    assert world.drive(flow_for(world)).status == 200
    trace = world.trace()
    assert trace[:4] == [
        "MCP",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "GET http://localhost:3000/.well-known/oauth-protected-resource",
        f"GET {AS}/.well-known/oauth-authorization-server/tenant1",
    ]
    assert f"GET {AS}/.well-known/oauth-authorization-server" not in trace
    assert trace[4:] == [
        f"POST {AS}/tenant1/register",
        "AUTHORIZE",
        f"POST {AS}/tenant1/token",
        "MCP+token",
    ]
    # the resource indicator is the PRM's value exactly, with no slash appended
    assert world.auth.authorizations[0]["resource"] == "http://localhost:3000"
    assert world.auth.token_requests[0][0]["resource"] == "http://localhost:3000"


def test_metadata_var3_uses_a_custom_prm_url_and_oidc_path_appending() -> None:
    world = World(prm_path="/custom/metadata/location.json")
    world.prm_resource = SERVER
    world.auth.issuer_path = "/tenant1"
    world.auth.metadata_path = "/tenant1/.well-known/openid-configuration"
    assert world.drive(flow_for(world)).status == 200
    assert world.trace()[:5] == [
        "MCP",
        "GET http://localhost:3000/custom/metadata/location.json",
        f"GET {AS}/.well-known/oauth-authorization-server/tenant1",
        f"GET {AS}/.well-known/openid-configuration/tenant1",
        f"GET {AS}/tenant1/.well-known/openid-configuration",
    ]
    assert f"GET {AS}/.well-known/oauth-authorization-server" not in world.trace()


def test_resource_mismatch_stops_before_any_authorization_server_traffic() -> None:
    world = World(prm_resource="https://evil.example.com/mcp")
    with pytest.raises(OAuthFlowError, match=r"evil\.example\.com"):
        world.drive(flow_for(world))
    assert world.trace() == [
        "MCP",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
    ]


def test_as_metadata_with_another_issuer_is_rejected_and_that_server_is_left_alone() -> None:
    world = World()
    world.auth.issuer_override = "https://attacker.example.com"
    with pytest.raises(OAuthFlowError, match="issuer"):
        world.drive(flow_for(world))
    assert world.trace()[-1] == f"GET {AS}/.well-known/oauth-authorization-server"
    assert world.auth.registrations == []


def test_missing_prm_everywhere_is_an_error() -> None:
    world = World(prm_path="/nowhere", prm_in_header=False)
    with pytest.raises(OAuthFlowError, match="no protected resource metadata"):
        world.drive(flow_for(world))
    assert "AUTHORIZE" not in world.trace()


def test_an_authorization_server_without_pkce_s256_is_refused() -> None:
    for methods in (None, ["plain"]):
        world = World()
        world.auth.pkce_methods = methods
        with pytest.raises(OAuthFlowError, match="S256"):
            world.drive(flow_for(world))
        assert world.trace()[-1] == f"GET {AS}/.well-known/oauth-authorization-server"


@pytest.mark.parametrize(
    "endpoint", ["javascript:alert(1)", "file:///etc/passwd", "http://evil.example/authorize"]
)
def test_an_unsafe_authorization_endpoint_is_refused_before_any_redirect(endpoint: str) -> None:
    world = World()
    world.auth.authorization_endpoint = endpoint
    with pytest.raises(OAuthFlowError, match="authorization_endpoint"):
        world.drive(flow_for(world))
    assert "AUTHORIZE" not in world.trace()


# ------------------------------------------------------------------ client identity


def test_cimd_uses_the_metadata_url_as_client_id_and_does_not_register() -> None:
    world = World()
    world.auth.cimd = True
    assert world.drive(flow_for(world, client_metadata_url=CIMD_URL)).status == 200
    assert f"POST {AS}/register" not in world.trace()
    assert world.auth.authorizations[0]["client_id"] == CIMD_URL
    form, header = world.auth.token_requests[0]
    assert form["client_id"] == CIMD_URL
    assert "client_secret" not in form
    assert header is None


def test_cimd_url_is_not_used_when_the_server_does_not_support_it() -> None:
    world = World()
    assert world.drive(flow_for(world, client_metadata_url=CIMD_URL)).status == 200
    assert f"POST {AS}/register" in world.trace()
    assert world.auth.authorizations[0]["client_id"] == "test-client-id"


def test_pre_registered_credentials_use_basic_auth_and_never_register() -> None:
    world = World()
    world.auth.registration = False
    world.auth.token_auth_methods = ["client_secret_basic"]
    flow = flow_for(world, client_id="pre-registered-client", client_secret="pre-registered-secret")
    assert world.drive(flow).status == 200
    assert not any(line.endswith("/register") for line in world.trace())
    form, header = world.auth.token_requests[0]
    assert basic_credentials(header) == ("pre-registered-client", "pre-registered-secret")
    assert "client_secret" not in form
    assert world.auth.authorizations[0]["client_id"] == "pre-registered-client"


def test_dcr_sends_application_type_grant_types_and_redirect_uris() -> None:
    world = World()
    assert world.drive(flow_for(world, client_name="tester")).status == 200
    body = world.auth.registrations[0]
    assert body["application_type"] == "native"
    assert body["redirect_uris"] == [REDIRECT]
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["response_types"] == ["code"]
    assert body["token_endpoint_auth_method"] == "none"
    assert body["client_name"] == "tester"


def test_a_web_redirect_uri_registers_as_a_web_application() -> None:
    world = World()
    flow = OAuthFlow(world.server, ClientConfig(redirect_uri="https://app.example/cb"))
    world.drive(flow)
    assert world.auth.registrations[0]["application_type"] == "web"


def test_no_way_to_identify_the_client_is_an_error() -> None:
    world = World()
    world.auth.registration = False
    with pytest.raises(OAuthFlowError, match="no client identity"):
        world.drive(flow_for(world))


@pytest.mark.parametrize(
    ("method", "secret"),
    [("client_secret_basic", "s-basic"), ("client_secret_post", "s-post"), ("none", None)],
)
def test_token_endpoint_auth_follows_the_registered_method(method: str, secret: str | None) -> None:
    world = World()
    world.auth.token_auth_methods = [method]
    world.auth.registered_method = method
    world.auth.client_secret = secret
    assert world.drive(flow_for(world)).status == 200
    assert world.auth.registrations[0]["token_endpoint_auth_method"] == method
    form, header = world.auth.token_requests[0]
    if method == "client_secret_basic":
        assert basic_credentials(header) == ("test-client-id", "s-basic")
        assert "client_secret" not in form
    elif method == "client_secret_post":
        assert header is None
        assert (form["client_id"], form["client_secret"]) == ("test-client-id", "s-post")
    else:
        assert header is None
        assert form["client_id"] == "test-client-id"
        assert "client_secret" not in form


def test_a_secret_issued_to_a_public_registration_is_not_sent() -> None:
    world = World()  # AS supports only "none" but hands out a secret anyway
    world.drive(flow_for(world))
    form, header = world.auth.token_requests[0]
    assert header is None
    assert "client_secret" not in form


# ------------------------------------------------------------------ iss (RFC 9207)


@pytest.mark.parametrize(
    ("supported", "mode", "proceeds"),
    [
        (True, "correct", True),
        (True, "omit", False),
        (True, "wrong", False),
        (True, "normalized", False),
        (None, "wrong", False),
        (None, "normalized", False),
        (None, "correct", True),
        (None, "omit", True),
        (False, "omit", True),
    ],
)
def test_iss_is_checked_by_exact_comparison(
    supported: bool | None, mode: IssMode, proceeds: bool
) -> None:
    world = World()
    world.auth.iss_supported = supported
    world.auth.iss_mode = mode
    if proceeds:
        assert world.drive(flow_for(world)).status == 200
        assert len(world.auth.token_requests) == 1
    else:
        with pytest.raises(OAuthFlowError, match=r"iss|issuer"):
            world.drive(flow_for(world))
        assert world.trace()[-1] == "AUTHORIZE"
        assert world.auth.token_requests == []


def test_an_error_response_from_another_issuer_is_neither_acted_on_nor_shown() -> None:
    world = World()
    world.auth.error = "access_denied"
    world.auth.iss_mode = "wrong"
    with pytest.raises(OAuthFlowError) as info:
        world.drive(flow_for(world))
    assert not isinstance(info.value, AuthorizationDenied)
    assert "the user said no" not in str(info.value)


def test_an_error_response_from_the_right_issuer_is_reported() -> None:
    world = World()
    world.auth.error = "access_denied"
    with pytest.raises(AuthorizationDenied) as info:
        world.drive(flow_for(world))
    assert info.value.error == "access_denied"


def test_a_wrong_state_is_refused_before_the_token_request() -> None:
    world = World()
    world.auth.forged_state = "forged"
    with pytest.raises(OAuthFlowError, match="state"):
        world.drive(flow_for(world))
    assert world.trace()[-1] == "AUTHORIZE"
    assert world.auth.token_requests == []


# ------------------------------------------------------------------ scopes


def test_scope_comes_from_www_authenticate_first() -> None:
    world = World(challenge_scope="mcp:basic", scopes_supported=["mcp:profile"])
    world.drive(flow_for(world))
    assert world.auth.authorizations[0]["scope"] == "mcp:basic"


def test_scope_falls_back_to_all_prm_scopes_supported() -> None:
    world = World(scopes_supported=["mcp:basic", "mcp:read", "mcp:write"])
    world.drive(flow_for(world))
    assert world.auth.authorizations[0]["scope"] == "mcp:basic mcp:read mcp:write"


def test_scope_is_omitted_when_nothing_defines_it() -> None:
    world = World()
    world.drive(flow_for(world))
    assert "scope" not in world.auth.authorizations[0]


def test_step_up_requests_the_union_of_previous_and_challenged_scopes() -> None:
    world = World(challenge_scope="mcp:basic", scopes_supported=["mcp:profile"])
    world.required = {"mcp:basic"}
    flow = flow_for(world)
    assert world.drive(flow).status == 200  # tools/list
    world.required = {"mcp:write"}
    world.events.clear()
    assert world.drive(flow).status == 200  # tools/call
    assert world.trace() == [
        "MCP+token",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        f"GET {AS}/.well-known/oauth-authorization-server",
        "AUTHORIZE",
        f"POST {AS}/token",
        "MCP+token",
    ]
    assert world.auth.authorizations[1]["scope"] == "mcp:basic mcp:write"
    assert len(world.auth.registrations) == 1  # the registration is reused


def test_retry_limit_stops_after_three_authorizations_and_remembers() -> None:
    world = World(challenge_scope="mcp:admin", scopes_supported=["mcp:admin"])
    world.always_forbid = True
    flow = flow_for(world)
    with pytest.raises(OAuthFlowError, match="3 authorization attempts"):
        world.drive(flow)
    assert world.trace().count("AUTHORIZE") == 3
    assert [a["scope"] for a in world.auth.authorizations] == ["mcp:admin"] * 3
    world.events.clear()
    with pytest.raises(OAuthFlowError, match="keeps refusing"):
        world.drive(flow)
    assert "AUTHORIZE" not in world.trace()


def test_the_retry_limit_is_configurable() -> None:
    world = World(challenge_scope="mcp:admin")
    world.always_forbid = True
    with pytest.raises(OAuthFlowError):
        world.drive(flow_for(world, max_authorizations=1))
    assert world.trace().count("AUTHORIZE") == 1


def test_offline_access_is_requested_when_the_authorization_server_lists_it() -> None:
    world = World(scopes_supported=["mcp:basic"])
    world.auth.scopes_supported = ["mcp:basic", "offline_access"]
    world.auth.cimd = True
    flow = flow_for(world, client_metadata_url=CIMD_URL)
    world.drive(flow)
    assert world.auth.authorizations[0]["scope"] == "mcp:basic offline_access"
    assert flow.tokens is not None
    assert flow.tokens.requested_scope == ("mcp:basic",)


def test_offline_access_is_never_requested_when_the_server_does_not_list_it() -> None:
    world = World(scopes_supported=["mcp:basic", "offline_access"], challenge_scope=None)
    world.auth.scopes_supported = ["mcp:basic"]
    world.drive(flow_for(world))
    assert world.auth.authorizations[0]["scope"] == "mcp:basic"


def test_offline_access_can_be_turned_off() -> None:
    world = World(scopes_supported=["mcp:basic"])
    world.auth.scopes_supported = ["mcp:basic", "offline_access"]
    world.drive(flow_for(world, request_offline_access=False))
    assert world.auth.authorizations[0]["scope"] == "mcp:basic"


# ------------------------------------------------------------------ tokens over time


def test_a_valid_token_is_reused_without_any_auth_traffic() -> None:
    world = World()
    flow = flow_for(world)
    world.drive(flow)
    world.events.clear()
    assert world.drive(flow).status == 200
    assert world.trace() == ["MCP+token"]


def test_an_expired_token_is_refreshed_before_sending() -> None:
    now = [1000.0]
    world = World()
    world.auth.refresh_tokens = True
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT), clock=lambda: now[0])
    world.drive(flow)
    now[0] += 3600
    world.events.clear()
    assert world.drive(flow).status == 200
    assert world.trace() == [f"POST {AS}/token", "MCP+token"]
    form, _ = world.auth.token_requests[-1]
    assert form["grant_type"] == "refresh_token"
    assert form["refresh_token"] == "refresh-1"
    assert form["resource"] == SERVER
    assert flow.tokens is not None
    assert flow.tokens.refresh_token == "refresh-2"


def test_a_401_with_a_refresh_token_refreshes_after_rediscovery() -> None:
    world = World()
    world.auth.refresh_tokens = True
    flow = flow_for(world)
    world.drive(flow)
    assert flow.tokens is not None
    world.revoked.add(flow.tokens.access_token)
    world.events.clear()
    assert world.drive(flow).status == 200
    assert world.trace() == [
        "MCP+token",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        f"GET {AS}/.well-known/oauth-authorization-server",
        f"POST {AS}/token",
        "MCP+token",
    ]


def test_a_refused_refresh_falls_back_to_a_full_authorization() -> None:
    now = [1000.0]
    world = World()
    world.auth.refresh_tokens = True
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT), clock=lambda: now[0])
    world.drive(flow)
    assert flow.tokens is not None
    flow.tokens.refresh_token = "stolen-and-revoked"
    now[0] += 3600
    world.events.clear()
    assert world.drive(flow).status == 200
    assert world.trace() == [
        f"POST {AS}/token",
        "MCP",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        f"GET {AS}/.well-known/oauth-authorization-server",
        "AUTHORIZE",
        f"POST {AS}/token",
        "MCP+token",
    ]


def test_authorization_server_migration_registers_anew_and_never_reuses_credentials() -> None:
    world = World(challenge_scope="mcp:basic")
    world.auth.client_id = "as1-client-id-LEAKED-IF-SEEN-AT-AS2"
    world.auth.refresh_tokens = True
    flow = flow_for(world)
    world.drive(flow)
    as2 = AuthServer(base="http://localhost:5000", client_id="as2-client-id")
    world.auth = as2
    world.events.clear()
    assert world.drive(flow).status == 200
    assert world.trace() == [
        "MCP+token",
        "GET http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "GET http://localhost:5000/.well-known/oauth-authorization-server",
        "POST http://localhost:5000/register",
        "AUTHORIZE",
        "POST http://localhost:5000/token",
        "MCP+token",
    ]
    assert as2.authorizations[0]["client_id"] == "as2-client-id"
    for form, header in as2.token_requests:
        assert "as1" not in str(form)
        assert header is None
    assert set(flow.state.registrations) == {AS, "http://localhost:5000"}
    assert flow.tokens is not None
    assert flow.tokens.issuer == "http://localhost:5000"


def test_pre_registered_credentials_are_not_carried_to_another_server() -> None:
    world = World()
    world.auth.registration = False
    flow = flow_for(world, client_id="pre", client_secret="sec")
    world.drive(flow)
    world.auth = AuthServer(base="http://localhost:5000", registration=False)
    with pytest.raises(OAuthFlowError, match="pre-registered credentials belong to"):
        world.drive(flow)
    assert world.auth.authorizations == []


def test_pinned_pre_registered_credentials_refuse_another_issuer_at_once() -> None:
    world = World()
    flow = flow_for(world, client_id="pre", client_secret="sec", client_issuer="https://as.other")
    with pytest.raises(OAuthFlowError, match="belong to"):
        world.drive(flow)


def test_a_token_issued_elsewhere_is_dropped_once_the_server_names_another_issuer() -> None:
    state = AuthState(
        registrations={"https://old.as": ClientRegistration("https://old.as", "old", "none")},
        tokens={
            SERVER: TokenSet(
                SERVER,
                "https://old.as",
                "https://old.as/token",
                "old-token",
                refresh_token="old-refresh",
            )
        },
    )
    world = World()
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT), state)
    assert world.drive(flow).status == 200
    assert "POST https://old.as/token" not in world.trace()
    assert flow.tokens is not None
    assert flow.tokens.issuer == AS


def test_a_token_stored_by_a_concurrent_request_is_used_without_discovery() -> None:
    world = World()
    first = flow_for(world)
    world.drive(first)
    good = first.tokens
    assert good is not None
    second = flow_for(world)  # started before the first request had its token
    gen = second.run()
    assert next(gen) == SendResource(None)
    second.state.tokens[second.server_url] = good  # the first request finished meanwhile
    world.events.clear()
    event = gen.send(world.answer(SendResource(None)))
    assert event == SendResource(f"Bearer {good.access_token}")
    assert world.trace() == ["MCP"]


# ------------------------------------------------------------------ pass-through


@pytest.mark.parametrize(
    "response",
    [
        HTTPResponse(200),
        HTTPResponse(500),
        HTTPResponse(404),
        HTTPResponse(403),
        HTTPResponse(403, (("www-authenticate", 'Bearer error="invalid_request"'),)),
    ],
)
def test_responses_that_are_not_auth_challenges_pass_through(response: HTTPResponse) -> None:
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT))
    gen = flow.run()
    assert next(gen) == SendResource(None)
    with pytest.raises(StopIteration):
        gen.send(response)


def test_answering_with_the_wrong_reply_type_is_a_programming_error() -> None:
    gen = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT)).run()
    next(gen)
    with pytest.raises(TypeError):
        gen.send(AuthorizationResponse({}))


def test_requests_carry_no_secrets_in_urls_or_reprs() -> None:
    world = World()
    world.auth.token_auth_methods = ["client_secret_post"]
    world.auth.registered_method = "client_secret_post"
    flow = flow_for(world)
    world.drive(flow)
    for event in world.events:
        if isinstance(event, HTTPRequest):
            assert "test-client-secret" not in event.url
            assert "test-client-secret" not in repr(event)
    assert flow.tokens is not None
    assert flow.tokens.access_token not in repr(flow.state)
    assert "test-client-secret" not in repr(flow.state)
    authorize_urls = [
        query(e.url) for e in world.events if not isinstance(e, (HTTPRequest, SendResource))
    ]
    assert all("code_verifier" not in q for q in authorize_urls)


def test_config_validation() -> None:
    with pytest.raises(OAuthFlowError):
        OAuthFlow(SERVER, ClientConfig(redirect_uri="javascript:alert(1)"))
    with pytest.raises(ValueError, match="client_metadata_url"):
        OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT, client_metadata_url="http://x/y"))


def test_with_several_authorization_servers_the_one_in_use_is_kept() -> None:
    world = World()
    flow = flow_for(world)
    world.drive(flow)
    world.authorization_servers = ["https://other.example", AS]
    assert flow.tokens is not None
    world.revoked.add(flow.tokens.access_token)
    world.events.clear()
    assert world.drive(flow).status == 200
    assert not any("other.example" in line for line in world.trace())


def test_a_fresh_client_takes_the_first_listed_authorization_server() -> None:
    world = World()
    world.authorization_servers = ["https://first.example", AS]
    with pytest.raises(OAuthFlowError, match="no authorization server metadata"):
        world.drive(flow_for(world))
    assert world.trace()[2] == "GET https://first.example/.well-known/oauth-authorization-server"


def test_a_numeric_string_expires_in_is_understood() -> None:
    world = World()
    world.auth.expires_in = "60"
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT), clock=lambda: 100.0)
    world.drive(flow)
    assert flow.tokens is not None
    assert flow.tokens.expires_at == 160.0


# ------------------------------------------------------------------ broken servers


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            json_response(400, {"error": "invalid_redirect_uri"}),
            r"HTTP 400 \(invalid_redirect_uri\)",
        ),
        (json_response(201, {"client_secret": "x"}), "no client_id"),
        (HTTPResponse(201, (), b"<html>"), "not valid JSON"),
    ],
)
def test_a_failed_registration_is_a_clear_error(reply: HTTPResponse, message: str) -> None:
    world = World()
    world.auth.registration_override = reply
    with pytest.raises(OAuthFlowError, match=message):
        world.drive(flow_for(world))
    assert "AUTHORIZE" not in world.trace()


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            json_response(400, {"error": "invalid_grant", "error_description": "used"}),
            "invalid_grant",
        ),
        (json_response(500, {}), "HTTP 500"),
        (HTTPResponse(502), "HTTP 502"),
        (json_response(200, {"token_type": "Bearer"}), "no access_token"),
        (json_response(200, {"access_token": "t", "token_type": "DPoP"}), "not a Bearer token"),
        (json_response(200, {"access_token": "t"}), "not a Bearer token"),
    ],
)
def test_a_failed_token_request_is_a_clear_error(reply: HTTPResponse, message: str) -> None:
    world = World()
    world.auth.token_override = reply
    with pytest.raises(OAuthFlowError, match=message):
        world.drive(flow_for(world))
    assert world.trace()[-1] == f"POST {AS}/token"


def test_an_authorization_response_without_a_code_is_refused() -> None:
    world = World()
    world.auth.drop_code = True
    with pytest.raises(OAuthFlowError, match="no code"):
        world.drive(flow_for(world))
    assert world.auth.token_requests == []


def test_a_403_with_a_scope_but_no_error_code_is_still_a_step_up() -> None:
    """Older servers (and the 2025 conformance mock) challenge without ``error``."""
    flow = OAuthFlow(SERVER, ClientConfig(redirect_uri=REDIRECT))
    gen = flow.run()
    next(gen)
    event = gen.send(HTTPResponse(403, (("www-authenticate", 'Bearer scope="mcp:write"'),)))
    assert isinstance(event, HTTPRequest)
    assert event.url.endswith("/.well-known/oauth-protected-resource/mcp")


def test_a_short_lived_token_is_still_sent() -> None:
    world = World()
    world.auth.expires_in = 10
    flow = flow_for(world)
    assert world.drive(flow).status == 200
    assert world.trace().count("AUTHORIZE") == 1
    assert world.trace()[-1] == "MCP+token"


def test_a_registration_for_another_redirect_uri_is_replaced() -> None:
    world = World()
    first = flow_for(world)
    world.drive(first)
    moved = OAuthFlow(SERVER, ClientConfig(redirect_uri="http://127.0.0.1:4999/cb"), first.state)
    moved.state.tokens.clear()
    world.drive(moved)
    assert len(world.auth.registrations) == 2
    assert world.auth.registrations[1]["redirect_uris"] == ["http://127.0.0.1:4999/cb"]
    assert world.auth.authorizations[1]["redirect_uri"] == "http://127.0.0.1:4999/cb"


def test_a_stored_registration_is_reused_while_it_fits() -> None:
    world = World()
    first = flow_for(world)
    world.drive(first)
    again = flow_for(world)
    again.state = first.state
    again.state.tokens.clear()
    world.drive(again)
    assert len(world.auth.registrations) == 1
    assert len(world.auth.authorizations) == 2
