"""Raw-wire helpers for legacy sessions (revision 2025-11-25 and earlier).

A legacy peer speaks the ``initialize`` handshake and plain requests without modern
``_meta``. Every message the server sends it is validated against the **2025-11-25**
JSON Schema (``schema.json`` of that revision, through a local registry), with the
result type picked from the request method as the conformance harness does, and every
result is checked for fields only the modern revision has (``resultType``, ``ttlMs``,
``cacheScope``). Server-to-client requests (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) are validated too, and the test answers them
with :meth:`LegacyPeer.answer`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcpkit.transports.base import ServerApp

from .wire import ROOT, MemoryPeer, SpecSchema, StdioPeer, memory_peer, stdio_peer

LEGACY_SCHEMA_PATH = ROOT.parent / "shared" / "spec" / "2025-11-25" / "schema" / "schema.json"
LATEST_LEGACY = "2025-11-25"
CLIENT_INFO = {"name": "legacy-wire-tests", "version": "1.0.0"}
MODERN_ONLY_FIELDS = ("resultType", "ttlMs", "cacheScope", "inputRequests", "requestState")

_RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}
_SERVER_MESSAGES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/cancelled": "CancelledNotification",
    "sampling/createMessage": "CreateMessageRequest",
    "elicitation/create": "ElicitRequest",
    "roots/list": "ListRootsRequest",
}

__all__ = [
    "CLIENT_INFO",
    "LATEST_LEGACY",
    "LegacyMemoryPeer",
    "LegacyPeer",
    "LegacySchema",
    "LegacyStdioPeer",
    "legacy_memory_peer",
    "legacy_schema",
    "legacy_stdio_peer",
]


class LegacySchema(SpecSchema):
    """The 2025-11-25 schema, checking what a legacy session's server may send."""

    def __init__(self) -> None:
        super().__init__(LEGACY_SCHEMA_PATH)

    def check_result(self, method: str, message: dict[str, Any]) -> None:
        if "error" in message:
            self.check("JSONRPCErrorResponse", message)
            return
        self.check("JSONRPCResultResponse", message)
        result = message["result"]
        self.check(_RESULTS[method], result)
        leaked = [field for field in MODERN_ONLY_FIELDS if field in result]
        assert not leaked, f"a legacy {method} result carries {leaked}: {result}"

    def check_server_message(self, message: dict[str, Any]) -> None:
        method = message["method"]
        self.check("JSONRPCRequest" if "id" in message else "JSONRPCNotification", message)
        self.check(_SERVER_MESSAGES[method], message)


@functools.cache
def legacy_schema() -> LegacySchema:
    """The 2025-11-25 schema, loaded once for the whole run."""
    return LegacySchema()


class LegacyPeer:
    """What a legacy peer adds to a raw-wire peer: the handshake, plain requests, and
    answers to the server's own requests. Mixed into the memory and stdio peers."""

    legacy: LegacySchema
    modern_ids: set[Any]
    spec: Any
    seen: list[dict[str, Any]]
    _methods: dict[Any, str]
    _arrived: Any

    def _receive(self, frame: Any) -> None:
        assert isinstance(frame, dict), frame
        if "method" in frame:
            self.legacy.check_server_message(frame)
        elif frame.get("id") in self.modern_ids:
            self.spec.check_response(self._methods[frame["id"]], frame)
        else:
            method = self._methods.get(frame.get("id"))
            assert method is not None, f"a response to nothing we sent: {frame}"
            self.legacy.check_result(method, frame)
        self.seen.append(frame)
        self._arrived.set()

    async def initialize(
        self,
        capabilities: dict[str, Any] | None = None,
        version: str = LATEST_LEGACY,
        *,
        initialized: bool = True,
    ) -> dict[str, Any]:
        """The handshake; returns the InitializeResult."""
        reply = await self.ask(
            "init",
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities if capabilities is not None else {},
                "clientInfo": CLIENT_INFO,
            },
        )
        result: dict[str, Any] = reply["result"]
        if initialized:
            await self.notify("notifications/initialized")
        return result

    async def modern(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A modern request (with ``_meta``) on the same connection, and its response."""
        self.modern_ids.add(request_id)
        await self.request(request_id, method, params)
        return await self.response(request_id)

    async def post(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> None:
        """Send a legacy request (no modern ``_meta``) without waiting for its answer."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def ask(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Send a legacy request and return its response."""
        await self.post(request_id, method, params)
        return await self.response(request_id)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def server_request(self, method: str, timeout: float = 5.0) -> dict[str, Any]:
        """The next request the server sent us with ``method``."""
        return await self.next(lambda f: f.get("method") == method and "id" in f, timeout=timeout)

    async def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def refuse(self, request: dict[str, Any], code: int, message: str) -> None:
        await self.send(
            {"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}}
        )


class LegacyMemoryPeer(LegacyPeer, MemoryPeer):
    """A legacy peer over the in-memory transport (the real stream connection)."""

    def __init__(self, server: ServerApp) -> None:
        MemoryPeer.__init__(self, server)
        self.legacy = legacy_schema()
        self.modern_ids = set()


class LegacyStdioPeer(LegacyPeer, StdioPeer):
    """A legacy peer driving a server process over stdio."""

    def __init__(self, process: Any) -> None:
        self.legacy = legacy_schema()
        self.modern_ids = set()
        StdioPeer.__init__(self, process)


@contextlib.asynccontextmanager
async def legacy_memory_peer(server: ServerApp) -> AsyncIterator[LegacyMemoryPeer]:
    async with memory_peer(server, peer_class=LegacyMemoryPeer) as peer:
        assert isinstance(peer, LegacyMemoryPeer)
        yield peer


@contextlib.asynccontextmanager
async def legacy_stdio_peer(script: Path, *args: str) -> AsyncIterator[LegacyStdioPeer]:
    async with stdio_peer(script, *args, peer_class=LegacyStdioPeer) as peer:
        assert isinstance(peer, LegacyStdioPeer)
        yield peer
