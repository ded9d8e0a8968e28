"""tools/list and tools/call (spec ``server/tools.mdx``), at the wire."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest

from mcpkit import Context, Server, ToolError, ToolResult, content
from mcpkit.server.headers import Header, HeaderAnnotationError

from .wire import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, Direct, memory_peer


def weather_server() -> Server:
    server = Server("weather", "1.0.0")

    @server.tool(input_schema=None)
    def forecast(location: str, days: int = 1, units: Literal["c", "f"] = "c") -> str:
        """A made-up forecast."""
        return f"{location}:{days}{units}"

    return server


async def test_tools_list_gives_name_description_and_schema_in_registration_order() -> None:
    server = Server("s")

    @server.tool
    def b_tool() -> str:
        """Second letter first."""
        return ""

    @server.tool
    def a_tool(x: int) -> str:
        """First letter second."""
        return ""

    result = (await Direct(server).call("tools/list")).complete
    assert [t["name"] for t in result["tools"]] == ["b_tool", "a_tool"]
    assert result["tools"][1] == {
        "name": "a_tool",
        "description": "First letter second.",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        },
    }
    again = (await Direct(server).call("tools/list")).complete
    assert again["tools"] == result["tools"]


async def test_invalid_arguments_list_every_problem_in_reading_order() -> None:
    reply = await Direct(weather_server()).tool("forecast", {"days": 2.5, "units": "k", "x": 1})
    result = reply.complete
    assert result["isError"] is True
    lines = result["content"][0]["text"].splitlines()
    assert lines[0] == "Invalid arguments for tool 'forecast':"
    problems = lines[1:]
    assert len(problems) == 4, problems
    assert "location" in problems[0]
    assert "missing" in problems[0]
    assert problems[1].startswith("- days")
    assert problems[2].startswith("- units")
    assert "unexpected" in problems[3]
    assert '"x"' in problems[3]


async def test_a_tool_called_without_arguments_gets_an_empty_object() -> None:
    server = Server("s")

    @server.tool
    def nothing() -> str:
        """No parameters."""
        return "ok"

    assert (await Direct(server).tool("nothing")).text == "ok"


@pytest.mark.parametrize("arguments", [[1], "x", 3])
async def test_arguments_that_are_not_an_object_are_invalid_params(arguments: Any) -> None:
    reply = await Direct(weather_server()).call(
        "tools/call", {"name": "forecast", "arguments": arguments}
    )
    assert reply.error["code"] == INVALID_PARAMS


async def test_an_unknown_tool_is_a_protocol_error_naming_it() -> None:
    reply = await Direct(weather_server()).tool("nope", {})
    assert reply.error == {"code": INVALID_PARAMS, "message": "Unknown tool: nope"}


async def test_an_unknown_method_is_method_not_found() -> None:
    reply = await Direct(weather_server()).call("tools/explode")
    assert reply.error["code"] == METHOD_NOT_FOUND


async def test_a_notification_gets_no_reply() -> None:
    async with memory_peer(weather_server()) as peer:
        await peer.send({"jsonrpc": "2.0", "method": "tools/list", "params": {}})
        assert await peer.quiet(0.2) == []


class Reading(TypedDict):
    celsius: float
    station: str


@dataclasses.dataclass
class Station:
    name: str
    height: int


class Probe(pydantic.BaseModel):
    id: str
    ok: bool


def conversions_server() -> Server:
    server = Server("convert")

    @server.tool
    def as_text() -> str:
        return "plain"

    @server.tool
    def as_number() -> float:
        return 5.0

    @server.tool
    def as_none() -> None:
        return None

    @server.tool
    def as_typeddict() -> Reading:
        return {"celsius": 21.5, "station": "north"}

    @server.tool
    def as_dataclass() -> Station:
        return Station("south", 12)

    @server.tool
    def as_model() -> Probe:
        return Probe(id="p1", ok=True)

    @server.tool
    def as_blocks() -> list[content.Content]:
        return [content.text("one"), content.image(b"\x89PNG", "image/png")]

    @server.tool
    def as_explicit() -> ToolResult:
        return ToolResult([content.text("told")], structured={"k": 1}, is_error=True)

    return server


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("as_text", {"content": [{"type": "text", "text": "plain"}]}),
        ("as_number", {"content": [{"type": "text", "text": "5.0"}]}),
        ("as_none", {"content": []}),
        (
            "as_typeddict",
            {
                "content": [{"type": "text", "text": '{"celsius":21.5,"station":"north"}'}],
                "structuredContent": {"celsius": 21.5, "station": "north"},
            },
        ),
        (
            "as_dataclass",
            {
                "content": [{"type": "text", "text": '{"name":"south","height":12}'}],
                "structuredContent": {"name": "south", "height": 12},
            },
        ),
        (
            "as_model",
            {
                "content": [{"type": "text", "text": '{"id":"p1","ok":true}'}],
                "structuredContent": {"id": "p1", "ok": True},
            },
        ),
        (
            "as_blocks",
            {
                "content": [
                    {"type": "text", "text": "one"},
                    {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
                ]
            },
        ),
        (
            "as_explicit",
            {
                "content": [{"type": "text", "text": "told"}],
                "structuredContent": {"k": 1},
                "isError": True,
            },
        ),
    ],
)
async def test_return_values_become_content(tool: str, expected: dict[str, Any]) -> None:
    result = (await Direct(conversions_server()).tool(tool, {})).complete
    assert {k: v for k, v in result.items() if k not in ("resultType", "_meta")} == expected


async def test_structured_returns_advertise_an_output_schema() -> None:
    tools = (await Direct(conversions_server()).call("tools/list")).complete["tools"]
    schemas = {tool["name"]: tool.get("outputSchema") for tool in tools}
    assert schemas["as_text"] is None
    assert schemas["as_blocks"] is None
    assert schemas["as_typeddict"]["required"] == ["celsius", "station"]
    assert schemas["as_dataclass"]["properties"]["height"] == {"type": "integer"}
    assert schemas["as_model"]["properties"]["ok"]["type"] == "boolean"


async def test_structured_content_that_breaks_the_output_schema_is_an_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s")

    @server.tool
    def lies() -> Reading:
        return {"celsius": "warm", "station": "x"}

    @server.tool(output_schema={"type": "object", "required": ["n"]})
    def forgets() -> str:
        return "no structured content at all"

    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        lying = await Direct(server).tool("lies", {})
        forgetting = await Direct(server).tool("forgets", {})
    assert lying.error["code"] == INTERNAL_ERROR
    assert "warm" not in lying.error["message"]
    assert forgetting.error["code"] == INTERNAL_ERROR
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "'lies'" in logged
    assert "celsius" in logged
    assert "'forgets'" in logged
    assert "no structuredContent" in logged


async def test_output_schema_false_turns_derivation_off() -> None:
    server = Server("s")

    @server.tool(output_schema=False)
    def loose() -> Reading:
        return {"celsius": "anything", "station": "x"}

    tools = (await Direct(server).call("tools/list")).complete["tools"]
    assert "outputSchema" not in tools[0]
    assert (await Direct(server).tool("loose", {})).complete["structuredContent"]["celsius"]


async def test_a_tool_that_raises_gives_an_error_result_with_the_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s")

    @server.tool
    def deliberate() -> str:
        raise ToolError("city not found")

    @server.tool
    def crashes() -> str:
        raise RuntimeError("disk on fire")

    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        deliberate_reply = await Direct(server).tool("deliberate", {})
        crash_reply = await Direct(server).tool("crashes", {})
    assert deliberate_reply.complete["isError"] is True
    assert deliberate_reply.complete["content"][0]["text"] == "city not found"
    assert crash_reply.complete["content"][0]["text"] == "disk on fire"
    assert [r.getMessage() for r in caplog.records] == ["tool 'crashes' raised"]


async def test_sync_tools_run_off_the_event_loop() -> None:
    server = Server("s")
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @server.tool
    def blocking() -> str:
        seen.append(threading.get_ident())
        time.sleep(0.3)
        return "slow"

    @server.tool
    async def quick() -> str:
        return "fast"

    direct = Direct(server)
    slow = asyncio.create_task(direct.tool("blocking", {}))
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    assert (await direct.tool("quick", {})).text == "fast"
    assert time.perf_counter() - started < 0.2
    assert (await slow).text == "slow"
    assert seen
    assert seen[0] != loop_thread


async def test_title_annotations_and_icons_are_listed() -> None:
    server = Server("s")
    icon = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}

    @server.tool(
        title="Delete a file",
        annotations={
            "readOnlyHint": False,
            "destructiveHint": True,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        icons=[icon],
        meta={"com.example/owner": "ops"},
    )
    def delete(path: str) -> str:
        """Deletes a file."""
        return ""

    tool = (await Direct(server).call("tools/list")).complete["tools"][0]
    assert tool["title"] == "Delete a file"
    assert tool["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tool["icons"] == [icon]
    assert tool["_meta"] == {"com.example/owner": "ops"}


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"annotations": {"readOnly": True}}, ValueError),
        ({"annotations": {"readOnlyHint": "yes"}}, TypeError),
        ({"icons": [{"mimeType": "image/png"}]}, TypeError),
        ({"icons": [{"src": "x", "theme": "blue"}]}, ValueError),
        ({"name": "has space"}, ValueError),
        ({"name": "slash/name"}, ValueError),
        ({"name": "x" * 129}, ValueError),
        ({"name": "trailing\n"}, ValueError),
        ({"input_schema": {"type": "array"}}, ValueError),
    ],
)
def test_registration_refuses_what_the_spec_forbids(
    options: dict[str, Any], error: type[Exception]
) -> None:
    server = Server("s")

    def tool(x: int = 0) -> str:
        return ""

    with pytest.raises(error):
        server.add_tool(tool, **options)
    assert len(server.tools) == 0


def test_a_duplicate_tool_name_raises() -> None:
    server = Server("s")

    @server.tool
    def same() -> str:
        return ""

    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(same)


async def test_header_metadata_puts_x_mcp_header_on_the_property() -> None:
    server = Server("s")

    @server.tool
    def execute_sql(region: Annotated[str, Header("Region"), "Where to run"], query: str) -> str:
        return region

    tool = server.tools.get("execute_sql")
    assert tool is not None
    assert tool.header_params == {"Region": ("region",)}
    listed = (await Direct(server).call("tools/list")).complete["tools"][0]
    assert listed["inputSchema"]["properties"]["region"] == {
        "type": "string",
        "description": "Where to run",
        "x-mcp-header": "Region",
    }
    assert "x-mcp-header" not in listed["inputSchema"]["properties"]["query"]


def annotated(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (annotated({"r": {"type": "string", "x-mcp-header": ""}}), "token"),
        (annotated({"r": {"type": "string", "x-mcp-header": "Has Space"}}), "token"),
        (annotated({"r": {"type": "string", "x-mcp-header": "a:b"}}), "token"),
        (annotated({"r": {"type": "string", "x-mcp-header": "Région"}}), "token"),
        (annotated({"r": {"type": "string", "x-mcp-header": "a\r\nb"}}), "token"),
        (annotated({"r": {"type": "number", "x-mcp-header": "R"}}), "type"),
        (annotated({"r": {"type": "object", "x-mcp-header": "R"}}), "type"),
        (annotated({"r": {"type": "array", "x-mcp-header": "R"}}), "type"),
        (annotated({"r": {"x-mcp-header": "R"}}), "type"),
        (
            annotated(
                {
                    "a": {"type": "string", "x-mcp-header": "Tenant"},
                    "b": {"type": "string", "x-mcp-header": "tenant"},
                }
            ),
            "duplicates",
        ),
        (
            annotated({"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}}),
            "reachable",
        ),
        (
            annotated({}, anyOf=[{"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}]),
            "reachable",
        ),
        (
            annotated(
                {"r": {"$ref": "#/$defs/r"}},
                **{"$defs": {"r": {"type": "string", "x-mcp-header": "R"}}},
            ),
            "reachable",
        ),
        ({"type": "object", "x-mcp-header": "Root"}, "reachable"),
    ],
)
def test_a_bad_x_mcp_header_refuses_the_tool(schema: dict[str, Any], reason: str) -> None:
    server = Server("s")

    def tool(**arguments: Any) -> str:
        return ""

    with pytest.raises(HeaderAnnotationError, match=reason):
        server.add_tool(tool, input_schema=schema)
    assert "tool" not in server.tools


def test_valid_x_mcp_headers_map_to_their_property_paths() -> None:
    server = Server("s")

    def tool(**arguments: Any) -> str:
        return ""

    registered = server.add_tool(
        tool,
        input_schema=annotated(
            {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "retry": {"type": "boolean", "x-mcp-header": "Retry"},
                "count": {"type": ["integer", "null"], "x-mcp-header": "Count"},
                "options": {
                    "type": "object",
                    "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}},
                },
            }
        ),
    )
    assert registered.header_params == {
        "Region": ("region",),
        "Retry": ("retry",),
        "Count": ("count",),
        "Tenant": ("options", "tenant"),
    }


def test_a_header_name_that_is_not_a_token_fails_where_it_is_written() -> None:
    with pytest.raises(HeaderAnnotationError):
        Header("bad name")


async def test_a_tool_needing_a_client_capability_refuses_clients_without_it() -> None:
    server = Server("s")

    @server.tool(requires={"sampling": {}})
    def needs_sampling() -> str:
        return "ran"

    direct = Direct(server)
    refused = await direct.tool("needs_sampling", {}, capabilities={})
    assert refused.error["code"] == -32021
    assert refused.error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert (await direct.tool("needs_sampling", {}, capabilities={"sampling": {}})).text == "ran"


async def test_a_tool_receives_the_context_it_asks_for() -> None:
    server = Server("s")

    @server.tool
    def whoami(ctx: Context) -> dict[str, Any]:
        return {
            "client": ctx.client_info,
            "version": ctx.protocol_version,
            "sampling": ctx.client_supports("sampling"),
            "principal": ctx.principal,
        }

    reply = await Direct(server, principal="alice").tool("whoami", {}, capabilities={})
    assert reply.complete["structuredContent"] == {
        "client": {"name": "wire-tests", "version": "1.0.0"},
        "version": "2026-07-28",
        "sampling": False,
        "principal": "alice",
    }
