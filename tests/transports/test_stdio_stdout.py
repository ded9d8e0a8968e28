"""stdout carries protocol messages only; everything else goes to stderr.

Spec ``basic/transports/stdio.mdx``: the server MUST NOT write anything to stdout that
is not a valid MCP message, and MAY log to stderr. Every stdout line is checked by
:func:`transports.wire.decode_line`, so a stray byte fails the test.
"""

from __future__ import annotations

import pytest

from transports.wire import TOOL_SERVER, call, spawn, text_of

CHATTER = ("printed by a tool", "written to sys.stdout without a newline", "written to fd 1")


@pytest.mark.parametrize("tool", ["chatter", "sync_chatter"])
async def test_a_tool_writing_to_stdout_does_not_corrupt_the_wire(tool: str) -> None:
    async with spawn(TOOL_SERVER) as wire:
        reply = await wire.ask(call(1, tool))
        assert text_of(reply) == "chatted"
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0


@pytest.mark.parametrize("tool", ["chatter", "sync_chatter"])
async def test_what_a_tool_prints_appears_on_stderr(tool: str) -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.ask(call(1, tool))
        for text in CHATTER:
            await wire.wait_stderr(text)


async def test_logs_go_to_stderr() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.ask(call(1, "chatter"))
        await wire.wait_stderr("log probe.tool WARNING logged by a tool")
        # The transport's own log: a response from the client is logged, never answered.
        await wire.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        await wire.wait_stderr("log mcpkit.transport WARNING")
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_a_newline_inside_a_string_never_splits_a_message() -> None:
    async with spawn(TOOL_SERVER) as wire:
        reply = await wire.ask(call(1, "echo", {"text": "line1\nline2\r\nline3\u2028"}))
        assert text_of(reply) == "line1\nline2\r\nline3\u2028"
