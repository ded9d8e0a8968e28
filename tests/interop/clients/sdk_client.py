"""Drive a server with the official Python SDK's client (``mcp==2.3.0``); run by the
interpreter of ``.venv-interop`` (never mcpkit's), so nothing of mcpkit is imported.

Usage: ``sdk_client.py MODE TRANSPORT TARGET...``

* MODE: ``legacy`` (the initialize handshake) or ``auto`` (``server/discover``, falling
  back to initialize on a legacy server);
* TRANSPORT: ``stdio`` (TARGET is the server command), ``http`` (TARGET is the Streamable
  HTTP URL) or ``sse`` (TARGET is the HTTP+SSE stream URL).

It lists the tools, calls ``test_simple_text``, then ``test_sampling`` and
``test_elicitation`` with callbacks that answer the server's questions, and prints one
JSON object with what it saw.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
    asked = params.messages[0].content
    text = getattr(asked, "text", "?")
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"echo of {text}"),
        model="interop-model",
        stop_reason="endTurn",
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    return types.ElicitResult(action="accept", content={"response": "from the SDK"})


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


async def main(mode: str, transport: str, target: list[str]) -> None:
    server: Any
    if transport == "stdio":
        server = StdioServerParameters(command=target[0], args=target[1:])
    elif transport == "http":
        server = target[0]
    else:
        server = sse_client(target[0])
    client = Client(
        server,
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        read_timeout_seconds=20,
    )
    async with client:
        tools = await client.list_tools()
        simple = await client.call_tool("test_simple_text", {})
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        elicited = await client.call_tool("test_elicitation", {"message": "Say something"})
        info = client.server_info
        report = {
            "protocol_version": client.protocol_version,
            "server": info.name if info is not None else None,
            "tools": [tool.name for tool in tools.tools],
            "simple": text_of(simple),
            "sampling": text_of(sampled),
            "elicitation": text_of(elicited),
            "errors": [bool(simple.is_error), bool(sampled.is_error), bool(elicited.is_error)],
        }
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
