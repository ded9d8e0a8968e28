"""A scripted MCP server and authorization server that answer the sans-I/O flow's events.

It mirrors the conformance suite's client-auth mocks (conformance.md §7.3: PRM locations,
AS metadata locations, ``iss`` modes, registration, token endpoint authentication,
scope checks) so each scenario can be driven step by step without sockets, and it
records every event so the tests can assert the exact requests the flow emitted.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from mcpkit.auth.flow import (
    AuthorizationResponse,
    Authorize,
    Event,
    HTTPRequest,
    HTTPResponse,
    OAuthFlow,
    Reply,
    SendResource,
)
from mcpkit.auth.pkce import s256_challenge

IssMode = Literal["correct", "wrong", "omit", "normalized"]


def json_response(status: int, document: Any) -> HTTPResponse:
    return HTTPResponse(
        status, (("content-type", "application/json"),), json.dumps(document).encode()
    )


def query(url: str) -> dict[str, str]:
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    result = dict(pairs)
    assert len(result) == len(pairs), f"repeated query parameter in {url}"
    return result


@dataclass
class AuthServer:
    """One authorization server, like the conformance ``createAuthServer``."""

    base: str = "http://localhost:4000"
    issuer_path: str = ""
    metadata_path: str = "/.well-known/oauth-authorization-server"
    issuer_override: str | None = None
    scopes_supported: list[str] | None = None
    token_auth_methods: list[str] = field(default_factory=lambda: ["none"])
    pkce_methods: list[str] | None = field(default_factory=lambda: ["S256"])
    registration: bool = True
    cimd: bool | None = None
    iss_supported: bool | None = None
    iss_mode: IssMode = "correct"
    client_id: str = "test-client-id"
    client_secret: str | None = "test-client-secret"
    registered_method: str | None = None
    refresh_tokens: bool = False
    authorization_endpoint: str | None = None
    error: str | None = None
    forged_state: str | None = None
    expires_in: Any = 3600
    registration_override: HTTPResponse | None = None
    token_override: HTTPResponse | None = None
    drop_code: bool = False
    # recorded
    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[tuple[dict[str, str], str | None]] = field(default_factory=list)
    challenge: str | None = None
    scopes_of: dict[str, list[str]] = field(default_factory=dict)
    issued: int = 0

    @property
    def issuer(self) -> str:
        return self.base + self.issuer_path

    def metadata(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.issuer_override or self.issuer,
            "authorization_endpoint": self.authorization_endpoint or f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": self.token_auth_methods,
        }
        if self.registration:
            doc["registration_endpoint"] = f"{self.issuer}/register"
        if self.pkce_methods is not None:
            doc["code_challenge_methods_supported"] = self.pkce_methods
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        if self.cimd is not None:
            doc["client_id_metadata_document_supported"] = self.cimd
        if self.iss_supported is not None:
            doc["authorization_response_iss_parameter_supported"] = self.iss_supported
        return doc

    def handles(self, url: str) -> bool:
        return url.startswith(self.base + "/")

    def http(self, request: HTTPRequest) -> HTTPResponse:
        path = urlsplit(request.url).path
        if request.method == "GET" and path == self.metadata_path:
            return json_response(200, self.metadata())
        if (
            request.method == "POST"
            and path == f"{self.issuer_path}/register"
            and self.registration
        ):
            assert request.header("content-type") == "application/json"
            body = json.loads(request.body)
            self.registrations.append(body)
            if self.registration_override is not None:
                return self.registration_override
            reply: dict[str, Any] = {"client_id": self.client_id, **body}
            if self.client_secret is not None:
                reply["client_secret"] = self.client_secret
            if self.registered_method is not None:
                reply["token_endpoint_auth_method"] = self.registered_method
            else:
                reply.pop("token_endpoint_auth_method", None)
            return json_response(201, reply)
        if request.method == "POST" and path == f"{self.issuer_path}/token":
            return self.token(request)
        return json_response(404, {"error": "not_found"})

    def authorize(self, event: Authorize) -> AuthorizationResponse:
        assert event.url.startswith(self.metadata()["authorization_endpoint"] + "?")
        params = query(event.url)
        self.authorizations.append(params)
        self.challenge = params.get("code_challenge")
        assert params["redirect_uri"] == event.redirect_uri
        answer = {"state": self.forged_state or params["state"]}
        if self.error is not None:
            answer["error"] = self.error
            answer["error_description"] = "the user said no"
        elif not self.drop_code:
            answer["code"] = "test-auth-code"
        if self.iss_mode == "correct":
            answer["iss"] = self.issuer
        elif self.iss_mode == "wrong":
            answer["iss"] = "https://evil.example.com"
        elif self.iss_mode == "normalized":
            answer["iss"] = self.issuer + "/"
        return AuthorizationResponse(answer)

    def token(self, request: HTTPRequest) -> HTTPResponse:
        assert request.header("content-type") == "application/x-www-form-urlencoded"
        form = query("?" + request.body.decode())
        auth = request.header("authorization")
        self.token_requests.append((form, auth))
        if self.token_override is not None:
            return self.token_override
        if form["grant_type"] == "authorization_code":
            assert form["code"] == "test-auth-code"
            assert s256_challenge(form["code_verifier"]) == self.challenge
            scopes = (self.authorizations[-1].get("scope") or "").split()
        elif form["grant_type"] == "refresh_token":
            if not form["refresh_token"].startswith("refresh-"):
                return json_response(400, {"error": "invalid_grant"})
            scopes = self.scopes_of.get(form["refresh_token"], [])
        else:
            return json_response(400, {"error": "unsupported_grant_type"})
        self.issued += 1
        token = f"token-{self.base[-4:]}-{self.issued}"
        self.scopes_of[token] = scopes
        reply: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if scopes:
            reply["scope"] = " ".join(scopes)
        if self.refresh_tokens:
            reply["refresh_token"] = f"refresh-{self.issued}"
            self.scopes_of[reply["refresh_token"]] = scopes
        return json_response(200, reply)


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    if header is None or not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return unquote(user), unquote(password)


@dataclass
class World:
    """The MCP server (protected resource) plus its authorization server(s)."""

    server: str = "http://localhost:3000/mcp"
    auth: AuthServer = field(default_factory=AuthServer)
    prm_path: str = "/.well-known/oauth-protected-resource/mcp"
    prm_in_header: bool = True
    prm_resource: str | None = None
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    authorization_servers: list[str] | None = None
    required: set[str] = field(default_factory=set)
    always_forbid: bool = False
    revoked: set[str] = field(default_factory=set)
    events: list[Event] = field(default_factory=list)

    @property
    def origin(self) -> str:
        parts = urlsplit(self.server)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def prm_url(self) -> str:
        return self.origin + self.prm_path

    def prm(self) -> dict[str, Any]:
        resource = self.prm_resource
        if resource is None:
            root = self.prm_path == "/.well-known/oauth-protected-resource"
            resource = self.origin if root else self.server
        servers = self.authorization_servers or [self.auth.issuer]
        doc: dict[str, Any] = {"resource": resource, "authorization_servers": servers}
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        return doc

    def challenge(
        self, status: int, error: str | None = None, scope: str | None = None
    ) -> HTTPResponse:
        params = []
        if scope:
            params.append(f'scope="{scope}"')
        if self.prm_in_header:
            params.append(f'resource_metadata="{self.prm_url}"')
        if error:
            params.append(f'error="{error}"')
        header = "Bearer " + ", ".join(params) if params else "Bearer"
        return HTTPResponse(status, (("www-authenticate", header),), b"{}")

    def resource(self, event: SendResource) -> HTTPResponse:
        if event.authorization is None:
            return self.challenge(401, scope=self.challenge_scope)
        token = event.authorization.removeprefix("Bearer ")
        if token not in self.auth.scopes_of or token in self.revoked:
            return self.challenge(401, error="invalid_token", scope=self.challenge_scope)
        granted = set(self.auth.scopes_of[token])
        if self.always_forbid or not self.required <= granted:
            scope = " ".join(sorted(self.required)) if self.required else "mcp:admin"
            return self.challenge(403, error="insufficient_scope", scope=scope)
        return HTTPResponse(200, (("content-type", "application/json"),), b'{"ok":true}')

    def answer(self, event: Event) -> Reply:
        self.events.append(event)
        if isinstance(event, SendResource):
            return self.resource(event)
        if isinstance(event, Authorize):
            return self.auth.authorize(event)
        if event.method == "GET" and event.url == self.prm_url:
            return json_response(200, self.prm())
        if self.auth.handles(event.url):
            return self.auth.http(event)
        return json_response(404, {"error": "not_found"})

    def drive(self, flow: OAuthFlow) -> HTTPResponse:
        """Run one protected request through the flow; the final resource response."""
        gen = flow.run()
        event = next(gen)
        last: HTTPResponse | None = None
        while True:
            reply = self.answer(event)
            if isinstance(event, SendResource):
                assert isinstance(reply, HTTPResponse)
                last = reply
            try:
                event = gen.send(reply)
            except StopIteration:
                assert last is not None
                return last

    def trace(self) -> list[str]:
        """The events as short strings: ``GET url``, ``POST url``, ``AUTHORIZE``, ``MCP``."""
        out: list[str] = []
        for event in self.events:
            if isinstance(event, SendResource):
                out.append("MCP" if event.authorization is None else "MCP+token")
            elif isinstance(event, Authorize):
                out.append("AUTHORIZE")
            else:
                out.append(f"{event.method} {event.url}")
        return out
