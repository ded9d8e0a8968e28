"""A legacy client of ``examples/everything_server.py --stdio``: the handshake, the
fixture catalogue of ``conformance.md`` §6.3-6.4, and the server's own requests on
stdout answered on stdin (spec ``2025-11-25/basic/transports.mdx`` §stdio: messages
in both directions, including responses from the client).

Each test starts a real server process; every frame it writes is validated against the
2025-11-25 schema as it arrives, and the process must exit cleanly when stdin closes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from .legacy_wire import LATEST_LEGACY, LegacyStdioPeer, legacy_stdio_peer
from .wire import EXAMPLES

SERVER = EXAMPLES / "everything_server.py"
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}


@pytest_asyncio.fixture
async def peer() -> AsyncIterator[LegacyStdioPeer]:
    async with legacy_stdio_peer(SERVER, "--stdio") as running:
        yield running
        assert await running.finish() == 0


async def test_the_handshake_negotiates_the_newest_legacy_version_over_stdio(
    peer: LegacyStdioPeer,
) -> None:
    init = await peer.initialize({"sampling": {}, "elicitation": {}})
    assert init["protocolVersion"] == LATEST_LEGACY
    assert init["serverInfo"]["name"] == "mcpkit-everything"
    reply = await peer.ask(1, "tools/call", {"name": "test_simple_text"})
    assert reply["result"]["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]


async def test_sampling_goes_out_on_stdout_and_the_answer_comes_back_on_stdin(
    peer: LegacyStdioPeer,
) -> None:
    await peer.initialize({"sampling": {}})
    await peer.post(1, "tools/call", {"name": "test_sampling", "arguments": {"prompt": "Capital?"}})
    request = await peer.server_request("sampling/createMessage")
    assert request["params"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital?"}}],
        "maxTokens": 100,
    }
    await peer.answer(request, SAMPLED)
    reply = await peer.response(1)
    assert reply["result"]["content"][0]["text"] == "LLM response: Paris"


async def test_elicitation_with_defaults_is_asked_over_stdio(peer: LegacyStdioPeer) -> None:
    await peer.initialize({"elicitation": {}})
    await peer.post(1, "tools/call", {"name": "test_elicitation_sep1034_defaults"})
    request = await peer.server_request("elicitation/create")
    properties = request["params"]["requestedSchema"]["properties"]
    assert properties["name"]["default"] == "John Doe"
    assert properties["score"]["default"] == 95.5
    await peer.answer(request, {"action": "accept", "content": {"name": "Jane"}})
    reply = await peer.response(1)
    assert "action=accept" in reply["result"]["content"][0]["text"]


async def test_list_changes_are_written_to_stdout(peer: LegacyStdioPeer) -> None:
    await peer.initialize()
    await peer.ask(1, "tools/call", {"name": "test_trigger_tool_change"})
    changed = await peer.next(lambda f: f.get("method") == "notifications/tools/list_changed")
    assert "params" not in changed or changed["params"] == {}


async def test_logging_follows_the_level_set_for_the_process(peer: LegacyStdioPeer) -> None:
    await peer.initialize()
    assert (await peer.ask(1, "logging/setLevel", {"level": "debug"}))["result"] == {}
    await peer.ask(2, "tools/call", {"name": "test_tool_with_logging"})
    messages = [f for f in peer.seen if f.get("method") == "notifications/message"]
    assert [m["params"]["data"] for m in messages] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert (await peer.ask(3, "logging/setLevel", {"level": "error"}))["result"] == {}
    await peer.ask(4, "tools/call", {"name": "test_tool_with_logging"})
    assert len([f for f in peer.seen if f.get("method") == "notifications/message"]) == 3


async def test_a_modern_request_in_the_same_process_stays_modern(peer: LegacyStdioPeer) -> None:
    await peer.initialize()
    reply = await peer.modern(1, "tools/call", {"name": "test_simple_text"})
    assert reply["result"]["resultType"] == "complete"
    legacy = await peer.ask(2, "tools/call", {"name": "test_simple_text"})
    assert "resultType" not in legacy["result"]


async def test_end_of_input_with_a_question_outstanding_exits_cleanly(
    peer: LegacyStdioPeer,
) -> None:
    await peer.initialize({"elicitation": {}})
    await peer.post(1, "tools/call", {"name": "test_elicitation", "arguments": {"message": "?"}})
    await peer.server_request("elicitation/create")


async def test_every_list_and_every_fixture_is_valid_for_the_legacy_schema(
    peer: LegacyStdioPeer,
) -> None:
    await peer.initialize()
    ids = iter(range(1, 1000))
    tools = (await peer.ask(next(ids), "tools/list"))["result"]["tools"]
    for name in (
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_error_handling",
    ):
        assert name in [tool["name"] for tool in tools]
        assert "result" in await peer.ask(next(ids), "tools/call", {"name": name})
    resources = (await peer.ask(next(ids), "resources/list"))["result"]["resources"]
    for resource in resources:
        read = await peer.ask(next(ids), "resources/read", {"uri": resource["uri"]})
        assert read["result"]["contents"][0]["uri"] == resource["uri"]
    await peer.ask(next(ids), "resources/templates/list")
    read = await peer.ask(next(ids), "resources/read", {"uri": "test://template/123/data"})
    assert "123" in read["result"]["contents"][0]["text"]
    prompts = (await peer.ask(next(ids), "prompts/list"))["result"]["prompts"]
    for prompt in prompts:
        if prompt["name"].startswith("test_input_required"):
            continue
        arguments = {a["name"]: "test://x" for a in prompt.get("arguments", [])}
        got = await peer.ask(
            next(ids), "prompts/get", {"name": prompt["name"], "arguments": arguments}
        )
        assert got["result"]["messages"]
    completed = await peer.ask(
        next(ids),
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "pa"},
        },
    )
    assert completed["result"]["completion"]["values"] == ["paris", "park", "parallel"]
