"""subscriptions/listen and the bus behind it (spec ``basic/patterns/subscriptions.mdx``,
design §3.4)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.server.bus import TOOLS_CHANGED, Event, InMemoryBus

from .wire import INVALID_PARAMS, SUBSCRIPTION_ID, MemoryPeer, memory_peer

ACK = "notifications/subscriptions/acknowledged"


def watched() -> Server:
    server = Server("watched", "1.0.0")

    @server.tool
    def add_tool() -> str:
        def extra() -> str:
            return "extra"

        server.add_tool(extra)
        return "added"

    @server.tool
    def drop_tool() -> str:
        server.remove_tool("extra")
        return "dropped"

    @server.tool
    def add_prompt() -> str:
        def fresh() -> str:
            return "fresh"

        server.add_prompt(fresh)
        return "added"

    @server.tool
    def touch(uri: str) -> str:
        server.notify_resource_updated(uri)
        return "touched"

    @server.prompt
    def hello() -> str:
        return "hi"

    @server.resource("file:///project/config.json")
    def config() -> str:
        return "{}"

    return server


def frames_for(peer: MemoryPeer, subscription: Any) -> list[dict[str, Any]]:
    return [
        frame
        for frame in peer.seen
        if "method" in frame
        and frame["params"].get("_meta", {}).get(SUBSCRIPTION_ID) == subscription
    ]


async def listen(
    peer: MemoryPeer, request_id: Any, notifications: dict[str, Any]
) -> dict[str, Any]:
    await peer.request(request_id, "subscriptions/listen", {"notifications": notifications})
    return await peer.next(
        lambda f: f.get("method") == ACK and f["params"]["_meta"][SUBSCRIPTION_ID] == request_id
    )


async def test_the_acknowledgement_carries_the_honoured_filter_and_the_subscription_id() -> None:
    async with memory_peer(watched()) as peer:
        ack = await listen(
            peer,
            "sub-1",
            {
                "toolsListChanged": True,
                "promptsListChanged": False,
                "resourcesListChanged": True,
                "resourceSubscriptions": ["file:///project/config.json"],
            },
        )
        assert ack["params"] == {
            "_meta": {SUBSCRIPTION_ID: "sub-1"},
            "notifications": {
                "toolsListChanged": True,
                "resourcesListChanged": True,
                "resourceSubscriptions": ["file:///project/config.json"],
            },
        }
        assert frames_for(peer, "sub-1") == [ack]


async def test_unsupported_types_are_left_out_of_the_acknowledgement() -> None:
    server = Server("tools-only")

    @server.tool
    def t() -> str:
        return ""

    async with memory_peer(server) as peer:
        ack = await listen(
            peer,
            1,
            {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["x"]},
        )
        assert ack["params"]["notifications"] == {"toolsListChanged": True}


async def test_list_changes_reach_only_the_streams_that_asked() -> None:
    async with memory_peer(watched()) as peer:
        await listen(peer, "tools", {"toolsListChanged": True})
        await listen(peer, "prompts", {"promptsListChanged": True})
        assert (await peer.call(10, "tools/call", {"name": "add_tool"}))["result"]
        assert (await peer.call(11, "tools/call", {"name": "add_prompt"}))["result"]
        await peer.quiet(0.1)
        tools = [f["method"] for f in frames_for(peer, "tools")]
        prompts = [f["method"] for f in frames_for(peer, "prompts")]
        assert tools == [ACK, "notifications/tools/list_changed"]
        assert prompts == [ACK, "notifications/prompts/list_changed"]
        changed = frames_for(peer, "tools")[1]
        assert changed["params"] == {"_meta": {SUBSCRIPTION_ID: "tools"}}


async def test_removing_a_tool_is_announced_too() -> None:
    async with memory_peer(watched()) as peer:
        await peer.call(1, "tools/call", {"name": "add_tool"})
        await listen(peer, 2, {"toolsListChanged": True})
        await peer.call(3, "tools/call", {"name": "drop_tool"})
        changed = await peer.next(lambda f: f.get("method") == "notifications/tools/list_changed")
        assert changed["params"]["_meta"] == {SUBSCRIPTION_ID: 2}


async def test_resource_updates_reach_only_streams_watching_that_uri() -> None:
    async with memory_peer(watched()) as peer:
        await listen(peer, "config", {"resourceSubscriptions": ["file:///project/config.json"]})
        await listen(peer, "dir", {"resourceSubscriptions": ["file:///project/"]})
        await listen(peer, "other", {"resourceSubscriptions": ["file:///elsewhere.txt"]})
        await peer.call(
            5, "tools/call", {"name": "touch", "arguments": {"uri": "file:///project/config.json"}}
        )
        await peer.call(
            6, "tools/call", {"name": "touch", "arguments": {"uri": "file:///project/b.txt"}}
        )
        await peer.quiet(0.1)
        updated = "notifications/resources/updated"
        assert [
            f["params"].get("uri") for f in frames_for(peer, "config") if f["method"] == updated
        ] == ["file:///project/config.json"]
        assert [f["params"]["uri"] for f in frames_for(peer, "dir") if f["method"] == updated] == [
            "file:///project/config.json",
            "file:///project/b.txt",
        ]
        assert [f["method"] for f in frames_for(peer, "other")] == [ACK]


async def test_a_cancelled_stream_gets_nothing_more_not_even_a_response() -> None:
    server = watched()
    async with memory_peer(server) as peer:
        await listen(peer, 7, {"toolsListChanged": True})
        assert server.listener_count == 1
        await peer.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        )
        await asyncio.sleep(0.05)
        assert server.listener_count == 0
        await peer.call(8, "tools/call", {"name": "add_tool"})
        await peer.quiet(0.1)
        assert [f["method"] for f in frames_for(peer, 7)] == [ACK]
        assert not any(f.get("id") == 7 for f in peer.seen)


async def test_server_shutdown_ends_streams_with_a_graceful_result() -> None:
    server = watched()
    async with memory_peer(server) as peer:
        await listen(peer, "a", {"toolsListChanged": True})
        await listen(peer, "b", {"promptsListChanged": True})
        server.shutdown()
        for subscription in ("a", "b"):
            response = await peer.response(subscription)
            assert response["result"]["resultType"] == "complete"
            assert response["result"]["_meta"][SUBSCRIPTION_ID] == subscription
        assert server.listener_count == 0
        late = await listen(peer, "c", {"toolsListChanged": True})
        assert late["params"]["_meta"][SUBSCRIPTION_ID] == "c"
        assert (await peer.response("c"))["result"]["_meta"][SUBSCRIPTION_ID] == "c"


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"notifications": None},
        {"notifications": ["toolsListChanged"]},
        {"notifications": {"toolsListChanged": "yes"}},
        {"notifications": {"resourceSubscriptions": "file:///x"}},
        {"notifications": {"resourceSubscriptions": [1]}},
        {"notifications": {"resourceSubscriptions": ["u"] * 1001}},
    ],
)
async def test_a_malformed_filter_is_invalid_params(params: dict[str, Any]) -> None:
    async with memory_peer(watched()) as peer:
        response = await peer.call(1, "subscriptions/listen", params)
        assert response["error"]["code"] == INVALID_PARAMS


async def test_listen_is_method_not_found_when_nothing_can_change() -> None:
    async with memory_peer(Server("static")) as peer:
        response = await peer.call(1, "subscriptions/listen", {"notifications": {}})
        assert response["error"]["code"] == -32601


async def test_events_published_from_a_worker_thread_are_delivered() -> None:
    server = watched()
    async with memory_peer(server) as peer:
        await listen(peer, 1, {"toolsListChanged": True})

        def from_thread() -> None:
            def threaded() -> str:
                return ""

            server.add_tool(threaded)

        worker = threading.Thread(target=from_thread)
        worker.start()
        worker.join()
        changed = await peer.next(lambda f: f.get("method") == "notifications/tools/list_changed")
        assert changed["params"]["_meta"][SUBSCRIPTION_ID] == 1


async def test_a_burst_of_identical_events_reaches_a_slow_listener_once() -> None:
    bus = InMemoryBus()
    subscription = bus.subscribe(lambda event: True)
    for _ in range(1000):
        bus.publish(Event(TOOLS_CHANGED))
    bus.publish(Event("notifications/resources/updated", "file:///a"))
    got: list[Event] = []

    async def drain() -> None:
        async for event in subscription:
            got.append(event)

    task = asyncio.create_task(drain())
    await asyncio.sleep(0.05)
    subscription.close()
    await asyncio.wait_for(task, 1)
    assert got == [Event(TOOLS_CHANGED), Event("notifications/resources/updated", "file:///a")]
    assert bus.subscriber_count == 0


async def test_open_and_close_cycles_leave_no_subscription_behind() -> None:
    server = watched()
    async with memory_peer(server) as peer:
        for index in range(200):
            await listen(peer, index, {"toolsListChanged": True})
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": index},
                }
            )
        await asyncio.sleep(0.05)
    assert server.listener_count == 0
    bus = server.bus
    assert isinstance(bus, InMemoryBus)
    assert bus.subscriber_count == 0
