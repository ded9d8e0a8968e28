"""The event bus that feeds ``subscriptions/listen`` streams (design §3.4).

A server publishes an :class:`Event` whenever its tools, prompts or resources change
(``notifications/*/list_changed``) or a resource's contents change
(``notifications/resources/updated``); every open listen stream reads the events it asked
for from a subscription. :class:`Bus` is the interface; :class:`InMemoryBus` serves one
process. A bus shared between replicas (Redis pub/sub) implements the same interface.

Publishing never blocks and never awaits, so registration code (which is synchronous)
can publish, from the event loop or from a worker thread running a sync tool. A
subscription delivers each distinct pending event once: a burst of identical
``list_changed`` events reaches a slow listener as one, which also bounds the memory a
stalled stream can hold.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"

__all__ = [
    "PROMPTS_CHANGED",
    "RESOURCES_CHANGED",
    "RESOURCE_UPDATED",
    "TOOLS_CHANGED",
    "Bus",
    "BusSubscription",
    "Event",
    "InMemoryBus",
]


@dataclass(frozen=True, slots=True)
class Event:
    """Something a listener may be told about: a notification method, and a URI for updates."""

    method: str
    uri: str | None = None


class BusSubscription(Protocol):
    """The events one listener receives, in order, until it is closed."""

    def __aiter__(self) -> AsyncIterator[Event]: ...

    def close(self) -> None:
        """End the subscription: iteration stops and nothing more is delivered."""
        ...

    async def __aenter__(self) -> BusSubscription: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Bus(Protocol):
    """Where events are published and from where listeners read them."""

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every current subscriber that accepts it; never blocks."""
        ...

    def subscribe(self, accepts: Callable[[Event], bool]) -> BusSubscription:
        """Start receiving the events ``accepts`` lets through, from this moment on.

        Must be called from a running event loop; the subscription belongs to that loop.
        """
        ...


class _MemorySubscription:
    """One listener of an :class:`InMemoryBus`, bound to the loop that created it."""

    def __init__(self, bus: InMemoryBus, accepts: Callable[[Event], bool]) -> None:
        self._bus = bus
        self._accepts = accepts
        self._loop = asyncio.get_running_loop()
        self._pending: dict[Event, None] = {}
        self._wakeup = asyncio.Event()
        self._closed = False

    def offer(self, event: Event) -> None:
        """Called by the bus from any thread."""
        if self._closed or not self._accepts(event):
            return
        self._on_loop(self._push, event)

    def _push(self, event: Event) -> None:
        if not self._closed:
            self._pending[event] = None
            self._wakeup.set()

    def close(self) -> None:
        """End iteration; safe to call from any thread and more than once."""
        if self._closed:
            return
        self._closed = True
        self._bus._remove(self)
        self._on_loop(self._wakeup.set)

    def _on_loop(self, callback: Callable[..., None], *args: Any) -> None:
        """Run ``callback`` on the subscription's loop: at once when called from it,
        else as soon as that loop can (from any thread); never on a closed loop."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            callback(*args)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(callback, *args)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        while True:
            while not self._pending and not self._closed:
                self._wakeup.clear()
                await self._wakeup.wait()
            if self._closed:
                return
            event = next(iter(self._pending))
            del self._pending[event]
            yield event

    async def __aenter__(self) -> _MemorySubscription:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class InMemoryBus:
    """A bus for one process: publish hands events straight to the subscribers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: tuple[_MemorySubscription, ...] = ()

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def publish(self, event: Event) -> None:
        for subscriber in self._subscribers:
            subscriber.offer(event)

    def subscribe(self, accepts: Callable[[Event], bool]) -> _MemorySubscription:
        subscription = _MemorySubscription(self, accepts)
        with self._lock:
            self._subscribers = (*self._subscribers, subscription)
        return subscription

    def _remove(self, subscription: _MemorySubscription) -> None:
        with self._lock:
            self._subscribers = tuple(s for s in self._subscribers if s is not subscription)
