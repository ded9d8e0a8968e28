"""OAuth 2.1 for MCP (spec ``basic/authorization/``): the resource server and the client.

Resource server: :mod:`mcpkit.auth.resource` (metadata, challenges, scope checks, an ASGI
guard) and :mod:`mcpkit.auth.verifiers` (JWT/JWKS and introspection). Client: the
sans-I/O flow in :mod:`mcpkit.auth.flow`, its httpx adapter in :mod:`mcpkit.auth.client`,
token stores in :mod:`mcpkit.auth.tokens` and redirect handlers in
:mod:`mcpkit.auth.redirect`. Shared pieces: :mod:`mcpkit.auth.metadata`,
:mod:`mcpkit.auth.pkce`, :mod:`mcpkit.auth.errors`.

Needs the ``auth`` extra (PyJWT with ``cryptography``, httpx).
"""
