"""``examples/everything_server.py --stdio`` answers the whole fixture catalogue of
``conformance.md`` §6.4-6.5, spoken to in raw JSON lines over a real pipe.

One server process serves this module; every frame it writes is checked against the
spec schema as it arrives, and it must exit cleanly when stdin closes.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from .wire import EXAMPLES, SERVER_INFO, SUBSCRIPTION_ID, StdioPeer, stdio_peer

pytestmark = pytest.mark.asyncio(loop_scope="module")

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "=="
)
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
ELICIT_OK = {"action": "accept", "content": {"name": "Alice"}}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}

TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "json_schema_2020_12_tool",
    "test_x_mcp_header",
    "test_reconnection",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_logging_tool",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
]

ids = itertools.count(1)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[StdioPeer]:
    async with stdio_peer(EXAMPLES / "everything_server.py", "--stdio") as peer:
        yield peer
        assert await peer.finish() == 0


async def call(
    peer: StdioPeer, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    request_id = next(ids)
    response = await peer.call(request_id, method, params, **meta)
    assert response["id"] == request_id
    return response


async def result(
    peer: StdioPeer, method: str, params: dict[str, Any] | None = None, **meta: Any
) -> dict[str, Any]:
    response = await call(peer, method, params, **meta)
    assert "result" in response, response
    got: dict[str, Any] = response["result"]
    assert got["_meta"][SERVER_INFO] == {"name": "mcpkit-everything", "version": "1.0.0"}
    return got


async def tool(
    peer: StdioPeer, name: str, arguments: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    params.update(kw.pop("extra", {}))
    return await result(peer, "tools/call", params, **kw)


async def test_discover_names_the_server_and_its_capabilities(server: StdioPeer) -> None:
    found = await result(server, "server/discover")
    assert found["supportedVersions"] == ["2026-07-28"]
    assert found["capabilities"] == {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "completions": {},
        "logging": {},
    }
    assert (found["ttlMs"], found["cacheScope"]) == (0, "public")


async def test_every_fixture_tool_is_listed_with_a_description_in_a_stable_order(
    server: StdioPeer,
) -> None:
    listed = (await result(server, "tools/list"))["tools"]
    assert [t["name"] for t in listed] == TOOLS
    assert all(t["description"] and t["inputSchema"]["type"] == "object" for t in listed)
    again = (await result(server, "tools/list"))["tools"]
    assert again == listed
    by_name = {t["name"]: t for t in listed}
    assert by_name["test_x_mcp_header"]["inputSchema"]["properties"]["region"]["x-mcp-header"] == (
        "Region"
    )
    schema = by_name["json_schema_2020_12_tool"]["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["allOf"][0]["anyOf"] == [{"required": ["phone"]}, {"required": ["email"]}]
    assert {"if", "then", "else"} <= set(schema)
    assert schema["additionalProperties"] is False
    assert by_name["test_sampling"]["inputSchema"]["required"] == ["prompt"]
    assert by_name["test_elicitation"]["inputSchema"]["required"] == ["message"]


async def test_content_tools_return_their_fixtures(server: StdioPeer) -> None:
    assert (await tool(server, "test_simple_text"))["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert (await tool(server, "test_image_content", {}))["content"] == [
        {"type": "image", "data": PNG, "mimeType": "image/png"}
    ]
    assert (await tool(server, "test_audio_content", {}))["content"] == [
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"}
    ]
    assert (await tool(server, "test_embedded_resource", {}))["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]
    mixed = (await tool(server, "test_multiple_content_types", {}))["content"]
    assert [block["type"] for block in mixed] == ["text", "image", "resource"]
    assert mixed[0]["text"] == "Multiple content types test:"
    assert mixed[2]["resource"] == {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": '{"test":"data","value":123}',
    }
    failed = await tool(server, "test_error_handling", {})
    assert failed["isError"] is True
    assert failed["content"][0]["text"] == "This tool intentionally returns an error for testing"
    echoed = await tool(server, "json_schema_2020_12_tool", {"name": "n", "email": "e@x"})
    assert echoed["content"][0]["text"] == "received ['email', 'name']"
    assert (await tool(server, "test_x_mcp_header", {"region": "us-west1", "query": "q"}))[
        "content"
    ][0]["text"] == "region=us-west1"
    assert (await tool(server, "test_reconnection", {}))["resultType"] == "complete"


async def test_progress_notifications_carry_the_token_and_increase(server: StdioPeer) -> None:
    request_id = next(ids)
    await server.request(
        request_id, "tools/call", {"name": "test_tool_with_progress"}, progress="progress-test-1"
    )
    response = await server.response(request_id)
    assert response["result"]["content"][0]["text"].startswith("Progress test completed")
    progress = [
        f["params"]
        for f in server.seen
        if f.get("method") == "notifications/progress"
        and f["params"]["progressToken"] == "progress-test-1"
    ]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert all(p["total"] == 100 for p in progress)


async def test_log_messages_flow_only_when_a_level_is_set(server: StdioPeer) -> None:
    before = len(server.seen)
    await tool(server, "test_logging_tool", {})
    await tool(server, "test_tool_with_logging", {})
    assert not any(f.get("method") == "notifications/message" for f in server.seen[before:])
    await tool(server, "test_tool_with_logging", {}, log_level="info")
    messages = [
        f["params"] for f in server.seen[before:] if f.get("method") == "notifications/message"
    ]
    assert [m["data"] for m in messages] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert {m["level"] for m in messages} == {"info"}


async def retry_until_complete(
    server: StdioPeer,
    name: str,
    answers: dict[str, Any],
    *,
    method: str = "tools/call",
    rounds: int = 3,
    **meta: Any,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drive a multi round-trip request like a client: answer every input request."""
    asked: list[dict[str, Any]] = []
    extra: dict[str, Any] = {}
    for _ in range(rounds):
        params: dict[str, Any] = {"name": name, **extra}
        if method == "tools/call":
            params["arguments"] = {}
        got = await result(server, method, params, **meta)
        if got["resultType"] == "complete":
            return asked, got
        assert got["resultType"] == "input_required"
        asked.append(got["inputRequests"])
        responses = {}
        for key, request in got["inputRequests"].items():
            responses[key] = answers[request["method"]](key)
        extra = {"inputResponses": responses, "requestState": got["requestState"]}
    raise AssertionError(f"{name} did not complete in {rounds} rounds")


