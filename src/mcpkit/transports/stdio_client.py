"""The stdio transport, client end (spec ``basic/transports/stdio.mdx``).

:class:`StdioClientTransport` spawns a server as a child process in its own process
group, with only the environment it was given plus a minimal safe set, sends lines to
its stdin, hands every decoded line from its stdout to the client, passes its stderr to
a callback or a logger, and shuts it down the way the spec asks: close stdin, wait, then
SIGTERM and SIGKILL to the whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit.errors import ConnectionClosed
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE, LineReader

logger = logging.getLogger("mcpkit.transport")

__all__ = ["SAFE_ENV_KEYS", "StdioClientTransport", "child_environment"]

_READ_SIZE = 256 * 1024

# What a child inherits when no environment is given, and the floor of any given one:
# enough to find programs and behave, nothing that carries secrets.
SAFE_ENV_KEYS: tuple[str, ...] = (
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "SHELL",
    "SYSTEMROOT",
    "TEMP",
    "TERM",
    "TMP",
    "TMPDIR",
    "TZ",
    "USER",
)


def child_environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The minimal safe set from our environment, overlaid with ``env``."""
    base = {key: os.environ[key] for key in SAFE_ENV_KEYS if key in os.environ}
    if env:
        base.update(env)
    return base


Receiver = Callable[[Any], None]


class StdioClientTransport:
    """Runs an MCP server as a child process and talks to it over its stdin/stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], None] | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        close_timeout: float = 2.0,
        kill_timeout: float = 2.0,
    ) -> None:
        if not command:
            raise ValueError("an empty command cannot be started")
        self.command = list(command)
        self.env = child_environment(env)
        self.cwd = cwd
        self._on_stderr = stderr
        self._max_line = max_line
        self._close_timeout = close_timeout
        self._kill_timeout = kill_timeout
        self.process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = asyncio.Event()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    async def start(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        """Spawn the process and start delivering its messages to ``receiver``."""
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read_stdout(receiver, on_close)),
            loop.create_task(self._read_stderr()),
        ]

    async def _read_stdout(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        reader = LineReader(self._max_line)
        stream = self.process.stdout
        try:
            while True:
                chunk = await stream.read(_READ_SIZE)
                if not chunk:
                    break
                for frame in reader.feed(chunk):
                    receiver(frame)
            for frame in reader.close():
                receiver(frame)
        finally:
            self._closed.set()
            on_close()

    async def _read_stderr(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        stream = self.process.stderr
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\n")
            if self._on_stderr is not None:
                self._on_stderr(text)
            else:
                logger.info("[%s] %s", os.path.basename(self.command[0]), text)

    async def send(self, message: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None or self._closed.is_set():
            raise ConnectionClosed("the server process is not running")
        try:
            process.stdin.write(codec.dumps(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionClosed("the server process closed its stdin") from exc

    async def close(self) -> None:
        """Close stdin, wait; then SIGTERM, wait; then SIGKILL, to the whole group."""
        process = self.process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if not await self._wait(process, self._close_timeout):
            self._signal_group(process, signal.SIGTERM)
            if not await self._wait(process, self._kill_timeout):
                self._signal_group(process, signal.SIGKILL)
                await process.wait()
        else:
            # The leader exited; children it left behind in its group go too.
            self._signal_group(process, signal.SIGKILL)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @staticmethod
    async def _wait(process: asyncio.subprocess.Process, timeout: float) -> bool:
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @staticmethod
    def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
