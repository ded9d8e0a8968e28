"""A notification never gets a reply, ever (JSON-RPC 2.0 §4.1; spec ``basic/index.mdx``).

Whatever its method or params, a message without an id is never answered. The proof is
the whole of stdout: after the notifications, a probe and end-of-file, nothing else was
written.
"""

from __future__ import annotations

from typing import Any

import pytest

from transports.wire import META, TOOL_SERVER, notification, spawn

NOTIFICATIONS: dict[str, dict[str, Any]] = {
    "unknown-method": notification("notifications/unknown"),
    "initialized": notification("notifications/initialized"),
    "progress": notification("notifications/progress", {"progressToken": 1, "progress": 1}),
    "roots-changed": notification("notifications/roots/list_changed", {"_meta": META}),
    "a-request-method": notification("tools/list", {"_meta": META}),
    "tools-call-without-id": notification(
        "tools/call", {"name": "wait_for_cancel", "arguments": {"tag": "n"}, "_meta": META}
    ),
    "odd-params": notification("notifications/message", {"level": 3, "data": [None]}),
    "no-params": notification("ping"),
}


@pytest.mark.parametrize("name", list(NOTIFICATIONS))
async def test_a_notification_never_gets_a_reply(name: str) -> None:
    async with spawn(TOOL_SERVER) as wire:
        for _ in range(3):
            await wire.send(NOTIFICATIONS[name])
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
        assert "Traceback" not in wire.stderr


async def test_a_tools_call_without_an_id_does_not_run_the_tool() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(NOTIFICATIONS["tools-call-without-id"])
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
        assert "started n" not in wire.stderr
