"""Bearer token verification on the resource server, with real keys and real tokens.

Spec ``basic/authorization/index.mdx`` §Token Handling (invalid or expired -> 401, the
audience is this server), ``security-considerations.mdx`` §Access Token Privilege
Restriction; ``security.md`` S-09. Every case goes through :class:`ProtectedResource`
so the assertion is on the HTTP answer a client would get: status, WWW-Authenticate,
JSON body. The JWKS is served by a real uvicorn on 127.0.0.1 and its hits are counted.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from auth.support import ISSUER, RESOURCE, JWKSApp, Signer
from conftest import RunningServer
from mcpkit.auth.errors import InvalidToken
from mcpkit.auth.metadata import bearer_challenge
from mcpkit.auth.resource import AuthResponse, ProtectedResource, ScopeRequirements
from mcpkit.auth.verifiers import JWKSCache, JWTVerifier, Principal, StaticKeys

PRM_URL = "https://mcp.example/.well-known/oauth-protected-resource/mcp"


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer.rsa("k1")


@pytest.fixture(scope="module")
def other_signer() -> Signer:
    return Signer.rsa("k1")  # same kid, different key: a forgery or another AS


@pytest.fixture(scope="module")
def ec_signer() -> Signer:
    return Signer.ec("e1")


@pytest.fixture
def jwks_app(signer: Signer, ec_signer: Signer) -> JWKSApp:
    return JWKSApp(keys=[signer.jwk, ec_signer.jwk])


@pytest.fixture
def jwks_server(jwks_app: JWKSApp) -> Iterator[RunningServer]:
    with RunningServer(jwks_app.app()) as running:
        yield running


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_resource(keys: Any, **requirements: Any) -> ProtectedResource:
    verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=keys)
    return ProtectedResource(
        RESOURCE,
        [ISSUER],
        verifier,
        requirements=ScopeRequirements("mcp:basic", **requirements),
    )


def bearer(token: str) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Bearer {token}".encode())]


def assert_invalid_token(outcome: Principal | AuthResponse, description: str) -> None:
    assert isinstance(outcome, AuthResponse), outcome
    assert outcome.status == 401
    header = outcome.header("www-authenticate")
    assert header is not None
    challenge = bearer_challenge(header)
    assert challenge is not None
    assert challenge.error == "invalid_token"
    assert challenge.resource_metadata == PRM_URL
    assert challenge.scope == ("mcp:basic",)
    assert challenge.params["error_description"] == description
    body = json.loads(outcome.body)
    assert body == {"error": "invalid_token", "error_description": description}
    assert outcome.header("content-type") == "application/json"


# ------------------------------------------------------------------ valid tokens


async def test_a_valid_token_yields_its_principal(
    signer: Signer, jwks_server: RunningServer
) -> None:
    resource = make_resource(JWKSCache(jwks_server.base + "/jwks"))
    token = signer.mint(scope="mcp:basic mcp:write", sub="alice", client_id="app-7")
    principal = await resource.authenticate(bearer(token))
    assert isinstance(principal, Principal)
    assert principal.subject == "alice"
    assert principal.client_id == "app-7"
    assert principal.issuer == ISSUER
    assert principal.scopes == frozenset({"mcp:basic", "mcp:write"})
    assert principal.expires_at is not None
    assert principal.claims["aud"] == RESOURCE
    assert token not in repr(principal)


async def test_lower_case_bearer_scheme_is_accepted(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    outcome = await resource.authenticate([(b"Authorization", b"bearer " + signer.mint().encode())])
    assert isinstance(outcome, Principal)


async def test_an_audience_list_that_includes_us_is_accepted(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    outcome = await resource.authenticate(bearer(signer.mint(aud=["https://other", RESOURCE])))
    assert isinstance(outcome, Principal)


async def test_es256_tokens_verify_with_an_ec_key(ec_signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [ec_signer.jwk]}))
    assert isinstance(await resource.authenticate(bearer(ec_signer.mint())), Principal)


# ------------------------------------------------------------------ refused tokens


@pytest.mark.parametrize(
    ("claims", "drop", "description"),
    [
        ({"aud": "https://other.example/mcp"}, (), "token audience mismatch"),
        ({"aud": RESOURCE + "/"}, (), "token audience mismatch"),
        ({"aud": ["https://a", "https://b"]}, (), "token audience mismatch"),
        ({}, ("aud",), "token lacks the aud claim"),
        ({"iss": "https://evil.example"}, (), "token issuer mismatch"),
        ({}, ("iss",), "token lacks the iss claim"),
        ({"exp": 1_000_000}, (), "token expired"),
        ({}, ("exp",), "token lacks the exp claim"),
        ({"nbf": 4_000_000_000}, (), "token not yet valid"),
    ],
)
async def test_bad_claims_get_401_invalid_token(
    signer: Signer, claims: dict[str, Any], drop: tuple[str, ...], description: str
) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    outcome = await resource.authenticate(bearer(signer.mint(drop=drop, **claims)))
    assert_invalid_token(outcome, description)


def _b64(data: dict[str, Any]) -> str:
    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


async def test_alg_none_is_refused(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    payload = jwt.decode(signer.mint(), options={"verify_signature": False})
    unsigned = f"{_b64({'alg': 'none', 'typ': 'JWT', 'kid': 'k1'})}.{_b64(payload)}."
    for token in (unsigned, unsigned + "AAAA"):
        outcome = await resource.authenticate(bearer(token))
        assert_invalid_token(outcome, "token algorithm not allowed")


async def test_hs256_signed_with_the_public_key_is_refused(signer: Signer) -> None:
    """Algorithm confusion: the RSA public key used as an HMAC secret."""
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    pem = signer.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64({"alg": "HS256", "typ": "JWT", "kid": "k1"})
    payload = _b64(jwt.decode(signer.mint(), options={"verify_signature": False}))
    mac = hmac.new(pem, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    forged = f"{header}.{payload}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
    assert_invalid_token(await resource.authenticate(bearer(forged)), "token algorithm not allowed")


async def test_a_token_signed_by_another_key_with_our_kid_is_refused(
    signer: Signer, other_signer: Signer
) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    outcome = await resource.authenticate(bearer(other_signer.mint()))
    assert_invalid_token(outcome, "token signature verification failed")


async def test_a_tampered_payload_is_refused(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    header, _, signature = signer.mint().split(".")
    claims = jwt.decode(signer.mint(), options={"verify_signature": False})
    claims["scope"] = "mcp:admin"
    tampered = f"{header}.{_b64(claims)}.{signature}"
    outcome = await resource.authenticate(bearer(tampered))
    assert_invalid_token(outcome, "token signature verification failed")


async def test_a_key_of_the_wrong_type_for_the_algorithm_is_refused(
    signer: Signer, ec_signer: Signer
) -> None:
    ec_jwk = dict(ec_signer.jwk, kid="k1")
    resource = make_resource(StaticKeys({"keys": [ec_jwk]}))
    outcome = await resource.authenticate(bearer(signer.mint()))
    assert_invalid_token(outcome, "signing key does not fit the token algorithm")


async def test_an_algorithm_outside_the_allow_list_is_refused(signer: Signer) -> None:
    resource = ProtectedResource(
        RESOURCE,
        [ISSUER],
        JWTVerifier(
            issuer=ISSUER,
            audience=RESOURCE,
            keys=StaticKeys({"keys": [signer.jwk]}),
            algorithms=["ES256"],
        ),
        requirements=ScopeRequirements("mcp:basic"),
    )
    outcome = await resource.authenticate(bearer(signer.mint()))
    assert_invalid_token(outcome, "token algorithm not allowed")


def test_symmetric_or_none_algorithms_cannot_be_configured() -> None:
    for algorithms in (["HS256"], ["none"], [], ["RS256", "none"]):
        with pytest.raises(ValueError, match="algorithms"):
            JWTVerifier(
                issuer=ISSUER, audience=RESOURCE, jwks_url="https://x", algorithms=algorithms
            )


async def test_garbage_tokens_are_refused_without_a_crash(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    for token in ("abc", "a.b.c", "e30.e30.e30", "x" * 20_000):
        outcome = await resource.authenticate(bearer(token))
        assert isinstance(outcome, AuthResponse)
        assert outcome.status == 401


# ------------------------------------------------------------------ header shapes


async def test_no_credentials_get_a_401_without_an_error_code(signer: Signer) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    for headers in ([], [(b"authorization", b"Basic dXNlcjpwYXNz")]):
        outcome = await resource.authenticate(headers)
        assert isinstance(outcome, AuthResponse)
        assert outcome.status == 401
        challenge = bearer_challenge(outcome.header("www-authenticate") or "")
        assert challenge is not None
        assert challenge.error is None
        assert challenge.resource_metadata == PRM_URL
        assert challenge.scope == ("mcp:basic",)


@pytest.mark.parametrize(
    ("headers", "description"),
    [
        ([(b"authorization", b"Bearer")], "malformed bearer token"),
        ([(b"authorization", b"Bearer ")], "malformed bearer token"),
        ([(b"authorization", b"Bearer a b")], "malformed bearer token"),
        (
            [(b"authorization", b"Bearer x"), (b"authorization", b"Bearer y")],
            "repeated Authorization header",
        ),
    ],
)
async def test_malformed_authorization_headers_get_invalid_token(
    signer: Signer, headers: list[tuple[bytes, bytes]], description: str
) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    assert_invalid_token(await resource.authenticate(headers), description)


# ------------------------------------------------------------------ JWKS behaviour


async def test_jwks_is_fetched_once_and_cached(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    clock = Clock()
    cache = JWKSCache(jwks_server.base + "/jwks", ttl=300, clock=clock)
    resource = make_resource(cache)
    for _ in range(20):
        assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    assert jwks_app.hits == 1
    clock.now += 301
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    assert jwks_app.hits == 2


async def test_concurrent_first_requests_share_one_fetch(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    resource = make_resource(JWKSCache(jwks_server.base + "/jwks"))
    outcomes = await asyncio.gather(
        *(resource.authenticate(bearer(signer.mint())) for _ in range(20))
    )
    assert all(isinstance(o, Principal) for o in outcomes)
    assert jwks_app.hits == 1


async def test_unknown_kid_refreshes_once_then_is_refused_and_rate_limited(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    clock = Clock()
    cache = JWKSCache(jwks_server.base + "/jwks", min_refresh_interval=30, clock=clock)
    resource = make_resource(cache)
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    assert jwks_app.hits == 1
    clock.now += 31
    stranger = Signer.rsa("k-unknown")
    assert_invalid_token(
        await resource.authenticate(bearer(stranger.mint())), "unknown signing key"
    )
    assert jwks_app.hits == 2
    for index in range(50):
        other = stranger.mint(headers={"kid": f"random-{index}"})
        assert_invalid_token(await resource.authenticate(bearer(other)), "unknown signing key")
    assert jwks_app.hits == 2  # a flood of unknown kids costs no more fetches


async def test_a_rotated_key_is_picked_up_on_first_use(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    clock = Clock()
    cache = JWKSCache(jwks_server.base + "/jwks", min_refresh_interval=30, clock=clock)
    resource = make_resource(cache)
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    rotated = Signer.rsa("k2")
    jwks_app.keys = [*jwks_app.keys, rotated.jwk]
    clock.now += 31
    assert isinstance(await resource.authenticate(bearer(rotated.mint())), Principal)
    assert jwks_app.hits == 2


async def test_jwks_that_is_too_large_is_refused_with_503(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    jwks_app.body_override = b'{"keys": [' + b'{"kty":"RSA"},' * 10_000 + b'{"kty":"RSA"}]}'
    resource = make_resource(JWKSCache(jwks_server.base + "/jwks", max_bytes=65_536))
    outcome = await resource.authenticate(bearer(signer.mint()))
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 503
    assert json.loads(outcome.body)["error"] == "temporarily_unavailable"
    assert outcome.header("www-authenticate") is None


async def test_jwks_with_too_many_keys_is_refused(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    jwks_app.keys = [dict(signer.jwk, kid=f"k{i}") for i in range(65)]
    resource = make_resource(JWKSCache(jwks_server.base + "/jwks", max_bytes=1_000_000))
    outcome = await resource.authenticate(bearer(signer.mint()))
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 503


async def test_jwks_redirects_are_not_followed(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    jwks_app.redirect_to = jwks_server.base + "/elsewhere"
    resource = make_resource(JWKSCache(jwks_server.base + "/jwks"))
    outcome = await resource.authenticate(bearer(signer.mint()))
    assert isinstance(outcome, AuthResponse)
    assert outcome.status == 503
    assert jwks_app.hits == 1  # /elsewhere was never requested


async def test_cached_keys_survive_a_jwks_outage(
    signer: Signer, jwks_app: JWKSApp, jwks_server: RunningServer
) -> None:
    clock = Clock()
    cache = JWKSCache(jwks_server.base + "/jwks", ttl=10, min_refresh_interval=5, clock=clock)
    resource = make_resource(cache)
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    jwks_app.status = 500
    clock.now += 11
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    assert jwks_app.hits == 2
    assert isinstance(await resource.authenticate(bearer(signer.mint())), Principal)
    assert jwks_app.hits == 2  # the failed attempt is rate limited too


async def test_private_and_encryption_keys_in_a_jwks_are_ignored(signer: Signer) -> None:
    private = dict(signer.jwk, d="AAAA")
    encryption = dict(signer.jwk, use="enc")
    for jwk in (private, encryption):
        with pytest.raises(InvalidToken, match="unknown signing key"):
            await StaticKeys({"keys": [jwk]}).get("k1")


async def test_a_token_without_kid_needs_a_single_key_set(signer: Signer) -> None:
    keys = StaticKeys({"keys": [signer.jwk]})
    assert (await keys.get(None))["kid"] == "k1"
    two = StaticKeys({"keys": [signer.jwk, dict(signer.jwk, kid="k9")]})
    with pytest.raises(InvalidToken):
        await two.get(None)


# ------------------------------------------------------------------ scopes -> 403


async def test_insufficient_scope_gets_403_with_every_required_scope(signer: Signer) -> None:
    resource = make_resource(
        StaticKeys({"keys": [signer.jwk]}), tools={"delete_file": "files:write files:delete"}
    )
    principal = await resource.authenticate(bearer(signer.mint(scope="mcp:basic files:write")))
    assert isinstance(principal, Principal)
    assert resource.authorize(principal, "tools/list", {}) is None
    denied = resource.authorize(principal, "tools/call", {"name": "delete_file"})
    assert denied is not None
    assert denied.status == 403
    challenge = bearer_challenge(denied.header("www-authenticate") or "")
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == ("files:delete", "files:write", "mcp:basic")
    assert challenge.resource_metadata == PRM_URL
    assert json.loads(denied.body)["error"] == "insufficient_scope"


async def test_a_token_with_no_scopes_is_refused_on_a_server_that_needs_one(
    signer: Signer,
) -> None:
    resource = make_resource(StaticKeys({"keys": [signer.jwk]}))
    principal = await resource.authenticate(bearer(signer.mint(drop=("scope",))))
    assert isinstance(principal, Principal)
    denied = resource.authorize(principal, "tools/list")
    assert denied is not None
    assert denied.status == 403


async def test_the_principal_identity_is_stable_across_tokens(signer: Signer) -> None:
    keys = StaticKeys({"keys": [signer.jwk]})
    verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=keys)
    first = await verifier.verify(signer.mint(drop=("sub",), exp=int(time.time()) + 100))
    second = await verifier.verify(signer.mint(drop=("sub",), exp=int(time.time()) + 900))
    assert first.subject is None
    assert str(first) == str(second) == first.identity
    assert first == second
    other = await verifier.verify(signer.mint(client_id="someone-else"))
    assert other.identity != first.identity
