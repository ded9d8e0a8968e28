"""The HTTP floor: the least a Python Streamable HTTP MCP server can do for ``add``.

A raw ASGI function on uvicorn (httptools, one worker), no framework: read the body,
decode it with orjson, check the minimum and answer with ``application/json``:

* modern (2026-07-28): ``MCP-Protocol-Version`` and ``Mcp-Method`` headers must match the
  body, and ``_meta`` must carry the version and client capabilities (checked by the
  stdio floor's :class:`Floor`, shared with ``floor_add.py``);
* legacy: ``initialize`` opens a session answered with an ``Mcp-Session-Id``; every later
  request must carry a known session id (404 otherwise); notifications get 202.

It is the upper bound mcpkit's HTTP server is measured against, not a server anyone
should ship (no Host/Origin check, no body limit, no SSE).

Usage: ``python floor_asgi.py --port P``.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
import uvicorn
from floor_add import MODERN, Floor

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = b"application/json"
_MODERN_FLOOR = Floor()
_SESSIONS: dict[bytes, Floor] = {}


async def _respond(
    send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [(b"content-type", _JSON), (b"content-length", b"%d" % len(body)), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _error(status: int, code: int, text: str, request_id: Any = None) -> tuple[int, bytes]:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": text}}
    return status, orjson.dumps(error)


async def _read_body(receive: Receive) -> bytes:
    message = await receive()
    body: bytes = message.get("body", b"")
    while message.get("more_body"):
        message = await receive()
        body += message.get("body", b"")
    return body


def _modern(message: Any, headers: dict[bytes, bytes]) -> tuple[int, bytes]:
    """A sessionless 2026-07-28 request: headers against the body, then the floor."""
    if type(message) is not dict:
        return _error(400, -32600, "Invalid request")
    request_id = message.get("id")
    if headers.get(b"mcp-protocol-version") != MODERN.encode():
        return _error(400, -32020, "MCP-Protocol-Version header mismatch", request_id)
    method = message.get("method")
    if type(method) is not str or headers.get(b"mcp-method") != method.encode():
        return _error(400, -32020, "Mcp-Method header mismatch", request_id)
    answer = _MODERN_FLOOR.answer_message(message)
    if answer is None:
        return 202, b""
    return (400 if "error" in answer else 200), orjson.dumps(answer)


async def app(scope: Message, receive: Receive, send: Send) -> None:
    """The whole endpoint: POST /mcp only."""
    if scope["type"] != "http":
        return
    if scope["method"] != "POST" or scope["path"] != "/mcp":
        await _respond(send, 405 if scope["path"] == "/mcp" else 404, b"")
        return
    headers = dict(scope["headers"])
    body = await _read_body(receive)
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        status, payload = _error(400, -32700, "Parse error")
        await _respond(send, status, payload)
        return
    session_id = headers.get(b"mcp-session-id")
    if session_id is not None:
        floor = _SESSIONS.get(session_id)
        if floor is None:
            await _respond(send, 404, b"")
            return
        answer = floor.answer_message(message)
        if answer is None:
            await _respond(send, 202, b"")
        else:
            await _respond(send, 200, orjson.dumps(answer))
        return
    if type(message) is dict and message.get("method") == "initialize":
        floor = Floor()
        answer = floor.answer_message(message)
        session_id = secrets.token_urlsafe(24).encode()
        _SESSIONS[session_id] = floor
        await _respond(send, 200, orjson.dumps(answer), ((b"mcp-session-id", session_id),))
        return
    status, payload = _modern(message, headers)
    await _respond(send, status, payload)


def main(argv: list[str]) -> None:
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 8000
    uvicorn.run(
        app, host="127.0.0.1", port=port, http="httptools", lifespan="off", log_level="warning"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
