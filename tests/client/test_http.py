"""The client over HTTP against a scripted ASGI peer on a real 127.0.0.1 socket
(spec ``basic/transports/streamable-http.mdx``; ``2025-11-25/basic/transports.mdx``;
``2024-11-05/basic/transports.mdx`` §HTTP with SSE)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import uvicorn

from mcpkit import Client, RequestTimeout
from mcpkit.client import EraCache
from mcpkit.errors import TransportError
from mcpkit.transports.sse_client import SseClientTransport

Scope = dict[str, Any]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

TOOLS = [
    {
        "name": "route",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "note": {"type": "string", "x-mcp-header": "Note"},
                "query": {"type": "string"},
            },
        },
    },
    {
        "name": "broken",
        "inputSchema": {
            "type": "object",
            "properties": {"v": {"type": "number", "x-mcp-header": "V"}},
        },
    },
    {"name": "slow", "inputSchema": {"type": "object"}},
]


class Peer:
    """Records every HTTP request; answers per ``era`` ("modern", "legacy", "sse-only")."""

    def __init__(self, era: str) -> None:
        self.era = era
        self.requests: list[dict[str, Any]] = []
        self.disconnected: list[Any] = []
        self.port = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        message = json.loads(body) if body else None
        self.requests.append(
            {"method": scope["method"], "path": scope["path"], "headers": headers, "body": message}
        )
        if self.era == "sse-only":
            await self.sse_only(scope, send)
        elif scope["method"] == "DELETE":
            await respond(send, 200, b"")
        elif self.era == "modern":
            await self.modern(message, send, receive)
        else:
            await self.legacy(message, headers, send)

    async def modern(self, message: Any, send: Send, receive: Receive) -> None:
        request_id, method = message.get("id"), message.get("method")
        params = message.get("params") or {}
        stamp = {"resultType": "complete"}
        if method == "server/discover":
            result = {**stamp, "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
            await respond_json(send, {"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            result = {**stamp, "tools": TOOLS, "ttlMs": 0, "cacheScope": "public"}
            await respond_json(send, {"jsonrpc": "2.0", "id": request_id, "result": result})
        elif params.get("name") == "slow":
            await start_sse(send)
            while (await receive())["type"] != "http.disconnect":
                pass
            self.disconnected.append(request_id)
        else:
            token = params["_meta"].get("progressToken")
            await start_sse(send)
            progress = {"progressToken": token, "progress": 1, "total": 1}
            await sse(
                send, {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}
            )
            content = [{"type": "text", "text": "routed"}]
            reply = {"jsonrpc": "2.0", "id": request_id, "result": {**stamp, "content": content}}
            await sse(send, reply, more=False)

    async def legacy(self, message: Any, headers: dict[str, str], send: Send) -> None:
        method = message.get("method") if message else None
        if method == "server/discover":
            await respond(send, 400, b"Bad Request: no session")
        elif method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "legacy-http", "version": "1"},
            }
            await respond_json(
                send, {"jsonrpc": "2.0", "id": message["id"], "result": result}, session="s-1"
            )
        elif "id" not in message:
            await respond(send, 202, b"")
        elif headers.get("mcp-session-id") != "s-1":
            await respond(send, 400, b"Bad Request: missing session")
        else:
            result = {"tools": TOOLS}
            await respond_json(send, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def sse_only(self, scope: Scope, send: Send) -> None:
        if scope["method"] != "GET":
            await respond(send, 405, b"")
            return
        await start_sse(send)
        other = "http://example.invalid:1/messages" if scope["path"] == "/evil" else "/messages"
        await send(
            {
                "type": "http.response.body",
                "body": f"event: endpoint\ndata: {other}\n\n".encode(),
                "more_body": False,
            }
        )


async def respond(send: Send, status: int, body: bytes, content_type: str = "text/plain") -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, value: Any, session: str | None = None) -> None:
    headers = [(b"content-type", b"application/json")]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})


async def start_sse(send: Send) -> None:
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def sse(send: Send, value: Any, more: bool = True) -> None:
    data = f"data: {json.dumps(value)}\n\n".encode()
    await send({"type": "http.response.body", "body": data, "more_body": more})


async def serve(app: Peer, port: int = 0) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on 127.0.0.1; the socket listens before serving starts,
    so early connections wait in the backlog instead of being refused."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    app.port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{app.port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
async def modern() -> AsyncIterator[tuple[Peer, str]]:
    peer = Peer("modern")
    async for base in serve(peer):
        yield peer, base + "/mcp"


async def test_every_modern_post_carries_the_version_method_and_name_headers(
    modern: tuple[Peer, str], caplog: pytest.LogCaptureFixture
) -> None:
    peer, url = modern
    updates: list[float] = []
    async with Client.http(url, era_cache=EraCache()) as client:
        tools = await client.list_tools()
        result = await client.call_tool(
            "route",
            {"region": "us-west1", "note": " padded ", "query": "SELECT 1"},
            on_progress=lambda p, t, m: updates.append(p),
        )
    assert result.text == "routed"
    assert updates == [1]
    assert [t["name"] for t in tools] == ["route", "slow"]
    assert any("rejecting tool 'broken'" in r.getMessage() for r in caplog.records)
    for request in peer.requests:
        headers, body = request["headers"], request["body"]
        assert headers["accept"] == "application/json, text/event-stream"
        assert headers["mcp-protocol-version"] == "2026-07-28"
        assert headers["mcp-method"] == body["method"]
        meta = body["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert "io.modelcontextprotocol/clientCapabilities" in meta
    call = peer.requests[-1]["headers"]
    assert call["mcp-name"] == "route"
    assert call["mcp-param-region"] == "us-west1"
    assert call["mcp-param-note"] == "=?base64?IHBhZGRlZCA=?="
    assert "mcp-param-query" not in call


async def test_an_http_request_is_cancelled_by_closing_its_stream(
    modern: tuple[Peer, str],
) -> None:
    peer, url = modern
    async with Client.http(url, era_cache=EraCache()) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", timeout=0.5)
        for _ in range(100):
            if peer.disconnected:
                break
            await asyncio.sleep(0.02)
    assert len(peer.disconnected) == 1
    assert not any(
        r["body"] and r["body"].get("method") == "notifications/cancelled" for r in peer.requests
    )


async def test_a_legacy_endpoint_gets_initialize_and_the_session_it_assigned() -> None:
    peer = Peer("legacy")
    async for base in serve(peer):
        async with Client.http(base + "/mcp", era_cache=EraCache()) as client:
            assert client.era == "legacy"
            assert client.negotiated_version == "2025-06-18"
            assert [t["name"] for t in await client.list_tools()] == ["route", "slow"]
    methods = [(r["method"], (r["body"] or {}).get("method")) for r in peer.requests]
    assert methods[:3] == [
        ("POST", "server/discover"),
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
    ]
    listing = next(r for r in peer.requests if (r["body"] or {}).get("method") == "tools/list")
    assert listing["headers"]["mcp-session-id"] == "s-1"
    assert listing["headers"]["mcp-protocol-version"] == "2025-06-18"
    assert "_meta" not in (listing["body"].get("params") or {})
    assert peer.requests[-1]["method"] == "DELETE"


async def test_an_endpoint_that_only_speaks_http_sse_is_reached_through_its_endpoint_event() -> (
    None
):
    peer = Peer("sse-only")
    async for base in serve(peer):
        transport = SseClientTransport(base + "/sse")
        await transport.start(lambda message: None, lambda: None)
        assert transport.endpoint == base + "/messages"
        await transport.close()
        evil = SseClientTransport(base + "/evil")
        with pytest.raises(TransportError, match="another origin"):
            await evil.start(lambda message: None, lambda: None)
        await evil.close()


async def test_connection_failures_are_retried_with_backoff(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit.transport")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    peer = Peer("modern")
    done = asyncio.Event()

    async def late_server() -> None:
        await asyncio.sleep(0.25)
        async for _ in serve(peer, port):
            await done.wait()

    server = asyncio.ensure_future(late_server())
    try:
        client = Client.http(f"http://127.0.0.1:{port}/mcp", era_cache=EraCache(), mode="modern")
        async with client:
            assert [t["name"] for t in await client.list_tools()] == ["route", "slow"]
    finally:
        done.set()
        await server
    assert any("retrying in" in r.getMessage() for r in caplog.records)
