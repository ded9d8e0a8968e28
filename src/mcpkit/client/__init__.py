"""MCP clients: :class:`Client` and what it is made of."""

from mcpkit.client.caching import ResponseCache
from mcpkit.client.client import CallToolResult, Client, ClientTransport, RestartPolicy
from mcpkit.client.handlers import Handlers, accept, apply_defaults, cancel, decline
from mcpkit.client.mrtr import ServerMisbehaved
from mcpkit.client.probe import EraCache, Verdict
from mcpkit.client.subscriptions import Subscription
from mcpkit.transports.http_client import AuthorizationRequired, HttpStatusError

__all__ = [
    "AuthorizationRequired",
    "CallToolResult",
    "Client",
    "ClientTransport",
    "EraCache",
    "Handlers",
    "HttpStatusError",
    "ResponseCache",
    "RestartPolicy",
    "ServerMisbehaved",
    "Subscription",
    "Verdict",
    "accept",
    "apply_defaults",
    "cancel",
    "decline",
]
