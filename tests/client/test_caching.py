"""The response cache (spec ``server/utilities/caching.mdx``) and change subscriptions
(spec ``basic/patterns/subscriptions.mdx``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from mcpkit import Client
from mcpkit.client import ResponseCache, RestartPolicy

from .conftest import Recorder

Peer = Callable[..., list[str]]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def fresh(ttl: object, scope: str = "public") -> dict[str, object]:
    return {"resultType": "complete", "tools": [], "ttlMs": ttl, "cacheScope": scope}


def test_a_result_is_fresh_for_its_ttl_and_stale_after() -> None:
    clock = Clock()
    cache = ResponseCache(clock=clock)
    assert cache.put("tools/list", None, fresh(1000))
    clock.now += 0.999
    assert cache.get("tools/list", None) is not None
    clock.now += 0.002
    assert cache.get("tools/list", None) is None


@pytest.mark.parametrize("ttl", [0, -5, None, "60000", True])
def test_zero_negative_or_missing_ttl_means_immediately_stale(ttl: object) -> None:
    cache = ResponseCache()
    result = fresh(ttl)
    if ttl is None:
        del result["ttlMs"]
    assert not cache.put("tools/list", None, result)
    assert cache.get("tools/list", None) is None


def test_only_complete_results_of_cacheable_methods_are_kept() -> None:
    cache = ResponseCache()
    assert not cache.put("tools/list", None, {**fresh(1000), "resultType": "input_required"})
    assert not cache.put("tools/call", {"name": "x"}, fresh(1000))


def test_the_key_is_the_method_and_params_without_meta() -> None:
    cache = ResponseCache()
    cache.put("resources/read", {"uri": "a://1", "_meta": {"x": 1}}, fresh(1000))
    assert cache.get("resources/read", {"uri": "a://1", "_meta": {"y": 2}}) is not None
    assert cache.get("resources/read", {"uri": "a://2"}) is None
    assert cache.get("tools/list", {"cursor": "c"}) is None


def test_private_results_are_never_shared_across_authorization_contexts() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, fresh(1000, "private"), context="alice")
    cache.put("prompts/list", None, fresh(1000, "public"), context="alice")
    assert cache.get("tools/list", None, context="alice") is not None
    assert cache.get("tools/list", None, context="bob") is None
    assert cache.get("prompts/list", None, context="bob") is not None


def test_list_changed_and_resource_updates_invalidate_what_they_name() -> None:
    cache = ResponseCache()
    cache.put("tools/list", None, fresh(1000))
    cache.put("tools/list", {"cursor": "2"}, fresh(1000))
    cache.put("prompts/list", None, fresh(1000))
    cache.put("resources/read", {"uri": "a://1"}, fresh(1000))
    cache.put("resources/read", {"uri": "a://2"}, fresh(1000))
    assert cache.notify("notifications/tools/list_changed") == 2
    assert cache.get("prompts/list", None) is not None
    assert cache.notify("notifications/resources/updated", {"uri": "a://1"}) == 1
    assert cache.get("resources/read", {"uri": "a://2"}) is not None


async def test_the_client_serves_fresh_lists_from_the_cache_until_a_change_notification(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer(), env={"PEER_TTL_MS": "60000"}, mode="modern") as client:
        await client.list_tools()
        await client.list_tools()
        assert record.methods().count("tools/list") == 1
        async with client.subscribe(tools=True) as changes:
            await client.call_tool("change")
            note = await changes.next(timeout=5)
        assert note["method"] == "notifications/tools/list_changed"
        await client.list_tools()
    assert record.methods().count("tools/list") == 2


async def test_resource_reads_honour_the_ttl(peer: Peer, record: Recorder) -> None:
    async with Client.stdio(peer(), env={"PEER_TTL_MS": "60000"}, mode="modern") as client:
        first = await client.read_resource("note://a")
        again = await client.read_resource("note://a")
        other = await client.read_resource("note://b")
    assert first == again
    assert other != first
    assert record.methods().count("resources/read") == 2


async def test_a_subscription_is_acknowledged_and_delivers_only_what_it_asked_for(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer(), mode="modern") as client:
        async with client.subscribe(tools=True, prompts=True) as changes:
            assert changes.acknowledged == {"toolsListChanged": True}
            await client.call_tool("change")
            note = await changes.next(timeout=5)
            listen_id = changes.request_id
        assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
    listen = next(m for m in record.messages() if m.get("method") == "subscriptions/listen")
    assert listen["params"]["notifications"] == {
        "toolsListChanged": True,
        "promptsListChanged": True,
    }
    cancels = [m for m in record.messages() if m.get("method") == "notifications/cancelled"]
    assert cancels[-1]["params"]["requestId"] == listen_id


async def test_a_subscription_is_re_established_after_the_server_restarts(
    peer: Peer, record: Recorder
) -> None:
    policy = RestartPolicy(initial_delay=0.01)
    async with Client.stdio(peer(), mode="modern", restart=policy) as client:
        async with client.subscribe(tools=True) as changes:
            with pytest.raises(Exception, match="closed"):
                await client.call_tool("crash")
            for _ in range(100):
                if changes.reconnects and changes.acknowledged is not None:
                    break
                await asyncio.sleep(0.02)
            await client.call_tool("change")
            note = await changes.next(timeout=5)
        assert note["method"] == "notifications/tools/list_changed"
        assert changes.reconnects == 1
    listens = [e for e in record.entries() if e["message"].get("method") == "subscriptions/listen"]
    assert len(listens) == 2
    assert listens[0]["pid"] != listens[1]["pid"]


async def test_a_legacy_session_delivers_list_changes_to_subscriptions(peer: Peer) -> None:
    client = Client.stdio(peer("--era", "legacy"), mode="legacy")
    async with client, client.subscribe(tools=True) as changes:
        assert changes.acknowledged == {"toolsListChanged": True}
        await client.call_tool("change")
        note = await changes.next(timeout=5)
    assert note["method"] == "notifications/tools/list_changed"