MOCK = {
    "elicitation/create": lambda key: (
        {"action": "accept", "content": {"color": "blue"}}
        if key == "step2"
        else {"action": "accept", "content": {"ok": True}}
        if key == "confirm"
        else {"action": "accept", "content": {"context": "test context"}}
        if key == "user_context"
        else {"action": "accept", "content": {"word": "yes"}}
        if key == "word"
        else ELICIT_OK
    ),
    "sampling/createMessage": lambda key: SAMPLED,
    "roots/list": lambda key: ROOTS,
}


@pytest.mark.parametrize(
    ("name", "rounds", "text"),
    [
        ("test_input_required_result_elicitation", [["user_name"]], "Hello, Alice!"),
        ("test_input_required_result_sampling", [["capital_question"]], "The model says: Paris"),
        ("test_input_required_result_list_roots", [["client_roots"]], "Roots: file:///test/root"),
        ("test_input_required_result_request_state", [["confirm"]], "state-ok: confirmed=True"),
        (
            "test_input_required_result_multiple_inputs",
            [["client_roots", "greeting", "user_name"]],
            "Paris Alice (1 roots)",
        ),
        ("test_input_required_result_multi_round", [["step1"], ["step2"]], "Alice likes blue"),
        ("test_input_required_result_tampered_state", [["confirm"]], "confirmed=True"),
        ("test_sampling", [None], "LLM response: Paris"),
        ("test_elicitation", [None], None),
        ("test_streaming_elicitation", [["word"]], "elicitation accept"),
    ],
)
async def test_input_required_fixtures_complete_after_their_rounds(
    server: StdioPeer, name: str, rounds: list[list[str] | None], text: str | None
) -> None:
    if name in ("test_sampling", "test_elicitation"):
        arguments = {"prompt": "Capital?"} if name == "test_sampling" else {"message": "Why?"}
        first = await tool(server, name, arguments)
        assert first["resultType"] == "input_required"
        ((key, request),) = first["inputRequests"].items()
        assert request["method"] == (
            "sampling/createMessage" if name == "test_sampling" else "elicitation/create"
        )
        response = (
            SAMPLED
            if name == "test_sampling"
            else {"action": "accept", "content": {"response": "ok"}}
        )
        done = await tool(
            server,
            name,
            arguments,
            extra={"inputResponses": {key: response}, "requestState": first["requestState"]},
        )
        assert done["resultType"] == "complete"
        if text is not None:
            assert done["content"][0]["text"] == text
        return
    asked, done = await retry_until_complete(server, name, MOCK)
    assert [sorted(keys) for keys in asked] == rounds
    assert done["content"][0]["text"] == text


