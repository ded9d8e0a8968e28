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

:class:`Subscriptions` is the client's side of all this: it opens and closes them, routes
incoming notifications to them, and re-opens or ends them when the connection is lost.

>>> async with client.subscribe(tools=True) as changes:
...     async for note in changes:
...         print(note["method"])
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcpkit.errors import (
    ConnectionClosed,
    ProtocolError,
    RequestId,
    RequestTimeout,
    ServerMisbehaved,
    TransportError,
)
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import ErrorResponse

if TYPE_CHECKING:
    from mcpkit.client.client import Client

logger = logging.getLogger("mcpkit.client")

__all__ = ["Subscription", "Subscriptions", "notification_filter", "wanted"]

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
        await self.client._subscriptions.open(self)

    async def close(self) -> None:
        """Stop listening (closes the stream or cancels the listen request)."""
        if self._closed:
            return
        self._closed = True
        await self.client._subscriptions.close(self)
        self._queue.put_nowait(_END)

    # -- called by the client ---------------------------------------------------------

    def _acknowledge(self, notifications: Any) -> None:
        self.acknowledged = dict(notifications) if isinstance(notifications, Mapping) else {}
        self._ack.set()

    def _deliver(self, method: str, params: Mapping[str, Any] | None) -> None:
        self._queue.put_nowait({"method": method, "params": dict(params or {})})

    def _end(self, error: BaseException | None = None) -> None:
        self._queue.put_nowait(error if error is not None else _END)


