"""``mcpkit call <tool> [key=value ...] -- <server command ...>`` (issue 2 item 7).

The console script from the virtualenv runs against real server processes: the result's
text on stdout; exit 0 for a result, 1 for a tool error, 2 for bad usage, a server that
cannot start or a protocol error, always with a one-line reason and never a traceback.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from transports.wire import EXAMPLES, MCPKIT, SERVER_INFO, TOOL_SERVER, spawn

CALCULATOR = [sys.executable, str(EXAMPLES / "calculator_server.py")]
PROBE = [sys.executable, str(TOOL_SERVER)]


def mcpkit(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MCPKIT), *map(str, argv)], capture_output=True, text=True, timeout=20, check=False
    )


def kinds(*assignments: str) -> dict[str, Any]:
    """How the server received each ``key=value``: the JSON kind of each argument."""
    done = mcpkit("call", "kinds", *assignments, "--", *PROBE)
    assert done.returncode == 0, done.stderr
    received: dict[str, Any] = json.loads(done.stdout)
    return received


def test_call_prints_the_result_text_and_exits_0() -> None:
    done = mcpkit("call", "add", "a=2", "b=3", "--", *CALCULATOR)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "5\n"


def test_values_are_json_where_they_parse_and_strings_otherwise() -> None:
    assert kinds("a=1", "b=true", "c=1.5", "d=[1,2]", "e=hello", "f=NaN", "g=", 'h="3"') == {
        "a": "integer",
        "b": "boolean",
        "c": "number",
        "d": "array",
        "e": "string",
        "f": "string",
        "g": "string",
        "h": "string",
    }


def test_a_string_value_arrives_exactly_as_typed() -> None:
    done = mcpkit("call", "echo", "text=hello world = 1", "--", *PROBE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello world = 1\n"


def test_json_prints_the_whole_result() -> None:
    done = mcpkit("call", "--json", "add", "a=2", "b=3", "--", *CALCULATOR)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "5"}]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO]["name"] == "calculator"


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["boom"], "city not found"),
        (["forecast", "days=2.5", "units=k", "x=1"], "unexpected"),
    ],
    ids=["tool-raised", "invalid-arguments"],
)
def test_a_tool_error_prints_its_text_and_exits_1(argv: list[str], text: str) -> None:
    done = mcpkit("call", *argv, "--", *CALCULATOR)
    assert done.returncode == 1, done.stderr
    assert text in done.stdout
    assert "Traceback" not in done.stderr


def test_an_unknown_tool_exits_2_naming_the_protocol_error() -> None:
    done = mcpkit("call", "nope", "--", *CALCULATOR)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "-32602" in done.stderr
    assert "Unknown tool: nope" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_servers_stderr_is_passed_through_and_stdout_holds_only_the_result() -> None:
    done = mcpkit("call", "chatter", "--", *PROBE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "chatted\n"
    assert "printed by a tool" in done.stderr


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        ([], "required"),
        (["frobnicate"], "invalid choice"),
        (["call", "add", "a=2"], "give the server command after --"),
        (["call", "add", "a=2", "--"], "give the server command after --"),
        (["call", "--", *CALCULATOR], "required: tool"),
        (["call", "add", "a", "--", *CALCULATOR], "expected key=value, got 'a'"),
        (["call", "add", "=2", "--", *CALCULATOR], "expected key=value, got '=2'"),
        (["call", "add", "a=1", "a=2", "--", *CALCULATOR], "'a' is given twice"),
    ],
    ids=[
        "nothing",
        "unknown-command",
        "no-separator",
        "no-server",
        "no-tool",
        "no-equals",
        "no-key",
        "duplicate-key",
    ],
)
def test_bad_usage_exits_2_with_a_clear_message(argv: list[str], reason: str) -> None:
    done = mcpkit(*argv)
    assert done.returncode == 2
    assert done.stdout == ""
    assert reason in done.stderr
    assert "Traceback" not in done.stderr


def test_a_server_that_cannot_be_started_exits_2() -> None:
    done = mcpkit("call", "add", "--", "/nonexistent/mcp-server")
    assert done.returncode == 2
    assert "/nonexistent/mcp-server" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_server_that_exits_at_once_exits_2() -> None:
    done = mcpkit("call", "add", "--", sys.executable, "-c", "pass")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "mcpkit call:" in done.stderr
    assert "Traceback" not in done.stderr


async def test_an_interrupted_call_shuts_the_server_down_and_exits_130() -> None:
    command = ["call", "wait_for_cancel", "tag=ctrl-c", "--", *PROBE]
    async with spawn(MCPKIT, *command, python=False) as cli:
        await cli.wait_stderr("started ctrl-c")
        [server] = psutil.Process(cli.pid).children()
        cli.process.send_signal(signal.SIGINT)
        assert await cli.wait_exit(timeout=5) == 130
        assert "interrupted" in cli.stderr
        assert "Traceback" not in cli.stderr
        assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
