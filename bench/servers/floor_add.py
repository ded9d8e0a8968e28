"""The floor: the least a Python stdio MCP server can do to answer ``tools/call add``.

A plain blocking loop with no event loop, no tasks and no framework: read what stdin
has, split it into lines, decode each with orjson, check the minimum (a modern request's
``_meta`` carries a supported protocol version and client capabilities; a legacy request
follows ``initialize``), build the response and write every answer of the chunk with one
``os.write``. It answers ``server/discover``, ``initialize`` and ``tools/call add``;
anything else gets -32601. It is the upper bound mcpkit is measured against, not a
server anyone should ship.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = {"name": "floor", "version": "1.0.0"}
RESULT_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
DISCOVER = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": RESULT_META,
}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class Floor:
    """The whole server: one flag for a legacy session, one method per request kind."""

    def __init__(self) -> None:
        self.legacy_version: str | None = None

    def answer(self, line: bytes) -> dict[str, Any] | None:
        """The answer to one line (None for a notification)."""
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            return _error(None, -32700, "Parse error")
        return self.answer_message(message)

    def answer_message(self, message: Any) -> dict[str, Any] | None:
        """The answer to one decoded message (None for a notification)."""
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            return _error(None, -32600, "Invalid request")
        if "id" not in message:
            return None
        request_id = message["id"]
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            return self.initialize(request_id, params)
        meta = params.get("_meta")
        if self.legacy_version is None:
            if type(meta) is not dict or meta.get(VERSION_KEY) != MODERN:
                return _error(request_id, -32602, f"Missing or unsupported {VERSION_KEY}")
            if type(meta.get(CAPABILITIES_KEY)) is not dict:
                return _error(
                    request_id, -32602, f"Missing required _meta field {CAPABILITIES_KEY}"
                )
        if method == "tools/call":
            return self.call(request_id, params)
        if method == "server/discover" and self.legacy_version is None:
            return {"jsonrpc": "2.0", "id": request_id, "result": DISCOVER}
        return _error(request_id, -32601, f"Method not found: {method}")

    def initialize(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        self.legacy_version = requested if requested in LEGACY else LEGACY[0]
        result: dict[str, Any] = {
            "protocolVersion": self.legacy_version,
            "capabilities": {"tools": {}},
            "serverInfo": SERVER_INFO,
        }
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def call(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("name") != "add":
            return _error(request_id, -32602, f"Unknown tool: {params.get('name')}")
        arguments = params.get("arguments") or {}
        a: Any = arguments.get("a")
        b: Any = arguments.get("b")
        if type(a) not in (int, float) or type(b) not in (int, float):
            result: dict[str, Any] = {
                "content": [{"type": "text", "text": "a and b must be numbers"}],
                "isError": True,
            }
        else:
            result = {"content": [{"type": "text", "text": str(a + b)}]}
        if self.legacy_version is None:
            result["resultType"] = "complete"
            result["_meta"] = RESULT_META
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def serve(stdin: int = 0, stdout: int = 1) -> None:
    """Answer every line of stdin until end-of-file."""
    floor = Floor()
    pending = b""
    while True:
        chunk = os.read(stdin, 1 << 16)
        if not chunk:
            return
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        out = [
            orjson.dumps(answer)
            for answer in map(floor.answer, filter(None, lines))
            if answer is not None
        ]
        if out:
            data = b"\n".join(out) + b"\n"
            while data:
                data = data[os.write(stdout, data) :]


if __name__ == "__main__":
    try:
        serve()
    except BrokenPipeError:
        sys.exit(0)
