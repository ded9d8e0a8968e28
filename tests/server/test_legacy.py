"""Legacy sessions on a dual-era server (spec ``2026-07-28/basic/versioning.mdx``
§Backward Compatibility; the legacy revision ``2025-11-25``: ``basic/lifecycle.mdx``,
``basic/utilities/*.mdx``, ``server/*.mdx``, ``client/*.mdx``).

Everything runs through the real stream connection (the stdio transport's, in memory);
every message the server sends is validated against the 2025-11-25 schema, and no
legacy result may carry a modern-only field (see :mod:`.legacy_wire`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Context, Server
from mcpkit.protocol.versions import LEGACY_VERSIONS
from mcpkit.server import CacheHint
from mcpkit.server.bus import InMemoryBus

from .legacy_wire import LATEST_LEGACY, LegacyMemoryPeer, legacy_memory_peer
from .wire import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_CAPABILITY, memory_peer

INVALID_REQUEST = -32600
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def build_server(**options: Any) -> Server:
    server = Server("legacy-test", "1.0.0", instructions="Use the tools.", **options)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool
    def numbers() -> list[int]:
        """Structured content that is not an object."""
        return [1, 2, 3]

    @server.tool
    def point() -> dict[str, int]:
        """Structured content that is an object."""
        return {"x": 1, "y": 2}

    @server.tool
    async def capabilities(ctx: Context) -> dict[str, Any]:
        """What the client declared."""
        return {
            "capabilities": ctx.client_capabilities,
            "version": ctx.protocol_version,
            "client": ctx.client_info,
        }

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Log at four levels."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"{level} line")
        return "logged"

    @server.tool
    async def progress(ctx: Context) -> str:
        """Report progress three times."""
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        return "done"

    @server.tool
    async def ask_name(ctx: Context) -> str:
        """Ask the user for their name."""
        answer = await ctx.elicit("What is your name?", NAME_FORM)
        return f"{answer.action}: {(answer.content or {}).get('name')}"

    @server.tool
    async def ask_model(ctx: Context) -> str:
        """Ask the client's model."""
        reply = await ctx.sample("Say hi", max_tokens=10)
        return f"model said: {reply.text}"

    @server.tool
    async def ask_roots(ctx: Context) -> str:
        """Ask for the client's roots."""
        roots = await ctx.list_roots()
        return ", ".join(root.uri for root in roots)

    @server.tool
    async def ask_all(ctx: Context) -> str:
        """Ask for three inputs at once."""
        answer, reply, roots = await asyncio.gather(
            ctx.elicit("Name?", NAME_FORM),
            ctx.sample("Hello", max_tokens=5),
            ctx.list_roots(),
        )
        return f"{(answer.content or {}).get('name')} / {reply.text} / {len(roots)}"

    @server.tool(requires={"sampling": {}})
    async def needs_sampling() -> str:
        """Needs the sampling capability."""
        return "had sampling"

    @server.tool
    def add_tool() -> str:
        """Add a tool (tools/list_changed)."""

        def extra() -> str:
            """Extra."""
            return "extra"

        server.add_tool(extra)
        return "added"

    @server.tool
    def add_prompt() -> str:
        """Add a prompt (prompts/list_changed)."""

        def fresh() -> str:
            """Fresh."""
            return "fresh"

        server.add_prompt(fresh)
        return "added"

    @server.tool
    def add_resource() -> str:
        """Add a resource (resources/list_changed)."""

        def new() -> str:
            """New."""
            return "new"

        server.add_resource(new, "file:///new.txt")
        return "added"

    @server.tool
    def touch(uri: str) -> str:
        """Announce new contents of a resource."""
        server.notify_resource_updated(uri)
        return "touched"

    @server.resource("file:///watched.txt", mime_type="text/plain")
    def watched() -> str:
        """A resource to subscribe to."""
        return "contents"

    @server.resource("file:///other.txt", mime_type="text/plain")
    def other() -> str:
        """Another resource."""
        return "other"

    @server.resource("file:///cached.txt", mime_type="text/plain", cache=CacheHint(60_000))
    def cached() -> str:
        """A resource with its own cache hint (a modern-only result field)."""
        return "cached"

    @server.resource("file:///items/{id}", mime_type="application/json")
    def item(id: str) -> dict[str, str]:
        """One item."""
        return {"id": id}

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    return server


