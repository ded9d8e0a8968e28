"""The client's response cache (spec ``server/utilities/caching.mdx``).

A cacheable result (``server/discover``, the list methods, ``resources/read``) is kept
for its ``ttlMs`` (absent or negative means 0: immediately stale) under its method and
the parameters that shape it. ``cacheScope: "public"`` entries may be shared by every
client holding the same :class:`ResponseCache`; ``"private"`` entries are kept per
authorization context and never served to another one. A list-changed notification
invalidates the matching lists at once, ``notifications/resources/updated`` the reads of
that URI. Results of multi round-trip retries are never stored (the caller decides).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.protocol import codec
from mcpkit.types.methods import CLIENT_REQUESTS

__all__ = ["CacheEntry", "ResponseCache", "cache_key"]

CACHEABLE = frozenset(name for name, spec in CLIENT_REQUESTS.items() if spec.cacheable)

# Which cached methods a notification makes stale.
INVALIDATES: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}

DEFAULT_MAX_ENTRIES = 1024


def cache_key(method: str, params: Mapping[str, Any] | None) -> str:
    """The method plus every parameter except ``_meta``, canonically encoded."""
    shaped = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return method + "\0" + codec.dumps_canonical(shaped).decode()


@dataclass(slots=True)
class CacheEntry:
    result: dict[str, Any]
    expires: float
    method: str
    uri: str | None


class ResponseCache:
    """Fresh results by key; public entries shared, private ones per auth context."""

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.clock = clock
        self._entries: dict[tuple[str, str], CacheEntry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, method: str, params: Mapping[str, Any] | None, context: str = ""
    ) -> dict[str, Any] | None:
        """A fresh cached result for this request, or None."""
        key = cache_key(method, params)
        now = self.clock()
        for partition in (context, ""):
            entry = self._entries.get((partition, key))
            if entry is None:
                continue
            if now < entry.expires:
                return entry.result
            del self._entries[(partition, key)]
        return None

    def put(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        result: dict[str, Any],
        context: str = "",
    ) -> bool:
        """Store a complete result if its hints make it fresh for some time."""
        if method not in CACHEABLE or result.get("resultType", "complete") != "complete":
            return False
        ttl = result.get("ttlMs")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl <= 0:
            return False
        scope = result.get("cacheScope")
        partition = "" if scope == "public" else context
        if len(self._entries) >= self.max_entries:
            self._evict()
        uri = params.get("uri") if params else None
        self._entries[(partition, cache_key(method, params))] = CacheEntry(
            result, self.clock() + ttl / 1000, method, uri if isinstance(uri, str) else None
        )
        return True

    def invalidate(self, method: str, uri: str | None = None) -> int:
        """Drop every entry of ``method`` (only those for ``uri`` when given)."""
        doomed = [
            key
            for key, entry in self._entries.items()
            if entry.method == method and (uri is None or entry.uri == uri)
        ]
        for key in doomed:
            del self._entries[key]
        return len(doomed)

    def notify(self, notification: str, params: Mapping[str, Any] | None = None) -> int:
        """Apply a server notification: list changes and resource updates invalidate."""
        if notification == "notifications/resources/updated":
            uri = params.get("uri") if params else None
            return self.invalidate("resources/read", uri if isinstance(uri, str) else None)
        return sum(self.invalidate(method) for method in INVALIDATES.get(notification, ()))

    def clear(self) -> None:
        self._entries.clear()

    def _evict(self) -> None:
        now = self.clock()
        for key in [k for k, e in self._entries.items() if e.expires <= now]:
            del self._entries[key]
        while len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]