class Subscriptions:
    """A client's open subscriptions: modern ones by their listen request's id, legacy
    ones as a set (a legacy session tags nothing, so each gets what its filter wants)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.modern: dict[RequestId, Subscription] = {}
        self.legacy: set[Subscription] = set()

    # -- opening and closing ------------------------------------------------------------

    async def open(self, sub: Subscription) -> None:
        """``subscriptions/listen`` until acknowledged (modern), or subscribe (legacy)."""
        client = self.client
        await client._ensure_ready()
        if client.era == "legacy":
            await self._open_legacy(sub)
            return
        request_id = next(client._ids)
        sub.request_id = request_id
        sub._ack.clear()
        future = client._expect_reply(request_id, "subscriptions/listen")
        self.modern[request_id] = sub
        future.add_done_callback(lambda done: self._listen_ended(sub, request_id, done))
        params = {"notifications": sub.filter, "_meta": client._meta()}
        await client._transmit(jsonrpc.request(request_id, "subscriptions/listen", params), None)
        ack: asyncio.Future[Any] = asyncio.ensure_future(sub._ack.wait())
        waiters: list[asyncio.Future[Any]] = [ack, future]
        try:
            await asyncio.wait(waiters, timeout=sub.ack_timeout, return_when="FIRST_COMPLETED")
        finally:
            ack.cancel()
        if sub._ack.is_set():
            return
        if future.done() and not future.cancelled():
            self.modern.pop(request_id, None)
            exc = future.exception()
            if exc is not None:
                raise exc
            reply = future.result()
            if isinstance(reply, ErrorResponse):
                raise reply.exception
            raise ServerMisbehaved("subscriptions/listen ended before it was acknowledged")
        await self.close(sub)
        raise RequestTimeout("subscriptions/listen was not acknowledged in time")

    def _listen_ended(
        self, sub: Subscription, request_id: RequestId, future: asyncio.Future[Any]
    ) -> None:
        client = self.client
        client._pending.pop(request_id, None)
        if self.modern.get(request_id) is not sub:
            return
        if sub.closed or client._closing:
            self.modern.pop(request_id, None)
            return
        if not sub._ack.is_set():
            return  # open() reports it
        self.modern.pop(request_id, None)
        error = None if future.cancelled() else future.exception()
        if error is None and not future.cancelled():
            reply = future.result()
            if isinstance(reply, ErrorResponse):
                sub._end(reply.exception)
                return
            sub.ended_gracefully = True
            sub._end()
            return
        if isinstance(error, TransportError) or future.cancelled():
            client._spawn(self._reopen(sub))
            return
        sub._end(error)

    async def _reopen(self, sub: Subscription) -> None:
        """Re-establish a subscription after its stream or process was lost."""
        client = self.client
        delay = 0.1
        for _attempt in range(5):
            if sub.closed or client._closing:
                return
            try:
                await client._ready.wait()
                if client._dead is not None:
                    sub._end(client._dead)
                    return
                sub.reconnects += 1
                await self.open(sub)
                return
            except (TransportError, RequestTimeout) as exc:
                logger.info("re-opening a subscription failed: %s", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            except ProtocolError as exc:
                sub._end(exc)
                return
        sub._end(ConnectionClosed("the subscription could not be re-established"))

    async def close(self, sub: Subscription) -> None:
        """Stop a subscription: cancel its listen request, or unsubscribe (legacy)."""
        if sub in self.legacy:
            self.legacy.discard(sub)
            await self._unsubscribe_resources(sub)
            return
        request_id = sub.request_id
        if request_id is None or self.modern.pop(request_id, None) is None:
            return
        pending = self.client._pending.pop(request_id, None)
        if pending is not None and not pending.future.done():
            pending.future.cancel()
        await self.client._cancel_on_server(request_id, "subscription closed")

    async def _open_legacy(self, sub: Subscription) -> None:
        """Honour what the session's capabilities allow: list changes arrive unasked,
        resource updates after ``resources/subscribe``."""
        client = self.client
        caps = client.server_capabilities
        honored: dict[str, Any] = {}
        for field_name, capability in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            cap = caps.get(capability)
            if sub.filter.get(field_name) and isinstance(cap, dict) and cap.get("listChanged"):
                honored[field_name] = True
        uris = sub.filter.get("resourceSubscriptions") or []
        resources = caps.get("resources")
        if uris and isinstance(resources, dict) and resources.get("subscribe"):
            for uri in uris:
                await client.request("resources/subscribe", {"uri": uri})
            honored["resourceSubscriptions"] = list(uris)
        self.legacy.add(sub)
        client._open_listen_stream()
        sub._acknowledge(honored)

    async def _unsubscribe_resources(self, sub: Subscription) -> None:
        uris = (sub.acknowledged or {}).get("resourceSubscriptions") or []
        for uri in uris:
            with contextlib.suppress(ProtocolError, TransportError, RequestTimeout):
                await self.client.request("resources/unsubscribe", {"uri": uri}, timeout=5.0)

    # -- what the server sends ----------------------------------------------------------

    def acknowledged(self, subscription_id: Any, notifications: Any) -> None:
        """``notifications/subscriptions/acknowledged`` for a listen request."""
        sub = self.modern.get(subscription_id) if subscription_id is not None else None
        if sub is not None:
            sub._acknowledge(notifications)

    def route(self, method: str, params: dict[str, Any], subscription_id: Any) -> None:
        """A change notification: to the listen stream it is tagged with (modern), or to
        every legacy subscription that wants it."""
        if subscription_id is not None:
            sub = self.modern.get(subscription_id)
            if sub is not None and wanted(sub.filter, method, params):
                sub._deliver(method, params)
            return
        for sub in list(self.legacy):
            if wanted(sub.filter, method, params):
                sub._deliver(method, params)

    def server_cancelled(self, params: dict[str, Any]) -> None:
        """The server tore down a subscription (the only thing it may cancel)."""
        request_id = params.get("requestId")
        sub = self.modern.pop(request_id, None) if isinstance(request_id, str | int) else None
        if sub is not None:
            pending = self.client._pending.pop(request_id, None) if request_id is not None else None
            if pending is not None and not pending.future.done():
                pending.future.cancel()
            sub.ended_gracefully = True
            sub._end()

    # -- losing the connection ----------------------------------------------------------

    def resubscribe_legacy(self) -> None:
        """After a restart the new session knows none of them: subscribe again."""
        for sub in list(self.legacy):
            self.client._spawn(self._resubscribe_legacy(sub))

    async def _resubscribe_legacy(self, sub: Subscription) -> None:
        self.legacy.discard(sub)
        sub.reconnects += 1
        try:
            await self._open_legacy(sub)
        except (TransportError, ProtocolError, RequestTimeout) as exc:
            sub._end(exc)

    def end_all(self, error: BaseException | None = None) -> None:
        """End every subscription (with ``error``, or as a normal end)."""
        for sub in [*self.modern.values(), *self.legacy]:
            sub._end(error)
        self.modern.clear()
        self.legacy.clear()
