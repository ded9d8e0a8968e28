"""Multi round-trip requests: input_required, inputResponses and sealed requestState
(spec ``basic/patterns/mrtr.mdx``, design §3.1-3.2)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.server import request_state
from mcpkit.server.mrtr import derive_key

from .wire import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CAPABILITY, Direct

KEY = "k" * 40
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ACCEPT_ALICE = {"action": "accept", "content": {"name": "Alice"}}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def asking(**server_options: Any) -> Server:
    server = Server("asking", "1.0.0", state_key=KEY, **server_options)
    runs: dict[str, int] = {}
    server.runs = runs

    @server.tool
    async def greet(ctx: Context) -> str:
        runs["greet"] = runs.get("greet", 0) + 1
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {answer.content['name'] if answer.content else '?'}! ({answer.action})"

    @server.tool
    async def capital(ctx: Context) -> str:
        reply = await ctx.sample("What is the capital of France?", max_tokens=100)
        return reply.text

    @server.tool
    async def roots(ctx: Context) -> str:
        found = await ctx.list_roots()
        return ",".join(root.uri for root in found)

    @server.tool
    async def everything(ctx: Context) -> str:
        name, sample, found = await asyncio.gather(
            ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
            ctx.sample("Greet", max_tokens=50, key="greeting"),
            ctx.list_roots(key="client_roots"),
        )
        assert name.content is not None
        return f"{sample.text} {name.content['name']} {found[0].uri}"

    @server.tool
    async def two_steps(ctx: Context) -> str:
        first = await ctx.elicit("Step 1", NAME_SCHEMA, key="step1")
        color = {"type": "object", "properties": {"color": {"type": "string"}}}
        second = await ctx.elicit("Step 2", color, key="step2")
        assert first.content is not None
        assert second.content is not None
        return f"{first.content['name']} likes {second.content['color']}"

    @server.tool
    async def swallows(ctx: Context) -> str:
        try:
            await ctx.elicit("Name?", NAME_SCHEMA, key="user_name")
        except Exception:
            return "swallowed the interruption"
        return "answered"

    @server.tool
    async def with_args(city: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Confirm {city}?", {"type": "object", "properties": {}})
        return f"{city}: {answer.action}"

    @server.prompt
    async def contextual(ctx: Context) -> str:
        answer = await ctx.elicit(
            "What context?",
            {"type": "object", "properties": {"context": {"type": "string"}}},
            key="user_context",
        )
        return f"context: {(answer.content or {}).get('context')}"

    @server.resource("test://secret")
    async def secret(ctx: Context) -> str:
        answer = await ctx.elicit("Unlock?", {"type": "object", "properties": {}}, key="unlock")
        return "opened" if answer.accepted else "locked"

    @server.prompt
    def plain(x: str = "") -> str:
        return "plain"

    @server.completion(prompt="plain", argument="x")
    async def completes_by_asking(value: str, ctx: Context) -> list[str]:
        await ctx.elicit("Which?", {"type": "object", "properties": {}})
        return []

    return server


def input_requests(reply: Any) -> dict[str, Any]:
    result = reply.result
    assert result["resultType"] == "input_required", result
    assert isinstance(result["requestState"], str)
    assert "ttlMs" not in result
    requests: dict[str, Any] = result["inputRequests"]
    return requests


async def test_a_missing_answer_asks_for_input_and_the_retry_completes() -> None:
    server = asking()
    direct = Direct(server)
    first = await direct.tool("greet", {})
    assert input_requests(first) == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": NAME_SCHEMA,
            },
        }
    }
    retry = await direct.tool(
        "greet",
        {},
        extra={
            "inputResponses": {"user_name": ACCEPT_ALICE},
            "requestState": first.result["requestState"],
        },
    )
    assert retry.text == "Hello, Alice! (accept)"
    assert server.runs["greet"] == 2


async def test_sampling_and_roots_are_asked_and_answered_the_same_way() -> None:
    direct = Direct(asking())
    sample_ask = input_requests(await direct.tool("capital", {}))
    ((key, request),) = sample_ask.items()
    assert request == {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "What is the capital of France?"},
                }
            ],
            "maxTokens": 100,
        },
    }
    assert (
        await direct.tool("capital", {}, extra={"inputResponses": {key: SAMPLED}})
    ).text == "Paris"
    roots_ask = input_requests(await direct.tool("roots", {}))
    ((key, request),) = roots_ask.items()
    assert request == {"method": "roots/list", "params": {}}
    answered = await direct.tool("roots", {}, extra={"inputResponses": {key: ROOTS}})
    assert answered.text == "file:///test/root"


async def test_concurrent_questions_are_all_collected_in_one_round() -> None:
    direct = Direct(asking())
    first = await direct.tool("everything", {})
    asked = input_requests(first)
    assert sorted(asked) == ["client_roots", "greeting", "user_name"]
    assert {r["method"] for r in asked.values()} == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }
    done = await direct.tool(
        "everything",
        {},
        extra={
            "inputResponses": {
                "user_name": ACCEPT_ALICE,
                "greeting": SAMPLED,
                "client_roots": ROOTS,
            },
            "requestState": first.result["requestState"],
        },
    )
    assert done.text == "Paris Alice file:///test/root"


async def test_round_two_sees_round_one_answers_through_the_sealed_state() -> None:
    direct = Direct(asking())
    r1 = await direct.tool("two_steps", {})
    assert list(input_requests(r1)) == ["step1"]
    r2 = await direct.tool(
        "two_steps",
        {},
        extra={
            "inputResponses": {"step1": ACCEPT_ALICE},
            "requestState": r1.result["requestState"],
        },
    )
    assert list(input_requests(r2)) == ["step2"]
    assert r2.result["requestState"] != r1.result["requestState"]
    r3 = await direct.tool(
        "two_steps",
        {},
        extra={
            "inputResponses": {"step2": {"action": "accept", "content": {"color": "blue"}}},
            "requestState": r2.result["requestState"],
        },
    )
    assert r3.text == "Alice likes blue"


async def test_a_handler_cannot_swallow_the_interruption() -> None:
    first = await Direct(asking()).tool("swallows", {})
    assert list(input_requests(first)) == ["user_name"]


async def test_prompts_and_resource_reads_ask_for_input_too() -> None:
    direct = Direct(asking())
    prompt = await direct.call("prompts/get", {"name": "contextual"})
    assert list(input_requests(prompt)) == ["user_context"]
    answered = await direct.call(
        "prompts/get",
        {
            "name": "contextual",
            "inputResponses": {"user_context": {"action": "accept", "content": {"context": "x"}}},
            "requestState": prompt.result["requestState"],
        },
    )
    assert answered.complete["messages"][0]["content"]["text"] == "context: x"
    read = await direct.call("resources/read", {"uri": "test://secret"})
    assert list(input_requests(read)) == ["unlock"]
    opened = await direct.call(
        "resources/read",
        {"uri": "test://secret", "inputResponses": {"unlock": {"action": "accept", "content": {}}}},
    )
    assert opened.complete["contents"][0]["text"] == "opened"
    assert (opened.complete["ttlMs"], opened.complete["cacheScope"]) == (0, "private")


async def test_extra_unknown_input_responses_are_ignored() -> None:
    reply = await Direct(asking()).tool(
        "greet",
        {},
        extra={
            "inputResponses": {
                "user_name": ACCEPT_ALICE,
                "unknown_extra_key": {"action": "accept", "content": {}},
                "another_unexpected": 12345,
            }
        },
    )
    assert reply.text == "Hello, Alice! (accept)"


async def test_an_answer_under_the_wrong_key_asks_again() -> None:
    reply = await Direct(asking()).tool(
        "greet", {}, extra={"inputResponses": {"wrong_key": {"action": "accept", "content": {}}}}
    )
    assert list(input_requests(reply)) == ["user_name"]


@pytest.mark.parametrize(
    "responses",
    [
        {"user_name": 12345},
        {"user_name": {"action": "maybe"}},
        {"user_name": {"action": "accept", "content": "Alice"}},
        {"user_name": {"action": "accept", "content": {"name": {"nested": True}}}},
        {"user_name": {"action": "accept", "content": {"name": 7}}},
        {"user_name": {"action": "accept", "content": {}}},
        {"user_name": SAMPLED},
        None,
        [ACCEPT_ALICE],
        "user_name",
    ],
)
async def test_malformed_input_responses_never_complete(responses: Any) -> None:
    reply = await Direct(asking()).tool("greet", {}, extra={"inputResponses": responses})
    assert reply.error["code"] == INVALID_PARAMS


async def test_a_declined_elicitation_is_an_answer_too() -> None:
    reply = await Direct(asking()).tool(
        "greet", {}, extra={"inputResponses": {"user_name": {"action": "decline"}}}
    )
    assert reply.text == "Hello, ?! (decline)"


@pytest.mark.parametrize(
    ("tool", "capabilities", "required"),
    [
        ("greet", {"sampling": {}, "roots": {}}, {"elicitation": {}}),
        ("greet", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("capital", {"elicitation": {}}, {"sampling": {}}),
        ("roots", {"sampling": {}}, {"roots": {}}),
    ],
)
async def test_input_of_an_undeclared_kind_is_never_asked_for(
    tool: str, capabilities: dict[str, Any], required: dict[str, Any]
) -> None:
    reply = await Direct(asking()).tool(tool, {}, capabilities=capabilities)
    assert reply.error["code"] == MISSING_CAPABILITY
    assert reply.error["data"] == {"requiredCapabilities": required}


async def test_only_tools_prompts_and_reads_may_answer_input_required() -> None:
    direct = Direct(asking())
    completion = await direct.call(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "plain"}, "argument": {"name": "x", "value": ""}},
    )
    assert completion.error["code"] == INTERNAL_ERROR
    for method in ("tools/list", "prompts/list", "resources/list", "server/discover"):
        reply = await direct.call(method, {"inputResponses": {}, "requestState": "x"})
        assert reply.complete["resultType"] == "complete"


def sealed_state(reply: Any) -> str:
    state: str = reply.result["requestState"]
    return state


async def test_tampered_state_is_rejected_with_one_message() -> None:
    direct = Direct(asking())
    state = sealed_state(await direct.tool("greet", {}))
    answers = {"user_name": ACCEPT_ALICE}
    variants = [
        state + "-TAMPERED",
        state[:-1],
        state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1],
        state.replace("v1.", "v2.", 1),
        "v1.e30.AAAA",
        "",
        "not-a-state",
    ]
    for position in range(3, len(state), max(1, len(state) // 40)):
        swapped = "B" if state[position] != "B" else "C"
        variants.append(state[:position] + swapped + state[position + 1 :])
    for variant in variants:
        reply = await direct.tool(
            "greet", {}, extra={"inputResponses": answers, "requestState": variant}
        )
        assert reply.error == {"code": INVALID_PARAMS, "message": "Invalid or expired requestState"}


@pytest.mark.parametrize("state", [None, 5, {"a": 1}, ["x"]])
async def test_a_state_that_is_not_a_string_is_rejected(state: Any) -> None:
    reply = await Direct(asking()).tool("greet", {}, extra={"requestState": state})
    assert reply.error["code"] == INVALID_PARAMS


async def test_state_is_bound_to_the_tool_and_its_arguments() -> None:
    direct = Direct(asking())
    state = sealed_state(await direct.tool("with_args", {"city": "Paris"}))
    same = await direct.tool("with_args", {"city": "Paris"}, extra={"requestState": state})
    assert same.result["resultType"] == "input_required"
    for tool, arguments in (("with_args", {"city": "Lyon"}), ("greet", {})):
        moved = await direct.tool(tool, arguments, extra={"requestState": state})
        assert moved.error["message"] == "Invalid or expired requestState"
    as_prompt = await direct.call("prompts/get", {"name": "contextual", "requestState": state})
    assert as_prompt.error["message"] == "Invalid or expired requestState"


async def test_state_is_bound_to_the_principal() -> None:
    server = asking()
    state = sealed_state(await Direct(server, principal="alice").tool("greet", {}))
    mallory = await Direct(server, principal="mallory").tool(
        "greet", {}, extra={"inputResponses": {"user_name": ACCEPT_ALICE}, "requestState": state}
    )
    assert mallory.error["message"] == "Invalid or expired requestState"
    alice = await Direct(server, principal="alice").tool(
        "greet", {}, extra={"inputResponses": {"user_name": ACCEPT_ALICE}, "requestState": state}
    )
    assert alice.text == "Hello, Alice! (accept)"


async def test_state_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    server = asking(state_ttl=60)
    direct = Direct(server)
    state = sealed_state(await direct.tool("greet", {}))
    monkeypatch.setattr(request_state, "time", LaterClock())
    late = await direct.tool("greet", {}, extra={"requestState": state})
    assert late.error["message"] == "Invalid or expired requestState"


class LaterClock:
    """The clock a minute and a bit from now."""

    def time(self) -> float:
        return time.time() + 61


async def test_replicas_sharing_a_key_accept_each_others_state() -> None:
    state = sealed_state(await Direct(asking()).tool("greet", {}))
    replica = await Direct(asking()).tool(
        "greet", {}, extra={"inputResponses": {"user_name": ACCEPT_ALICE}, "requestState": state}
    )
    assert replica.text == "Hello, Alice! (accept)"
    other = Server("asking", "1.0.0", state_key="z" * 40)
    other.add_tool(asking().tools.get("greet").fn)
    foreign = await Direct(other).tool("greet", {}, extra={"requestState": state})
    assert foreign.error["message"] == "Invalid or expired requestState"


async def test_derived_keys_are_stable_and_distinct() -> None:
    direct = Direct(asking())
    first = input_requests(await direct.tool("with_args", {"city": "Paris"}))
    second = input_requests(await direct.tool("with_args", {"city": "Paris"}))
    other = input_requests(await direct.tool("with_args", {"city": "Lyon"}))
    assert list(first) == list(second)
    assert list(first) != list(other)
    (key,) = first
    assert key.startswith("elicit_")
    assert key == derive_key("elicitation/create", first[key]["params"])


async def test_asking_the_same_question_twice_gets_two_keys() -> None:
    server = Server("s", state_key=KEY)

    @server.tool
    async def dice(ctx: Context) -> str:
        a, b = await asyncio.gather(
            ctx.sample("Roll a die", max_tokens=5), ctx.sample("Roll a die", max_tokens=5)
        )
        return a.text + b.text

    asked = input_requests(await Direct(server).tool("dice", {}))
    keys = sorted(asked)
    assert len(keys) == 2
    assert keys[1] == keys[0] + "_2"


async def test_a_key_reused_for_another_question_is_a_tool_error() -> None:
    server = Server("s", state_key=KEY)

    @server.tool
    async def confused(ctx: Context) -> str:
        await ctx.elicit("One", NAME_SCHEMA, key="same")
        await ctx.elicit("Two", NAME_SCHEMA, key="same")
        return "never"

    reply = await Direct(server).tool(
        "confused", {}, extra={"inputResponses": {"same": ACCEPT_ALICE}}
    )
    assert reply.complete["isError"] is True
    assert "already used" in reply.complete["content"][0]["text"]


def test_a_short_state_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        Server("s", state_key="short")
    monkeypatch.setenv("MCPKIT_STATE_KEY", "also-short")
    with pytest.raises(ValueError, match="MCPKIT_STATE_KEY"):
        Server("s")


async def test_the_state_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_STATE_KEY", KEY)
    server = Server("asking", "1.0.0")
    server.add_tool(asking().tools.get("greet").fn)
    state = sealed_state(await Direct(server).tool("greet", {}))
    keyed = await Direct(asking()).tool(
        "greet", {}, extra={"inputResponses": {"user_name": ACCEPT_ALICE}, "requestState": state}
    )
    assert keyed.text == "Hello, Alice! (accept)"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object"},
        {"type": "object", "properties": {"address": {"type": "object"}}},
        {"type": "object", "properties": {"x": "string"}},
    ],
)
async def test_an_elicitation_schema_must_be_flat(schema: dict[str, Any]) -> None:
    server = Server("s", state_key=KEY)

    @server.tool
    async def bad_form(ctx: Context) -> str:
        await ctx.elicit("?", schema)
        return ""

    reply = await Direct(server).tool("bad_form", {})
    assert reply.complete["isError"] is True


async def test_questions_asked_from_a_task_group_are_collected_too() -> None:
    server = Server("s", state_key=KEY)

    @server.tool
    async def grouped(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            name = group.create_task(ctx.elicit("Name?", NAME_SCHEMA, key="user_name"))
            roots = group.create_task(ctx.list_roots(key="client_roots"))
        return f"{(name.result().content or {}).get('name')} {len(roots.result())}"

    direct = Direct(server)
    first = await direct.tool("grouped", {})
    assert sorted(input_requests(first)) == ["client_roots", "user_name"]
    done = await direct.tool(
        "grouped",
        {},
        extra={
            "inputResponses": {"user_name": ACCEPT_ALICE, "client_roots": ROOTS},
            "requestState": first.result["requestState"],
        },
    )
    assert done.text == "Alice 1"
