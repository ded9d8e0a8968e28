"""``Client.notify_roots_changed``: legacy servers hear of new roots; modern ones ask."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import Server
from mcpkit.protocol.jsonrpc import Notification
from mcpkit.testing import connect

ROOTS = [{"uri": "file:///work", "name": "work"}]


def recording_server() -> tuple[Server, list[str]]:
    server = Server("roots", "1.0.0")

    @server.tool
    async def ping() -> str:
        """Answer."""
        return "pong"

    heard: list[str] = []
    original = server.handle_notification

    async def record(notification: Notification, channel: Any) -> None:
        heard.append(notification.method)
        await original(notification, channel)

    server.handle_notification = record
    return server, heard


async def test_a_legacy_server_is_told_that_the_roots_changed() -> None:
    server, heard = recording_server()
    async with connect(server, mode="legacy", roots=ROOTS) as client:
        await client.call_tool("ping")
        await client.notify_roots_changed()
        for _ in range(50):
            if "notifications/roots/list_changed" in heard:
                break
            await asyncio.sleep(0.01)
    assert "notifications/roots/list_changed" in heard


async def test_a_modern_server_is_not_sent_the_notification() -> None:
    server, heard = recording_server()
    async with connect(server, mode="modern", roots=ROOTS) as client:
        await client.call_tool("ping")
        await client.notify_roots_changed()
        await asyncio.sleep(0.05)
    assert "notifications/roots/list_changed" not in heard
