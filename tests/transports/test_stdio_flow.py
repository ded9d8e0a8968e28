"""A client that keeps sending but stops reading stalls itself, not the server's memory.

Output the client does not read piles up in the server's pipe buffer; past its
high-water mark the server stops reading stdin until the client catches up. The server's
peak RSS (``VmHWM``) is read after the fact, so the check needs no sampling race.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from transports.wire import TOOL_SERVER, call, spawn, text_of

REQUESTS = 400
TEXT = "a" * 65536  # 25 MiB of replies in all


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


async def test_a_client_that_stops_reading_cannot_make_the_server_buffer_its_replies() -> None:
    # A small read limit: our side, too, stops taking stdout in after 512 KiB.
    async with spawn(TOOL_SERVER, limit=256 * 1024) as wire:
        await wire.probe()
        baseline = peak_rss_mib(wire.pid)

        async def send_all() -> None:
            for n in range(REQUESTS):
                await wire.send(call(n, "echo", {"text": TEXT}))

        sender = asyncio.get_running_loop().create_task(send_all())
        # Read nothing for a while: without flow control the server would take in every
        # request and hold every reply (tens of MiB) in its write buffer meanwhile.
        await asyncio.wait({sender}, timeout=0.5)
        assert not sender.done(), "the server read everything although nobody read its replies"
        replies = [await wire.recv() for _ in range(REQUESTS)]
        await sender
        assert sorted(r["id"] for r in replies) == list(range(REQUESTS))
        assert all(text_of(r) == TEXT for r in replies)
        growth = peak_rss_mib(wire.pid) - baseline
        assert growth < 8, f"peak RSS grew by {growth:.1f} MiB"
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
