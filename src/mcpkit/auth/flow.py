"""The MCP OAuth 2.1 client flow as a sans-I/O generator (design §4, the httpx auth style).

:meth:`OAuthFlow.run` drives one protected request. It never does I/O: it yields what
must happen next and is sent the outcome::

    event = next(gen)                         # SendResource | HTTPRequest | Authorize
    event = gen.send(reply)                   # HTTPResponse | AuthorizationResponse

* :class:`SendResource` -- send the protected request itself with this
  ``Authorization`` value (or none); reply with its :class:`HTTPResponse`.
* :class:`HTTPRequest` -- a discovery, registration or token request; send it exactly,
  **never following redirects**, and reply with the :class:`HTTPResponse`.
* :class:`Authorize` -- send the user (or a headless fetch) to ``url``; reply with the
  :class:`AuthorizationResponse` parsed from the redirect back to ``redirect_uri``.

The generator returns when the last protected response is final, and raises
:class:`~mcpkit.auth.errors.OAuthFlowError` when authorization cannot succeed. The steps,
in order (spec ``basic/authorization/``, conformance §7.3):

1. a 401 (or a 403 ``insufficient_scope``) from the server starts discovery: the
   ``resource_metadata`` of ``WWW-Authenticate``, else the path-based then the root
   RFC 9728 URL; the document's ``resource`` must name this server;
2. authorization server metadata from the RFC 8414 / OIDC URLs in order, ``issuer``
   identical to the one the URL was built from; S256 PKCE must be listed;
3. the client identity for that issuer: a stored one, pre-registered credentials, a
   Client ID Metadata Document URL if the server supports CIMD, else Dynamic Client
   Registration with ``application_type``;
4. the authorization request with PKCE, ``state``, ``resource`` (RFC 8707) and the
   selected scopes; the response's ``iss`` checked by exact comparison (RFC 9207),
   then ``state``, before anything else in it is believed;
5. the token request with the code verifier, ``resource`` and client authentication
   as registered; tokens are stored under the server, bound to the issuer;
6. step-up on 403 ``insufficient_scope`` with the union of the previously requested and
   the challenged scopes, at most ``max_authorizations`` authorizations per request;
   a 401 with a refresh token from the same issuer refreshes first.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from mcpkit.auth.errors import AuthorizationDenied, OAuthFlowError
from mcpkit.auth.metadata import (
    AuthorizationServerMetadata,
    Challenge,
    ProtectedResourceMetadata,
    as_metadata_urls,
    bearer_challenge,
    canonical_resource,
    check_endpoint_url,
    is_loopback_host,
    parse_scope,
    prm_urls,
    resource_matches,
)
from mcpkit.auth.pkce import PKCE, new_state
from mcpkit.auth.tokens import AuthState, ClientRegistration, TokenSet
from mcpkit.protocol import codec

__all__ = [
    "AuthorizationResponse",
    "Authorize",
    "ClientConfig",
    "Event",
    "Flow",
    "HTTPRequest",
    "HTTPResponse",
    "OAuthFlow",
    "Reply",
    "SendResource",
]

OFFLINE_ACCESS = "offline_access"
_JSON = "application/json"
_FORM = "application/x-www-form-urlencoded"


# ------------------------------------------------------------------ events


def _header(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    lowered = name.lower()
    return [value for key, value in headers if key.lower() == lowered]


@dataclass(frozen=True)
class HTTPRequest:
    """A request the flow needs sent as is (no redirects followed)."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = field(default=b"", repr=False)

    def header(self, name: str) -> str | None:
        values = _header(self.headers, name)
        return values[0] if values else None


