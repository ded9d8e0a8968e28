"""Sealed ``requestState`` for multi round-trip requests (design §3.2, spec
``basic/patterns/mrtr.mdx`` §Server Requirements and §Security Considerations).

The server hands the client a ``requestState`` holding the answers gathered in earlier
rounds, and the client echoes it on the retry. It is attacker-controlled input, so it is
sealed with HMAC-SHA256 and carries, inside the protected payload:

* ``aud`` the server that sealed it (a second server sharing the key cannot replay it),
* ``m`` the originating method and ``d`` a digest of the request's salient params
  (everything except ``_meta``, ``inputResponses`` and ``requestState``),
* ``p`` the authenticated principal (state is bound to who asked),
* ``iat``/``exp`` issue and expiry times (a short TTL bounds replay),
* ``a`` the answers gathered so far.

Every failure (bad format, bad MAC, expired, issued in the future, wrong audience,
method, params or principal) is the same -32602 ``Invalid or expired requestState``;
the reason goes to the log only, so a prober learns nothing from the error.

The payload is signed, not encrypted: a client can read the answers it gave itself, so
handlers must not expect it to hide anything else. The seal does not make state
single-use; a handler whose effect must happen at most once enforces that itself.

The key comes from the ``state_key`` argument, else the ``MCPKIT_STATE_KEY`` environment
variable (at least 32 bytes); without either, a random per-process key is used and a
warning says that replicas will not accept each other's state.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import secrets
import threading
import time
from typing import Any

from mcpkit.errors import InvalidParams, ProtocolError
from mcpkit.protocol import codec

logger = logging.getLogger("mcpkit.server")

STATE_KEY_ENV = "MCPKIT_STATE_KEY"
MIN_KEY_BYTES = 32
DEFAULT_TTL = 600.0
CLOCK_SKEW = 60.0
INVALID_STATE = "Invalid or expired requestState"
_VERSION = "v1"
_SALIENT_EXCLUDED = ("_meta", "inputResponses", "requestState")

__all__ = [
    "INVALID_STATE",
    "STATE_KEY_ENV",
    "RequestStateSealer",
    "configured_state_key",
    "params_digest",
    "principal_id",
    "process_state_key",
    "resolve_state_key",
]

_process_key: bytes | None = None
_process_key_lock = threading.Lock()


def configured_state_key(explicit: bytes | str | None = None) -> bytes | None:
    """The configured key (argument, else ``MCPKIT_STATE_KEY``), checked; None if unset."""
    source = explicit if explicit is not None else os.environ.get(STATE_KEY_ENV)
    if not source:
        return None
    key = source.encode() if isinstance(source, str) else bytes(source)
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"the requestState key must be at least {MIN_KEY_BYTES} bytes "
            f"(set {STATE_KEY_ENV} to a long random string)"
        )
    return key


def process_state_key() -> bytes:
    """The random per-process key, made (with a warning) the first time it is needed."""
    global _process_key
    with _process_key_lock:
        if _process_key is None:
            _process_key = secrets.token_bytes(32)
            logger.warning(
                "%s is not set: sealing requestState with a random per-process key; "
                "other replicas (and this process after a restart) will reject it",
                STATE_KEY_ENV,
            )
        return _process_key


def resolve_state_key(explicit: bytes | str | None = None) -> bytes:
    """The sealing key: the argument, else ``MCPKIT_STATE_KEY``, else a per-process key."""
    return configured_state_key(explicit) or process_state_key()


def principal_id(principal: Any) -> str:
    """A stable identity for the caller.

    ``principal.identity`` (an auth :class:`~mcpkit.auth.verifiers.Principal`: issuer,
    subject and client together), else ``subject``/``sub``, else ``str(principal)``.
    """
    if principal is None:
        return ""
    if isinstance(principal, str):
        return principal
    for name in ("identity", "subject", "sub"):
        value = getattr(principal, name, None)
        if isinstance(value, str):
            return value
    if isinstance(principal, dict) and isinstance(principal.get("sub"), str):
        return str(principal["sub"])
    return str(principal)


def params_digest(params: dict[str, Any]) -> str:
    """SHA-256 of the request's salient params in canonical JSON (sorted keys)."""
    salient = {k: v for k, v in params.items() if k not in _SALIENT_EXCLUDED}
    return hashlib.sha256(codec.dumps_canonical(salient)).hexdigest()


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """Strict base64url: the text must be exactly the canonical encoding of its bytes."""
    data = base64.b64decode(text.translate(_URLSAFE) + "=" * (-len(text) % 4), validate=True)
    if _b64encode(data) != text:
        raise ValueError("non-canonical base64url")
    return data