def result(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    value: dict[str, Any] = reply["result"]
    return value


def error(reply: dict[str, Any]) -> dict[str, Any]:
    assert "error" in reply, reply
    value: dict[str, Any] = reply["error"]
    return value


def text(reply: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result(reply)["content"] if b["type"] == "text")


async def call(peer: LegacyMemoryPeer, request_id: Any, tool: str, **arguments: Any) -> None:
    await peer.post(request_id, "tools/call", {"name": tool, "arguments": arguments})


# -- the handshake ----------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
async def test_initialize_answers_the_clients_version_when_the_server_supports_it(
    version: str,
) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        assert (await peer.initialize(version=version))["protocolVersion"] == version


@pytest.mark.parametrize("requested", ["2099-01-01", "2026-07-28", "1.0.0"])
async def test_initialize_answers_the_newest_legacy_version_for_any_other_request(
    requested: str,
) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        assert (await peer.initialize(version=requested))["protocolVersion"] == LATEST_LEGACY


async def test_initialize_answers_the_newest_legacy_version_the_server_was_configured_with() -> (
    None
):
    server = build_server(supported_versions=["2026-07-28", "2025-03-26", "2024-11-05"])
    async with legacy_memory_peer(server) as peer:
        assert (await peer.initialize(version="2025-11-25"))["protocolVersion"] == "2025-03-26"


async def test_initialize_names_the_server_its_capabilities_and_instructions() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        init = await peer.initialize()
    assert init["serverInfo"] == {"name": "legacy-test", "version": "1.0.0"}
    assert init["instructions"] == "Use the tools."
    capabilities = init["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}
    assert "logging" in capabilities
    assert "_meta" not in init


@pytest.mark.parametrize(
    "params",
    [
        {"capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        {"protocolVersion": 20251125, "capabilities": {}},
        {"protocolVersion": "2025-11-25"},
        {"protocolVersion": "2025-11-25", "capabilities": []},
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": "me"},
    ],
)
async def test_a_malformed_initialize_is_invalid_params_and_opens_no_session(
    params: dict[str, Any],
) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        assert error(await peer.ask(1, "initialize", params))["code"] == INVALID_PARAMS
        assert peer.transport.connection.session is None


async def test_a_second_initialize_on_the_same_connection_is_refused() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(
            2, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
        )
        assert error(reply)["code"] == INVALID_REQUEST


async def test_a_modern_only_server_names_its_versions_to_initialize() -> None:
    server = build_server(supported_versions=["2026-07-28"])
    async with legacy_memory_peer(server) as peer:
        reply = await peer.ask(
            1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
        )
    failure = error(reply)
    assert failure["code"] == -32022
    assert failure["data"]["supported"] == ["2026-07-28"]
    assert "2026-07-28" in failure["message"]


async def test_a_modern_only_server_does_not_answer_a_legacy_ping() -> None:
    server = build_server(supported_versions=["2026-07-28"])
    async with legacy_memory_peer(server) as peer:
        assert error(await peer.ask(1, "ping"))["code"] == INVALID_PARAMS


async def test_initialize_carrying_modern_meta_is_not_a_legacy_handshake() -> None:
    async with memory_peer(build_server()) as peer:
        reply = await peer.call(1, "initialize", {"protocolVersion": "2025-11-25"})
    assert reply["error"]["code"] == METHOD_NOT_FOUND


# -- the lifecycle ----------------------------------------------------------------------


async def test_ping_before_initialize_returns_exactly_an_empty_result() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        assert result(await peer.ask(1, "ping")) == {}


async def test_ping_in_a_session_returns_exactly_an_empty_result() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        assert result(await peer.ask(1, "ping")) == {}


async def test_requests_before_the_initialized_notification_are_served() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize(initialized=False)
        tools = result(await peer.ask(1, "tools/list"))["tools"]
        assert "echo" in [tool["name"] for tool in tools]
        assert text(await peer.ask(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))


async def test_the_server_asks_the_client_nothing_before_the_initialized_notification() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}}, initialized=False)
        await call(peer, 1, "ask_name")
        assert not [f for f in await peer.quiet(0.2) if f.get("method") == "elicitation/create"]
        await peer.notify("notifications/initialized")
        request = await peer.server_request("elicitation/create")
        await peer.answer(request, {"action": "accept", "content": {"name": "Ada"}})
        assert text(await peer.response(1)) == "accept: Ada"


async def test_a_request_without_meta_before_initialize_is_refused() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        assert error(await peer.ask(1, "tools/list"))["code"] == INVALID_PARAMS


