"""stdout carries protocol messages only; everything else goes to stderr.

Spec ``basic/transports/stdio.mdx``: the server MUST NOT write anything to stdout that
is not a valid MCP message, and MAY log to stderr. Every stdout line is checked by
:func:`transports.wire.decode_line`, so a stray byte fails the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from transports.wire import Wire, call, shared_tool_server, text_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

CHATTER = ("printed by a tool", "written to sys.stdout without a newline", "written to fd 1")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Wire]:
    """One server for the module; at the end stdout must hold nothing unread."""
    async with shared_tool_server(no_traceback=False) as wire:
        yield wire


@pytest.mark.parametrize("tool", ["chatter", "sync_chatter"])
async def test_a_tool_writing_to_stdout_does_not_corrupt_the_wire(server: Wire, tool: str) -> None:
    reply = await server.ask(call(1, tool))
    assert text_of(reply) == "chatted"
    await server.probe()


@pytest.mark.parametrize("tool", ["chatter", "sync_chatter"])
async def test_what_a_tool_prints_appears_on_stderr(server: Wire, tool: str) -> None:
    before = {text: server.stderr.count(text) for text in CHATTER}
    await server.ask(call(2, tool))
    for text in CHATTER:
        await server.wait_stderr(text, count=before[text] + 1)


async def test_logs_go_to_stderr(server: Wire) -> None:
    logged = "log probe.tool WARNING logged by a tool"
    await server.ask(call(3, "chatter"))
    await server.wait_stderr(logged)
    # The transport's own log: a response from the client is logged, never answered.
    await server.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    await server.wait_stderr("log mcpkit.transport WARNING")
    await server.probe()


async def test_a_newline_inside_a_string_never_splits_a_message(server: Wire) -> None:
    reply = await server.ask(call(4, "echo", {"text": "line1\nline2\r\nline3\u2028"}))
    assert text_of(reply) == "line1\nline2\r\nline3\u2028"
