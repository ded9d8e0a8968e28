"""Token verifiers for the resource server: who does this bearer token speak for?

Spec ``basic/authorization/index.mdx`` §Token Handling and ``security-considerations.mdx``
§Token Audience Binding and Validation: a server accepts only tokens issued for it.

* :class:`Principal` is the verified caller; :class:`TokenVerifier` the one interface.
* :class:`JWTVerifier` checks signed JWT access tokens against keys from a
  :class:`KeySource`: :class:`JWKSCache` (fetched with httpx, cached, refreshed on an
  unknown ``kid`` at a bounded rate, size-limited, no redirects) or :class:`StaticKeys`.
* :class:`IntrospectionVerifier` asks the authorization server (RFC 7662).

PyJWT (with ``cryptography``) does the signature and claim checks: it is the most used
JOSE library for Python, typed, and binds a JWK to one algorithm. Its sharp edge, that a
claim such as ``exp`` is checked only when present, is handled by requiring the claims
explicitly. Tokens never appear in logs, errors or on the :class:`Principal`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

import httpx
import jwt

from mcpkit.auth.errors import InvalidToken, VerifierUnavailable
from mcpkit.protocol import codec

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "MAX_TOKEN_LENGTH",
    "IntrospectionVerifier",
    "JWKSCache",
    "JWTVerifier",
    "KeySource",
    "Principal",
    "StaticKeys",
    "TokenVerifier",
]

logger = logging.getLogger("mcpkit.auth")

ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MAX_TOKEN_LENGTH = 16_384
_KEY_TYPE_FOR_ALG = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


# ----------------------------------------------------------------- the principal


@dataclass(frozen=True, eq=False)
class Principal:
    """The caller a verified token speaks for.

    ``claims`` holds the verified claims (or the introspection response); the token
    itself is deliberately absent. ``identity`` is a stable string to bind state to
    (sealed ``requestState``, per-principal caches).
    """

    subject: str | None
    scopes: frozenset[str]
    client_id: str | None = None
    issuer: str | None = None
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def identity(self) -> str:
        return "\x1f".join((self.issuer or "", self.subject or "", self.client_id or ""))

    def __str__(self) -> str:
        """The identity, so code that binds state to ``str(principal)`` stays stable
        across refreshed tokens of the same caller."""
        return self.identity

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Principal):
            return NotImplemented
        return (self.identity, self.scopes) == (other.identity, other.scopes)

    def __hash__(self) -> int:
        return hash((self.identity, self.scopes))


class TokenVerifier(Protocol):
    """Turns a bearer token into a :class:`Principal`.

    Raise :class:`InvalidToken` (-> 401) for any token that must not be accepted, and
    :class:`VerifierUnavailable` (-> 503) when the answer cannot be known right now.
    """

    async def verify(self, token: str) -> Principal: ...


def _scopes_from_claims(claims: Mapping[str, Any]) -> frozenset[str]:
    """``scope`` (RFC 8693/9068 space-delimited string) or ``scp`` (string or list)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _optional_str(claims: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = claims.get(key)
        if isinstance(value, str):
            return value
    return None


# ------------------------------------------------------------------ HTTP helpers


def _new_http(timeout: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(follow_redirects=False, timeout=timeout, trust_env=False)


async def _read_json_limited(response: httpx.Response, max_bytes: int, what: str) -> Any:
    """The JSON body of a streamed response, refusing more than ``max_bytes``."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise VerifierUnavailable(f"{what} exceeds {max_bytes} bytes")
        chunks.append(chunk)
    try:
        return codec.loads(b"".join(chunks))
    except Exception as exc:
        raise VerifierUnavailable(f"{what} is not valid JSON") from exc


# -------------------------------------------------------------------- key sources


class KeySource(Protocol):
    """Where :class:`JWTVerifier` finds the public JWK for a token's ``kid``."""

    async def get(self, kid: str | None) -> Mapping[str, Any]: ...


def _usable_keys(document: Any, max_keys: int) -> list[dict[str, Any]]:
    """Signature-verification public keys from a JWKS document; raises on bad shape."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise VerifierUnavailable("JWKS document has no keys list")
    if len(keys) > max_keys:
        raise VerifierUnavailable(f"JWKS document has more than {max_keys} keys")
    usable: list[dict[str, Any]] = []
    for key in keys:
        if not isinstance(key, dict) or key.get("kty") not in ("RSA", "EC", "OKP"):
            continue
        if key.get("use", "sig") != "sig":
            continue
        ops = key.get("key_ops")
        if ops is not None and (not isinstance(ops, list) or "verify" not in ops):
            continue
        if "d" in key:  # a private key published by mistake: never use it
            continue
        usable.append(key)
    return usable


def _pick(keys: Sequence[Mapping[str, Any]], kid: str | None) -> Mapping[str, Any] | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    for key in keys:
        if key.get("kid") == kid:
            return key
    return None


class StaticKeys:
    """A fixed JWKS (for tests, or keys distributed out of band)."""

    def __init__(self, jwks: Mapping[str, Any], *, max_keys: int = 64) -> None:
        self._keys = _usable_keys(dict(jwks), max_keys)

    async def get(self, kid: str | None) -> Mapping[str, Any]:
        key = _pick(self._keys, kid)
        if key is None:
            raise InvalidToken("unknown signing key")
        return key


class JWKSCache:
    """Fetches a JWKS with httpx and keeps it; bounded in time, size and refresh rate.

    * the set is fetched on first use and again after ``ttl`` seconds;
    * a ``kid`` not in the set triggers one refresh, but at most one per
      ``min_refresh_interval`` seconds, so a flood of tokens with random ``kid`` values
      costs the authorization server at most one request per interval;
    * redirects are not followed, the body is capped at ``max_bytes`` and the set at
      ``max_keys``; concurrent misses share one fetch;
    * when a refresh fails the previous keys stay in use (a 503 only when there are none).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 300.0,
        min_refresh_interval: float = 30.0,
        max_bytes: int = 65_536,
        max_keys: int = 64,
        timeout: float = 5.0,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.ttl = ttl
        self.min_refresh_interval = min_refresh_interval
        self.max_bytes = max_bytes
        self.max_keys = max_keys
        self.timeout = timeout
        self._http = http
        self._clock = clock
        self._keys: list[dict[str, Any]] = []
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def get(self, kid: str | None) -> Mapping[str, Any]:
        if self._fetched_at is None or self._clock() - self._fetched_at >= self.ttl:
            await self._refresh()
        key = _pick(self._keys, kid)
        if key is None and kid is not None:
            await self._refresh()
            key = _pick(self._keys, kid)
        if key is None:
            if not self._keys:
                raise VerifierUnavailable("signing keys are unavailable")
            raise InvalidToken("unknown signing key")
        return key

    def _may_refresh(self) -> bool:
        last = self._attempted_at
        return last is None or self._clock() - last >= self.min_refresh_interval

    async def _refresh(self) -> None:
        """Fetch the set unless one was attempted within ``min_refresh_interval``
        (a failed attempt counts too, so an outage is not hammered)."""
        seen = self._attempted_at
        async with self._lock:
            if self._attempted_at != seen or not self._may_refresh():
                return  # another task fetched while this one waited, or too soon
            self._attempted_at = self._clock()
            try:
                self._keys = await self._fetch()
                self._fetched_at = self._attempted_at
            except (VerifierUnavailable, httpx.HTTPError) as exc:
                logger.warning("JWKS fetch from %s failed: %s", self.url, exc)

    async def _fetch(self) -> list[dict[str, Any]]:
        self.fetches += 1
        http = self._http or _new_http(self.timeout)
        try:
            headers = {"Accept": "application/json"}
            async with http.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    raise VerifierUnavailable(f"JWKS answered HTTP {response.status_code}")
                document = await _read_json_limited(response, self.max_bytes, "JWKS")
        finally:
            if self._http is None:
                await http.aclose()
        return _usable_keys(document, self.max_keys)


# ------------------------------------------------------------------- JWT verifier

_JWT_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "token expired"),
    (jwt.ImmatureSignatureError, "token not yet valid"),
    (jwt.InvalidAudienceError, "token audience mismatch"),
    (jwt.InvalidIssuerError, "token issuer mismatch"),
    (jwt.InvalidSignatureError, "token signature verification failed"),
    (jwt.InvalidAlgorithmError, "token algorithm not allowed"),
    (jwt.InvalidKeyError, "signing key unusable"),
)


