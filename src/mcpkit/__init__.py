"""mcpkit: the Model Context Protocol for Python.

The public API is exactly what this module re-exports (a test checks the list).
"""

from mcpkit import errors
from mcpkit._version import __version__
from mcpkit.client.client import CallToolResult, Client
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
    ToolError,
    TransportError,
    UnsupportedProtocolVersion,
)
from mcpkit.server.app import Server
from mcpkit.server.caching import CacheHint, CachePolicy
from mcpkit.server.context import Context
from mcpkit.types import content
from mcpkit.types.content import Content, ToolResult

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
    "ToolError",
    "ToolResult",
    "TransportError",
    "UnsupportedProtocolVersion",
    "__version__",
    "content",
    "errors",
]
