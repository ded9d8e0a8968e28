"""A notification never gets a reply, ever (JSON-RPC 2.0 §4.1; spec ``basic/index.mdx``).

Whatever its method or params, a message without an id is never answered: the probe
sent right after it must be the very next message on stdout, and when the shared server
reaches end-of-file nothing else may be left on stdout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from transports.wire import META, Wire, notification, shared_tool_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

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


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Wire]:
    async with shared_tool_server() as wire:
        yield wire


@pytest.mark.parametrize("name", list(NOTIFICATIONS))
async def test_a_notification_never_gets_a_reply(server: Wire, name: str) -> None:
    for _ in range(3):
        await server.send(NOTIFICATIONS[name])
    await server.probe()


async def test_a_tools_call_without_an_id_does_not_run_the_tool(server: Wire) -> None:
    await server.send(NOTIFICATIONS["tools-call-without-id"])
    await server.probe()
    await server.send(NOTIFICATIONS["tools-call-without-id"])
    await server.probe()
    assert "started n" not in server.stderr
