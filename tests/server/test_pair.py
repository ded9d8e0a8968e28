"""The modern server through the in-memory pair (``mcpkit.testing.connect``): a real
client drives resources, prompts, completion, multi round-trip input and a listen
stream end to end."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import Client
from mcpkit.testing import connect

from .wire import load_example

build_server = load_example("everything_server").build_server


async def name_is_alice(params: dict[str, Any]) -> dict[str, Any]:
    """A user who fills every field: name Alice, colour green, yes to everything."""
    answers = {"name": "Alice", "color": "green"}
    content = {
        field: True if schema.get("type") == "boolean" else answers.get(field, "some text")
        for field, schema in params["requestedSchema"]["properties"].items()
    }
    return {"action": "accept", "content": content}


async def model_says_paris(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "test-model",
        "stopReason": "endTurn",
    }


def pair(**options: Any) -> Any:
    return connect(
        build_server(),
        mode="modern",
        elicitation=name_is_alice,
        sampling=model_says_paris,
        roots=[{"uri": "file:///test/root", "name": "Test Root"}],
        **options,
    )


async def test_a_client_completes_every_round_trip_of_a_multi_round_tool() -> None:
    async with pair() as client:
        result = await client.call_tool("test_input_required_result_multi_round", {})
        assert result.text == "Alice likes green"
        gathered = await client.call_tool("test_input_required_result_multiple_inputs", {})
        assert gathered.text == "Paris Alice (1 roots)"


async def test_a_client_reads_resources_and_renders_prompts() -> None:
    async with pair() as client:
        resources = await client.list_resources()
        assert resources[0]["uri"] == "test://static-text"
        read = await client.read_resource("test://template/7/data")
        assert '"id":"7"' in read["contents"][0]["text"]
        prompt = await client.get_prompt(
            "test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}
        )
        assert "testValue1" in prompt["messages"][0]["content"]["text"]
        asked = await client.get_prompt("test_input_required_result_prompt")
        assert asked["messages"]
        completion = await client.complete(
            {"type": "ref/resource", "uri": "test://template/{id}/data"},
            {"name": "id", "value": "1"},
        )
        assert completion["completion"]["values"] == ["123"]


async def test_a_client_subscription_hears_list_changes() -> None:
    async with pair() as client:
        assert isinstance(client, Client)
        async with client.subscribe(tools=True) as subscription:
            await client.call_tool("test_trigger_tool_change", {})
            change = await asyncio.wait_for(subscription.next(), 5)
        assert change["method"] == "notifications/tools/list_changed"
