"""Many requests at once over one stdio pipe (``security.md`` R-08 (a) and R-09).

Every response must carry the right id and the nonce its request sent; nothing lost,
mismatched or duplicated; a mass cancellation reaches every handler and silences them.
"""

from __future__ import annotations

import random
import time
import uuid

from transports.wire import TOOL_SERVER, call, encode, notification, spawn, text_of

REQUESTS = 10_000
CANCELLED = 1_000


async def test_ten_thousand_concurrent_calls_each_get_their_own_answer_once() -> None:
    rng = random.Random(2026)
    expected = {uuid.uuid4().hex: uuid.uuid4().hex for _ in range(REQUESTS)}
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        started = time.monotonic()
        await wire.send_raw(
            b"".join(
                encode(call(request_id, "nap", {"nonce": nonce, "ms": rng.uniform(0, 10)}))
                for request_id, nonce in expected.items()
            )
        )
        answered: dict[str, str] = {}
        for _ in range(REQUESTS):
            reply = await wire.recv()
            assert reply["id"] not in answered, f"two answers for {reply['id']}"
            answered[reply["id"]] = text_of(reply)
        elapsed = time.monotonic() - started
        assert answered == expected
        assert elapsed < 30
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_a_thousand_cancellations_silence_a_thousand_handlers() -> None:
    tags = [f"t{n}" for n in range(CANCELLED)]
    async with spawn(TOOL_SERVER) as wire:
        await wire.send_raw(b"".join(encode(call(t, "wait_for_cancel", {"tag": t})) for t in tags))
        await wire.wait_stderr("started ", count=CANCELLED)
        cancels = [notification("notifications/cancelled", {"requestId": t}) for t in tags]
        random.Random(7).shuffle(cancels)
        await wire.send_raw(b"".join(encode(c) for c in cancels))
        await wire.wait_stderr("cancelled ", count=CANCELLED)
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit(timeout=1.0) == 0
