"""Wire shapes and the method table."""

from mcpkit.types.methods import CLIENT_REQUESTS, MethodSpec, client_request

__all__ = ["CLIENT_REQUESTS", "MethodSpec", "client_request"]