@dataclass(frozen=True)
class HTTPResponse:
    """What came back. For :class:`SendResource` replies only status and headers matter."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = field(default=b"", repr=False)

    def header_values(self, name: str) -> list[str]:
        return _header(self.headers, name)

    def json(self, what: str) -> Any:
        try:
            return codec.loads(self.body)
        except Exception:
            raise OAuthFlowError(f"{what} is not valid JSON") from None


@dataclass(frozen=True)
class SendResource:
    """Send the protected request with ``Authorization: <authorization>`` (None: without)."""

    authorization: str | None = field(repr=False)


@dataclass(frozen=True)
class Authorize:
    """Send the user agent to ``url``; the answer comes back to ``redirect_uri``."""

    url: str
    redirect_uri: str
    state: str = field(repr=False)


@dataclass(frozen=True)
class AuthorizationResponse:
    """The query parameters of the redirect back to the client (``code``, ``state``,
    ``iss``, or ``error``...)."""

    params: Mapping[str, str] = field(repr=False)


Event = HTTPRequest | SendResource | Authorize
Reply = HTTPResponse | AuthorizationResponse
Flow = Generator[Event, Reply, None]


# ------------------------------------------------------------------ configuration


@dataclass(frozen=True)
class ClientConfig:
    """How this client identifies itself and what it asks for.

    * ``redirect_uri`` -- where the authorization server sends the user back
      (loopback ``http`` or ``https``);
    * ``client_metadata_url`` -- a Client ID Metadata Document URL (https, with a path),
      used as ``client_id`` when the server advertises CIMD support;
    * ``client_id`` / ``client_secret`` -- pre-registered credentials; ``client_issuer``
      pins them to one authorization server (otherwise they bind to the first one used,
      and a different server later is an error rather than a silent reuse);
    * ``application_type`` -- for DCR; derived from ``redirect_uri`` when None
      (``native`` for loopback, ``web`` otherwise);
    * ``request_offline_access`` -- add ``offline_access`` when the authorization server
      lists it (and only then);
    * ``max_authorizations`` -- authorization attempts per protected request;
    * ``allow_http`` -- accept plain-http endpoints off loopback (testing only).
    """

    redirect_uri: str
    client_name: str = "mcpkit"
    client_metadata_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    client_issuer: str | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    application_type: str | None = None
    request_offline_access: bool = True
    max_authorizations: int = 3
    allow_http: bool = False
    registration_metadata: Mapping[str, Any] = field(default_factory=dict)

    def resolved_application_type(self) -> str:
        if self.application_type is not None:
            return self.application_type
        parts = urlsplit(self.redirect_uri)
        loopback = parts.scheme == "http" and is_loopback_host(parts.hostname or "")
        return "native" if loopback or parts.scheme not in ("http", "https") else "web"


@dataclass(frozen=True)
class _Discovery:
    prm: ProtectedResourceMetadata
    server: AuthorizationServerMetadata

    @property
    def resource(self) -> str:
        return self.prm.resource


# ------------------------------------------------------------------ the flow


def _with_query(url: str, params: Sequence[tuple[str, str]]) -> str:
    parts = urlsplit(url)
    query = parts.query + ("&" if parts.query else "") + urlencode(params, quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _union(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(scope for group in groups for scope in group))


def _form_request(url: str, form: Sequence[tuple[str, str]], auth: str | None) -> HTTPRequest:
    headers: list[tuple[str, str]] = [("Content-Type", _FORM), ("Accept", _JSON)]
    if auth is not None:
        headers.append(("Authorization", auth))
    body = urlencode(form, quote_via=quote).encode()
    return HTTPRequest("POST", url, tuple(headers), body)


class OAuthFlow:
    """The OAuth client state machine for one MCP server.

    ``state`` is read and updated in place (tokens, registrations); persist it after a
    run with a :class:`~mcpkit.auth.tokens.TokenStore`. ``exhausted`` remembers scope
    sets that stayed insufficient after the retry limit, so later requests needing the
    same scopes fail at once instead of sending the user through authorization again.
    """

    def __init__(
        self,
        server_url: str,
        config: ClientConfig,
        state: AuthState | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server_url = canonical_resource(server_url)
        self.config = config
        self.state = state if state is not None else AuthState()
        self.exhausted: set[frozenset[str]] = set()
        self._clock = clock
        check_endpoint_url(config.redirect_uri, "redirect_uri", allow_http=config.allow_http)
        if config.client_metadata_url is not None:
            parts = urlsplit(config.client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError("client_metadata_url must be an https URL with a path")

    # -- the token in use --------------------------------------------------------

    @property
    def tokens(self) -> TokenSet | None:
        return self.state.tokens.get(self.server_url)

    def authorization(self) -> str | None:
        """The ``Authorization`` value to send now, or None without an unexpired token.

        (A token close to expiry is still sent; :meth:`run` refreshes it first when it
        can, so a server that issues very short-lived tokens still gets them.)
        """
        tokens = self.tokens
        if tokens is None or tokens.expired(self._clock(), skew=0.0):
            return None
        return f"Bearer {tokens.access_token}"

    # -- one protected request ---------------------------------------------------

    def run(self) -> Flow:
        """The generator for one protected request (see the module docstring)."""
        tokens = self.tokens
        if tokens is not None and tokens.expired(self._clock()) and tokens.refresh_token:
            yield from self._refresh(tokens)
        sent = self.authorization()
        response = yield from self._send(sent)
        authorizations = 0
        refreshed = False
        for _ in range(self.config.max_authorizations + 4):
            challenge = bearer_challenge(response.header_values("www-authenticate"))
            step_up = response.status == 403 and self._is_scope_challenge(challenge)
            if response.status != 401 and not step_up:
                return
            current = self.authorization()
            if current is not None and current != sent:
                sent = current  # another request already got a newer token
                response = yield from self._send(sent)
                continue
            discovery = yield from self._discover(challenge)
            tokens = self._tokens_for(discovery)
            if not step_up and not refreshed and tokens is not None and tokens.refresh_token:
                refreshed = True
                if (yield from self._refresh(tokens)):
                    sent = self.authorization()
                    response = yield from self._send(sent)
                    continue
            scopes = self._select_scopes(challenge, discovery, step_up)
            if step_up and any(frozenset(scopes) <= gone for gone in self.exhausted):
                raise OAuthFlowError("the server keeps refusing these scopes; not retrying")
            if authorizations >= self.config.max_authorizations:
                if step_up:
                    self.exhausted.add(frozenset(scopes))
                raise OAuthFlowError(
                    f"still unauthorized after {authorizations} authorization attempts"
                )
            authorizations += 1
            yield from self._authorize(discovery, scopes)
            sent = self.authorization()
            response = yield from self._send(sent)
        raise OAuthFlowError("authorization did not converge")

    @staticmethod
    def _send(authorization: str | None) -> Generator[Event, Reply, HTTPResponse]:
        return _expect_http((yield SendResource(authorization)))

    @staticmethod
    def _is_scope_challenge(challenge: Challenge | None) -> bool:
        if challenge is None:
            return False
        if challenge.error is None:
            return bool(challenge.scope)
        return challenge.error == "insufficient_scope"

    def _tokens_for(self, discovery: _Discovery) -> TokenSet | None:
        """Stored tokens, dropped if another authorization server issued them: a token or
        refresh token is never presented once the server names a different issuer."""
        tokens = self.tokens
        if tokens is not None and tokens.issuer != discovery.server.issuer:
            del self.state.tokens[self.server_url]
            return None
        return tokens

    # -- discovery ---------------------------------------------------------------

    @staticmethod
    def _get_json(url: str) -> Generator[Event, Reply, HTTPResponse]:
        return _expect_http((yield HTTPRequest("GET", url, (("Accept", _JSON),))))

    def _discover(self, challenge: Challenge | None) -> Generator[Event, Reply, _Discovery]:
        allow_http = self.config.allow_http
        urls: list[str] = []
        if challenge is not None and challenge.resource_metadata:
            urls.append(
                check_endpoint_url(
                    challenge.resource_metadata, "resource_metadata", allow_http=allow_http
                )
            )
        urls.extend(url for url in prm_urls(self.server_url) if url not in urls)
        prm: ProtectedResourceMetadata | None = None
        for url in urls:
            reply = yield from self._get_json(url)
            if reply.status == 200:
                prm = ProtectedResourceMetadata.from_json(reply.json("protected resource metadata"))
                break
        if prm is None:
            raise OAuthFlowError("the server publishes no protected resource metadata")
        if not resource_matches(prm.resource, self.server_url):
            raise OAuthFlowError(
                f"protected resource metadata names {prm.resource!r}, not {self.server_url!r}"
            )
        issuer = check_endpoint_url(
            self._pick_issuer(prm.authorization_servers),
            "authorization server",
            allow_http=allow_http,
        )
        server = yield from self._server_metadata(issuer)
        return _Discovery(prm, server)

    def _pick_issuer(self, servers: tuple[str, ...]) -> str:
        """The issuer of the tokens in hand when still listed, else a server already
        registered with, else the first one (RFC 9728 §7.6 leaves the choice to us)."""
        tokens = self.tokens
        if tokens is not None and tokens.issuer in servers:
            return tokens.issuer
        return next((s for s in servers if s in self.state.registrations), servers[0])

    def _server_metadata(self, issuer: str) -> Generator[Event, Reply, AuthorizationServerMetadata]:
        for url in as_metadata_urls(issuer):
            reply = yield from self._get_json(url)
            if reply.status != 200:
                continue
            server = AuthorizationServerMetadata.from_json(
                reply.json("authorization server metadata"), issuer
            )
            allow_http = self.config.allow_http
            check_endpoint_url(
                server.authorization_endpoint, "authorization_endpoint", allow_http=allow_http
            )
            check_endpoint_url(server.token_endpoint, "token_endpoint", allow_http=allow_http)
            if server.registration_endpoint is not None:
                check_endpoint_url(
                    server.registration_endpoint, "registration_endpoint", allow_http=allow_http
                )
            methods = server.code_challenge_methods_supported or ()
            if "S256" not in methods:
                raise OAuthFlowError(
                    "the authorization server does not advertise PKCE S256; refusing to proceed"
                )
            return server
        raise OAuthFlowError(f"no authorization server metadata found for {issuer!r}")

    # -- scopes ------------------------------------------------------------------

    def _select_scopes(
        self, challenge: Challenge | None, discovery: _Discovery, step_up: bool
    ) -> tuple[str, ...]:
        """WWW-Authenticate ``scope``, else PRM ``scopes_supported``, else none; unioned
        with what was requested before (spec §Scope Selection Strategy, §Step-Up);
        ``offline_access`` only when the authorization server lists it."""
        challenged = challenge.scope if challenge is not None else ()
        fallback = () if step_up else discovery.prm.scopes_supported or ()
        selected = challenged or fallback
        tokens = self.tokens
        previous = tokens.requested_scope if tokens is not None else ()
        scopes = _union(previous, selected)
        offered = discovery.server.scopes_supported or ()
        wants_offline = (
            self.config.request_offline_access
            and "refresh_token" in self.config.grant_types
            and OFFLINE_ACCESS in offered
        )
        scopes = tuple(s for s in scopes if s != OFFLINE_ACCESS or OFFLINE_ACCESS in offered)
        if wants_offline and OFFLINE_ACCESS not in scopes:
            scopes += (OFFLINE_ACCESS,)
        return scopes

    # -- client identity ---------------------------------------------------------

    def _client(
        self, server: AuthorizationServerMetadata
    ) -> Generator[Event, Reply, ClientRegistration]:
        """The client identity at ``server``, registering when needed (spec
        ``client-registration.mdx``: pre-registration, CIMD, then DCR)."""
        stored = self.state.registrations.get(server.issuer)
        if stored is not None and self._reusable(stored):
            return stored
        config = self.config
        if config.client_id is not None:
            registration = self._preregistered(server)
        elif config.client_metadata_url is not None and (
            server.client_id_metadata_document_supported
        ):
            registration = ClientRegistration(
                issuer=server.issuer,
                client_id=config.client_metadata_url,
                auth_method="none",
                redirect_uris=(config.redirect_uri,),
                source="cimd",
            )
        elif server.registration_endpoint is not None:
            registration = yield from self._register(server, server.registration_endpoint)
        else:
            raise OAuthFlowError(
                "no client identity for this authorization server: not pre-registered, "
                "no Client ID Metadata Document support, no registration endpoint"
            )
        self.state.registrations[server.issuer] = registration
        return registration

    def _reusable(self, stored: ClientRegistration) -> bool:
        """Does a stored identity still fit the configuration (same pre-registered id,
        same CIMD URL, a DCR registration that includes the current redirect URI)?"""
        config = self.config
        if stored.source == "preregistered":
            return stored.client_id == config.client_id
        if stored.source == "cimd":
            return stored.client_id == config.client_metadata_url
        return config.redirect_uri in stored.redirect_uris

    def _preregistered(self, server: AuthorizationServerMetadata) -> ClientRegistration:
        config = self.config
        bound = [
            r.issuer
            for r in self.state.registrations.values()
            if r.source == "preregistered" and r.client_id == config.client_id
        ]
        pinned = config.client_issuer or (bound[0] if bound else None)
        if pinned is not None and pinned != server.issuer:
            raise OAuthFlowError(
                f"pre-registered credentials belong to {pinned!r}, but the server now uses "
                f"{server.issuer!r}; register this client there"
            )
        supported = server.token_endpoint_auth_methods_supported or ("client_secret_basic",)
        method = "none"
        if config.client_secret is not None:
            preferred = [m for m in ("client_secret_basic", "client_secret_post") if m in supported]
            method = preferred[0] if preferred else "client_secret_basic"
        return ClientRegistration(
            issuer=server.issuer,
            client_id=str(config.client_id),
            auth_method=method,
            client_secret=config.client_secret,
            redirect_uris=(config.redirect_uri,),
            source="preregistered",
        )

    def _register(
        self, server: AuthorizationServerMetadata, endpoint: str
    ) -> Generator[Event, Reply, ClientRegistration]:
        """RFC 7591 Dynamic Client Registration, with ``application_type`` (spec
        ``client-registration.mdx`` §Application Type and Redirect URI Constraints)."""
        config = self.config
        supported = server.token_endpoint_auth_methods_supported or ("client_secret_basic",)
        preference = ("client_secret_basic", "client_secret_post", "none")
        method = next((m for m in preference if m in supported), "none")
        document: dict[str, Any] = {
            "client_name": config.client_name,
            "redirect_uris": [config.redirect_uri],
            "grant_types": list(config.grant_types),
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": config.resolved_application_type(),
            **config.registration_metadata,
        }
        headers = (("Content-Type", _JSON), ("Accept", _JSON))
        reply = _expect_http((yield HTTPRequest("POST", endpoint, headers, codec.dumps(document))))
        if reply.status not in (200, 201):
            raise OAuthFlowError(
                f"client registration refused: HTTP {reply.status}{_oauth_error_suffix(reply)}"
            )
        data = reply.json("client registration response")
        client_id = data.get("client_id") if isinstance(data, dict) else None
        if not isinstance(client_id, str) or not client_id:
            raise OAuthFlowError("client registration response has no client_id")
        secret = data.get("client_secret")
        secret = secret if isinstance(secret, str) and secret else None
        granted = data.get("token_endpoint_auth_method")
        method = granted if isinstance(granted, str) else method
        if method in ("client_secret_basic", "client_secret_post") and secret is None:
            method = "none"
        return ClientRegistration(
            issuer=server.issuer,
            client_id=client_id,
            auth_method=method,
            client_secret=secret,
            redirect_uris=(config.redirect_uri,),
            source="dcr",
        )

    # -- authorization code grant --------------------------------------------------

    def _authorize(
        self, discovery: _Discovery, scopes: tuple[str, ...]
    ) -> Generator[Event, Reply, None]:
        server = discovery.server
        registration = yield from self._client(server)
        pkce = PKCE.generate()
        state = new_state()
        expected_issuer = server.issuer
        params = [
            ("response_type", "code"),
            ("client_id", registration.client_id),
            ("redirect_uri", self.config.redirect_uri),
            ("state", state),
            ("code_challenge", pkce.challenge),
            ("code_challenge_method", "S256"),
            ("resource", discovery.resource),
        ]
        if scopes:
            params.append(("scope", " ".join(scopes)))
        url = _with_query(server.authorization_endpoint, params)
        reply = yield Authorize(url, self.config.redirect_uri, state)
        if not isinstance(reply, AuthorizationResponse):
            raise TypeError("Authorize must be answered with an AuthorizationResponse")
        code = self._check_callback(reply.params, server, expected_issuer, state)
        form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri),
            ("code_verifier", pkce.verifier),
            ("resource", discovery.resource),
        ]
        tokens = yield from self._token_request(server.token_endpoint, registration, form)
        self._store(tokens, server.issuer, server.token_endpoint, discovery.resource, scopes)

    @staticmethod
    def _check_callback(
        params: Mapping[str, str],
        server: AuthorizationServerMetadata,
        expected_issuer: str,
        state: str,
    ) -> str:
        """RFC 9207 ``iss`` first (exact string comparison, no normalization; when it
        fails nothing else in the response is acted on or shown), then ``state``, then
        ``error``, then ``code`` (spec §Authorization Response Validation)."""
        iss = params.get("iss")
        if iss is None:
            if server.authorization_response_iss_parameter_supported:
                raise OAuthFlowError(
                    "the authorization response lacks the iss parameter the server advertises"
                )
        elif iss != expected_issuer:
            raise OAuthFlowError("the authorization response comes from another issuer")
        if params.get("state") != state:
            raise OAuthFlowError("the authorization response state does not match")
        error = params.get("error")
        if error is not None:
            raise AuthorizationDenied(error, params.get("error_description"))
        code = params.get("code")
        if not code:
            raise OAuthFlowError("the authorization response has no code")
        return code

    def _token_request(
        self,
        endpoint: str,
        registration: ClientRegistration,
        form: list[tuple[str, str]],
    ) -> Generator[Event, Reply, dict[str, Any]]:
        auth: str | None = None
        method = registration.auth_method
        secret = registration.client_secret
        if method == "client_secret_basic" and secret is not None:
            pair = f"{quote(registration.client_id, safe='')}:{quote(secret, safe='')}"
            auth = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post" and secret is not None:
            form += [("client_id", registration.client_id), ("client_secret", secret)]
        else:
            form.append(("client_id", registration.client_id))
        reply = _expect_http((yield _form_request(endpoint, form, auth)))
        data = reply.json("token response") if reply.body else None
        if reply.status != 200 or not isinstance(data, dict):
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, str):
                description = data.get("error_description") if isinstance(data, dict) else None
                raise AuthorizationDenied(
                    error, description if isinstance(description, str) else None
                )
            raise OAuthFlowError(f"the token endpoint answered HTTP {reply.status}")
        access_token = data.get("access_token")
        token_type = data.get("token_type")
        if not isinstance(access_token, str) or not access_token:
            raise OAuthFlowError("the token response has no access_token")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise OAuthFlowError("the token response is not a Bearer token")
        return data

    def _store(
        self,
        data: Mapping[str, Any],
        issuer: str,
        token_endpoint: str,
        resource: str,
        requested: tuple[str, ...],
        previous_refresh: str | None = None,
    ) -> None:
        expires_in = data.get("expires_in")
        if isinstance(expires_in, str) and expires_in.isdigit():
            expires_in = int(expires_in)  # some servers send the number as a string
        expires_at = None
        if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
            expires_at = self._clock() + float(expires_in)
        refresh = data.get("refresh_token")
        granted = data.get("scope")
        self.state.tokens[self.server_url] = TokenSet(
            resource=resource,
            issuer=issuer,
            token_endpoint=token_endpoint,
            access_token=str(data["access_token"]),
            expires_at=expires_at,
            refresh_token=refresh if isinstance(refresh, str) and refresh else previous_refresh,
            scope=parse_scope(granted) if isinstance(granted, str) else requested,
            requested_scope=tuple(s for s in requested if s != OFFLINE_ACCESS),
        )

    # -- refresh -----------------------------------------------------------------

    def _refresh(self, tokens: TokenSet) -> Generator[Event, Reply, bool]:
        """Use the refresh token at the endpoint that issued it; on failure forget the
        tokens (the next 401 starts a full authorization)."""
        registration = self.state.registrations.get(tokens.issuer)
        if registration is None or tokens.refresh_token is None:
            return False
        form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens.refresh_token),
            ("resource", tokens.resource),
        ]
        try:
            data = yield from self._token_request(tokens.token_endpoint, registration, form)
        except OAuthFlowError:
            self.state.tokens.pop(self.server_url, None)
            return False
        self._store(
            data,
            tokens.issuer,
            tokens.token_endpoint,
            tokens.resource,
            tokens.requested_scope,
            previous_refresh=tokens.refresh_token,
        )
        return True


def _expect_http(reply: Reply) -> HTTPResponse:
    if not isinstance(reply, HTTPResponse):
        raise TypeError("SendResource and HTTPRequest must be answered with an HTTPResponse")
    return reply


def _oauth_error_suffix(reply: HTTPResponse) -> str:
    try:
        data = codec.loads(reply.body)
    except Exception:
        return ""
    error = data.get("error") if isinstance(data, dict) else None
    return f" ({error})" if isinstance(error, str) else ""
