"""mcpkit: the Model Context Protocol for Python.

The public API is exactly what this module re-exports (a test checks the list). Names
are imported on first use, so a stdio server that only needs :class:`Server` never
pays for the client (or the client for the server): start-up time matters for servers
that hosts spawn on demand.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpkit import errors
from mcpkit._version import __version__
from mcpkit.errors import (
    ConnectionClosed,
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    RequestTimeout,
    ServerMisbehaved,
    ToolError,
    TransportError,
    UnsupportedProtocolVersion,
)

if TYPE_CHECKING:
    from mcpkit.client.client import CallToolResult, Client
    from mcpkit.server.app import Server
    from mcpkit.server.caching import CacheHint, CachePolicy
    from mcpkit.server.context import Context
    from mcpkit.types import content
    from mcpkit.types.content import Content, ToolResult

_LAZY: dict[str, tuple[str, str | None]] = {
    "CallToolResult": ("mcpkit.client.client", "CallToolResult"),
    "Client": ("mcpkit.client.client", "Client"),
    "Server": ("mcpkit.server.app", "Server"),
    "CacheHint": ("mcpkit.server.caching", "CacheHint"),
    "CachePolicy": ("mcpkit.server.caching", "CachePolicy"),
    "Context": ("mcpkit.server.context", "Context"),
    "content": ("mcpkit.types.content", None),
    "Content": ("mcpkit.types.content", "Content"),
    "ToolResult": ("mcpkit.types.content", "ToolResult"),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CacheHint",
    "CachePolicy",
    "CallToolResult",
    "Client",
    "ConnectionClosed",
    "Content",
    "Context",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "ParseError",
    "ProtocolError",
    "RequestTimeout",
    "Server",
    "ServerMisbehaved",
    "ToolError",
    "ToolResult",
    "TransportError",
    "UnsupportedProtocolVersion",
    "__version__",
    "content",
    "errors",
]
