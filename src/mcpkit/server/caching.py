"""Cache hints for cacheable results (spec ``server/utilities/caching.mdx``).

Every complete result of ``server/discover``, the list methods and ``resources/read``
carries ``ttlMs`` (an integer >= 0) and ``cacheScope`` (``"public"`` or ``"private"``).
A :class:`CachePolicy` sets them per server, with overrides per method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

CacheScope = Literal["public", "private"]

__all__ = ["CacheHint", "CachePolicy", "CacheScope"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """How long a result stays fresh and who may share it."""

    ttl_ms: int = 0
    scope: CacheScope = "public"

    def __post_init__(self) -> None:
        if not isinstance(self.ttl_ms, int) or isinstance(self.ttl_ms, bool) or self.ttl_ms < 0:
            raise ValueError("ttl_ms must be an integer >= 0")
        if self.scope not in ("public", "private"):
            raise ValueError('scope must be "public" or "private"')


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """A default hint plus per-method overrides.

    The defaults are deliberately conservative: lists are fresh for no time (clients
    re-fetch or listen for list-changed notifications) and ``resources/read`` is
    private, since resource contents often depend on who asks.
    """

    default: CacheHint = CacheHint(0, "public")
    per_method: Mapping[str, CacheHint] = field(
        default_factory=lambda: {"resources/read": CacheHint(0, "private")}
    )

    def hint(self, method: str) -> CacheHint:
        return self.per_method.get(method, self.default)

    def with_method(self, method: str, hint: CacheHint) -> CachePolicy:
        return CachePolicy(self.default, {**self.per_method, method: hint})