async def test_the_prompt_fixture_asks_through_prompts_get(server: StdioPeer) -> None:
    asked, done = await retry_until_complete(
        server, "test_input_required_result_prompt", MOCK, method="prompts/get"
    )
    assert [list(keys) for keys in asked] == [["user_context"]]
    assert done["messages"][0]["content"]["text"] == "Use this context: test context"


async def test_a_tampered_state_is_a_protocol_error(server: StdioPeer) -> None:
    first = await tool(server, "test_input_required_result_tampered_state", {})
    response = await call(
        server,
        "tools/call",
        {
            "name": "test_input_required_result_tampered_state",
            "arguments": {},
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
            "requestState": first["requestState"] + "-TAMPERED",
        },
    )
    assert response["error"] == {"code": -32602, "message": "Invalid or expired requestState"}


async def test_input_requests_follow_the_declared_capabilities(server: StdioPeer) -> None:
    only_sampling = await tool(
        server, "test_input_required_result_capabilities", {}, capabilities={"sampling": {}}
    )
    assert only_sampling["resultType"] == "input_required"
    assert {r["method"] for r in only_sampling["inputRequests"].values()} == {
        "sampling/createMessage"
    }
    nothing = await tool(server, "test_input_required_result_capabilities", {}, capabilities={})
    assert nothing["content"][0]["text"] == "asked for: nothing (no input capabilities)"


@pytest.mark.parametrize(
    "inputs", [{"user_name": 12345}, None, {"user_name": {"action": "accept", "content": {}}}]
)
async def test_malformed_input_never_completes(server: StdioPeer, inputs: Any) -> None:
    response = await call(
        server,
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "inputResponses": inputs,
        },
    )
    assert response["error"]["code"] == -32602


async def test_extra_input_responses_are_ignored(server: StdioPeer) -> None:
    done = await tool(
        server,
        "test_input_required_result_elicitation",
        {},
        extra={
            "inputResponses": {
                "user_name": ELICIT_OK,
                "unknown_extra_key": {"x": 1},
                "another_unexpected": 5,
            }
        },
    )
    assert done["content"][0]["text"] == "Hello, Alice!"


