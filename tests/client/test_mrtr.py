"""The multi round-trip driver (spec ``basic/patterns/mrtr.mdx``) and the handlers that
also answer legacy server-to-client requests (``2025-11-25/client/*.mdx``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import Handlers, ServerMisbehaved, accept, apply_defaults
from mcpkit.client.handlers import default_content

from .conftest import Recorder

Peer = Callable[..., list[str]]
ROOTS = [{"uri": "file:///work", "name": "work"}]


def answering_client(command: list[str], **options: Any) -> Client:
    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        return accept({"name": "Ada"})

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"}

    return Client.stdio(command, elicitation=elicit, sampling=sample, roots=ROOTS, **options)


async def test_input_required_is_answered_and_retried_with_a_new_id_and_the_same_state(
    peer: Peer, record: Recorder
) -> None:
    async with answering_client(peer(), mode="modern") as client:
        result = await client.call_tool("ask")
    first, retry = record.calls("ask")
    assert retry["id"] != first["id"]
    assert "inputResponses" not in first["params"]
    assert retry["params"]["requestState"] == 's\u00e9aled "state" 1'
    assert retry["params"]["inputResponses"] == {
        "who": {"action": "accept", "content": {"name": "Ada", "age": 42}},
        "llm": {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"},
        "where": {"roots": ROOTS},
    }
    assert json.loads(result.text)["state"] == 's\u00e9aled "state" 1'


async def test_several_input_requests_are_answered_concurrently(peer: Peer) -> None:
    started: list[str] = []
    all_started = asyncio.Event()

    async def wait_for_all(kind: str) -> None:
        started.append(kind)
        if len(started) == 3:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), 5)

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        await wait_for_all("elicit")
        return accept({"name": "x"})

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        await wait_for_all("sample")
        return {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"}

    async def roots() -> list[dict[str, Any]]:
        await wait_for_all("roots")
        return ROOTS

    client = Client.stdio(peer(), mode="modern", elicitation=elicit, sampling=sample, roots=roots)
    async with client:
        await client.call_tool("ask")
    assert sorted(started) == ["elicit", "roots", "sample"]


async def test_a_retry_carries_no_request_state_when_the_server_gave_none(
    peer: Peer, record: Recorder
) -> None:
    async with answering_client(peer(), mode="modern") as client:
        result = await client.call_tool("multi")
    rounds = record.calls("multi")
    assert len(rounds) == 3
    assert "requestState" not in rounds[1]["params"]
    assert rounds[2]["params"]["requestState"] == "S2"
    assert len({r["id"] for r in rounds}) == 3
    assert result.text == "done with state S2"


async def test_a_result_without_result_type_is_complete_and_not_retried(
    peer: Peer, record: Recorder
) -> None:
    async with answering_client(peer(), mode="modern") as client:
        assert (await client.call_tool("bare")).text == "bare"
    assert len(record.calls("bare")) == 1


async def test_an_unknown_result_type_is_invalid(peer: Peer) -> None:
    async with answering_client(peer(), mode="modern") as client:
        with pytest.raises(ServerMisbehaved, match="maybe_later"):
            await client.call_tool("weird")


async def test_the_rounds_are_capped(peer: Peer, record: Recorder) -> None:
    async with answering_client(peer(), mode="modern", max_rounds=3) as client:
        with pytest.raises(ServerMisbehaved, match="3 rounds"):
            await client.call_tool("endless")
    assert len(record.calls("endless")) == 4


async def test_an_input_request_the_client_did_not_declare_is_refused(peer: Peer) -> None:
    async with Client.stdio(peer(), mode="modern", roots=ROOTS) as client:
        assert "elicitation" not in client.capabilities
        with pytest.raises(ServerMisbehaved, match="did not declare"):
            await client.call_tool("ask")


async def test_capabilities_follow_the_handlers_in_both_eras() -> None:
    handlers = Handlers(elicitation=lambda p: accept(), roots=ROOTS)
    assert handlers.capabilities("modern") == {"elicitation": {"form": {}}, "roots": {}}
    assert handlers.capabilities("legacy") == {
        "elicitation": {"form": {}},
        "roots": {"listChanged": True},
    }


async def test_the_same_handler_answers_a_legacy_server_request_with_defaults_applied(
    peer: Peer, record: Recorder
) -> None:
    seen: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return accept({"tz": "UTC"})

    async with Client.stdio(peer("--era", "legacy"), mode="legacy", elicitation=elicit) as c:
        result = await c.call_tool("ask")
    assert seen[0]["message"] == "Name?"
    assert json.loads(result.text) == {"action": "accept", "content": {"name": "Ada", "tz": "UTC"}}
    answer = next(m for m in record.messages() if "result" in m)
    assert answer["id"] == "srv-1"


async def test_a_legacy_request_without_a_handler_gets_method_not_found(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer("--era", "legacy"), mode="legacy") as client:
        result = await client.call_tool("ask")
    assert json.loads(result.text)["code"] == -32601


def test_elicitation_defaults_fill_only_what_the_user_left_out() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
            "nick": {"type": "string"},
        },
    }
    assert default_content(schema) == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    assert apply_defaults(schema, {"age": 31, "nick": "jd"})["age"] == 31
    assert apply_defaults(schema, {"nick": "jd"})["nick"] == "jd"
    assert apply_defaults(None, {"a": 1}) == {"a": 1}


async def test_declined_elicitations_get_no_defaults_added() -> None:
    handlers = Handlers(elicitation=lambda params: {"action": "decline"})
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}}
    result = await handlers.answer("elicitation/create", {"requestedSchema": schema})
    assert result == {"action": "decline"}
