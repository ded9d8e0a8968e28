"""``mcpkit run <file.py[:name]>`` serves the file's Server over stdio.

Driven with raw JSON lines through the console script from the virtualenv; stdout must
carry protocol messages only, even when the module prints while it is imported.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from transports.wire import EXAMPLES, MCPKIT, SERVER_INFO, SERVERS, call, request, spawn, text_of


async def test_run_serves_the_notes_example_over_stdio() -> None:
    async with spawn(MCPKIT, "run", EXAMPLES / "notes_server.py", python=False) as wire:
        reply = await wire.ask(call(1, "read_note", {"title": "standup"}))
        assert text_of(reply) == "Demo the MCP server at 10:00."
        assert reply["result"]["_meta"][SERVER_INFO]["name"] == "notes"
        listed = await wire.ask(request(2, "tools/list"))
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["read_note"]
        closed = time.monotonic()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit(timeout=1.0) == 0
        assert time.monotonic() - closed < 1.0


async def test_run_keeps_prints_at_import_time_off_stdout() -> None:
    async with spawn(MCPKIT, "run", SERVERS / "noisy_server.py", python=False) as wire:
        # decode_line fails on any stdout line that is not a JSON-RPC message.
        reply = await wire.ask(call(1, "echo", {"text": "hi"}))
        assert text_of(reply) == "hi"
        await wire.wait_stderr("printed while importing")
        await wire.wait_stderr("printed by echo")
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


@pytest.mark.parametrize(("name", "tool"), [("first", "which"), ("second", "which_one")])
async def test_run_serves_the_server_named_after_a_colon(name: str, tool: str) -> None:
    target = f"{SERVERS / 'two_servers.py'}:{name}"
    async with spawn(MCPKIT, "run", target, python=False) as wire:
        reply = await wire.ask(request(1, "tools/list"))
        assert [t["name"] for t in reply["result"]["tools"]] == [tool]


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("/nonexistent/server.py", "no such file: /nonexistent/server.py"),
        (f"{SERVERS / 'two_servers.py'}", "defines 2 servers; name one"),
        (f"{SERVERS / 'two_servers.py'}:third", "is not an mcpkit Server"),
    ],
    ids=["missing-file", "two-servers", "missing-name"],
)
def test_run_without_a_server_to_serve_exits_2_with_a_clear_message(
    target: str, reason: str
) -> None:
    done = subprocess.run(
        [str(MCPKIT), "run", target],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert reason in done.stderr
    assert "Traceback" not in done.stderr