async def test_an_unknown_method_in_a_session_is_method_not_found() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        assert error(await peer.ask(1, "tools/destroy"))["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["server/discover", "subscriptions/listen"])
async def test_modern_only_methods_do_not_exist_in_a_legacy_session(method: str) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        assert error(await peer.ask(1, method, {}))["code"] == METHOD_NOT_FOUND


async def test_a_request_with_modern_meta_on_a_legacy_connection_is_served_modern() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.modern(9, "server/discover", {})
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["supportedVersions"] == ["2026-07-28"]


# -- capabilities -----------------------------------------------------------------------


async def test_the_capabilities_declared_at_initialize_are_the_sessions() -> None:
    declared = {"sampling": {}, "roots": {"listChanged": True}}
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize(declared, version="2025-06-18")
        await call(peer, 1, "capabilities")
        structured = result(await peer.response(1))["structuredContent"]
    assert structured["capabilities"] == declared
    assert structured["version"] == "2025-06-18"
    assert structured["client"]["name"] == "legacy-wire-tests"


async def test_a_tool_needing_an_undeclared_capability_is_refused_with_32021() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}})
        await call(peer, 1, "needs_sampling")
        failure = error(await peer.response(1))
    assert failure["code"] == MISSING_CAPABILITY
    assert failure["data"]["requiredCapabilities"] == {"sampling": {}}


async def test_a_tool_needing_a_declared_capability_runs() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"sampling": {}})
        await call(peer, 1, "needs_sampling")
        assert text(await peer.response(1)) == "had sampling"


# -- result shapes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("tools/call", {"name": "echo", "arguments": {"text": "x"}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "file:///watched.txt"}),
        ("resources/read", {"uri": "file:///items/7"}),
        ("resources/read", {"uri": "file:///cached.txt"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "A"},
            },
        ),
    ],
)
async def test_legacy_results_are_valid_for_2025_11_25_and_carry_no_modern_fields(
    method: str, params: dict[str, Any]
) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(1, method, params)
    returned = result(reply)
    assert "resultType" not in returned
    assert "ttlMs" not in returned
    assert "cacheScope" not in returned
    assert "_meta" not in returned


async def test_an_unknown_resource_is_32002_with_its_uri() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(1, "resources/read", {"uri": "file:///missing.txt"})
    failure = error(reply)
    assert failure["code"] == -32002
    assert failure["data"] == {"uri": "file:///missing.txt"}


async def test_structured_content_that_is_not_an_object_is_left_out() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await call(peer, 1, "numbers")
        returned = result(await peer.response(1))
    assert "structuredContent" not in returned
    assert returned["content"] == [{"type": "text", "text": "[1,2,3]"}]


async def test_structured_content_that_is_an_object_is_kept() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await call(peer, 1, "point")
        assert result(await peer.response(1))["structuredContent"] == {"x": 1, "y": 2}


async def test_an_output_schema_that_is_not_an_object_is_not_listed() -> None:
    server = build_server()
    async with legacy_memory_peer(server) as peer:
        await peer.initialize()
        tools = {t["name"]: t for t in result(await peer.ask(1, "tools/list"))["tools"]}
    assert "outputSchema" not in tools["numbers"]
    assert tools["point"]["outputSchema"]["type"] == "object"
    modern = {t["name"]: t for t in server.tools.wires()}
    assert modern["numbers"]["outputSchema"]["type"] == "array"


# -- logging ----------------------------------------------------------------------------


async def test_set_level_returns_exactly_an_empty_result() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        assert result(await peer.ask(1, "logging/setLevel", {"level": "info"})) == {}


@pytest.mark.parametrize("level", ["loud", None, 3])
async def test_set_level_with_an_unknown_level_is_invalid_params(level: Any) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(1, "logging/setLevel", {"level": level})
    assert error(reply)["code"] == INVALID_PARAMS


async def test_set_level_filters_the_sessions_log_messages() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await peer.ask(1, "logging/setLevel", {"level": "warning"})
        await call(peer, 2, "chatty")
        await peer.response(2)
    levels = [f["params"]["level"] for f in peer.seen if f.get("method") == "notifications/message"]
    assert levels == ["warning", "error"]


async def test_without_set_level_every_log_message_is_sent() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await call(peer, 1, "chatty")
        await peer.response(1)
    levels = [f["params"]["level"] for f in peer.seen if f.get("method") == "notifications/message"]
    assert levels == ["debug", "info", "warning", "error"]


# -- progress ---------------------------------------------------------------------------


