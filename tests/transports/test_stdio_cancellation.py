"""``notifications/cancelled`` stops the matching handler; nothing is sent for it afterwards.

Spec ``basic/patterns/cancellation.mdx`` and ``basic/transports/stdio.mdx`` §Cancellation:
the server SHOULD stop work and MUST NOT send any further messages for a cancelled
request; unknown, finished and malformed cancellations are ignored. The handlers report
their fate on stderr, so the test sees the CancelledError itself, not only the silence.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from transports.wire import (
    TOOL_SERVER,
    Wire,
    call,
    notification,
    shared_tool_server,
    spawn,
    text_of,
)


def cancel(request_id: Any, reason: str | None = "test") -> dict[str, Any]:
    params: dict[str, Any] = {"requestId": request_id}
    if reason is not None:
        params["reason"] = reason
    return notification("notifications/cancelled", params)


@pytest.mark.parametrize("request_id", ["c1", 7])
async def test_cancellation_raises_cancelled_error_in_the_matching_handler(
    request_id: Any,
) -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(call(request_id, "wait_for_cancel", {"tag": "t"}))
        await wire.wait_stderr("started t")
        await wire.send(cancel(request_id))
        await wire.wait_stderr("cancelled t")
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        # No handler is left running, so there is no grace period to wait out.
        assert await wire.wait_exit(timeout=1.0) == 0


async def test_a_handler_that_swallows_the_cancellation_sends_nothing_at_all() -> None:
    async with spawn(TOOL_SERVER) as wire:
        stubborn = call("s", "stubborn", {"tag": "s"})
        stubborn["params"]["_meta"]["progressToken"] = "p"
        stubborn["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
        await wire.send(stubborn)
        await wire.wait_stderr("started s")
        await wire.send(cancel("s"))
        await wire.wait_stderr("finished s")
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_a_cancelled_blocking_sync_tool_gets_no_reply_when_its_thread_ends() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(call("b", "block", {"seconds": 0.3}))
        await wire.wait_stderr("blocking")
        await wire.send(cancel("b"))
        await wire.wait_stderr("unblocked")
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []


async def test_a_cancellation_naming_a_string_id_spares_the_equal_integer_id() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(call(7, "slow", {"seconds": 0.3}))
        await wire.send(cancel("7"))
        reply = await wire.recv()
        assert reply["id"] == 7
        assert text_of(reply) == "slow"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[Wire]:
    """A server shared by the table below; at the end stdout must hold nothing unread."""
    async with shared_tool_server() as wire:
        yield wire


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(
    "message",
    [
        cancel("never-sent"),
        cancel(12345, reason=None),
        notification("notifications/cancelled", {"requestId": None}),
        notification("notifications/cancelled", {"requestId": True}),
        notification("notifications/cancelled", {"requestId": 1.0}),
        notification("notifications/cancelled", {"requestId": {"id": 1}}),
        notification("notifications/cancelled", {}),
        notification("notifications/cancelled"),
    ],
    ids=["unknown", "unknown-int", "null", "bool", "float", "object", "no-id", "no-params"],
)
async def test_unknown_and_malformed_cancellations_are_ignored(
    server: Wire, message: dict[str, Any]
) -> None:
    # A request is in flight: neither it nor anything else may be disturbed.
    tag = f"bystander-{server.stderr.count('started bystander')}"
    await server.send(call(tag, "wait_for_cancel", {"tag": tag}))
    await server.wait_stderr(f"started {tag}")
    await server.send(message)
    await server.probe()
    assert f"cancelled {tag}" not in server.stderr
    await server.send(cancel(tag))
    await server.wait_stderr(f"cancelled {tag}")


async def test_cancelling_a_finished_request_is_ignored() -> None:
    async with spawn(TOOL_SERVER) as wire:
        reply = await wire.ask(call(1, "fast"))
        assert text_of(reply) == "fast"
        await wire.send(cancel(1))
        await wire.probe()
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert "Traceback" not in wire.stderr


async def test_a_cancelled_id_may_be_used_again_for_a_new_request() -> None:
    async with spawn(TOOL_SERVER) as wire:
        await wire.send(call("x", "wait_for_cancel", {"tag": "x"}))
        await wire.wait_stderr("started x")
        await wire.send(cancel("x"))
        reply = await wire.ask(call("x", "echo", {"text": "again"}))
        assert text_of(reply) == "again"
        await wire.wait_stderr("cancelled x")
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
