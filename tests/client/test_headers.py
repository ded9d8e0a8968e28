"""Request metadata headers (spec ``basic/transports/streamable-http.mdx`` §Standard Request
Headers, §Custom Headers from Tool Parameters, §Value Encoding; ``server/tools.mdx``
§x-mcp-header)."""

from __future__ import annotations

import base64
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import Server
from mcpkit.client.headers import InvalidHeaderAnnotation, header_plan, param_headers
from mcpkit.server.headers import Header
from mcpkit.transports.http_client import encode_header_value, standard_headers


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us west 1", "us west 1"),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("", ""),
    ],
)
def test_values_are_encoded_as_the_spec_table_shows(value: str, header: str) -> None:
    assert encode_header_value(value) == header


@given(st.text(max_size=40))
def test_every_encoded_value_is_a_safe_header_that_decodes_back(value: str) -> None:
    header = encode_header_value(value)
    assert all(0x20 <= ord(ch) <= 0x7E for ch in header)
    if header.startswith("=?base64?") and header.endswith("?=") and header != value:
        assert base64.b64decode(header[9:-2]).decode("utf-8") == value
    else:
        assert header == value


def test_standard_headers_mirror_method_name_and_version() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    call = {"method": "tools/call", "params": {"name": "get_weather", "_meta": meta}}
    read = {"method": "resources/read", "params": {"uri": "file:///a b.txt", "_meta": meta}}
    listing = {"method": "tools/list", "params": {"_meta": meta}}
    assert standard_headers(call) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "get_weather",
    }
    assert standard_headers(read)["Mcp-Name"] == "file:///a b.txt"
    assert "Mcp-Name" not in standard_headers(listing)
    odd = {"method": "prompts/get", "params": {"name": "prompt ✓", "_meta": meta}}
    assert standard_headers(odd)["Mcp-Name"].startswith("=?base64?")


def schema(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties}


def test_annotated_values_become_param_headers_with_their_wire_spelling() -> None:
    plan = header_plan(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
            empty={"type": "string", "x-mcp-header": "Empty"},
            method={"type": "string", "x-mcp-header": "Method"},
            nested=schema(zone={"type": "string", "x-mcp-header": "Zone"}),
            query={"type": "string"},
            score={"type": "number"},
        )
    )
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": False,
        "empty": "",
        "method": "m",
        "nested": {"zone": "b"},
        "query": "SELECT 1",
        "score": 3.5,
    }
    assert param_headers(plan, arguments) == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Empty": "",
        "Mcp-Param-Method": "m",
        "Mcp-Param-Zone": "b",
    }


def test_null_or_absent_values_send_no_header() -> None:
    plan = header_plan(schema(verbose={"type": "boolean", "x-mcp-header": "Verbose"}))
    assert param_headers(plan, {"verbose": None}) == {}
    assert param_headers(plan, {}) == {}
    assert param_headers(plan, None) == {}


@pytest.mark.parametrize(
    ("properties", "reason"),
    [
        ({"v": {"type": "string", "x-mcp-header": ""}}, "non-empty"),
        ({"v": {"type": "object", "x-mcp-header": "Data"}}, "string, integer or boolean"),
        ({"v": {"type": "array", "x-mcp-header": "Items"}}, "string, integer or boolean"),
        ({"v": {"type": "null", "x-mcp-header": "Nil"}}, "string, integer or boolean"),
        ({"v": {"type": "number", "x-mcp-header": "Score"}}, "string, integer or boolean"),
        (
            {"v": {"type": ["string", "integer"], "x-mcp-header": "Either"}},
            "string, integer or boolean",
        ),
        ({"v": {"type": ["null"], "x-mcp-header": "Nothing"}}, "string, integer or boolean"),
        ({"v": {"type": "string", "x-mcp-header": "My Region"}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "Région"}}, "token"),
        ({"v": {"type": "string", "x-mcp-header": "Region\t1"}}, "token"),
        (
            {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"},
            },
            "duplicates",
        ),
        (
            {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}},
            "reachable",
        ),
        (
            {"v": {"anyOf": [{"type": "string", "x-mcp-header": "Alt"}]}},
            "reachable",
        ),
    ],
)
def test_invalid_annotations_make_the_tool_invalid(properties: object, reason: str) -> None:
    with pytest.raises(InvalidHeaderAnnotation, match=reason):
        header_plan({"type": "object", "properties": properties})


def test_a_nullable_primitive_may_be_mirrored_and_null_sends_no_header() -> None:
    plan = header_plan(schema(region={"type": ["string", "null"], "x-mcp-header": "Region"}))
    assert param_headers(plan, {"region": "eu-west"}) == {"Mcp-Param-Region": "eu-west"}
    assert param_headers(plan, {"region": None}) == {}


def test_the_servers_own_nullable_header_parameter_is_accepted() -> None:
    server = Server("headers", "1.0.0")

    @server.tool
    async def route(region: Annotated[str | None, Header("Region")] = None) -> str:
        """Route by region."""
        return region or "anywhere"

    tool = server.tools.get("route")
    assert tool is not None
    assert header_plan(tool.wire["inputSchema"])


def test_a_schema_without_annotations_has_an_empty_plan() -> None:
    assert not header_plan(schema(a={"type": "string"}))
    assert not header_plan(None)
