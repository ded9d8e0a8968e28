"""The conformance "everything" client: one mcpkit Client that plays every client scenario
of the official MCP conformance suite (``../shared/conformance.md`` §7), OAuth included.

Contract (§7.1): the server URL is the last argument; ``MCP_CONFORMANCE_SCENARIO`` names the
scenario, ``MCP_CONFORMANCE_PROTOCOL_VERSION`` the wire version and
``MCP_CONFORMANCE_CONTEXT`` (JSON) carries scenario data. The client finds the server's era
itself (``mode="auto"``): the 2025-11-25 mocks are detected as legacy, the 2026-07-28 ones as
modern. Like any real client it always carries an :class:`mcpkit.auth.OAuth`, which stays
out of the way until a server answers ``401``/``403``; then it discovers the authorization
server, identifies the client (§7.3 step 5) and signs in headlessly. Exit status 0 when the
scenario's steps all worked, 1 otherwise (for the auth scenarios that must be refused, 1 is
the expected outcome).

    python examples/everything_client.py http://localhost:3000/mcp
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcpkit import Client
from mcpkit.auth import ClientConfig, HeadlessRedirectHandler, OAuth
from mcpkit.client import accept

logger = logging.getLogger("everything-client")

Scenario = Callable[[Client, dict[str, Any]], Awaitable[None]]


def placeholder(schema: Mapping[str, Any]) -> Any:
    """A value that fits a (flat) property schema, for fields without a default."""
    if "default" in schema:
        return schema["default"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = schema.get("type")
    if kind == "boolean":
        return True
    if kind == "integer":
        return 1
    if kind == "number":
        return 1
    if kind == "array":
        items = schema.get("items")
        return [placeholder(items)] if isinstance(items, Mapping) else []
    if kind == "object":
        return arguments_for(schema)
    return "test"


def arguments_for(schema: Any) -> dict[str, Any]:
    """Arguments that satisfy a tool's required properties."""
    if not isinstance(schema, Mapping):
        return {}
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return {}
    return {
        name: placeholder(properties[name])
        for name in required
        if isinstance(properties.get(name), Mapping)
    }


async def elicit(params: dict[str, Any]) -> dict[str, Any]:
    """Accept every form; fields the user would leave untouched keep their defaults (the
    client applies those), the others get a plausible value."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    content: dict[str, Any] = {}
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            if isinstance(prop, Mapping) and "default" not in prop:
                content[name] = placeholder(prop)
    return accept(content)


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a sampled answer."},
        "model": "everything-client",
        "stopReason": "endTurn",
    }


ROOTS = [{"uri": "file:///tmp/everything-client", "name": "Scratch"}]


# -- scenarios ----------------------------------------------------------------------------


async def list_only(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()


async def call_every_tool(client: Client, context: dict[str, Any]) -> None:
    for tool in await client.list_tools():
        await client.call_tool(tool["name"], arguments_for(tool.get("inputSchema")))


async def tools_call(client: Client, context: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    if "add_numbers" in tools:
        result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
        logger.info("add_numbers: %s", result.text)
    else:
        await call_every_tool(client, context)


async def standard_headers(client: Client, context: dict[str, Any]) -> None:
    """Exercise every method that mirrors a name into ``Mcp-Name``."""
    await call_every_tool(client, context)
    for resource in await client.list_resources():
        await client.read_resource(resource["uri"])
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt["name"], arguments_for(prompt))


async def replay_tool_calls(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()
    for call in context.get("toolCalls", []):
        await client.call_tool(call["name"], call.get("arguments") or {})


async def request_state(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()
    for name in (
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ):
        result = await client.call_tool(name, {})
        logger.info("%s: %s", name, result.text)


async def elicitation_defaults(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()
    result = await client.call_tool("test_client_elicitation_defaults", {})
    logger.info("elicitation defaults: %s", result.text)


async def reconnection(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()
    result = await client.call_tool("test_reconnection", {})
    logger.info("test_reconnection: %s", result.text)


async def schema_echo(client: Client, context: dict[str, Any]) -> None:
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    source = tools.get("json_schema_2020_12_tool")
    if source is not None and "json_schema_echo" in tools:
        await client.call_tool("json_schema_echo", {"schema": source.get("inputSchema")})


SCENARIOS: dict[str, Scenario] = {
    "initialize": list_only,
    "tools_call": tools_call,
    "request-metadata": call_every_tool,
    "http-standard-headers": standard_headers,
    "http-custom-headers": replay_tool_calls,
    "http-invalid-tool-headers": call_every_tool,
    "sep-2322-client-request-state": request_state,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": reconnection,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_echo,
}


CALLBACK = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_for(url: str, context: Mapping[str, Any]) -> OAuth:
    """The OAuth flow the auth scenarios expect (§7.3): the CIMD URL as client id where
    supported, pre-registered credentials from the context, else DCR; the mock's
    authorization endpoint redirects at once, so a headless fetch plays the user."""
    client_id = context.get("client_id")
    client_secret = context.get("client_secret")
    config = ClientConfig(
        redirect_uri=CALLBACK,
        client_name="mcpkit-everything-client",
        client_metadata_url=CLIENT_METADATA_URL,
        client_id=client_id if isinstance(client_id, str) else None,
        client_secret=client_secret if isinstance(client_secret, str) else None,
    )
    return OAuth(url, config, redirect_handler=HeadlessRedirectHandler())


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    play = SCENARIOS.get(scenario, call_every_tool)
    client = Client.http(
        url,
        auth=oauth_for(url, context),
        name="mcpkit-everything-client",
        elicitation=elicit,
        sampling=sample,
        roots=ROOTS,
        timeout=30.0,
    )
    async with client:
        logger.info("connected: %s era, version %s", client.era, client.negotiated_version)
        await play(client, context)


def main(argv: list[str]) -> int:
    logging.basicConfig(
        level=os.environ.get("MCPKIT_LOG", "INFO"), stream=sys.stderr, format="%(message)s"
    )
    if len(argv) < 2:
        print("usage: everything_client.py <server-url>", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    raw_context = os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"
    try:
        context = json.loads(raw_context)
    except ValueError:
        context = {}
    if not isinstance(context, dict):
        context = {}
    try:
        asyncio.run(run(argv[-1], scenario, context))
    except Exception as exc:
        logger.error("scenario %s failed: %s: %s", scenario or "(none)", type(exc).__name__, exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
