"""The MCP endpoint mounted inside Starlette and FastAPI applications, lifespan included."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from conftest import RunningServer
from mcpkit import Server
from mcpkit.transports.http import create_app

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def build_server() -> Server:
    server = Server("mounted", "1.0.0")

    @server.tool
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


def post(url: str, method: str, params: dict[str, Any], name: str | None = None) -> httpx.Response:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name:
        headers["mcp-name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=10)


def test_mounted_in_starlette_with_the_mcp_lifespan() -> None:
    mcp = create_app(build_server())

    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    app = Starlette(routes=[Route("/", home), Route("/mcp", endpoint=mcp)], lifespan=mcp.lifespan)
    with RunningServer(app) as running:
        assert httpx.get(running.base + "/").text == "home"
        response = post(
            running.base + "/mcp",
            "tools/call",
            {"name": "echo", "arguments": {"text": "hi"}},
            "echo",
        )
        assert response.status_code == 200
        assert response.json()["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_mounted_in_fastapi_without_a_lifespan() -> None:
    app = FastAPI()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    app.mount("/api", create_app(build_server(), path="/mcp"))
    with RunningServer(app) as running:
        assert httpx.get(running.base + "/health").json() == {"status": "ok"}
        response = post(running.base + "/api/mcp", "tools/list", {})
        assert response.status_code == 200
        assert [tool["name"] for tool in response.json()["result"]["tools"]] == ["echo"]


def test_served_alone_it_answers_the_asgi_lifespan_itself() -> None:
    with RunningServer(create_app(build_server())) as running:
        response = post(running.base + "/mcp", "server/discover", {})
        assert response.json()["result"]["supportedVersions"] == ["2026-07-28"]
