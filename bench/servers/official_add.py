"""The ``add`` tool written with the official MCP Python SDK (``mcp==2.3.0``).

Run by ``.venv-bench/bin/python`` (the SDK is never installed into mcpkit's own
environment). It is the SDK's documented way to write a server: ``MCPServer``, the
``@tool()`` decorator on a type-hinted function, and ``run()``: stdio by default, or
with ``--http --port P`` the SDK's own Streamable HTTP server
(``run("streamable-http", ...)``: Starlette on uvicorn, one worker, the SDK's default
session handling, which serves 2026-07-28 requests statelessly and legacy clients with
``Mcp-Session-Id`` sessions).

Over HTTP the server logs at WARNING, as ``mcpkit run --http`` does: at the SDK's default
(INFO) uvicorn would also write an access-log line per request, which is not what is
being compared. The command line is read from ``sys.argv`` directly so the stdio cold
start imports nothing the SDK itself does not.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer

HTTP = "--http" in sys.argv

mcp = MCPServer("calculator", log_level="WARNING" if HTTP else "INFO")


@mcp.tool()
async def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


if __name__ == "__main__":
    if HTTP:
        port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 8000
        mcp.run("streamable-http", host="127.0.0.1", port=port)
    else:
        mcp.run()
