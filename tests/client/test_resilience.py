"""A client that keeps working when its stdio server misbehaves (spec ``stdio.mdx``
§Unexpected Termination and §Shutdown; ``basic/patterns/cancellation.mdx`` §Timeouts)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import psutil
import pytest

from mcpkit import Client, ConnectionClosed, RequestTimeout
from mcpkit.client import RestartPolicy
from mcpkit.client.client import DEFAULT_TIMEOUT
from mcpkit.transports.stdio_client import StdioClientTransport

from .conftest import Recorder

Peer = Callable[..., list[str]]
FAST = RestartPolicy(max_restarts=3, initial_delay=0.01, max_delay=0.05)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def ended_within(pid: int, seconds: float) -> bool:
    """Wait (polling, for any process, not only our children) until ``pid`` has ended."""
    try:
        process = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    _, alive = psutil.wait_procs([process], timeout=seconds)
    return not alive or gone(pid)


async def test_a_server_that_dies_is_restarted_and_idempotent_requests_are_retried(
    peer: Peer, record: Recorder
) -> None:
    # The peer exits on its second request, before answering it.
    async with Client.stdio(peer("--crash-after", "1"), mode="modern", restart=FAST) as client:
        first_pid = int((await client.call_tool("pid")).text)
        tools = await client.list_tools()
    assert tools
    assert client.restarts == 1
    assert gone(first_pid)
    lists = [e for e in record.entries() if e["message"].get("method") == "tools/list"]
    assert [entry["pid"] == first_pid for entry in lists] == [True, False]


async def test_a_request_that_is_not_idempotent_fails_instead_of_running_twice(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer(), mode="modern", restart=FAST) as client:
        with pytest.raises(ConnectionClosed):
            await client.call_tool("crash")
        assert (await client.call_tool("echo", {"after": True})).text == '{"after": true}'
    assert len(record.calls("crash")) == 1
    assert client.restarts == 1


async def test_restarts_back_off_and_stop_at_the_cap() -> None:
    """The server starts fine and exits at once, every time: the waits before the three
    restarts double (0.2, 0.4, 0.8 s), then the client gives up."""
    command = [sys.executable, "-c", "import sys; sys.exit(1)"]
    policy = RestartPolicy(max_restarts=3, initial_delay=0.2, max_delay=1.0)
    client = Client.stdio(command, mode="modern", restart=policy)
    started = time.monotonic()
    last: Exception | None = None
    async with client:
        deadline = started + 30
        while time.monotonic() < deadline:
            try:
                await client.list_tools(use_cache=False)
            except ConnectionClosed as exc:
                last = exc
                if "giving up" in str(exc):
                    break
            await asyncio.sleep(0.02)
    assert last is not None
    assert "giving up" in str(last)
    elapsed = time.monotonic() - started
    transport = client.transport
    assert isinstance(transport, StdioClientTransport)
    assert transport.starts == 4
    assert elapsed >= 0.2 + 0.4 + 0.8


async def test_shutdown_leaves_no_process_of_the_group_behind(peer: Peer) -> None:
    lines: list[str] = []
    client = Client.stdio(peer("--spawn-child"), mode="modern", stderr=lines.append)
    async with client:
        server_pid = int((await client.call_tool("pid")).text)
        child_pid = int(next(line for line in lines if line.startswith("child ")).split()[1])
        assert not gone(child_pid)
    assert gone(server_pid)
    assert await asyncio.to_thread(ended_within, child_pid, 5.0)


async def test_a_server_that_ignores_eof_and_sigterm_is_killed() -> None:
    stubborn = (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(600)\n"
    )
    transport = StdioClientTransport(
        [sys.executable, "-c", stubborn], close_timeout=0.2, kill_timeout=0.2
    )
    client = Client(transport, mode="modern")
    await client.connect()
    pid = transport.pid
    assert pid is not None
    started = time.monotonic()
    await client.close()
    assert gone(pid)
    assert time.monotonic() - started < 3


async def test_stderr_goes_to_the_callback(peer: Peer) -> None:
    lines: list[str] = []
    async with Client.stdio(peer(), mode="modern", stderr=lines.append) as client:
        await client.list_tools()
    assert any(line.startswith("env ") for line in lines)


async def test_stderr_goes_to_the_logger_without_a_callback(
    peer: Peer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcpkit.transport")
    async with Client.stdio(peer(), mode="modern") as client:
        await client.list_tools()
    assert any("env {" in record.getMessage() for record in caplog.records)


async def test_the_child_gets_only_its_configured_environment_plus_a_safe_set(
    peer: Peer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_TEST_SECRET", "hunter2")
    lines: list[str] = []
    client = Client.stdio(peer(), env={"GREETING": "hi"}, mode="modern", stderr=lines.append)
    async with client:
        await client.list_tools()
    env: dict[str, Any] = json.loads(next(line for line in lines if line.startswith("env "))[4:])
    assert env["GREETING"] == "hi"
    assert "MCPKIT_TEST_SECRET" not in env
    assert env.get("PATH") == os.environ.get("PATH")


async def test_a_request_times_out_and_is_cancelled_on_the_server(peer: Peer) -> None:
    lines: list[str] = []
    async with Client.stdio(peer(), mode="modern", stderr=lines.append) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"seconds": 30}, timeout=0.3)
        assert (await client.call_tool("echo", {})).text == "{}"
        await asyncio.sleep(0.2)
    assert any(line.startswith("cancelled ") for line in lines)
    assert any(line.startswith("slow ") and line.endswith(" stopped") for line in lines)


async def test_a_caller_that_gives_up_cancels_the_request_on_the_server(
    peer: Peer, record: Recorder
) -> None:
    async with Client.stdio(peer(), mode="modern") as client:
        task = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.list_tools()
    slow_id = record.calls("slow")[0]["id"]
    cancels = [m for m in record.messages() if m.get("method") == "notifications/cancelled"]
    assert cancels[0]["params"]["requestId"] == slow_id


def test_every_request_has_a_sane_default_timeout() -> None:
    client = Client.stdio([sys.executable, "-c", "pass"])
    assert client.timeout == DEFAULT_TIMEOUT
    assert 1 <= DEFAULT_TIMEOUT <= 300


async def test_progress_reaches_the_callback(peer: Peer, record: Recorder) -> None:
    updates: list[tuple[float, float | None, str | None]] = []
    async with Client.stdio(peer(), mode="modern") as client:
        result = await client.call_tool(
            "progress", on_progress=lambda p, t, m: updates.append((p, t, m))
        )
    assert result.text == "progressed"
    assert updates == [(1, 3, None), (2, 3, None), (3, 3, None)]
    token = record.calls("progress")[0]["params"]["_meta"]["progressToken"]
    assert isinstance(token, int | str)


async def test_log_messages_reach_the_callback_only_when_a_level_is_set(peer: Peer) -> None:
    logs: list[dict[str, Any]] = []
    async with Client.stdio(peer(), mode="modern", on_log=logs.append) as client:
        await client.call_tool("log")
        assert logs == []
        await client.set_log_level("info")
        await client.call_tool("log")
    assert logs == [{"level": "info", "data": "hello from the tool"}]
