"""The stdio launcher (:class:`StdioClientTransport`) starts and stops its child properly.

Spec ``basic/transports/stdio.mdx`` §Shutdown: close stdin, wait, then SIGTERM, then
SIGKILL. Children run in their own process group so nothing they started outlives them;
they get only the configured environment plus a small safe set (design §3.7); their
stderr goes to the callback, line by line, however long the lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import psutil
import pytest

from mcpkit.errors import ConnectionClosed
from mcpkit.transports.stdio_client import SAFE_ENV_KEYS, StdioClientTransport
from transports.wire import SERVERS, STARTUP

CHILD = SERVERS / "child.py"
CLOSE_TIMEOUT = 0.3
KILL_TIMEOUT = 0.3


class Child:
    """A launched child and what it has said so far."""

    def __init__(self, **options: Any) -> None:
        self.frames: list[Any] = []
        self.stderr: list[str] = []
        self.closed = asyncio.Event()
        self._arrived = asyncio.Event()
        options.setdefault("stderr", self.stderr.append)
        self.options = options

    def receive(self, frame: Any) -> None:
        self.frames.append(frame)
        self._arrived.set()

    async def ready(self) -> dict[str, Any]:
        async with asyncio.timeout(STARTUP):
            while True:
                for frame in self.frames:
                    if isinstance(frame, dict) and "ready" in frame:
                        ready: dict[str, Any] = frame["ready"]
                        return ready
                self._arrived.clear()
                await self._arrived.wait()


@contextlib.asynccontextmanager
async def launch(mode: str, **options: Any) -> AsyncIterator[tuple[StdioClientTransport, Child]]:
    child = Child(**options)
    transport = StdioClientTransport(
        [sys.executable, str(CHILD), mode],
        close_timeout=CLOSE_TIMEOUT,
        kill_timeout=KILL_TIMEOUT,
        **child.options,
    )
    await transport.start(child.receive, child.closed.set)
    try:
        yield transport, child
    finally:
        await transport.close()


def returncode(transport: StdioClientTransport) -> int | None:
    assert transport.process is not None
    return transport.process.returncode


async def gone(pid: int, timeout: float = 2.0) -> bool:
    """True once ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        await asyncio.sleep(0.02)
    return False


async def test_a_child_that_exits_on_stdin_close_is_never_signalled() -> None:
    async with launch("polite") as (transport, child):
        await child.ready()
        started = time.monotonic()
        await transport.close()
        assert returncode(transport) == 0
        assert time.monotonic() - started < CLOSE_TIMEOUT
        # on_close reports a connection lost, not one we closed ourselves.
        assert not child.closed.is_set()


async def test_a_child_that_ignores_stdin_close_gets_sigterm() -> None:
    async with launch("deaf") as (transport, child):
        await child.ready()
        started = time.monotonic()
        await transport.close()
        assert returncode(transport) == -signal.SIGTERM
        assert time.monotonic() - started < CLOSE_TIMEOUT + KILL_TIMEOUT


async def test_a_child_that_ignores_sigterm_gets_sigkill() -> None:
    async with launch("stubborn") as (transport, child):
        await child.ready()
        started = time.monotonic()
        await transport.close()
        assert returncode(transport) == -signal.SIGKILL
        assert time.monotonic() - started < CLOSE_TIMEOUT + KILL_TIMEOUT + 1.0


async def test_a_grandchild_does_not_outlive_a_child_that_exited_cleanly() -> None:
    async with launch("parent") as (transport, child):
        grandchild = (await child.ready())["grandchild"]
        assert psutil.Process(grandchild).is_running()
        started = time.monotonic()
        await transport.close()
        assert returncode(transport) == 0
        assert await gone(grandchild)
        # The grandchild held the child's stdout and stderr open; that must not delay us.
        assert time.monotonic() - started < CLOSE_TIMEOUT


async def test_close_does_not_hang_on_a_grandchild_that_left_the_group() -> None:
    async with launch("escapee") as (transport, child):
        escapee = (await child.ready())["grandchild"]
        try:
            started = time.monotonic()
            await transport.close()
            assert returncode(transport) == 0
            assert time.monotonic() - started < CLOSE_TIMEOUT + KILL_TIMEOUT + 0.5
        finally:
            os.kill(escapee, signal.SIGKILL)


