"""The resource-server side of MCP authorization, as HTTP: metadata, challenges, scopes.

Spec ``basic/authorization/index.mdx`` §Access Token Usage, §Error Handling and §Scope
Challenge Handling; ``authorization-server-discovery.mdx`` (RFC 9728 metadata).

* :class:`ScopeRequirements` declares the scopes each tool, resource and prompt needs
  and checks a :class:`~mcpkit.auth.verifiers.Principal` against them, scope
  hierarchies included.
* :class:`ProtectedResource` serves the RFC 9728 document and produces the exact
  ``401``/``403``/``503`` responses (status, headers, JSON body); its
  :meth:`~ProtectedResource.authenticate` and :meth:`~ProtectedResource.check` are the
  pure ASGI-level entry points a transport calls, and :func:`protect` wraps any ASGI
  app with them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpkit.auth.errors import InsufficientScope, InvalidToken, VerifierUnavailable
from mcpkit.auth.metadata import (
    PRM_WELL_KNOWN,
    ProtectedResourceMetadata,
    canonical_resource,
    format_challenge,
    prm_path,
)
from mcpkit.auth.verifiers import (
    MAX_TOKEN_LENGTH,
    JWKSCache,
    JWTVerifier,
    Principal,
    TokenVerifier,
)
from mcpkit.protocol import codec

__all__ = ["AuthResponse", "ProtectedResource", "ScopeRequirements", "protect"]

logger = logging.getLogger("mcpkit.auth")

_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# ------------------------------------------------------------------- scopes


def _frozen(values: Iterable[str] | str) -> frozenset[str]:
    return frozenset(values.split()) if isinstance(values, str) else frozenset(values)


@dataclass(frozen=True, init=False)
class ScopeRequirements:
    """Which scopes each operation needs, and which scopes imply which.

    ``default`` is needed by every authenticated request (it is also the ``scope`` of
    a 401 challenge); ``tools``, ``resources`` (keyed by URI or URI template) and
    ``prompts`` add per-item scopes for ``tools/call``, ``resources/read`` and
    ``prompts/get``. ``implies`` maps a broader scope to the narrower ones it grants
    (``{"mcp:admin": {"mcp:write"}}``), applied transitively: servers MUST account for
    scope hierarchies (spec ``basic/authorization/index.mdx`` §Step-Up Authorization Flow).
    Values may be sets or space-delimited strings.
    """

    default: frozenset[str]
    tools: Mapping[str, frozenset[str]]
    resources: Mapping[str, frozenset[str]]
    prompts: Mapping[str, frozenset[str]]
    implies: Mapping[str, frozenset[str]]

    def __init__(
        self,
        default: Iterable[str] | str = (),
        *,
        tools: Mapping[str, Iterable[str] | str] | None = None,
        resources: Mapping[str, Iterable[str] | str] | None = None,
        prompts: Mapping[str, Iterable[str] | str] | None = None,
        implies: Mapping[str, Iterable[str] | str] | None = None,
    ) -> None:
        def table(values: Mapping[str, Iterable[str] | str] | None) -> dict[str, frozenset[str]]:
            return {key: _frozen(scopes) for key, scopes in (values or {}).items()}

        object.__setattr__(self, "default", _frozen(default))
        object.__setattr__(self, "tools", table(tools))
        object.__setattr__(self, "resources", table(resources))
        object.__setattr__(self, "prompts", table(prompts))
        object.__setattr__(self, "implies", table(implies))

    def for_tool(self, name: str) -> frozenset[str]:
        return self.default | self.tools.get(name, frozenset())

    def for_resource(self, uri_or_template: str) -> frozenset[str]:
        return self.default | self.resources.get(uri_or_template, frozenset())

    def for_prompt(self, name: str) -> frozenset[str]:
        return self.default | self.prompts.get(name, frozenset())

    def for_request(self, method: str, params: Mapping[str, Any] | None) -> frozenset[str]:
        """The scopes one JSON-RPC request needs, from its method and params."""
        params = params or {}
        if method == "tools/call" and isinstance(params.get("name"), str):
            return self.for_tool(params["name"])
        if method == "resources/read" and isinstance(params.get("uri"), str):
            return self.for_resource(params["uri"])
        if method == "prompts/get" and isinstance(params.get("name"), str):
            return self.for_prompt(params["name"])
        return self.default

    def granted(self, scopes: Iterable[str]) -> frozenset[str]:
        """``scopes`` closed under ``implies``."""
        result = set(scopes)
        pending = list(result)
        while pending:
            for narrower in self.implies.get(pending.pop(), ()):
                if narrower not in result:
                    result.add(narrower)
                    pending.append(narrower)
        return frozenset(result)

    def missing(self, principal: Principal, required: frozenset[str]) -> frozenset[str]:
        return required - self.granted(principal.scopes)

    def check(self, principal: Principal, required: frozenset[str]) -> None:
        """Raise :class:`InsufficientScope` naming *all* of ``required`` if any is missing
        (one challenge with every scope the operation needs, not one at a time)."""
        if self.missing(principal, required):
            raise InsufficientScope(required)

    def allows(self, principal: Principal, required: frozenset[str]) -> bool:
        """For filtering lists: may ``principal`` use an item needing ``required``?"""
        return not self.missing(principal, required)


# ------------------------------------------------------------- HTTP responses


@dataclass(frozen=True)
class AuthResponse:
    """A complete HTTP response to send instead of handling the request."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    def asgi_headers(self) -> list[tuple[bytes, bytes]]:
        return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers]

    async def send(self, send: Send) -> None:
        """Emit this response on an ASGI ``send`` callable."""
        await send(
            {"type": "http.response.start", "status": self.status, "headers": self.asgi_headers()}
        )
        await send({"type": "http.response.body", "body": self.body})


