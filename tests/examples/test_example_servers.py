"""The example servers answer as issue 2 item 6 says, over stdio, in raw JSON lines.

Each runs as ``python examples/<name>.py``, one process per server for this module (each
test leaves it serving, and it must exit cleanly at the end); nothing here goes through
mcpkit's client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from transports.wire import EXAMPLES, PROTOCOL_VERSION, SERVER_INFO, Wire, call, request, spawn

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601


pytestmark = pytest.mark.asyncio(loop_scope="module")


async def serve(example: str) -> AsyncIterator[Wire]:
    async with spawn(EXAMPLES / example) as wire:
        yield wire
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
        assert "Traceback" not in wire.stderr


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def notes() -> AsyncIterator[Wire]:
    async for wire in serve("notes_server.py"):
        yield wire


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def calculator() -> AsyncIterator[Wire]:
    async for wire in serve("calculator_server.py"):
        yield wire


def complete(reply: dict[str, Any], name: str) -> dict[str, Any]:
    """The result, after checking what every result carries: resultType and serverInfo."""
    assert "error" not in reply, reply
    result: dict[str, Any] = reply["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == {"name": name, "version": "1.0.0"}
    return result


def only_text(result: dict[str, Any]) -> str:
    content = result["content"]
    assert len(content) == 1, content
    assert content[0]["type"] == "text"
    text: str = content[0]["text"]
    return text


# -- notes_server.py ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "text"),
    [("standup", "Demo the MCP server at 10:00."), ("todo", "Review the practice fixes.")],
)
async def test_read_note_returns_the_note(notes: Wire, title: str, text: str) -> None:
    result = complete(await notes.ask(call(1, "read_note", {"title": title})), "notes")
    assert only_text(result) == text
    assert "isError" not in result or result["isError"] is False


async def test_read_note_of_an_unknown_title_is_a_tool_error_naming_the_notes(
    notes: Wire,
) -> None:
    result = complete(await notes.ask(call(1, "read_note", {"title": "stand-up"})), "notes")
    assert result["isError"] is True
    assert only_text(result) == "No note called 'stand-up'. Notes: ['standup', 'todo']"


async def test_the_notes_server_lists_read_note_with_its_schema(notes: Wire) -> None:
    result = complete(await notes.ask(request(1, "tools/list")), "notes")
    [tool] = result["tools"]
    assert tool["name"] == "read_note"
    assert tool["description"].startswith("Read one note by its title.")
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["title"]["type"] == "string"
    assert schema["required"] == ["title"]


async def test_the_notes_server_describes_itself(notes: Wire) -> None:
    result = complete(await notes.ask(request(1, "server/discover")), "notes")
    assert PROTOCOL_VERSION in result["supportedVersions"]
    assert "tools" in result["capabilities"]


# -- calculator_server.py -------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "text"), [(2, 3, "5"), (2.5, 0.25, "2.75"), (-1, 1, "0"), (10, -2.5, "7.5")]
)
async def test_add_adds(calculator: Wire, a: float, b: float, text: str) -> None:
    result = complete(await calculator.ask(call(1, "add", {"a": a, "b": b})), "calculator")
    assert only_text(result) == text
    assert "isError" not in result or result["isError"] is False


async def test_boom_is_a_tool_error_carrying_the_exception_message(calculator: Wire) -> None:
    result = complete(await calculator.ask(call(1, "boom", {})), "calculator")
    assert result["isError"] is True
    assert only_text(result) == "city not found"


async def test_forecast_schema_comes_from_its_signature(calculator: Wire) -> None:
    result = complete(await calculator.ask(request(1, "tools/list")), "calculator")
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert list(tools) == ["add", "boom", "forecast"]
    schema = tools["forecast"]["inputSchema"]
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["location", "days", "units"]
    assert schema["properties"]["location"]["type"] == "string"
    assert schema["properties"]["days"]["type"] == "integer"
    assert schema["properties"]["units"]["enum"] == ["c", "f"]
    assert schema["required"] == ["location"]
    assert schema["additionalProperties"] is False
    add = tools["add"]["inputSchema"]
    assert add["properties"] == {"a": {"type": "number"}, "b": {"type": "number"}}
    assert add["required"] == ["a", "b"]


async def test_forecast_answers_valid_arguments(calculator: Wire) -> None:
    arguments = {"location": "Lisbon", "days": 2, "units": "f"}
    result = complete(await calculator.ask(call(1, "forecast", arguments)), "calculator")
    assert "isError" not in result or result["isError"] is False
    assert only_text(result).startswith("Lisbon:")


async def test_invalid_forecast_arguments_list_four_problems_in_order(calculator: Wire) -> None:
    arguments = {"days": 2.5, "units": "k", "x": 1}
    result = complete(await calculator.ask(call(1, "forecast", arguments)), "calculator")
    assert result["isError"] is True
    problems = [line for line in only_text(result).splitlines() if line.startswith("- ")]
    assert len(problems) == 4, problems
    missing, days, units, unexpected = problems
    assert "missing" in missing
    assert '"location"' in missing
    assert days.startswith("- days:")
    assert "2.5" in days
    assert "integer" in days
    assert units.startswith("- units:")
    assert '"k"' in units
    assert '"c"' in units
    assert '"f"' in units
    assert "unexpected" in unexpected
    assert '"x"' in unexpected


async def test_an_unknown_tool_is_a_jsonrpc_invalid_params_error(calculator: Wire) -> None:
    reply = await calculator.ask(call(7, "nope", {}))
    assert reply["id"] == 7
    assert reply["error"]["code"] == INVALID_PARAMS
    assert reply["error"]["message"] == "Unknown tool: nope"


async def test_an_unknown_method_is_method_not_found(calculator: Wire) -> None:
    reply = await calculator.ask(request(8, "tools/frobnicate"))
    assert reply["id"] == 8
    assert reply["error"]["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize(
    "message",
    [
        request(1, "server/discover"),
        request(1, "tools/list"),
        call(1, "add", {"a": 1, "b": 1}),
        call(1, "boom", {}),
        call(1, "forecast", {}),
    ],
    ids=["discover", "list", "call", "tool-error", "invalid-arguments"],
)
async def test_every_result_is_complete_and_names_the_server(
    calculator: Wire, message: dict[str, Any]
) -> None:
    complete(await calculator.ask(message), "calculator")