async def test_progress_goes_to_the_progress_token_of_the_request() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await peer.post(
            1, "tools/call", {"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}
        )
        assert text(await peer.response(1)) == "done"
    progress = [f["params"] for f in peer.seen if f.get("method") == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert {p["progressToken"] for p in progress} == {"p"}


async def test_no_progress_is_sent_without_a_progress_token() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await call(peer, 1, "progress")
        await peer.response(1)
    assert not [f for f in peer.seen if f.get("method") == "notifications/progress"]


async def test_a_progress_token_that_is_not_a_string_or_integer_is_invalid_params() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(
            1, "tools/call", {"name": "progress", "_meta": {"progressToken": [1]}}
        )
    assert error(reply)["code"] == INVALID_PARAMS


# -- input from the client: real server-to-client requests -------------------------------


async def test_elicit_sends_elicitation_create_and_returns_the_answer() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}})
        await call(peer, 1, "ask_name")
        request = await peer.server_request("elicitation/create")
        assert request["params"]["message"] == "What is your name?"
        assert request["params"]["requestedSchema"] == NAME_FORM
        assert request["params"]["mode"] == "form"
        await peer.answer(request, {"action": "accept", "content": {"name": "Ada"}})
        assert text(await peer.response(1)) == "accept: Ada"


async def test_elicitation_before_2025_11_25_carries_no_mode() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}}, version="2025-06-18")
        await call(peer, 1, "ask_name")
        request = await peer.server_request("elicitation/create")
        assert "mode" not in request["params"]
        await peer.answer(request, {"action": "decline"})
        assert text(await peer.response(1)) == "decline: None"


async def test_sample_sends_sampling_create_message_and_returns_the_answer() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"sampling": {}})
        await call(peer, 1, "ask_model")
        request = await peer.server_request("sampling/createMessage")
        assert request["params"]["maxTokens"] == 10
        assert request["params"]["messages"][0]["content"] == {"type": "text", "text": "Say hi"}
        await peer.answer(
            request,
            {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"},
        )
        assert text(await peer.response(1)) == "model said: hi!"


async def test_list_roots_sends_roots_list_and_returns_the_roots() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"roots": {}})
        await call(peer, 1, "ask_roots")
        request = await peer.server_request("roots/list")
        await peer.answer(request, {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})
        assert text(await peer.response(1)) == "file:///a, file:///b"


async def test_concurrent_questions_are_separate_requests_answered_in_any_order() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}, "sampling": {}, "roots": {}})
        await call(peer, 1, "ask_all")
        roots = await peer.server_request("roots/list")
        sample = await peer.server_request("sampling/createMessage")
        elicit = await peer.server_request("elicitation/create")
        assert len({roots["id"], sample["id"], elicit["id"]}) == 3
        await peer.answer(roots, {"roots": []})
        await peer.answer(
            sample, {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}
        )
        await peer.answer(elicit, {"action": "accept", "content": {"name": "Bo"}})
        assert text(await peer.response(1)) == "Bo / yo / 0"


@pytest.mark.parametrize(
    ("tool", "capability"),
    [("ask_name", "elicitation"), ("ask_model", "sampling"), ("ask_roots", "roots")],
)
async def test_asking_a_client_without_the_capability_is_32021(tool: str, capability: str) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({})
        await call(peer, 1, tool)
        failure = error(await peer.response(1))
    assert failure["code"] == MISSING_CAPABILITY
    assert failure["data"]["requiredCapabilities"] == {capability: {}}
    assert not [f for f in peer.seen if "method" in f and "id" in f], "no request was sent"


async def test_a_client_refusing_a_request_makes_the_tool_fail_with_its_message() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"sampling": {}})
        await call(peer, 1, "ask_model")
        request = await peer.server_request("sampling/createMessage")
        await peer.refuse(request, -1, "User rejected sampling request")
        returned = result(await peer.response(1))
    assert returned["isError"] is True
    assert "User rejected sampling request" in returned["content"][0]["text"]


async def test_an_answer_that_does_not_fit_the_form_makes_the_tool_fail() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}})
        await call(peer, 1, "ask_name")
        request = await peer.server_request("elicitation/create")
        await peer.answer(request, {"action": "accept", "content": {"name": 42}})
        returned = result(await peer.response(1))
    assert returned["isError"] is True
    assert "not valid" in returned["content"][0]["text"]


async def test_an_unanswered_request_times_out_and_the_client_is_told_it_is_cancelled() -> None:
    async with legacy_memory_peer(build_server(input_timeout=0.2)) as peer:
        await peer.initialize({"elicitation": {}})
        await call(peer, 1, "ask_name")
        request = await peer.server_request("elicitation/create")
        cancelled = await peer.next(lambda f: f.get("method") == "notifications/cancelled")
        assert cancelled["params"]["requestId"] == request["id"]
        returned = result(await peer.response(1))
    assert returned["isError"] is True
    assert "elicitation/create" in returned["content"][0]["text"]


