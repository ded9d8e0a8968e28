"""Requests run concurrently: a slow handler never delays a fast one's reply.

Issue 2 item 4; the slow request is always sent first and the fast reply must come
back first, well before the slow one could have finished.
"""

from __future__ import annotations

import asyncio
import time

from transports.wire import TOOL_SERVER, call, spawn, text_of


async def test_a_slow_async_tool_sent_first_does_not_delay_a_fast_reply() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        await wire.send(call("slow", "slow", {"seconds": 3}))
        started = time.monotonic()
        await wire.send(call("fast", "fast"))
        first = await wire.recv(timeout=1.0)
        assert first["id"] == "fast"
        assert text_of(first) == "fast"
        assert time.monotonic() - started < 1.0


async def test_a_blocking_sync_tool_does_not_block_the_event_loop() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        await wire.send(call("block", "block", {"seconds": 3}))
        await wire.wait_stderr("blocking")
        started = time.monotonic()
        await wire.send(call("fast", "fast"))
        first = await wire.recv(timeout=1.0)
        assert first["id"] == "fast"
        assert time.monotonic() - started < 1.0


async def test_many_requests_in_flight_each_get_exactly_their_own_answer() -> None:
    async with spawn(TOOL_SERVER) as wire:
        ids = [f"r{n}" for n in range(64)]
        for index, request_id in enumerate(ids):
            # Later requests finish first: replies come back in the reverse order.
            seconds = (len(ids) - index) * 0.004
            await wire.send(call(request_id, "slow", {"seconds": seconds}))
        replies = [await wire.recv() for _ in ids]
        assert sorted(r["id"] for r in replies) == sorted(ids)
        assert all(text_of(r) == "slow" for r in replies)
        assert [r["id"] for r in replies] != ids
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_two_blocking_sync_tools_run_side_by_side() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        started = time.monotonic()
        await wire.send(call(1, "block", {"seconds": 0.6}))
        await wire.send(call(2, "block", {"seconds": 0.6}))
        replies = {(await wire.recv())["id"], (await wire.recv())["id"]}
        assert replies == {1, 2}
        assert time.monotonic() - started < 1.1
        await asyncio.sleep(0)
