"""The exceptions of :mod:`mcpkit.auth`, all under :class:`mcpkit.errors.MCPError`.

::

    MCPError
    └── AuthError
        ├── InvalidToken          resource server: the bearer token is unusable -> 401
        ├── InsufficientScope     resource server: valid token, missing scopes  -> 403
        ├── VerifierUnavailable   resource server: cannot verify right now      -> 503
        └── OAuthFlowError        client: the authorization flow stopped (discovery,
            │                     issuer or resource mismatch, AS error, retry limit ...)
            └── AuthorizationDenied   the authorization server answered with an error

Messages never contain a token, a code, a verifier or a client secret (``security.md``
A-11): they say what was wrong, not with what.
"""

from __future__ import annotations

from mcpkit.errors import MCPError

__all__ = [
    "AuthError",
    "AuthorizationDenied",
    "InsufficientScope",
    "InvalidToken",
    "OAuthFlowError",
    "VerifierUnavailable",
]


class AuthError(MCPError):
    """Base of every authorization failure."""


class InvalidToken(AuthError):
    """The bearer token is missing, malformed, expired, forged or not meant for us.

    ``description`` is safe to send to the client in ``error_description``: it names the
    failed check (for instance "token expired"), never the token or key material.
    """

    def __init__(self, description: str = "invalid token") -> None:
        super().__init__(description)
        self.description = description


class InsufficientScope(AuthError):
    """The token is valid but lacks scopes the operation needs (RFC 6750 §3.1)."""

    def __init__(self, required: frozenset[str] | set[str] | tuple[str, ...]) -> None:
        self.required = tuple(sorted(required))
        super().__init__(f"insufficient scope: requires {' '.join(self.required)}")


class VerifierUnavailable(AuthError):
    """The verifier could not reach what it needs (JWKS, introspection): answer 503,
    not 401, so clients do not re-authorize in a loop while a dependency is down."""


class OAuthFlowError(AuthError):
    """The client-side authorization flow cannot go on (spec ``basic/authorization``)."""


class AuthorizationDenied(OAuthFlowError):
    """The authorization server answered an authorization or token request with an error.

    ``error`` is the OAuth error code (``access_denied``, ``invalid_grant`` ...).
    """

    def __init__(self, error: str, description: str | None = None) -> None:
        self.error = error
        self.description = description
        text = f"authorization server error: {error}"
        if description:
            text += f" ({description[:200]})"
        super().__init__(text)
