"""The public API is exactly what ``mcpkit`` re-exports (design §2: explicit re-exports,
checked by a test). Adding or removing a name is a deliberate change to this list."""

from __future__ import annotations

import mcpkit

EXPECTED = [
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


def test_all_is_exactly_the_expected_list() -> None:
    assert sorted(mcpkit.__all__) == sorted(EXPECTED)
    assert len(set(mcpkit.__all__)) == len(mcpkit.__all__)


def test_every_exported_name_resolves() -> None:
    for name in mcpkit.__all__:
        assert getattr(mcpkit, name) is not None, name


def test_a_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from mcpkit import *", namespace)
    assert sorted(name for name in namespace if name != "__builtins__") == sorted(EXPECTED)


def test_the_exported_errors_are_the_ones_in_mcpkit_errors() -> None:
    for name in mcpkit.__all__:
        value = getattr(mcpkit, name)
        if isinstance(value, type) and issubclass(value, mcpkit.MCPError):
            assert getattr(mcpkit.errors, name) is value


def test_the_version_is_a_non_empty_string() -> None:
    assert isinstance(mcpkit.__version__, str)
    assert mcpkit.__version__
