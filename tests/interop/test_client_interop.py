"""mcpkit's client against servers nobody here wrote: the official Python SDK's server
(``mcp==2.3.0``, dual-era) and ``@modelcontextprotocol/server-everything`` (TypeScript SDK,
legacy), over stdio, Streamable HTTP and the deprecated HTTP+SSE transport. Each test lets
the client find the server's era (or forces one), then lists everything, calls a tool,
reads a resource and gets a prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import EraCache, accept
from mcpkit.transports.sse_client import SseClientTransport

from .conftest import SDK_SERVER, HttpServer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]


async def answer(params: dict[str, Any]) -> dict[str, Any]:
    return accept({"name": "Ada"})


def options(**extra: Any) -> dict[str, Any]:
    return {"elicitation": answer, "era_cache": EraCache(), **extra}


async def walk(client: Client, tool: tuple[str, dict[str, Any], str]) -> None:
    """List everything, call ``tool`` (name, arguments, expected text), read the first
    resource and get the first prompt."""
    tools = await client.list_tools()
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    prompts = await client.list_prompts()
    assert tools
    assert resources
    assert templates
    assert prompts
    name, arguments, expected = tool
    result = await client.call_tool(name, arguments)
    assert not result.is_error
    assert expected in result.text
    contents = (await client.read_resource(resources[0]["uri"]))["contents"]
    assert contents[0]["uri"] == resources[0]["uri"]
    prompt = prompts[0]
    arguments = {a["name"]: "x = 1" for a in prompt.get("arguments", []) if a.get("required")}
    assert (await client.get_prompt(prompt["name"], arguments))["messages"]


SDK_ADD = ("add", {"a": 2, "b": 3}, "5")
EVERYTHING_SUM = ("get-sum", {"a": 2, "b": 3}, "The sum of 2 and 3 is 5")


async def test_the_official_sdk_over_stdio_is_found_modern_and_runs_multi_round_trips(
    sdk_python: Path,
) -> None:
    client = Client.stdio([str(sdk_python), str(SDK_SERVER)], **options())
    async with client:
        assert client.era == "modern"
        assert client.server_info["name"] == "sdk-interop"
        await walk(client, SDK_ADD)
        confirmed = await client.call_tool("confirm")
    assert confirmed.text == "Confirmed Ada with state round-1"


async def test_the_official_sdk_over_stdio_in_legacy_mode_asks_through_a_server_request(
    sdk_python: Path,
) -> None:
    client = Client.stdio([str(sdk_python), str(SDK_SERVER)], **options(mode="legacy"))
    async with client:
        assert client.era == "legacy"
        assert client.negotiated_version == "2025-11-25"
        await walk(client, SDK_ADD)
        assert (await client.call_tool("greet")).text == "Hello, Ada!"


async def test_the_official_sdk_over_streamable_http_modern(sdk_http: HttpServer) -> None:
    async with Client.http(sdk_http.url("/mcp"), **options()) as client:
        assert client.era == "modern"
        await walk(client, SDK_ADD)
        assert (await client.call_tool("confirm")).text.startswith("Confirmed Ada")


async def test_the_official_sdk_over_streamable_http_legacy(sdk_http: HttpServer) -> None:
    async with Client.http(sdk_http.url("/mcp"), **options(mode="legacy")) as client:
        assert client.era == "legacy"
        await walk(client, SDK_ADD)
        assert (await client.call_tool("greet")).text == "Hello, Ada!"


async def test_the_official_sdk_over_http_sse_is_reached_by_falling_back(
    sdk_sse: HttpServer,
) -> None:
    async with Client.http(sdk_sse.url("/sse"), **options()) as client:
        assert client.era == "legacy"
        assert isinstance(client.transport, SseClientTransport)
        await walk(client, SDK_ADD)


async def test_server_everything_over_stdio_is_found_legacy(
    everything_js: tuple[str, Path, Path],
) -> None:
    node, entry, _ = everything_js
    seen: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return accept({"name": "Ada", "check": True})

    client = Client.stdio([node, str(entry), "stdio"], **options(elicitation=elicit))
    async with client:
        assert client.era == "legacy"
        assert client.server_info["name"] == "mcp-servers/everything"
        await walk(client, EVERYTHING_SUM)
        weather = await client.call_tool("get-structured-content", {"location": "New York"})
        assert isinstance(weather.structured, dict)
        elicited = await client.call_tool("trigger-elicitation-request")
    assert seen
    # The server echoes what the user "submitted": the defaults the form carried are there.
    assert "It was a dark and stormy night." in elicited.text


async def test_server_everything_over_http_streamable_and_sse(
    everything_http: tuple[HttpServer, str],
) -> None:
    _, url = everything_http
    async with Client.http(url, **options()) as client:
        assert client.era == "legacy"
        await walk(client, EVERYTHING_SUM)
