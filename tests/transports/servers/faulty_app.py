"""A hand-written ServerApp that fails in the ways a transport must survive.

``raise`` raises from ``handle_request``; ``unencodable`` returns a response JSON cannot
carry; every notification handler raises. ``tools/call`` with ``echo`` answers normally
(the liveness probe).
"""

from __future__ import annotations

from typing import Any

from mcpkit.protocol.jsonrpc import Notification, Request
from mcpkit.transports.base import Channel
from mcpkit.transports.stdio import run_stdio


class FaultyApp:
    async def handle_request(self, request: Request, channel: Channel) -> dict[str, Any] | None:
        if request.method == "raise":
            raise RuntimeError("the application broke")
        if request.method == "unencodable":
            return {"jsonrpc": "2.0", "id": request.id, "result": {"value": object()}}
        params = request.params or {}
        text = params.get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
        return {"jsonrpc": "2.0", "id": request.id, "result": result}

    async def handle_notification(self, notification: Notification, channel: Channel) -> None:
        raise RuntimeError(f"cannot handle {notification.method}")


if __name__ == "__main__":
    run_stdio(FaultyApp())
