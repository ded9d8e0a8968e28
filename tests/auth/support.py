"""Test support for mcpkit.auth: real keys, real signed tokens, small real HTTP apps."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ISSUER = "https://as.example"
RESOURCE = "https://mcp.example/mcp"


@dataclass
class Signer:
    """One signing key of an authorization server, and its public JWK."""

    kid: str
    alg: str
    private_key: Any
    jwk: dict[str, Any]

    @classmethod
    def rsa(cls, kid: str, alg: str = "RS256") -> Signer:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = dict(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True))
        jwk.update(kid=kid, use="sig")
        return cls(kid, alg, key, jwk)

    @classmethod
    def ec(cls, kid: str) -> Signer:
        key = ec.generate_private_key(ec.SECP256R1())
        jwk = dict(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True))
        jwk.update(kid=kid, use="sig")
        return cls(kid, "ES256", key, jwk)

    def mint(
        self, drop: tuple[str, ...] = (), headers: dict[str, Any] | None = None, **claims: Any
    ) -> str:
        """A signed token with sensible valid claims, overridden by ``claims``."""
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": "user-1",
            "client_id": "client-1",
            "scope": "mcp:basic",
            "iat": now,
            "exp": now + 300,
        }
        body.update(claims)
        for name in drop:
            body.pop(name, None)
        return jwt.encode(
            body, self.private_key, algorithm=self.alg, headers={"kid": self.kid, **(headers or {})}
        )


@dataclass
class JWKSApp:
    """A JWKS endpoint that counts its hits; its key list and behaviour can change."""

    keys: list[dict[str, Any]]
    hits: int = 0
    status: int = 200
    body_override: bytes | None = None
    redirect_to: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> Starlette:
        async def jwks(request: Request) -> Response:
            with self.lock:
                self.hits += 1
            if self.redirect_to is not None:
                return Response(status_code=302, headers={"location": self.redirect_to})
            if self.body_override is not None:
                return Response(self.body_override, media_type="application/json")
            return JSONResponse({"keys": self.keys}, status_code=self.status)

        return Starlette(routes=[Route("/jwks", jwks), Route("/elsewhere", jwks)])


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded body as a dict (without python-multipart); repeated keys fail."""
    pairs = parse_qsl((await request.body()).decode(), keep_blank_values=True)
    form = dict(pairs)
    assert len(form) == len(pairs), "repeated form field"
    return form