async def test_cancelling_the_call_cancels_its_question_and_sends_no_response() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize({"elicitation": {}})
        await call(peer, 1, "ask_name")
        request = await peer.server_request("elicitation/create")
        await peer.notify("notifications/cancelled", {"requestId": 1, "reason": "user"})
        cancelled = await peer.next(lambda f: f.get("method") == "notifications/cancelled")
        assert cancelled["params"]["requestId"] == request["id"]
        await peer.answer(request, {"action": "accept", "content": {"name": "late"}})
        assert not [f for f in await peer.quiet(0.2) if f.get("id") == 1]
        session = peer.transport.connection.session
        assert session is not None
        assert session.pending_requests == 0


async def test_a_response_to_an_unknown_id_is_dropped_and_not_answered() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        before = len(peer.seen)
        await peer.send({"jsonrpc": "2.0", "id": "s-99", "result": {}})
        assert result(await peer.ask(1, "ping")) == {}
        assert len(peer.seen) == before + 1


async def test_the_session_ends_with_the_connection_and_fails_waiting_questions() -> None:
    server = build_server()
    peer = LegacyMemoryPeer(server)
    await peer.start()
    await peer.initialize({"elicitation": {}})
    session = peer.transport.connection.session
    assert session is not None
    await call(peer, 1, "ask_name")
    await peer.server_request("elicitation/create")
    await peer.close()
    assert session.closed
    assert session.pending_requests == 0


# -- resource subscriptions and list changes ---------------------------------------------


async def test_subscribe_returns_empty_and_updates_reach_only_subscribed_uris() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        reply = await peer.ask(1, "resources/subscribe", {"uri": "file:///watched.txt"})
        assert result(reply) == {}
        await call(peer, 2, "touch", uri="file:///other.txt")
        await peer.response(2)
        await call(peer, 3, "touch", uri="file:///watched.txt")
        await peer.response(3)
        update = await peer.next(lambda f: f.get("method") == "notifications/resources/updated")
        assert update["params"] == {"uri": "file:///watched.txt"}
        assert not [
            f for f in await peer.quiet(0.1) if f.get("method") == "notifications/resources/updated"
        ]


async def test_unsubscribe_returns_empty_and_stops_the_updates() -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        await peer.ask(1, "resources/subscribe", {"uri": "file:///watched.txt"})
        assert (
            result(await peer.ask(2, "resources/unsubscribe", {"uri": "file:///watched.txt"})) == {}
        )
        await call(peer, 3, "touch", uri="file:///watched.txt")
        await peer.response(3)
        assert not [
            f for f in await peer.quiet(0.1) if f.get("method") == "notifications/resources/updated"
        ]


@pytest.mark.parametrize("params", [{}, {"uri": 5}, {"uri": ""}])
async def test_subscribe_without_a_uri_is_invalid_params(params: dict[str, Any]) -> None:
    async with legacy_memory_peer(build_server()) as peer:
        await peer.initialize()
        assert error(await peer.ask(1, "resources/subscribe", params))["code"] == INVALID_PARAMS


async def test_subscribe_on_a_server_without_resources_is_method_not_found() -> None:
    server = Server("no-resources", "1.0.0")

    @server.tool
    def noop() -> str:
        """Nothing."""
        return ""

    async with legacy_memory_peer(server) as peer:
        await peer.initialize()
        reply = await peer.ask(1, "resources/subscribe", {"uri": "file:///x"})
    assert error(reply)["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize(
    ("tool", "notification"),
    [
        ("add_tool", "notifications/tools/list_changed"),
        ("add_prompt", "notifications/prompts/list_changed"),
        ("add_resource", "notifications/resources/list_changed"),
    ],
)
async def test_list_changes_reach_every_session(tool: str, notification: str) -> None:
    server = build_server()
    async with legacy_memory_peer(server) as first, legacy_memory_peer(server) as second:
        await first.initialize()
        await second.initialize()
        await call(first, 1, tool)
        await first.response(1)
        for peer in (first, second):
            changed = await peer.next(lambda f: f.get("method") == notification)
            assert "id" not in changed


async def test_sessions_that_end_stop_hearing_about_changes() -> None:
    bus = InMemoryBus()
    server = build_server(bus=bus)
    assert server._dispatcher.legacy is not None
    async with legacy_memory_peer(server) as peer:
        await peer.initialize()
        assert bus.subscriber_count == 1
        assert server._dispatcher.legacy.feeds == 1
    await asyncio.sleep(0)
    assert bus.subscriber_count == 0
    assert server._dispatcher.legacy.feeds == 0
