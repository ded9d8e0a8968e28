"""The line-stream connection survives a faulty application (``StreamServerConnection``).

A request handler that raises, a response that cannot be encoded and a notification
handler that raises each leave the server serving; a request still gets exactly one
answer (-32603), a notification none.
"""

from __future__ import annotations

from transports.wire import SERVERS, notification, request, spawn

FAULTY = SERVERS / "faulty_app.py"
INTERNAL_ERROR = -32603


async def test_a_request_handler_that_raises_gets_an_internal_error() -> None:
    async with spawn(FAULTY) as wire:
        reply = await wire.ask(request(1, "raise"))
        assert reply["error"]["code"] == INTERNAL_ERROR
        assert "the application broke" not in str(reply)
        await wire.probe()
        await wire.wait_stderr("the application broke")


async def test_a_response_that_cannot_be_encoded_becomes_an_internal_error() -> None:
    async with spawn(FAULTY) as wire:
        reply = await wire.ask(request(1, "unencodable"))
        assert reply == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": INTERNAL_ERROR, "message": "Internal error"},
        }
        await wire.probe()


async def test_a_notification_handler_that_raises_is_logged_and_never_answered() -> None:
    async with spawn(FAULTY) as wire:
        await wire.send(notification("notifications/initialized"))
        await wire.probe()
        await wire.wait_stderr("cannot handle notifications/initialized")
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
