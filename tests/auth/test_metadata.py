"""Discovery URLs, metadata documents and WWW-Authenticate (spec
``basic/authorization/authorization-server-discovery.mdx``; RFC 9728, RFC 8414, RFC 9110)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcpkit.auth
from mcpkit.auth.errors import OAuthFlowError
from mcpkit.auth.metadata import (
    AuthorizationServerMetadata,
    Challenge,
    ProtectedResourceMetadata,
    as_metadata_urls,
    bearer_challenge,
    canonical_resource,
    check_endpoint_url,
    format_challenge,
    is_loopback_host,
    parse_scope,
    parse_www_authenticate,
    prm_path,
    prm_urls,
    resource_matches,
)
from mcpkit.auth.pkce import PKCE, new_state, s256_challenge

# ------------------------------------------------------------------ PRM locations


def test_prm_urls_try_the_path_based_form_before_the_root() -> None:
    assert prm_urls("http://localhost:3000/mcp") == [
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "http://localhost:3000/.well-known/oauth-protected-resource",
    ]


def test_prm_urls_for_a_server_at_the_root_have_only_the_root_form() -> None:
    assert prm_urls("https://example.com/") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]
    assert prm_urls("https://example.com") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]


def test_prm_urls_drop_query_and_keep_nested_paths() -> None:
    assert prm_urls("https://example.com/public/mcp?x=1")[0] == (
        "https://example.com/.well-known/oauth-protected-resource/public/mcp"
    )


def test_server_publishes_prm_at_the_path_inserted_location() -> None:
    assert prm_path("https://example.com/public/mcp") == (
        "/.well-known/oauth-protected-resource/public/mcp"
    )
    assert prm_path("https://example.com") == "/.well-known/oauth-protected-resource"


# ------------------------------------------------------------------ AS metadata


def test_issuer_with_path_tries_oauth_insertion_oidc_insertion_oidc_appending() -> None:
    assert as_metadata_urls("http://localhost:9/tenant1") == [
        "http://localhost:9/.well-known/oauth-authorization-server/tenant1",
        "http://localhost:9/.well-known/openid-configuration/tenant1",
        "http://localhost:9/tenant1/.well-known/openid-configuration",
    ]


def test_issuer_with_path_never_tries_the_root_oauth_document() -> None:
    urls = as_metadata_urls("https://as.example/tenant1")
    assert "https://as.example/.well-known/oauth-authorization-server" not in urls


def test_issuer_without_path_tries_oauth_then_oidc() -> None:
    assert as_metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]


def _as_doc(issuer: str, **extra: object) -> dict[str, object]:
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        **extra,
    }


@pytest.mark.parametrize(
    "served",
    [
        "https://attacker.example.com",
        "https://as.example/",
        "HTTPS://as.example",
        "https://as.example:443",
        None,
    ],
)
def test_as_metadata_issuer_must_be_identical_to_the_expected_issuer(served: str | None) -> None:
    doc = _as_doc("https://as.example")
    doc["issuer"] = served
    with pytest.raises(OAuthFlowError, match="issuer"):
        AuthorizationServerMetadata.from_json(doc, "https://as.example")


def test_as_metadata_reads_capabilities() -> None:
    meta = AuthorizationServerMetadata.from_json(
        _as_doc(
            "https://as.example",
            code_challenge_methods_supported=["S256"],
            authorization_response_iss_parameter_supported=True,
            client_id_metadata_document_supported=True,
            scopes_supported=["a", "offline_access"],
        ),
        "https://as.example",
    )
    assert meta.code_challenge_methods_supported == ("S256",)
    assert meta.authorization_response_iss_parameter_supported is True
    assert meta.client_id_metadata_document_supported is True
    assert meta.scopes_supported == ("a", "offline_access")
    assert meta.registration_endpoint is None


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"issuer": "https://as.example"},
        _as_doc("https://as.example", scopes_supported="a b"),
        _as_doc("https://as.example", token_endpoint=5),
    ],
)
def test_malformed_as_metadata_is_refused(doc: object) -> None:
    with pytest.raises(OAuthFlowError):
        AuthorizationServerMetadata.from_json(doc, "https://as.example")


def test_truthy_non_boolean_flags_do_not_count_as_support() -> None:
    meta = AuthorizationServerMetadata.from_json(
        _as_doc("https://as.example", authorization_response_iss_parameter_supported="true"),
        "https://as.example",
    )
    assert meta.authorization_response_iss_parameter_supported is False


# ------------------------------------------------------------------ PRM document


def test_prm_round_trips_and_requires_an_authorization_server() -> None:
    prm = ProtectedResourceMetadata("https://mcp.example/mcp", ("https://as.example",), ("a",))
    assert ProtectedResourceMetadata.from_json(prm.to_json()) == prm
    with pytest.raises(OAuthFlowError, match="authorization_servers"):
        ProtectedResourceMetadata.from_json(
            {"resource": "https://mcp.example/mcp", "authorization_servers": []}
        )
    with pytest.raises(OAuthFlowError, match="resource"):
        ProtectedResourceMetadata.from_json({"authorization_servers": ["https://as"]})


# ------------------------------------------------------------------ resource match


@pytest.mark.parametrize(
    ("resource", "server", "matches"),
    [
        ("http://localhost:5/mcp", "http://localhost:5/mcp", True),
        ("http://localhost:5", "http://localhost:5/mcp", True),
        ("http://LOCALHOST:5/mcp", "http://localhost:5/mcp", True),
        ("https://example.com:443/mcp", "https://example.com/mcp", True),
        ("http://localhost:5/mcp/", "http://localhost:5/mcp", True),
        ("https://evil.example.com/mcp", "http://localhost:5/mcp", False),
        ("http://localhost:6/mcp", "http://localhost:5/mcp", False),
        ("https://localhost:5/mcp", "http://localhost:5/mcp", False),
        ("http://localhost:5/mc", "http://localhost:5/mcp", False),
        ("http://localhost:5/mcp/sub", "http://localhost:5/mcp", False),
        ("http://localhost:5/mcp#x", "http://localhost:5/mcp", False),
    ],
)
def test_prm_resource_must_name_the_server(resource: str, server: str, matches: bool) -> None:
    assert resource_matches(resource, server) is matches


def test_canonical_resource_lowercases_scheme_and_host_and_drops_fragment() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/Path#frag") == "https://mcp.example.com/Path"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com:8443") == "https://mcp.example.com:8443"
    with pytest.raises(ValueError, match="absolute"):
        canonical_resource("mcp.example.com")


# ------------------------------------------------------------------ endpoint URLs


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>x</script>",
        "vbscript:msgbox",
        "http://evil.example/authorize",
        "https://as.example/a\nb",
        "https://as.example/a b",
        "-https://as.example",
        "https://user:pw@as.example/authorize",
        "https://as.example/authorize#frag",
        "https://as.example:99999/authorize",
        "",
    ],
)
def test_unsafe_endpoint_urls_are_refused(url: str) -> None:
    with pytest.raises(OAuthFlowError):
        check_endpoint_url(url, "authorization_endpoint")


@pytest.mark.parametrize(
    "url",
    [
        "https://as.example/authorize?x=$(id)",
        "http://localhost:3000/authorize",
        "http://127.0.0.1:9/authorize",
        "http://[::1]:9/authorize",
    ],
)
def test_https_and_loopback_http_endpoint_urls_are_accepted(url: str) -> None:
    assert check_endpoint_url(url, "authorization_endpoint") == url


def test_plain_http_elsewhere_needs_an_explicit_opt_in() -> None:
    url = "http://as.internal/token"
    assert check_endpoint_url(url, "token_endpoint", allow_http=True) == url


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.5.6.7", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("127.1", False),
        ("0x7f.1", False),
        ("example.com", False),
        ("10.0.0.1", False),
    ],
)
def test_loopback_detection_never_resolves_names(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


# ------------------------------------------------------------------ WWW-Authenticate


def test_parses_the_mcp_401_challenge() -> None:
    challenge = bearer_challenge(
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",'
        ' scope="files:read files:write"'
    )
    assert challenge is not None
    assert challenge.resource_metadata == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )
    assert challenge.scope == ("files:read", "files:write")
    assert challenge.error is None


def test_parses_the_403_step_up_challenge_with_unquoted_tokens_and_odd_spacing() -> None:
    challenge = bearer_challenge('bearer   error = insufficient_scope ,,  scope="mcp:write"')
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == ("mcp:write",)


def test_finds_bearer_among_several_challenges_and_token68() -> None:
    challenges = parse_www_authenticate(
        'Basic dXNlcg==, Newauth realm="apps", type=1, title="Login to \\"apps\\"", '
        'Bearer realm="x"'
    )
    assert [c.scheme for c in challenges] == ["basic", "newauth", "bearer"]
    assert challenges[0].token68 == "dXNlcg=="
    assert challenges[1].params["title"] == 'Login to "apps"'
    assert challenges[2].params == {"realm": "x"}


def test_repeated_parameters_drop_the_challenge() -> None:
    assert bearer_challenge('Bearer scope="a", scope="b"') is None


def test_several_header_values_are_all_read() -> None:
    challenge = bearer_challenge(['Basic realm="x"', 'Bearer scope="a"'])
    assert challenge == Challenge("bearer", {"scope": "a"})


def test_unterminated_quotes_and_garbage_do_not_crash() -> None:
    assert bearer_challenge('Bearer scope="a') is None
    assert parse_www_authenticate("") == []
    assert parse_www_authenticate("(((") == []


def test_format_challenge_quotes_and_escapes_and_refuses_header_injection() -> None:
    header = format_challenge("Bearer", [("scope", 'a "b" \\c'), ("error", "x")])
    assert header == 'Bearer scope="a \\"b\\" \\\\c", error="x"'
    assert bearer_challenge(header) == Challenge("bearer", {"scope": 'a "b" \\c', "error": "x"})
    with pytest.raises(ValueError, match="control"):
        format_challenge("Bearer", [("scope", "a\r\nSet-Cookie: x=1")])
    with pytest.raises(ValueError, match="name"):
        format_challenge("Bearer", [("bad name", "x")])


_printable = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\t"),
    max_size=40,
)
_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@given(st.dictionaries(_names, _printable, max_size=5))
def test_formatted_challenges_parse_back_to_the_same_parameters(params: dict[str, str]) -> None:
    header = format_challenge("Bearer", list(params.items()))
    assert parse_www_authenticate(header) == [Challenge("bearer", params)]


@given(st.text(max_size=200))
def test_parser_never_raises_on_arbitrary_text(text: str) -> None:
    for challenge in parse_www_authenticate(text):
        assert challenge.scheme == challenge.scheme.lower()


def test_parse_scope_splits_dedups_and_keeps_order() -> None:
    assert parse_scope(" b a  b c ") == ("b", "a", "c")
    assert parse_scope(None) == ()


# ------------------------------------------------------------------ PKCE and state


def test_pkce_uses_s256_of_a_long_random_verifier() -> None:
    # RFC 7636 Appendix B test vector.
    assert (
        s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
    pairs = [PKCE.generate() for _ in range(100)]
    assert len({p.verifier for p in pairs}) == 100
    for pair in pairs:
        assert 43 <= len(pair.verifier) <= 128
        assert pair.method == "S256"
        assert pair.challenge == s256_challenge(pair.verifier)
        assert pair.verifier not in repr(pair)
    assert len({new_state() for _ in range(100)}) == 100


def test_the_package_exports_resolve_lazily() -> None:
    for name in mcpkit.auth.__all__:
        assert getattr(mcpkit.auth, name).__name__ == name
    with pytest.raises(AttributeError):
        _ = mcpkit.auth.nothing_here
    code = "import sys, mcpkit.auth as a; a.OAuth; a.ClientConfig; print('jwt' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # the client side does not load PyJWT
