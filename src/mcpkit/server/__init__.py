"""MCP servers: registration, dispatch, the handler context, multi round-trip input,
subscriptions and the bus behind them."""

from mcpkit.server.app import Server
from mcpkit.server.bus import Bus, BusSubscription, Event, InMemoryBus
from mcpkit.server.caching import CacheHint, CachePolicy
from mcpkit.server.completion import Completion
from mcpkit.server.context import Context
from mcpkit.server.headers import Header, HeaderAnnotationError
from mcpkit.server.mrtr import InputStrategy
from mcpkit.server.uri_template import UriTemplate
from mcpkit.types.inputs import ElicitResult, Root, SamplingResult

__all__ = [
    "Bus",
    "BusSubscription",
    "CacheHint",
    "CachePolicy",
    "Completion",
    "Context",
    "ElicitResult",
    "Event",
    "Header",
    "HeaderAnnotationError",
    "InMemoryBus",
    "InputStrategy",
    "Root",
    "SamplingResult",
    "Server",
    "UriTemplate",
]
