"""Discovery documents and headers shared by both sides of MCP authorization.

* Protected Resource Metadata (RFC 9728): the document, its well-known locations (the
  path-based form first, then the root) and the rule that its ``resource`` names the
  server the client is talking to (spec ``basic/authorization/authorization-server-
  discovery.mdx`` §Protected Resource Metadata Discovery Requirements).
* Authorization Server Metadata (RFC 8414 / OpenID Connect Discovery): the well-known
  URLs in the spec's priority order, and the exact ``issuer`` match (§Authorization
  Server Metadata Discovery).
* ``WWW-Authenticate`` (RFC 9110 §11.6.1, RFC 6750 §3): a parser for the client and a
  formatter for the server that quotes every value and refuses header injection.
* Canonical resource URIs (spec ``basic/authorization/index.mdx`` §Canonical Server URI).

Everything here is pure: strings and dicts in, values or :class:`OAuthFlowError` out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpkit.auth.errors import OAuthFlowError

__all__ = [
    "PRM_WELL_KNOWN",
    "AuthorizationServerMetadata",
    "Challenge",
    "ProtectedResourceMetadata",
    "as_metadata_urls",
    "bearer_challenge",
    "canonical_resource",
    "check_endpoint_url",
    "format_challenge",
    "is_loopback_host",
    "parse_scope",
    "parse_www_authenticate",
    "prm_path",
    "prm_urls",
    "resource_matches",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_OAUTH_AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
_OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
_DEFAULT_PORTS = {"http": 80, "https": 443}


# --------------------------------------------------------------------------- URLs


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (IPv4-mapped IPv6 included).

    Names other than ``localhost`` are not resolved: ``127.1`` or ``0x7f.1`` count as
    *not* loopback, which only ever makes a check stricter (``security.md`` §0 item 6).
    """
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def check_endpoint_url(url: str, what: str, *, allow_http: bool = False) -> str:
    """Return ``url`` if it is an absolute https URL (http only on loopback), else raise.

    Spec ``security-considerations.mdx`` §Communication Security: authorization server
    endpoints use HTTPS; plain http is accepted for loopback hosts (development and
    tests) or everywhere when ``allow_http`` is set. ``javascript:``, ``file:``,
    ``data:`` and friends, userinfo, fragments, whitespace and control characters are
    refused before anything is fetched or opened (``security.md`` A-10).
    """
    if not isinstance(url, str) or not url:
        raise OAuthFlowError(f"{what} is missing or not a string")
    if any(ch <= " " or ch == "\x7f" for ch in url):
        raise OAuthFlowError(f"{what} contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError:
        raise OAuthFlowError(f"{what} is not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise OAuthFlowError(f"{what} must be an absolute http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise OAuthFlowError(f"{what} must not carry user information")
    if parts.fragment or url.endswith("#"):
        raise OAuthFlowError(f"{what} must not have a fragment")
    if scheme == "http" and not allow_http and not is_loopback_host(parts.hostname):
        raise OAuthFlowError(f"{what} must use https (http is allowed only on loopback)")
    return url


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server: lower-case scheme and host, no fragment,
    no lone trailing ``/`` (spec ``basic/authorization/index.mdx`` §Canonical Server URI).
    """
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port if parts.port is not None else _DEFAULT_PORTS.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def resource_matches(prm_resource: str, server_url: str) -> bool:
    """Does a PRM ``resource`` name the server at ``server_url``?

    True when both have the same origin and the server's path equals the resource's
    path or lies under it on a segment boundary: a root document may describe
    ``https://host`` for the endpoint ``https://host/mcp`` (RFC 9728 §3.3 with the
    root well-known URI), but ``https://host/mc`` never covers ``https://host/mcp``,
    and another origin never matches (conformance ``auth/resource-mismatch``).
    """
    try:
        if _origin(prm_resource) != _origin(server_url):
            return False
        resource_path = urlsplit(prm_resource).path.rstrip("/")
        server_path = urlsplit(server_url).path.rstrip("/")
    except ValueError:
        return False
    if urlsplit(prm_resource).fragment:
        return False
    return server_path == resource_path or server_path.startswith(resource_path + "/")


def prm_path(resource: str) -> str:
    """The path at which a server publishes the PRM of ``resource`` (path-based form).

    ``https://host/public/mcp`` -> ``/.well-known/oauth-protected-resource/public/mcp``;
    a resource without a path gets the root form.
    """
    path = urlsplit(resource).path.rstrip("/")
    return PRM_WELL_KNOWN + path


def prm_urls(server_url: str) -> list[str]:
    """Well-known PRM URLs to try for a server, in the required order: path-based, root."""
    parts = urlsplit(server_url)
    base = (parts.scheme, parts.netloc)
    root = urlunsplit((*base, PRM_WELL_KNOWN, "", ""))
    path = parts.path.rstrip("/")
    if not path:
        return [root]
    return [urlunsplit((*base, PRM_WELL_KNOWN + path, "", "")), root]


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization server metadata URLs for ``issuer``, in the spec's priority order.

    With a path (``https://as/tenant1``): RFC 8414 path insertion, OIDC path insertion,
    OIDC path appending. Without: RFC 8414 then OIDC. The root RFC 8414 URL is never
    tried for an issuer that has a path (conformance ``metadata-var2``).
    """
    parts = urlsplit(issuer)
    base = (parts.scheme, parts.netloc)
    path = parts.path.rstrip("/")
    if not path:
        return [
            urlunsplit((*base, _OAUTH_AS_WELL_KNOWN, "", "")),
            urlunsplit((*base, _OIDC_WELL_KNOWN, "", "")),
        ]
    return [
        urlunsplit((*base, _OAUTH_AS_WELL_KNOWN + path, "", "")),
        urlunsplit((*base, _OIDC_WELL_KNOWN + path, "", "")),
        urlunsplit((*base, path + _OIDC_WELL_KNOWN, "", "")),
    ]


def parse_scope(value: str | None) -> tuple[str, ...]:
    """Split a space-delimited scope string, dropping empties and repeats, keeping order."""
    if not value:
        return ()
    return tuple(dict.fromkeys(value.split()))


# ------------------------------------------------------------------ the documents


def _str_list(data: Mapping[str, Any], key: str, what: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OAuthFlowError(f"{what}: {key} must be a list of strings")
    return tuple(value)


def _optional_str(data: Mapping[str, Any], key: str, what: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise OAuthFlowError(f"{what}: {key} must be a string")
    return value


@dataclass(frozen=True)
class ProtectedResourceMetadata:
    """An RFC 9728 document: which authorization servers protect ``resource``.

    ``scopes_supported`` should be the minimal set for basic use and should not list
    ``offline_access`` (spec ``basic/authorization/index.mdx`` §Refresh Tokens).
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    bearer_methods_supported: tuple[str, ...] = ("header",)
    resource_name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The document as served by the resource server."""
        doc: dict[str, Any] = dict(self.extra)
        doc["resource"] = self.resource
        doc["authorization_servers"] = list(self.authorization_servers)
        if self.scopes_supported is not None:
            doc["scopes_supported"] = list(self.scopes_supported)
        doc["bearer_methods_supported"] = list(self.bearer_methods_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        return doc

    @classmethod
    def from_json(cls, data: Any) -> ProtectedResourceMetadata:
        """Validate a fetched document; at least one authorization server is required."""
        what = "protected resource metadata"
        if not isinstance(data, dict):
            raise OAuthFlowError(f"{what} is not a JSON object")
        resource = data.get("resource")
        if not isinstance(resource, str) or not resource:
            raise OAuthFlowError(f"{what}: resource is missing")
        servers = _str_list(data, "authorization_servers", what)
        if not servers:
            raise OAuthFlowError(f"{what} lists no authorization_servers")
        return cls(
            resource=resource,
            authorization_servers=servers,
            scopes_supported=_str_list(data, "scopes_supported", what),
            bearer_methods_supported=_str_list(data, "bearer_methods_supported", what)
            or ("header",),
            resource_name=_optional_str(data, "resource_name", what),
        )


@dataclass(frozen=True)
class AuthorizationServerMetadata:
    """The parts of RFC 8414 / OIDC Discovery metadata that an MCP client uses."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    authorization_response_iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False

    @classmethod
    def from_json(cls, data: Any, expected_issuer: str) -> AuthorizationServerMetadata:
        """Validate a fetched document whose URL was built from ``expected_issuer``.

        The ``issuer`` must be *identical* to ``expected_issuer`` (RFC 8414 §3.3): no
        trailing-slash, case or port normalization.
        """
        what = "authorization server metadata"
        if not isinstance(data, dict):
            raise OAuthFlowError(f"{what} is not a JSON object")
        issuer = data.get("issuer")
        if issuer != expected_issuer:
            raise OAuthFlowError(
                f"{what}: issuer {issuer!r} differs from the expected {expected_issuer!r}"
            )
        authorization_endpoint = _optional_str(data, "authorization_endpoint", what)
        token_endpoint = _optional_str(data, "token_endpoint", what)
        if not authorization_endpoint or not token_endpoint:
            raise OAuthFlowError(f"{what} lacks authorization_endpoint or token_endpoint")
        return cls(
            issuer=expected_issuer,
            authorization_endpoint=authorization_endpoint,
            token_endpoint=token_endpoint,
            registration_endpoint=_optional_str(data, "registration_endpoint", what),
            scopes_supported=_str_list(data, "scopes_supported", what),
            code_challenge_methods_supported=_str_list(
                data, "code_challenge_methods_supported", what
            ),
            token_endpoint_auth_methods_supported=_str_list(
                data, "token_endpoint_auth_methods_supported", what
            ),
            grant_types_supported=_str_list(data, "grant_types_supported", what),
            authorization_response_iss_parameter_supported=data.get(
                "authorization_response_iss_parameter_supported"
            )
            is True,
            client_id_metadata_document_supported=data.get("client_id_metadata_document_supported")
            is True,
        )


# ------------------------------------------------------------- WWW-Authenticate

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_TOKEN68 = frozenset("-._~+/0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SPACE = " \t"


@dataclass(frozen=True)
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header; ``scheme`` is lower-cased,
    parameter names too (they are case-insensitive), values are unquoted."""

    scheme: str
    params: Mapping[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def scope(self) -> tuple[str, ...]:
        return parse_scope(self.params.get("scope"))

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")


class _Scanner:
    """A cursor over one header value for :func:`parse_www_authenticate`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def token(self, alphabet: frozenset[str] = _TCHAR) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in alphabet:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str | None:
        """A quoted-string starting at the cursor, unescaped; None if unterminated."""
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            self.pos += 1
            if ch == '"':
                return "".join(out)
            if ch == "\\" and self.pos < len(self.text):
                ch = self.text[self.pos]
                self.pos += 1
            out.append(ch)
        return None

    def at_param(self) -> bool:
        """Is the cursor at ``token BWS "=" BWS value`` (an auth-param)?

        A ``token=`` followed by another ``=``, a comma or the end is a token68 such as
        ``dXNlcg==`` (RFC 9110 §11.2), and a token followed by a space and another token
        is the scheme of the next challenge.
        """
        saved = self.pos
        name = self.token()
        self.skip(_SPACE)
        result = False
        if name and self.peek() == "=":
            self.pos += 1
            self.skip(_SPACE)
            result = self.peek() not in ("=", ",", "")
        self.pos = saved
        return result


def _parse_params(scan: _Scanner) -> tuple[dict[str, str], bool]:
    """Parse ``#auth-param`` after a scheme; returns (params, well_formed)."""
    params: dict[str, str] = {}
    well_formed = True
    while scan.at_param():
        name = scan.token().lower()
        scan.skip(_SPACE)
        scan.pos += 1  # "="
        scan.skip(_SPACE)
        if scan.peek() == '"':
            value = scan.quoted()
            if value is None:
                return params, False
        else:
            value = scan.token()
            if not value:
                return params, False
        if name in params:
            well_formed = False
        params.setdefault(name, value)
        saved = scan.pos
        scan.skip(_SPACE + ",")
        if not scan.at_param():
            scan.pos = saved
            break
    return params, well_formed


def parse_www_authenticate(values: str | Iterable[str]) -> list[Challenge]:
    """All challenges in one or more ``WWW-Authenticate`` header values.

    Tolerant of extra commas and whitespace; a challenge whose parameters are malformed
    or repeated (RFC 9110: each name at most once) is dropped rather than guessed at,
    and parsing stops at the first character that cannot start a challenge.
    """
    if isinstance(values, str):
        values = [values]
    challenges: list[Challenge] = []
    for text in values:
        scan = _Scanner(text)
        while True:
            scan.skip(_SPACE + ",")
            scheme = scan.token()
            if not scheme:
                break
            token68: str | None = None
            params: dict[str, str] = {}
            well_formed = True
            if scan.peek() in (" ", "\t"):
                scan.skip(_SPACE)
                if scan.at_param():
                    params, well_formed = _parse_params(scan)
                else:
                    saved = scan.pos
                    candidate = scan.token(_TOKEN68)
                    while scan.peek() == "=":
                        scan.pos += 1
                        candidate += "="
                    scan.skip(_SPACE)
                    if candidate and scan.peek() in (",", ""):
                        token68 = candidate
                    else:
                        scan.pos = saved
            if well_formed:
                challenges.append(Challenge(scheme.lower(), params, token68))
            scan.skip(_SPACE)
            if scan.peek() not in (",", ""):
                break
    return challenges


def bearer_challenge(values: str | Iterable[str]) -> Challenge | None:
    """The first ``Bearer`` challenge (scheme matched case-insensitively), if any."""
    for challenge in parse_www_authenticate(values):
        if challenge.scheme == "bearer":
            return challenge
    return None


def _quote(value: str) -> str:
    if any((ch < " " and ch != "\t") or ch == "\x7f" for ch in value):
        raise ValueError("WWW-Authenticate values must not contain control characters")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def format_challenge(scheme: str, params: Sequence[tuple[str, str]]) -> str:
    """``Scheme name="value", ...`` with every value quoted and escaped.

    Raises ValueError for a scheme or name that is not a token, or a value with a
    control character (CR/LF would split the header).
    """
    if not scheme or not set(scheme) <= _TCHAR:
        raise ValueError(f"invalid auth scheme {scheme!r}")
    parts: list[str] = []
    for name, value in params:
        if not name or not set(name) <= _TCHAR:
            raise ValueError(f"invalid auth-param name {name!r}")
        parts.append(f"{name}={_quote(value)}")
    return scheme + (" " + ", ".join(parts) if parts else "")
