"""PKCE (RFC 7636) with S256 only, and the ``state`` value, for the authorization code flow.

Spec ``basic/authorization/security-considerations.mdx`` §Authorization Code Protection:
clients MUST use S256 and MUST refuse an authorization server whose metadata does not
list it. The verifier is 64 random bytes from :mod:`secrets` (86 characters, inside
RFC 7636's 43..128); ``state`` carries 256 random bits.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field

__all__ = ["PKCE", "new_state", "s256_challenge"]

_VERIFIER_BYTES = 64
_STATE_BYTES = 32


def s256_challenge(verifier: str) -> str:
    """``BASE64URL(SHA256(ASCII(verifier)))`` without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    """A fresh unguessable ``state`` value for one authorization request."""
    return secrets.token_urlsafe(_STATE_BYTES)


@dataclass(frozen=True)
class PKCE:
    """One verifier/challenge pair; make a new one per authorization request."""

    verifier: str = field(repr=False)
    challenge: str
    method: str = "S256"

    @classmethod
    def generate(cls) -> PKCE:
        verifier = secrets.token_urlsafe(_VERIFIER_BYTES)
        return cls(verifier=verifier, challenge=s256_challenge(verifier))
