"""Era detection over stdio (spec ``basic/transports/stdio.mdx`` §Backward Compatibility,
``basic/versioning.mdx``): probe with server/discover, fall back to initialize on anything
that is not a recognised modern error or on silence, retry -32022 at a mutual version,
cache the verdict per server, and let a mode force either era."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcpkit import Client, UnsupportedProtocolVersion
from mcpkit.client import EraCache, Verdict
from mcpkit.client.probe import pick_legacy, pick_modern

from .conftest import Recorder

Peer = Callable[..., list[str]]


async def test_a_modern_server_answers_the_discover_probe_and_the_client_stays_modern(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    async with Client.stdio(peer(), era_cache=era_cache) as client:
        assert client.era == "modern"
        assert client.negotiated_version == "2026-07-28"
        assert client.server_info == {"name": "peer", "version": "1"}
        await client.list_tools()
    assert record.methods() == ["server/discover", "tools/list"]


async def test_a_legacy_server_that_rejects_the_probe_gets_the_initialize_handshake(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    async with Client.stdio(peer("--era", "legacy"), era_cache=era_cache) as client:
        assert client.era == "legacy"
        assert client.negotiated_version == "2025-11-25"
        assert client.instructions == "old but gold"
        tools = await client.list_tools()
    assert tools
    methods = record.methods()
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    initialize = record.messages()[1]["params"]
    assert initialize["protocolVersion"] == "2025-11-25"
    assert initialize["clientInfo"]["name"] == "mcpkit"
    assert "_meta" not in record.messages()[3].get("params", {})


async def test_a_silent_legacy_server_is_detected_when_the_probe_times_out(
    peer: Peer, era_cache: EraCache
) -> None:
    client = Client.stdio(peer("--era", "legacy", "--preinit", "silent"), probe_timeout=0.5)
    client.era_cache = era_cache
    async with client:
        assert client.era == "legacy"
        assert (await client.call_tool("echo", {"x": 1})).text == '{"x": 1}'


async def test_a_legacy_server_that_exits_on_the_probe_is_restarted_and_initialized(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    async with Client.stdio(peer("--era", "legacy", "--preinit", "exit"), era_cache=era_cache) as c:
        assert c.era == "legacy"
        assert (await c.call_tool("echo", {})).text == "{}"
    pids = {entry["pid"] for entry in record.entries()}
    assert len(pids) == 2


async def test_a_disposable_probe_spares_the_real_process_the_unknown_first_message(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    client = Client.stdio(peer("--era", "legacy"), probe_process="disposable")
    client.era_cache = era_cache
    async with client:
        served_by = int((await client.call_tool("pid")).text)
    seen_by_real = [e["message"].get("method") for e in record.entries() if e["pid"] == served_by]
    assert "server/discover" not in seen_by_real
    assert seen_by_real[0] == "initialize"
    assert any(e["message"].get("method") == "server/discover" for e in record.entries())


async def test_unsupported_version_on_the_probe_is_retried_not_taken_for_legacy(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    async with Client.stdio(peer("--reject-first"), era_cache=era_cache) as client:
        assert client.era == "modern"
        await client.list_tools()
    assert "initialize" not in record.methods()


async def test_unsupported_version_on_a_request_is_retried_with_a_new_id(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer("--reject-first"), mode="modern") as client:
        assert await client.list_tools()
    first, retry = record.messages()[:2]
    assert first["method"] == retry["method"] == "tools/list"
    assert first["id"] != retry["id"]
    assert retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


async def test_a_server_listing_only_legacy_versions_in_its_refusal_is_treated_as_legacy(
    peer: Peer, era_cache: EraCache
) -> None:
    async with Client.stdio(
        peer("--era", "legacy", "--preinit", "unsupported"), era_cache=era_cache
    ) as client:
        assert client.era == "legacy"


async def test_a_modern_server_sharing_no_version_is_an_error_not_a_fallback(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    client = Client.stdio(peer("--versions", "2099-01-01"), era_cache=era_cache)
    with pytest.raises(UnsupportedProtocolVersion):
        await client.connect()
    await client.close()
    assert "initialize" not in record.methods()


async def test_the_verdict_is_cached_per_server_configuration(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    for _ in range(2):
        async with Client.stdio(peer("--era", "legacy"), era_cache=era_cache) as client:
            await client.list_tools()
    assert record.methods().count("server/discover") == 1
    assert record.methods().count("initialize") == 2


async def test_a_cached_modern_verdict_that_fails_is_probed_again(
    peer: Peer, record: Recorder, era_cache: EraCache
) -> None:
    command = peer("--era", "legacy")
    async with Client.stdio(command, era_cache=era_cache) as client:
        key = client._server_key()
    era_cache.put(key, Verdict("modern", "2026-07-28", "stream"))
    async with Client.stdio(command, era_cache=era_cache) as client:
        assert (await client.call_tool("echo", {"a": 1})).text == '{"a": 1}'
        assert client.era == "legacy"


@pytest.mark.parametrize(("mode", "first"), [("modern", "tools/list"), ("legacy", "initialize")])
async def test_a_mode_forces_the_era_without_probing(
    peer: Peer, record: Recorder, mode: str, first: str
) -> None:
    era = "legacy" if mode == "legacy" else "modern"
    async with Client.stdio(peer("--era", era), mode=mode) as client:
        await client.list_tools()
    assert record.methods()[0] == first
    assert "server/discover" not in record.methods()


def test_version_choice_prefers_ours_then_the_newest_mutual_one() -> None:
    assert pick_modern(["2026-07-28", "2099-01-01"], "2026-07-28") == "2026-07-28"
    assert pick_modern(["2099-01-01"], "2026-07-28") is None
    assert pick_legacy(["2024-11-05", "2025-06-18", "1999-01-01"]) == "2025-06-18"
    assert pick_legacy(["2026-07-28"]) is None
