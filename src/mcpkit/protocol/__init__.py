"""The sans-I/O protocol core: bytes and dicts in, typed messages and bytes out.

Nothing here performs I/O or awaits; every rule is testable without an event loop.
"""

from mcpkit.protocol import codec, framing, jsonrpc, meta, versions

__all__ = ["codec", "framing", "jsonrpc", "meta", "versions"]
