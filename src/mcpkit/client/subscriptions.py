"""Change notifications as an async iterator (spec ``basic/patterns/subscriptions.mdx``).

On a modern server a :class:`Subscription` is one long-lived ``subscriptions/listen``
request: the server acknowledges it with ``notifications/subscriptions/acknowledged`` and
then sends only the notification types the filter asked for, each tagged with
``io.modelcontextprotocol/subscriptionId`` = the listen request's id. The client routes
them here. A graceful end (the listen request's response) stops the iteration; an abrupt
one (the stream or the process died) re-opens the subscription, since the server keeps
no subscription state across connections.

On a legacy session the same object collects the list-changed and resource-updated
notifications the session delivers, after ``resources/subscribe`` for the requested URIs.

>>> async with client.subscribe(tools=True) as changes:
...     async for note in changes:
...         print(note["method"])
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.errors import RequestId

if TYPE_CHECKING:
    from mcpkit.client.client import Client

__all__ = ["Subscription", "notification_filter", "wanted"]

_END = object()

# notification method -> the filter field that opts in to it
FILTER_FIELDS: dict[str, str] = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


def notification_filter(
    *,
    tools: bool = False,
    prompts: bool = False,
    resources: bool = False,
    resource_uris: Sequence[str] = (),
) -> dict[str, Any]:
    """A ``SubscriptionFilter`` with only the fields that are switched on."""
    result: dict[str, Any] = {}
    if tools:
        result["toolsListChanged"] = True
    if prompts:
        result["promptsListChanged"] = True
    if resources:
        result["resourcesListChanged"] = True
    if resource_uris:
        result["resourceSubscriptions"] = list(resource_uris)
    return result


def wanted(filter_: Mapping[str, Any], method: str, params: Mapping[str, Any] | None) -> bool:
    """Does ``filter_`` ask for this notification?"""
    field = FILTER_FIELDS.get(method)
    if field is not None:
        return filter_.get(field) is True
    if method == "notifications/resources/updated":
        uri = params.get("uri") if params else None
        uris = filter_.get("resourceSubscriptions")
        return isinstance(uris, list) and uri in uris
    return False


class Subscription:
    """An open stream of change notifications; iterate it, close it when done."""

    def __init__(self, client: Client, filter_: dict[str, Any], ack_timeout: float) -> None:
        self.client = client
        self.filter = filter_
        self.ack_timeout = ack_timeout
        self.request_id: RequestId | None = None
        self.acknowledged: dict[str, Any] | None = None
        self.reconnects = 0
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._ack = asyncio.Event()
        self._closed = False
        self.ended_gracefully = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def __aenter__(self) -> Subscription:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> dict[str, Any]:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is _END:
            self._closed = True
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._closed = True
            raise item
        result: dict[str, Any] = item
        return result

    async def next(self, timeout: float | None = None) -> dict[str, Any]:
        """The next notification, waiting at most ``timeout`` seconds."""
        return await asyncio.wait_for(self.__anext__(), timeout)

    async def open(self) -> None:
        """Start listening and wait for the acknowledgement (modern) or subscribe (legacy)."""
        await self.client._open_subscription(self)

    async def close(self) -> None:
        """Stop listening (closes the stream or cancels the listen request)."""
        if self._closed:
            return
        self._closed = True
        await self.client._close_subscription(self)
        self._queue.put_nowait(_END)

    # -- called by the client ---------------------------------------------------------

    def _acknowledge(self, notifications: Any) -> None:
        self.acknowledged = dict(notifications) if isinstance(notifications, Mapping) else {}
        self._ack.set()

    def _deliver(self, method: str, params: Mapping[str, Any] | None) -> None:
        self._queue.put_nowait({"method": method, "params": dict(params or {})})

    def _end(self, error: BaseException | None = None) -> None:
        self._queue.put_nowait(error if error is not None else _END)