async def test_missing_capability_is_refused_with_an_object_of_capabilities(
    server: StdioPeer,
) -> None:
    response = await call(
        server, "tools/call", {"name": "test_missing_capability"}, capabilities={}
    )
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_unknown_tools_and_resources_are_invalid_params(server: StdioPeer) -> None:
    unknown_tool = await call(server, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert unknown_tool["error"] == {"code": -32602, "message": "Unknown tool: no_such_tool"}
    uri = "test://nonexistent-resource-for-conformance-testing"
    unknown = await call(server, "resources/read", {"uri": uri})
    assert unknown["error"]["code"] == -32602
    assert unknown["error"]["data"] == {"uri": uri}


async def test_removed_methods_are_method_not_found(server: StdioPeer) -> None:
    for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        response = await call(server, method, {})
        assert response["error"]["code"] == -32601


async def test_resources_templates_and_reads(server: StdioPeer) -> None:
    listed = (await result(server, "resources/list"))["resources"]
    assert [r["uri"] for r in listed] == [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ]
    assert all(r["name"] for r in listed)
    first = await result(server, "resources/read", {"uri": listed[0]["uri"]})
    assert first["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert {"ttlMs", "cacheScope"} <= set(first)
    binary = await result(server, "resources/read", {"uri": "test://static-binary"})
    assert binary["contents"] == [
        {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}
    ]
    templates = (await result(server, "resources/templates/list"))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    data = await result(server, "resources/read", {"uri": "test://template/123/data"})
    assert json.loads(data["contents"][0]["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
    watched = await result(server, "resources/read", {"uri": "test://watched-resource"})
    assert watched["contents"][0]["text"] == "Watched resource content"


async def test_prompts_render_their_fixtures(server: StdioPeer) -> None:
    listed = (await result(server, "prompts/list"))["prompts"]
    assert [p["name"] for p in listed] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ]
    assert all(p["description"] for p in listed)
    simple = await result(server, "prompts/get", {"name": "test_simple_prompt"})
    assert simple["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]
    with_args = await result(
        server,
        "prompts/get",
        {
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "testValue1", "arg2": "testValue2"},
        },
    )
    assert with_args["messages"][0]["content"]["text"] == (
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    )
    embedded = await result(
        server,
        "prompts/get",
        {
            "name": "test_prompt_with_embedded_resource",
            "arguments": {"resourceUri": "test://example-resource"},
        },
    )
    assert embedded["messages"][0]["content"] == {
        "type": "resource",
        "resource": {
            "uri": "test://example-resource",
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        },
    }
    image = await result(server, "prompts/get", {"name": "test_prompt_with_image"})
    assert image["messages"][0]["content"] == {
        "type": "image",
        "data": PNG,
        "mimeType": "image/png",
    }
    missing = await call(server, "prompts/get", {"name": "test_prompt_with_arguments"})
    assert missing["error"]["code"] == -32602


async def test_completion_answers_for_prompts_and_templates(server: StdioPeer) -> None:
    prompt = await result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "test"},
        },
    )
    assert prompt["completion"] == {"values": [], "total": 0, "hasMore": False}
    template = await result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
            "argument": {"name": "id", "value": "4"},
        },
    )
    assert template["completion"]["values"] == ["456"]


async def test_listen_streams_share_stdout_and_get_only_what_they_asked(server: StdioPeer) -> None:
    tools_id, prompts_id = "listen-tools", "listen-prompts"
    await server.request(
        tools_id, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
    )
    await server.request(
        prompts_id, "subscriptions/listen", {"notifications": {"promptsListChanged": True}}
    )
    for subscription in (tools_id, prompts_id):
        ack = await server.next(
            lambda f, s=subscription: (
                f.get("method") == "notifications/subscriptions/acknowledged"
                and f["params"]["_meta"][SUBSCRIPTION_ID] == s
            )
        )
        assert ack["params"]["notifications"]
    assert (await tool(server, "test_trigger_tool_change", {}))["content"][0]["text"] == (
        "Tool list changed"
    )
    assert (await tool(server, "test_trigger_prompt_change", {}))["content"][0]["text"] == (
        "Prompt list changed"
    )
    tools_changed = await server.next(
        lambda f: f.get("method") == "notifications/tools/list_changed"
    )
    prompts_changed = await server.next(
        lambda f: f.get("method") == "notifications/prompts/list_changed"
    )
    assert tools_changed["params"]["_meta"][SUBSCRIPTION_ID] == tools_id
    assert prompts_changed["params"]["_meta"][SUBSCRIPTION_ID] == prompts_id
    tagged = [
        f
        for f in server.seen
        if f.get("method", "").endswith("list_changed")
        and f["params"]["_meta"][SUBSCRIPTION_ID] == prompts_id
    ]
    assert {f["method"] for f in tagged} == {"notifications/prompts/list_changed"}
    assert [t["name"] for t in (await result(server, "tools/list"))["tools"]] == TOOLS
    for subscription in (tools_id, prompts_id):
        await server.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": subscription},
            }
        )
    assert await server.quiet(0.2) == []


async def test_every_line_on_stdout_was_one_compact_json_message(server: StdioPeer) -> None:
    assert server.lines
    for line in server.lines:
        assert line.endswith(b"\n")
        assert b"\n" not in line[:-1]
        assert json.loads(line) in server.seen
