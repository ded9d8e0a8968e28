"""The server tells an HTTP transport which ``Mcp-Param-*`` headers a tools/call must carry
(spec ``basic/transports/streamable-http.mdx`` §Custom Headers from Tool Parameters)."""

from __future__ import annotations

from typing import Annotated, Any

import httpx

from mcpkit import Server
from mcpkit.server import Header
from mcpkit.transports.http import create_app

from .wire import Direct, load_example, meta


def routed() -> Server:
    server = Server("routed")

    @server.tool
    def execute(
        region: Annotated[str, Header("Region")],
        retries: Annotated[int | None, Header("Retries")] = None,
        query: str = "",
    ) -> str:
        return f"{region}/{retries}/{query}"

    @server.tool
    def plain(query: str) -> str:
        return query

    return server


def test_param_headers_name_the_values_present_and_every_declared_header() -> None:
    server = routed()
    assert server.param_headers("execute", {"region": "eu", "retries": 3, "query": "q"}) == (
        {"Region": "eu", "Retries": 3},
        frozenset({"Region", "Retries"}),
    )
    assert server.param_headers("execute", {"region": "eu", "retries": None}) == (
        {"Region": "eu"},
        frozenset({"Region", "Retries"}),
    )
    assert server.param_headers("plain", {"query": "q"}) == ({}, frozenset())
    assert server.param_headers("unknown", {}) == ({}, frozenset())


async def post(app: Any, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.post(
            "/mcp",
            json=body,
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": body["method"],
                "Mcp-Name": body["params"]["name"],
                **headers,
            },
        )


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"_meta": meta(), "name": "test_x_mcp_header", "arguments": arguments},
    }


async def test_the_everything_server_checks_its_header_against_the_body_over_http() -> None:
    app = create_app(load_example("everything_server").build_server())
    matching = await post(app, call({"region": "us-west1"}), {"Mcp-Param-Region": "us-west1"})
    assert matching.status_code == 200
    assert matching.json()["result"]["content"][0]["text"] == "region=us-west1"
    mismatched = await post(app, call({"region": "us-west1"}), {"Mcp-Param-Region": "eu"})
    assert mismatched.status_code == 400
    assert mismatched.json()["error"]["code"] == -32020
    missing = await post(app, call({"region": "us-west1"}), {})
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == -32020


async def test_an_integer_header_parameter_is_kept_in_the_safe_integer_range() -> None:
    server = routed()
    schema = server.tools.get("execute").input_schema["properties"]["retries"]
    assert (schema["minimum"], schema["maximum"]) == (-(2**53 - 1), 2**53 - 1)
    reply = await Direct(server).tool("execute", {"region": "eu", "retries": 2**53})
    assert reply.complete["isError"] is True
    assert "retries" in reply.complete["content"][0]["text"]
