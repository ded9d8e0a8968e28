"""Requests whose handlers never wait answer within the read that brought them.

The stream connection starts each request's task eagerly: a burst of such requests is
answered by one write, and a handler still runs inside its own task (so
``asyncio.current_task()`` and ``asyncio.timeout`` work from its first line).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpkit import Server
from mcpkit.transports.stream import StreamServerConnection

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(id: int, name: str, arguments: dict[str, Any] | None = None) -> bytes:
    body = {"name": name, "arguments": arguments or {}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": body}
    return json.dumps(message).encode() + b"\n"


def build_server() -> Server:
    server = Server("eager", "1.0.0")

    @server.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    async def in_task() -> str:
        """Uses the current task and a timeout before anything else."""
        task = asyncio.current_task()
        async with asyncio.timeout(5):
            await asyncio.sleep(0)
        return "task" if task is not None else "none"

    @server.tool
    async def waits() -> str:
        """Waits once, so it answers later."""
        await asyncio.sleep(0.01)
        return "waited"

    return server


async def from_callback(function: Any, *args: Any) -> None:
    """Run ``function`` the way transports do: in a loop callback, outside any task."""
    done = asyncio.get_running_loop().create_future()

    def run() -> None:
        function(*args)
        done.set_result(None)

    asyncio.get_running_loop().call_soon(run)
    await done


async def test_a_burst_of_quick_requests_is_answered_in_one_write() -> None:
    writes: list[bytes] = []
    connection = StreamServerConnection(build_server(), writes.append)
    burst = b"".join(call(i, "add", {"a": i, "b": 1}) for i in range(64))
    await from_callback(connection.feed, burst)
    assert len(writes) == 1
    answers = [json.loads(line) for line in writes[0].splitlines()]
    assert [a["result"]["content"][0]["text"] for a in answers] == [str(i + 1) for i in range(64)]
    await connection.aclose()


async def test_a_handler_runs_inside_its_own_task_from_the_first_line() -> None:
    writes: list[bytes] = []
    connection = StreamServerConnection(build_server(), writes.append)
    await from_callback(connection.feed, call(1, "in_task"))
    await connection.wait_idle(5)
    (line,) = writes
    assert json.loads(line)["result"]["content"][0]["text"] == "task"
    await connection.aclose()


async def test_a_handler_that_waits_answers_after_the_quick_ones() -> None:
    writes: list[bytes] = []
    connection = StreamServerConnection(build_server(), writes.append)
    await from_callback(connection.feed, call(1, "waits") + call(2, "add", {"a": 1, "b": 1}))
    assert [json.loads(line)["id"] for line in b"".join(writes).splitlines()] == [2]
    await connection.wait_idle(5)
    ids = [json.loads(line)["id"] for line in b"".join(writes).splitlines()]
    assert ids == [2, 1]
    await connection.aclose()


async def test_bytes_fed_from_inside_a_task_are_still_answered() -> None:
    writes: list[bytes] = []
    connection = StreamServerConnection(build_server(), writes.append)
    connection.feed(call(1, "add", {"a": 2, "b": 3}))
    await connection.wait_idle(5)
    (line,) = writes
    assert json.loads(line)["result"]["content"][0]["text"] == "5"
    await connection.aclose()
