"""A small real authorization server and protected MCP-like resource for end-to-end tests.

The authorization server auto-approves (it redirects straight back with a code), supports
DCR, PKCE S256, RFC 9207 ``iss`` and refresh tokens, and issues RS256 JWT access tokens
whose audience is the ``resource`` the client asked for. The resource is a tiny ASGI app
guarded by :func:`mcpkit.auth.resource.protect` with a :class:`JWTVerifier` that fetches
the authorization server's JWKS over HTTP.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from auth.support import Signer, read_form
from mcpkit.auth.pkce import s256_challenge
from mcpkit.auth.resource import AuthResponse, ProtectedResource
from mcpkit.auth.verifiers import Principal


class Deferred:
    """An ASGI app whose target is set once the server's own URL is known."""

    def __init__(self) -> None:
        self.target: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await self.target(scope, receive, send)


@dataclass
class LocalAuthorizationServer:
    signer: Signer = field(default_factory=lambda: Signer.rsa("as-key"))
    issuer: str = ""
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    refresh: dict[str, dict[str, Any]] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    authorize_scopes: list[str] = field(default_factory=list)
    deny: bool = False  # the user says no: authorize redirects back with access_denied
    refresh_enabled: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, name: str) -> None:
        with self.lock:
            self.hits[name] = self.hits.get(name, 0) + 1

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self.metadata),
                Route("/jwks", self.jwks),
                Route("/register", self.register, methods=["POST"]),
                Route("/authorize", self.authorize),
                Route("/token", self.token, methods=["POST"]),
            ]
        )

    async def metadata(self, request: Request) -> Response:
        self.count("metadata")
        return JSONResponse(
            {
                "issuer": self.issuer,
                "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token",
                "registration_endpoint": f"{self.issuer}/register",
                "jwks_uri": f"{self.issuer}/jwks",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "scopes_supported": ["mcp:basic", "mcp:write", "offline_access"],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def jwks(self, request: Request) -> Response:
        self.count("jwks")
        return JSONResponse({"keys": [self.signer.jwk]})

    async def register(self, request: Request) -> Response:
        self.count("register")
        body = json.loads(await request.body())
        if body.get("application_type") not in ("native", "web"):
            return JSONResponse({"error": "invalid_client_metadata"}, status_code=400)
        client_id = f"client-{len(self.clients) + 1}"
        secret = secrets.token_urlsafe(16)
        self.clients[client_id] = {"secret": secret, "redirect_uris": body["redirect_uris"]}
        return JSONResponse(
            {
                "client_id": client_id,
                "client_secret": secret,
                "token_endpoint_auth_method": "client_secret_basic",
                "redirect_uris": body["redirect_uris"],
            },
            status_code=201,
        )

    async def authorize(self, request: Request) -> Response:
        self.count("authorize")
        q = request.query_params
        client = self.clients.get(q["client_id"])
        if client is None or q["redirect_uri"] not in client["redirect_uris"]:
            return JSONResponse({"error": "invalid_client"}, status_code=400)
        if q.get("code_challenge_method") != "S256" or "resource" not in q:
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        self.authorize_scopes.append(q.get("scope", ""))
        if self.deny:
            refusal = {"error": "access_denied", "state": q["state"], "iss": self.issuer}
            return RedirectResponse(f"{q['redirect_uri']}?{urlencode(refusal)}", status_code=302)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": q["client_id"],
            "challenge": q["code_challenge"],
            "redirect_uri": q["redirect_uri"],
            "resource": q["resource"],
            "scope": q.get("scope", ""),
        }
        back = {"code": code, "state": q["state"], "iss": self.issuer}
        return RedirectResponse(f"{q['redirect_uri']}?{urlencode(back)}", status_code=302)

    def _client(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        if not header.startswith("Basic "):
            return None
        client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        client = self.clients.get(client_id)
        return client_id if client and client["secret"] == secret else None

    def _issue(self, client_id: str, resource: str, scope: str) -> dict[str, Any]:
        access = self.signer.mint(
            iss=self.issuer,
            aud=resource,
            sub="user-42",
            client_id=client_id,
            scope=scope,
            exp=int(time.time()) + 3600,
        )
        refresh = secrets.token_urlsafe(16)
        self.refresh[refresh] = {"client_id": client_id, "resource": resource, "scope": scope}
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
            "scope": scope,
        }

    async def token(self, request: Request) -> Response:
        self.count("token")
        form = await read_form(request)
        client_id = self._client(request)
        if client_id is None:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if form.get("grant_type") == "authorization_code":
            grant = self.codes.pop(form.get("code", ""), None)
            if (
                grant is None
                or grant["client_id"] != client_id
                or s256_challenge(form.get("code_verifier", "")) != grant["challenge"]
                or form.get("resource") != grant["resource"]
                or form.get("redirect_uri") != grant["redirect_uri"]
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(self._issue(client_id, grant["resource"], grant["scope"]))
        if form.get("grant_type") == "refresh_token" and self.refresh_enabled:
            grant = self.refresh.pop(form.get("refresh_token", ""), None)
            if grant is None or grant["client_id"] != client_id:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(self._issue(client_id, grant["resource"], grant["scope"]))
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)


def mcp_like_app(resource: ProtectedResource) -> Any:
    """The inner app behind :func:`protect`: reads the JSON-RPC body, applies the scope
    requirements with :meth:`ProtectedResource.authorize`, echoes who called."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body or b"{}")
        principal: Principal = scope["auth"]
        denied = resource.authorize(principal, request.get("method", ""), request.get("params"))
        if denied is not None:
            await denied.send(send)
            return
        answer = {"subject": principal.subject, "scopes": sorted(principal.scopes)}
        await AuthResponse(
            200, (("content-type", "application/json"),), json.dumps(answer).encode()
        ).send(send)

    return app