_URLSAFE = str.maketrans("-_", "+/")


class RequestStateSealer:
    """Seals and opens ``requestState`` for one server.

    Without a ``key`` the per-process key is used, made the first time state is sealed
    or opened (so a server that never asks for input never warns about it).
    """

    def __init__(
        self,
        key: bytes | None,
        *,
        audience: str,
        ttl: float = DEFAULT_TTL,
        max_size: int = 1 << 20,
    ) -> None:
        if ttl <= 0:
            raise ValueError("the requestState TTL must be positive")
        self._key = key
        self.audience = audience
        self.ttl = ttl
        self.max_size = max_size

    def seal(self, *, method: str, digest: str, principal: str, answers: dict[str, Any]) -> str:
        now = int(time.time())
        payload = {
            "aud": self.audience,
            "m": method,
            "d": digest,
            "p": principal,
            "iat": now,
            "exp": now + int(self.ttl),
            "a": answers,
        }
        body = f"{_VERSION}.{_b64encode(codec.dumps(payload))}"
        return f"{body}.{_b64encode(self._mac(body))}"

    def open(self, token: Any, *, method: str, digest: str, principal: str) -> dict[str, Any]:
        """The answers sealed in ``token``; -32602 with one fixed message on any failure."""
        try:
            return self._open(token, method, digest, principal)
        except _Rejected as exc:
            logger.info("rejected requestState: %s", exc)
            raise InvalidParams(INVALID_STATE) from None

    def _mac(self, body: str) -> bytes:
        key = self._key
        if key is None:
            key = self._key = process_state_key()
        return hmac.new(key, body.encode("ascii"), hashlib.sha256).digest()

    def _open(self, token: Any, method: str, digest: str, principal: str) -> dict[str, Any]:
        if type(token) is not str:
            raise _Rejected("not a string")
        if len(token) > self.max_size:
            raise _Rejected("too large")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _VERSION:
            raise _Rejected("unknown format")
        try:
            mac = _b64decode(parts[2])
            raw = _b64decode(parts[1])
        except (binascii.Error, ValueError):
            raise _Rejected("not base64url") from None
        body = f"{parts[0]}.{parts[1]}"
        if not body.isascii() or not hmac.compare_digest(mac, self._mac(body)):
            raise _Rejected("bad signature")
        try:
            payload = codec.loads(raw)
        except ProtocolError:
            raise _Rejected("payload is not JSON") from None
        return self._check(payload, method, digest, principal)

    def _check(self, payload: Any, method: str, digest: str, principal: str) -> dict[str, Any]:
        if type(payload) is not dict:
            raise _Rejected("payload is not an object")
        now = time.time()
        issued, expires = payload.get("iat"), payload.get("exp")
        if type(issued) is not int or type(expires) is not int:
            raise _Rejected("missing times")
        if issued > now + CLOCK_SKEW:
            raise _Rejected("issued in the future")
        if expires < now:
            raise _Rejected("expired")
        if payload.get("aud") != self.audience:
            raise _Rejected("sealed by another server")
        if payload.get("m") != method:
            raise _Rejected("sealed for another method")
        if payload.get("d") != digest:
            raise _Rejected("sealed for other params")
        if payload.get("p") != principal:
            raise _Rejected("sealed for another principal")
        answers = payload.get("a")
        if type(answers) is not dict:
            raise _Rejected("answers are not an object")
        return answers


class _Rejected(Exception):
    """Why a requestState was refused (logged, never sent)."""
