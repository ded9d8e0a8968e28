"""OAuth 2.1 for MCP (spec ``basic/authorization/``): the resource server and the client.

Resource server: :mod:`mcpkit.auth.resource` (metadata, challenges, scope checks, an ASGI
guard) and :mod:`mcpkit.auth.verifiers` (JWT/JWKS and introspection). Client: the
sans-I/O flow in :mod:`mcpkit.auth.flow`, its httpx adapter in :mod:`mcpkit.auth.client`,
token stores in :mod:`mcpkit.auth.tokens` and redirect handlers in
:mod:`mcpkit.auth.redirect`. Shared pieces: :mod:`mcpkit.auth.metadata`,
:mod:`mcpkit.auth.pkce`, :mod:`mcpkit.auth.errors`.

The names below are importable from ``mcpkit.auth`` directly; each submodule is imported
only when one of its names is first used, so the client side never loads PyJWT. Needs
the ``auth`` extra (PyJWT with ``cryptography``, httpx).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.auth.client import OAuth
    from mcpkit.auth.errors import (
        AuthError,
        AuthorizationDenied,
        InsufficientScope,
        InvalidToken,
        OAuthFlowError,
        VerifierUnavailable,
    )
    from mcpkit.auth.flow import ClientConfig, OAuthFlow
    from mcpkit.auth.redirect import HeadlessRedirectHandler, LoopbackRedirectHandler
    from mcpkit.auth.resource import AuthResponse, ProtectedResource, ScopeRequirements, protect
    from mcpkit.auth.tokens import AuthState, FileTokenStore, MemoryTokenStore, TokenStore
    from mcpkit.auth.verifiers import (
        IntrospectionVerifier,
        JWKSCache,
        JWTVerifier,
        Principal,
        StaticKeys,
        TokenVerifier,
    )

_WHERE = {
    "OAuth": "client",
    "AuthError": "errors",
    "AuthorizationDenied": "errors",
    "InsufficientScope": "errors",
    "InvalidToken": "errors",
    "OAuthFlowError": "errors",
    "VerifierUnavailable": "errors",
    "ClientConfig": "flow",
    "OAuthFlow": "flow",
    "HeadlessRedirectHandler": "redirect",
    "LoopbackRedirectHandler": "redirect",
    "AuthResponse": "resource",
    "ProtectedResource": "resource",
    "ScopeRequirements": "resource",
    "protect": "resource",
    "AuthState": "tokens",
    "FileTokenStore": "tokens",
    "MemoryTokenStore": "tokens",
    "TokenStore": "tokens",
    "IntrospectionVerifier": "verifiers",
    "JWKSCache": "verifiers",
    "JWTVerifier": "verifiers",
    "Principal": "verifiers",
    "StaticKeys": "verifiers",
    "TokenVerifier": "verifiers",
}

__all__ = [
    "AuthError",
    "AuthResponse",
    "AuthState",
    "AuthorizationDenied",
    "ClientConfig",
    "FileTokenStore",
    "HeadlessRedirectHandler",
    "InsufficientScope",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWKSCache",
    "JWTVerifier",
    "LoopbackRedirectHandler",
    "MemoryTokenStore",
    "OAuth",
    "OAuthFlow",
    "OAuthFlowError",
    "Principal",
    "ProtectedResource",
    "ScopeRequirements",
    "StaticKeys",
    "TokenStore",
    "TokenVerifier",
    "VerifierUnavailable",
    "protect",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.auth' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mcpkit.auth.{module}"), name)