async def test_close_is_idempotent_and_safe_before_start() -> None:
    never_started = StdioClientTransport([sys.executable, str(CHILD), "polite"])
    await never_started.close()
    async with launch("polite") as (transport, child):
        await child.ready()
        await transport.close()
        await transport.close()
        assert returncode(transport) == 0


async def test_the_child_sees_only_the_configured_environment_and_the_safe_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPKIT_TEST_SECRET", "hunter2")
    monkeypatch.setenv("HOME", "/home/ours")
    configured = {"CONFIGURED": "yes", "HOME": "/home/theirs"}
    async with launch("env", env=configured) as (_, child):
        env = (await child.ready())["env"]
    assert "MCPKIT_TEST_SECRET" not in env
    assert "hunter2" not in env.values()
    assert env["CONFIGURED"] == "yes"
    assert env["HOME"] == "/home/theirs"
    assert set(env) <= set(SAFE_ENV_KEYS) | set(configured)


async def test_without_a_configured_environment_the_child_gets_only_the_safe_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPKIT_TEST_SECRET", "hunter2")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    async with launch("env") as (_, child):
        env = (await child.ready())["env"]
    assert "MCPKIT_TEST_SECRET" not in env
    assert env["PATH"] == "/usr/bin:/bin"
    assert set(env) <= set(SAFE_ENV_KEYS)


async def test_stderr_reaches_the_callback_line_by_line_however_long_the_lines() -> None:
    async with launch("stderr") as (transport, child):
        await child.ready()
        await transport.close()
    assert child.stderr[0] == "first line"
    assert child.stderr[-2:] == ["caf\ufffd is not UTF-8", "last line"]
    long_line = "".join(child.stderr[1:-2])
    assert long_line == "x" * (1 << 20)


async def test_a_callback_that_raises_does_not_stop_stderr_being_read() -> None:
    seen: list[str] = []

    def fragile(line: str) -> None:
        seen.append(line)
        raise RuntimeError("the callback broke")

    async with launch("stderr", stderr=fragile) as (transport, child):
        await child.ready()
        await transport.close()
    assert seen[0] == "first line"
    assert seen[-1] == "last line"


async def test_sending_to_a_child_that_has_exited_raises_connection_closed() -> None:
    async with launch("burst") as (transport, child):
        await asyncio.wait_for(child.closed.wait(), STARTUP)
        with pytest.raises(ConnectionClosed):
            await transport.send({"jsonrpc": "2.0", "method": "ping"})


async def test_everything_a_child_wrote_before_exiting_reaches_the_receiver() -> None:
    async with launch("burst") as (transport, child):
        await asyncio.wait_for(child.closed.wait(), STARTUP)
        assert child.frames == [{"n": n} for n in range(1000)]
        await transport.close()
        assert returncode(transport) == 0


async def test_a_child_that_dies_is_reported_and_the_transport_starts_a_fresh_one() -> None:
    async with launch("deaf") as (transport, child):
        first = (await child.ready())["pid"]
        os.kill(first, signal.SIGKILL)
        await asyncio.wait_for(child.closed.wait(), STARTUP)
        child.frames.clear()
        child.closed.clear()
        await transport.start(child.receive, child.closed.set)
        second = (await child.ready())["pid"]
        assert second != first
        assert transport.starts == 2
        await transport.close()
        assert returncode(transport) == -signal.SIGTERM


@pytest.mark.parametrize("mode", ["polite", "deaf", "stubborn", "parent"])
async def test_close_leaves_no_descriptor_task_or_child_behind(mode: str) -> None:
    me = psutil.Process()
    fds, tasks, children = me.num_fds(), len(asyncio.all_tasks()), len(me.children())
    async with launch(mode) as (transport, child):
        await child.ready()
        await transport.close()
    assert me.num_fds() == fds
    assert len(asyncio.all_tasks()) == tasks
    assert len(me.children(recursive=True)) == children