def _json_response(
    status: int, document: Mapping[str, Any], extra: Sequence[tuple[str, str]] = ()
) -> AuthResponse:
    body = codec.dumps(document)
    headers = (
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        *extra,
    )
    return AuthResponse(status, headers, body)


class ProtectedResource:
    """One protected MCP endpoint: its metadata, its verifier and its challenges.

    ``resource`` is the endpoint's canonical URI (the audience tokens must carry);
    ``authorization_servers`` the issuers clients should use. The PRM document is
    served at the path-based well-known URI for the endpoint and at the root one, and
    advertised in every challenge as ``resource_metadata``.
    """

    def __init__(
        self,
        resource: str,
        authorization_servers: Sequence[str],
        verifier: TokenVerifier,
        *,
        requirements: ScopeRequirements | None = None,
        scopes_supported: Sequence[str] | None = None,
        resource_name: str | None = None,
        realm: str | None = None,
    ) -> None:
        if not authorization_servers:
            raise ValueError("at least one authorization server is required")
        self.resource = canonical_resource(resource)
        self.verifier = verifier
        self.requirements = requirements or ScopeRequirements()
        self.realm = realm
        if scopes_supported is None and self.requirements.default:
            scopes_supported = sorted(self.requirements.default)
        self.metadata = ProtectedResourceMetadata(
            resource=self.resource,
            authorization_servers=tuple(authorization_servers),
            scopes_supported=tuple(scopes_supported) if scopes_supported is not None else None,
            resource_name=resource_name,
        )
        parts = urlsplit(self.resource)
        self.metadata_paths = tuple(dict.fromkeys((prm_path(self.resource), PRM_WELL_KNOWN)))
        self.metadata_url = urlunsplit((parts.scheme, parts.netloc, self.metadata_paths[0], "", ""))
        self._metadata_body = codec.dumps(self.metadata.to_json())

    @classmethod
    def with_jwt(
        cls,
        resource: str,
        issuer: str,
        jwks_url: str,
        *,
        requirements: ScopeRequirements | None = None,
        algorithms: Iterable[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        **options: Any,
    ) -> ProtectedResource:
        """The common case: one authorization server issuing JWTs for this resource,
        whose audience is the canonical ``resource`` URI and whose keys are at
        ``jwks_url``."""
        canonical = canonical_resource(resource)
        verifier = JWTVerifier(
            issuer=issuer, audience=canonical, keys=JWKSCache(jwks_url), algorithms=algorithms
        )
        return cls(canonical, [issuer], verifier, requirements=requirements, **options)

    # -- metadata -------------------------------------------------------------

    def metadata_response(self, method: str, path: str) -> AuthResponse | None:
        """The response for a request to one of :attr:`metadata_paths`, else None.

        GET/HEAD get the document (readable cross-origin: it is public), OPTIONS a CORS
        preflight answer, anything else 405.
        """
        if path not in self.metadata_paths:
            return None
        cors = (("access-control-allow-origin", "*"),)
        if method in ("GET", "HEAD"):
            body = self._metadata_body
            headers = (
                ("content-type", "application/json"),
                ("content-length", str(len(body))),
                ("cache-control", "public, max-age=3600"),
                *cors,
            )
            return AuthResponse(200, headers, b"" if method == "HEAD" else body)
        if method == "OPTIONS":
            allow = (("access-control-allow-methods", "GET, HEAD, OPTIONS"),)
            return AuthResponse(204, (*cors, *allow), b"")
        return AuthResponse(405, (("allow", "GET, HEAD, OPTIONS"),), b"")

    # -- challenges -----------------------------------------------------------

    def challenge(
        self,
        status: int = 401,
        *,
        error: str | None = None,
        description: str | None = None,
        scope: Iterable[str] | None = None,
    ) -> AuthResponse:
        """A 401/403 with ``WWW-Authenticate: Bearer ...`` and an OAuth JSON body.

        ``scope`` defaults to :attr:`ScopeRequirements.default`; without an ``error`` (no
        credentials were sent) the header carries none (RFC 6750 §3.1).
        """
        scopes = sorted(self.requirements.default if scope is None else set(scope))
        params: list[tuple[str, str]] = []
        if self.realm is not None:
            params.append(("realm", self.realm))
        params.append(("resource_metadata", self.metadata_url))
        if scopes:
            params.append(("scope", " ".join(scopes)))
        if error is not None:
            params.append(("error", error))
            if description is not None:
                params.append(("error_description", description))
        header = ("www-authenticate", format_challenge("Bearer", params))
        document = {
            "error": error or "unauthorized",
            "error_description": description or "authorization required",
        }
        return _json_response(status, document, (header,))

    def insufficient_scope(self, required: Iterable[str]) -> AuthResponse:
        """403 ``insufficient_scope`` naming every scope the operation needs."""
        return self.challenge(
            403,
            error="insufficient_scope",
            description="the token lacks scopes this operation requires",
            scope=required,
        )

    @staticmethod
    def unavailable() -> AuthResponse:
        return _json_response(
            503,
            {"error": "temporarily_unavailable", "error_description": "cannot verify tokens"},
            (("retry-after", "5"),),
        )

    # -- per request ----------------------------------------------------------

    async def authenticate(
        self, headers: Iterable[tuple[bytes, bytes]], required: Iterable[str] | None = None
    ) -> Principal | AuthResponse:
        """Verify the request's bearer token: a :class:`Principal`, or the response to send.

        Missing credentials or another scheme -> 401 without ``error``; a malformed or
        repeated ``Authorization`` header or a token the verifier refuses -> 401
        ``invalid_token``; a verifier outage -> 503. A token in the query string is never
        looked at. ``required`` (default: :attr:`ScopeRequirements.default`) is the
        ``scope`` advertised in the challenge.
        """
        values = [value for name, value in headers if name.lower() == b"authorization"]
        if not values:
            return self.challenge(scope=required)
        if len(values) > 1:
            return self.challenge(
                error="invalid_token", description="repeated Authorization header", scope=required
            )
        scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
        if scheme.lower() != "bearer":
            return self.challenge(scope=required)
        token = token.strip(" \t")
        if not _B64TOKEN.fullmatch(token) or len(token) > MAX_TOKEN_LENGTH:
            return self.challenge(
                error="invalid_token", description="malformed bearer token", scope=required
            )
        try:
            return await self.verifier.verify(token)
        except InvalidToken as exc:
            logger.info("bearer token refused: %s", exc.description)
            return self.challenge(
                error="invalid_token", description=exc.description, scope=required
            )
        except VerifierUnavailable as exc:
            logger.warning("token verification unavailable: %s", exc)
            return self.unavailable()

    def authorize(
        self, principal: Principal, method: str, params: Mapping[str, Any] | None = None
    ) -> AuthResponse | None:
        """None if ``principal`` may make this JSON-RPC request, else the 403 to send."""
        required = self.requirements.for_request(method, params)
        if self.requirements.missing(principal, required):
            return self.insufficient_scope(required)
        return None

    async def check(self, scope: Scope) -> Principal | AuthResponse:
        """ASGI level: authenticate the HTTP request described by an ASGI ``scope``."""
        return await self.authenticate(scope.get("headers") or ())


def protect(app: ASGIApp, resource: ProtectedResource, *, path: str | None = None) -> ASGIApp:
    """Wrap an ASGI app: serve the PRM documents, refuse unauthenticated requests.

    Requests to ``path`` (default: the resource's own path) must carry a valid bearer
    token; the verified :class:`Principal` is put in ``scope["auth"]`` for the app.
    Scope checks that depend on the JSON-RPC body stay with the app, which calls
    :meth:`ProtectedResource.authorize` once it has parsed the request.
    """
    guarded = path if path is not None else (urlsplit(resource.resource).path or "/")

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        metadata = resource.metadata_response(scope.get("method", "GET"), scope.get("path", ""))
        if metadata is not None:
            await metadata.send(send)
            return
        if scope.get("path") != guarded:
            await app(scope, receive, send)
            return
        outcome = await resource.check(scope)
        if isinstance(outcome, AuthResponse):
            await outcome.send(send)
            return
        scope["auth"] = outcome
        await app(scope, receive, send)

    return wrapped
