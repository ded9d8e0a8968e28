"""``subscriptions/listen``: a long-lived stream of change notifications
(spec ``basic/patterns/subscriptions.mdx``).

The handler subscribes to the server's :class:`~mcpkit.server.bus.Bus` *before* it
acknowledges, so no change made after the acknowledgement can be missed; then it sends
``notifications/subscriptions/acknowledged`` with the filter it honours (only the types
the server supports: ``toolsListChanged`` needs tools, and so on) and forwards every
matching event, each carrying ``io.modelcontextprotocol/subscriptionId`` (the listen
request's JSON-RPC id) in ``_meta``. Types the client did not ask for are never sent;
``resources/updated`` goes only to streams that listed the URI (or a parent of it,
``.../dir/`` or ``.../dir`` for ``.../dir/file``).

The stream ends when the client cancels (task cancellation: nothing more is sent, not
even a response) or when the server shuts down (:meth:`~mcpkit.Server.shutdown`): then
the request is answered with a result carrying the subscriptionId, a graceful end the
client need not reconnect after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit.errors import InvalidParams
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.meta import SUBSCRIPTION_ID
from mcpkit.server.bus import (
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
    Event,
)

if TYPE_CHECKING:
    from mcpkit.server.app import Server
    from mcpkit.server.context import Context

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

# filter field -> (server capability it needs, the event it selects)
_FLAGS: dict[str, tuple[str, str]] = {
    "toolsListChanged": ("tools", TOOLS_CHANGED),
    "promptsListChanged": ("prompts", PROMPTS_CHANGED),
    "resourcesListChanged": ("resources", RESOURCES_CHANGED),
}
_MAX_URIS = 1000

__all__ = ["ACKNOWLEDGED", "Filter", "listen"]


class Filter:
    """The notification types one stream receives."""

    __slots__ = ("methods", "uris", "wire")

    def __init__(self, requested: Any, capabilities: dict[str, Any]) -> None:
        if type(requested) is not dict:
            raise InvalidParams("subscriptions/listen needs a notifications object")
        honoured: dict[str, Any] = {}
        methods: set[str] = set()
        for field, (capability, method) in _FLAGS.items():
            value = requested.get(field)
            if value is not None and type(value) is not bool:
                raise InvalidParams(f"notifications.{field} must be a boolean")
            if value and capability in capabilities:
                honoured[field] = True
                methods.add(method)
        uris = requested.get("resourceSubscriptions")
        if uris is not None:
            if type(uris) is not list or any(type(uri) is not str for uri in uris):
                raise InvalidParams("notifications.resourceSubscriptions must be an array of URIs")
            if len(uris) > _MAX_URIS:
                raise InvalidParams(f"at most {_MAX_URIS} resourceSubscriptions per stream")
            if uris and "resources" in capabilities:
                honoured["resourceSubscriptions"] = list(dict.fromkeys(uris))
        self.methods = frozenset(methods)
        self.uris = frozenset(honoured.get("resourceSubscriptions", ()))
        self.wire = honoured

    def accepts(self, event: Event) -> bool:
        if event.method == RESOURCE_UPDATED:
            return event.uri is not None and self._watches(event.uri)
        return event.method in self.methods

    def _watches(self, uri: str) -> bool:
        if uri in self.uris:
            return True
        return any(
            uri.startswith(parent if parent.endswith("/") else parent + "/") for parent in self.uris
        )


async def listen(server: Server, context: Context, params: dict[str, Any]) -> dict[str, Any]:
    """Serve one listen stream until it is cancelled or the server shuts down."""
    stream_filter = Filter(params.get("notifications"), server.capabilities())
    subscription_id = context.request_id
    tag = {SUBSCRIPTION_ID: subscription_id}
    channel = context.channel
    async with server.open_subscription(stream_filter.accepts) as subscription:
        ack = {"_meta": tag, "notifications": stream_filter.wire}
        await channel.send(jsonrpc.notification(ACKNOWLEDGED, ack))
        async for event in subscription:
            body: dict[str, Any] = {"_meta": tag}
            if event.uri is not None:
                body["uri"] = event.uri
            await channel.send(jsonrpc.notification(event.method, body))
    return {"_meta": dict(tag)}
