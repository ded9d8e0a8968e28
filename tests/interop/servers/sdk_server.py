"""A server written with the official MCP Python SDK (``mcp==2.3.0``), run by the interop
tests from their own environment (never mcpkit's).

    python sdk_server.py stdio
    python sdk_server.py http PORT       (Streamable HTTP at /mcp, both eras)
    python sdk_server.py sse PORT        (the deprecated HTTP+SSE transport at /sse)
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import InputRequiredResult
from pydantic import BaseModel

mcp = MCPServer("sdk-interop", version="2.3.0-interop")


class Name(BaseModel):
    name: str


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def greet(ctx: Context) -> str:
    """Ask the user for a name, then greet them."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action == "accept" and answer.data is not None:
        return f"Hello, {answer.data.name}!"
    return f"No name ({answer.action})"


@mcp.tool()
async def confirm(ctx: Context) -> Any:
    """Modern multi round-trip: ask for a name with input_required, then greet."""
    responses = ctx.input_responses
    if not responses:
        return InputRequiredResult.model_validate(
            {
                "resultType": "input_required",
                "inputRequests": {
                    "who": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "What is your name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"],
                            },
                        },
                    }
                },
                "requestState": "round-1",
            }
        )
    answer = responses["who"]
    content = getattr(answer, "content", None) or {}
    return f"Confirmed {content.get('name')} with state {ctx.request_state}"


@mcp.resource("note://readme", mime_type="text/plain")
def readme() -> str:
    """The readme note."""
    return "Read me first."


@mcp.resource("note://{topic}/summary")
def summary(topic: str) -> str:
    """A summary per topic."""
    return f"Summary of {topic}."


@mcp.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review: {code}"


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        mcp.run()
    elif transport == "http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
