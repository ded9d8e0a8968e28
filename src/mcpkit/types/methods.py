"""THE method table: every MCP method, who sends it, in which era, and its traits.

Transports and dispatchers read their rules from here instead of hard-coding method
names: which methods exist in which era (``basic/versioning.mdx``), which results carry
cache hints (``server/utilities/caching.mdx``), which may answer ``input_required``
(``basic/patterns/mrtr.mdx`` §Supported Requests), which mirror a param into the
``Mcp-Name`` header (``basic/transports/streamable-http.mdx`` §Standard Request Headers)
and which server capability a method belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Era = Literal["modern", "legacy"]
Direction = Literal["client", "server"]
Kind = Literal["request", "notification"]

MODERN: frozenset[Era] = frozenset({"modern"})
LEGACY: frozenset[Era] = frozenset({"legacy"})
BOTH: frozenset[Era] = frozenset({"modern", "legacy"})


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One method's traits."""

    name: str
    kind: Kind
    sender: Direction
    eras: frozenset[Era]
    cacheable: bool = False
    paginated: bool = False
    input_required: bool = False
    name_param: str | None = None
    capability: str | None = None


_ALL: tuple[MethodSpec, ...] = (
    # Client -> server requests.
    MethodSpec("server/discover", "request", "client", MODERN, cacheable=True),
    MethodSpec("initialize", "request", "client", LEGACY),
    MethodSpec("ping", "request", "client", LEGACY),
    MethodSpec(
        "tools/list", "request", "client", BOTH, cacheable=True, paginated=True, capability="tools"
    ),
    MethodSpec(
        "tools/call",
        "request",
        "client",
        BOTH,
        input_required=True,
        name_param="name",
        capability="tools",
    ),
    MethodSpec(
        "resources/list",
        "request",
        "client",
        BOTH,
        cacheable=True,
        paginated=True,
        capability="resources",
    ),
    MethodSpec(
        "resources/templates/list",
        "request",
        "client",
        BOTH,
        cacheable=True,
        paginated=True,
        capability="resources",
    ),
    MethodSpec(
        "resources/read",
        "request",
        "client",
        BOTH,
        cacheable=True,
        input_required=True,
        name_param="uri",
        capability="resources",
    ),
    MethodSpec("resources/subscribe", "request", "client", LEGACY, capability="resources"),
    MethodSpec("resources/unsubscribe", "request", "client", LEGACY, capability="resources"),
    MethodSpec(
        "prompts/list",
        "request",
        "client",
        BOTH,
        cacheable=True,
        paginated=True,
        capability="prompts",
    ),
    MethodSpec(
        "prompts/get",
        "request",
        "client",
        BOTH,
        input_required=True,
        name_param="name",
        capability="prompts",
    ),
    MethodSpec("completion/complete", "request", "client", BOTH, capability="completions"),
    MethodSpec("logging/setLevel", "request", "client", LEGACY, capability="logging"),
    MethodSpec("subscriptions/listen", "request", "client", MODERN),
    # Client -> server notifications.
    MethodSpec("notifications/cancelled", "notification", "client", BOTH),
    MethodSpec("notifications/initialized", "notification", "client", LEGACY),
    MethodSpec("notifications/roots/list_changed", "notification", "client", LEGACY),
    MethodSpec("notifications/progress", "notification", "client", LEGACY),
    # Server -> client requests (legacy sessions only; modern servers use input_required).
    MethodSpec("sampling/createMessage", "request", "server", LEGACY),
    MethodSpec("elicitation/create", "request", "server", LEGACY),
    MethodSpec("roots/list", "request", "server", LEGACY),
    # Server -> client notifications.
    MethodSpec("notifications/progress", "notification", "server", BOTH),
    MethodSpec("notifications/message", "notification", "server", BOTH),
    MethodSpec("notifications/tools/list_changed", "notification", "server", BOTH),
    MethodSpec("notifications/prompts/list_changed", "notification", "server", BOTH),
    MethodSpec("notifications/resources/list_changed", "notification", "server", BOTH),
    MethodSpec("notifications/resources/updated", "notification", "server", BOTH),
    MethodSpec("notifications/subscriptions/acknowledged", "notification", "server", MODERN),
    MethodSpec("notifications/elicitation/complete", "notification", "server", LEGACY),
)

CLIENT_REQUESTS: dict[str, MethodSpec] = {
    m.name: m for m in _ALL if m.sender == "client" and m.kind == "request"
}

__all__ = ["CLIENT_REQUESTS", "MethodSpec", "client_request"]


def client_request(method: str, era: Era = "modern") -> MethodSpec | None:
    """The spec of a client request valid in ``era``, or None."""
    spec = CLIENT_REQUESTS.get(method)
    if spec is None or era not in spec.eras:
        return None
    return spec