class JWTVerifier:
    """Verifies JWT access tokens (RFC 9068 style) signed by the authorization server.

    Every token must be signed with an algorithm from ``algorithms`` (asymmetric only;
    ``none`` and HMAC are never accepted, which also rules out the RS256->HS256 key
    confusion), by a key from ``keys`` whose type fits the algorithm, and carry
    ``exp``, ``iss`` and ``aud``: ``iss`` equal to ``issuer``, ``aud`` containing the
    server's canonical resource URI exactly. PyJWT only checks ``exp`` when present,
    so the presence of every claim is required explicitly (``security.md`` §0 item 6).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        keys: KeySource | None = None,
        jwks_url: str | None = None,
        algorithms: Iterable[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        leeway: float = 60.0,
        required_claims: Iterable[str] = ("exp", "iss", "aud"),
    ) -> None:
        allowed = frozenset(algorithms)
        if not allowed or not allowed <= ASYMMETRIC_ALGORITHMS:
            raise ValueError(
                f"algorithms must be a non-empty subset of {sorted(ASYMMETRIC_ALGORITHMS)}"
            )
        if (keys is None) == (jwks_url is None):
            raise ValueError("give exactly one of keys= or jwks_url=")
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.algorithms = allowed
        self.leeway = leeway
        self.required_claims = sorted({"exp", "iss", "aud", *required_claims})
        self.keys: KeySource = keys if keys is not None else JWKSCache(str(jwks_url))

    async def verify(self, token: str) -> Principal:
        if not token or len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("malformed token")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("malformed token") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken("token algorithm not allowed")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("malformed token")
        jwk = await self.keys.get(kid)
        key = self._key_for(jwk, alg)
        claims = self._decode(token, key, alg)
        exp = claims.get("exp")
        return Principal(
            subject=_optional_str(claims, "sub"),
            scopes=_scopes_from_claims(claims),
            client_id=_optional_str(claims, "client_id", "azp"),
            issuer=_optional_str(claims, "iss"),
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            claims=claims,
        )

    @staticmethod
    def _key_for(jwk: Mapping[str, Any], alg: str) -> jwt.PyJWK:
        if jwk.get("kty") != _KEY_TYPE_FOR_ALG.get(alg[:2]):
            raise InvalidToken("signing key does not fit the token algorithm")
        if jwk.get("alg") not in (None, alg):
            raise InvalidToken("signing key does not fit the token algorithm")
        try:
            return jwt.PyJWK(dict(jwk), algorithm=alg)
        except jwt.PyJWTError:
            raise InvalidToken("signing key unusable") from None

    def _decode(self, token: str, key: jwt.PyJWK, alg: str) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={
                    "require": self.required_claims,
                    "verify_signature": True,
                    "verify_exp": True,
                    "verify_nbf": True,
                    "verify_iat": True,
                    "verify_aud": True,
                    "verify_iss": True,
                    "enforce_minimum_key_length": True,
                },
            )
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidToken(f"token lacks the {exc.claim} claim") from None
        except jwt.PyJWTError as exc:
            for kind, description in _JWT_ERRORS:
                if isinstance(exc, kind):
                    raise InvalidToken(description) from None
            raise InvalidToken("invalid token") from None
        return claims


# ------------------------------------------------------------ introspection


class IntrospectionVerifier:
    """Asks the authorization server whether a token is active (RFC 7662).

    The token must be ``active`` and, unless ``require_audience`` is off, list this
    server's resource URI in ``aud``; an ``exp`` in the past or an ``iss`` other than
    ``issuer`` (when configured) is refused. Answers are cached for at most
    ``cache_ttl`` seconds (and never past the token's ``exp``), keyed by a SHA-256 of
    the token so the cache never holds the token itself.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        audience: str | Sequence[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        require_audience: bool = True,
        leeway: float = 60.0,
        cache_ttl: float = 30.0,
        cache_size: int = 1024,
        timeout: float = 5.0,
        max_bytes: int = 65_536,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.client_id = client_id
        self._client_secret = client_secret
        self.issuer = issuer
        self.require_audience = require_audience
        self.leeway = leeway
        self.cache_ttl = cache_ttl
        self.cache_size = cache_size
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._http = http
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self.requests = 0

    async def verify(self, token: str) -> Principal:
        if not token or len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("malformed token")
        digest = hashlib.sha256(token.encode()).hexdigest()
        cached = self._cache.get(digest)
        now = self._clock()
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(digest)
            return cached[1]
        answer = await self._introspect(token)
        principal = self._principal(answer, now)
        until = now + self.cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        if self.cache_ttl > 0 and until > now:
            self._cache[digest] = (until, principal)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return principal

    async def _introspect(self, token: str) -> Any:
        self.requests += 1
        headers = {"Accept": "application/json"}
        form = {"token": token, "token_type_hint": "access_token"}
        if self.client_id is not None and self._client_secret is not None:
            pair = f"{quote(self.client_id, safe='')}:{quote(self._client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif self.client_id is not None:
            form["client_id"] = self.client_id
        http = self._http or _new_http(self.timeout)
        try:
            async with http.stream("POST", self.endpoint, data=form, headers=headers) as resp:
                if resp.status_code != 200:
                    raise VerifierUnavailable(f"introspection answered HTTP {resp.status_code}")
                return await _read_json_limited(resp, self.max_bytes, "introspection response")
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"introspection failed: {type(exc).__name__}") from None
        finally:
            if self._http is None:
                await http.aclose()

    def _principal(self, answer: Any, now: float) -> Principal:
        if not isinstance(answer, dict) or answer.get("active") is not True:
            raise InvalidToken("token is not active")
        exp = answer.get("exp")
        if exp is not None and (not isinstance(exp, int | float) or exp <= now - self.leeway):
            raise InvalidToken("token expired")
        aud = answer.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else None
        if audiences is None:
            if self.require_audience:
                raise InvalidToken("token audience mismatch")
        elif not any(a in audiences for a in self.audience):
            raise InvalidToken("token audience mismatch")
        iss = answer.get("iss")
        if self.issuer is not None and iss is not None and iss != self.issuer:
            raise InvalidToken("token issuer mismatch")
        return Principal(
            subject=_optional_str(answer, "sub", "username"),
            scopes=_scopes_from_claims(answer),
            client_id=_optional_str(answer, "client_id"),
            issuer=iss if isinstance(iss, str) else self.issuer,
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            claims=answer,
        )
