"""The stdio transport, client end (spec ``basic/transports/stdio.mdx``).

:class:`StdioClientTransport` spawns a server as a child process in its own process
group, with only the environment it was given plus a minimal safe set, sends lines to
its stdin, hands every decoded line from its stdout to the client, passes its stderr to
a callback or a logger, and shuts it down the way the spec asks: close stdin, wait, then
SIGTERM and SIGKILL to the whole process group.

The transport can be started again after its process died (the client restarts a
crashed server, spec ``stdio.mdx`` §Unexpected Termination): :meth:`start` reaps what is
left of the old process group and spawns a fresh one.

"Wait" means waiting for the child itself to exit, which the launcher learns from the
subprocess protocol's ``process_exited``. ``Process.wait()`` also waits for the pipes to
close, which a grandchild holding the child's stdout can put off forever; once the child
is gone, whatever it left in its process group is killed, so nothing outlives it.

stderr is read in chunks and split into lines here, so a line of any length reaches the
callback (in pieces of at most :data:`STDERR_PIECE` bytes) instead of stopping the
reader, and a callback or receiver that raises is logged without stopping it either: a
pipe nobody reads would block the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit.errors import ConnectionClosed, RequestId
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE, LineReader

logger = logging.getLogger("mcpkit.transport")

__all__ = ["SAFE_ENV_KEYS", "STDERR_PIECE", "StdioClientTransport", "child_environment"]

_READ_SIZE = 256 * 1024
_STREAM_LIMIT = 64 * 1024

# The longest piece of a stderr line handed to the callback at once; a longer line
# arrives in several pieces, none of it dropped.
STDERR_PIECE = 64 * 1024

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


class _ChildProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The standard stream protocol, plus an event set the moment the child exits."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_STREAM_LIMIT, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


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
        self._protocol: _ChildProtocol | None = None
        self._transport: asyncio.SubprocessTransport | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = asyncio.Event()
        self._closing = False
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def server_key(self) -> str:
        """What identifies this server configuration for the client's era cache."""
        env = "\0".join(f"{k}={v}" for k, v in sorted(self.env.items()))
        digest = hashlib.sha256(f"{self.command!r}\0{self.cwd!s}\0{env}".encode()).hexdigest()
        return f"stdio:{digest}"

    @property
    def restartable(self) -> bool:
        return True

    def clone(self) -> StdioClientTransport:
        """A transport for another process of the same server (same command, env, cwd)."""
        twin = StdioClientTransport(
            self.command,
            cwd=self.cwd,
            stderr=self._on_stderr,
            max_line=self._max_line,
            close_timeout=self._close_timeout,
            kill_timeout=self._kill_timeout,
        )
        twin.env = dict(self.env)
        return twin

    async def cancel(self, request_id: RequestId) -> bool:
        """stdio has no per-request stream: the client must send notifications/cancelled."""
        return False

    async def start(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        """Spawn the process and start delivering its messages to ``receiver``."""
        if self.process is not None:
            await self._reap()
        self._closed = asyncio.Event()
        self._closing = False
        self.starts += 1
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _ChildProtocol(loop),
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        self._protocol, self._transport = protocol, transport
        self.process = asyncio.subprocess.Process(transport, protocol, loop)
        self._tasks = [
            loop.create_task(self._read_stdout(receiver, on_close)),
            loop.create_task(self._read_stderr()),
        ]

    async def _read_stdout(self, receiver: Receiver, on_close: Callable[[], None]) -> None:
        assert self.process is not None
        assert self.process.stdout is not None
        reader = LineReader(self._max_line)
        stream = self.process.stdout
        closed = self._closed
        try:
            while True:
                chunk = await stream.read(_READ_SIZE)
                if not chunk:
                    break
                self._deliver(receiver, reader.feed(chunk))
            self._deliver(receiver, reader.close())
        except asyncio.CancelledError:
            # Stopped by close() or a restart: the caller knows, nothing to report.
            closed.set()
            raise
        closed.set()
        if not self._closing:
            on_close()

    @staticmethod
    def _deliver(receiver: Receiver, frames: list[Any]) -> None:
        for frame in frames:
            try:
                receiver(frame)
            except Exception:
                logger.exception("the receiver failed on a message from the server")

    async def _read_stderr(self) -> None:
        """Hand each stderr line to the callback (or the logger), long ones in pieces."""
        assert self.process is not None
        assert self.process.stderr is not None
        stream = self.process.stderr
        pending = bytearray()
        while chunk := await stream.read(_READ_SIZE):
            pending += chunk
            start = 0
            while (newline := pending.find(b"\n", start)) >= 0:
                self._stderr_line(pending[start:newline])
                start = newline + 1
            del pending[:start]
            while len(pending) >= STDERR_PIECE:
                self._stderr_line(pending[:STDERR_PIECE])
                del pending[:STDERR_PIECE]
        if pending:
            self._stderr_line(pending)

    def _stderr_line(self, line: bytes | bytearray) -> None:
        text = bytes(line).decode("utf-8", "replace").removesuffix("\r")
        if self._on_stderr is not None:
            try:
                self._on_stderr(text)
            except Exception:
                logger.exception("the stderr callback failed")
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

    async def _reap(self) -> None:
        """Make sure a previous process and everything in its group is gone."""
        process, protocol = self.process, self._protocol
        if process is None or protocol is None:
            return
        self._closing = True
        self._signal_group(process, signal.SIGKILL)
        await protocol.exited.wait()
        await self._finish_tasks(process, 0)

    async def _finish_tasks(self, process: asyncio.subprocess.Process, grace: float) -> None:
        """Let the readers deliver what is left (up to ``grace`` s), then stop them."""
        others = [task for task in self._tasks if task is not asyncio.current_task()]
        if others and grace > 0:
            _, stuck = await asyncio.wait(others, timeout=grace)
            if stuck:
                logger.warning("a process outside the server's group holds its pipes open")
        for task in others:
            task.cancel()
        for task in others:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        # Closing the transport closes our ends of the pipes even when a process outside
        # the group still holds theirs; then the child can be reaped.
        if self._transport is not None:
            self._transport.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), max(grace, 1.0))

    async def close(self) -> None:
        """Close stdin, wait; then SIGTERM, wait; then SIGKILL, to the whole group.

        Afterwards nothing the child started in its process group is left running, the
        child is reaped, and every line it wrote before exiting has been delivered.
        """
        process, protocol = self.process, self._protocol
        if process is None or protocol is None or self._closing:
            return
        self._closing = True
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        if not await self._exited(protocol, self._close_timeout):
            self._signal_group(process, signal.SIGTERM)
            if not await self._exited(protocol, self._kill_timeout):
                self._signal_group(process, signal.SIGKILL)
                await protocol.exited.wait()
        # The child is gone; whatever it left behind in its group goes too, which also
        # closes the pipes those processes held.
        self._signal_group(process, signal.SIGKILL)
        await self._finish_tasks(process, self._kill_timeout)

    @staticmethod
    async def _exited(protocol: _ChildProtocol, timeout: float) -> bool:
        try:
            await asyncio.wait_for(protocol.exited.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @staticmethod
    def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
