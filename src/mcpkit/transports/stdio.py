"""The stdio transport (spec ``basic/transports/stdio.mdx``), both ends.

Server end: :func:`serve_stdio` reads requests from stdin and writes responses to
stdout. Before serving it moves the real stdout to a private descriptor and points file
descriptor 1 and ``sys.stdout`` at stderr, so a stray ``print()`` (or a C library writing
to fd 1) lands in the log instead of corrupting the wire. It returns promptly when stdin
reaches end-of-file, after letting running handlers finish for a short grace period.

Client end: :class:`StdioClientTransport` spawns a server as a child process in its own
process group, with only the environment it was given plus a minimal safe set, sends
lines to its stdin, hands every decoded line from its stdout to the client, passes its
stderr to a callback or a logger, and shuts it down the way the spec asks: close stdin,
wait, then SIGTERM and SIGKILL to the whole process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcpkit.errors import ConnectionClosed
from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE, LineReader
from mcpkit.transports.base import ServerApp
from mcpkit.transports.stream import StreamServerConnection

logger = logging.getLogger("mcpkit.transport")

__all__ = ["SAFE_ENV_KEYS", "StdioClientTransport", "run_stdio", "serve_stdio"]

_READ_SIZE = 256 * 1024


# -- server end -------------------------------------------------------------------------


def _is_stream(fd: int) -> bool:
    """Pipes and sockets get the event loop's pipe transports; anything else a thread."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class _ReadProtocol(asyncio.Protocol):
    def __init__(self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> None:
        self._on_data = on_data
        self._on_eof = on_eof

    def data_received(self, data: bytes) -> None:
        self._on_data(data)

    def eof_received(self) -> bool:
        self._on_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._on_eof()


class _WriteProtocol(asyncio.BaseProtocol):
    def __init__(self) -> None:
        self.closed = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class _Output:
    """Writes lines to a descriptor: a non-blocking pipe transport, or plain writes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._transport: asyncio.WriteTransport | None = None
        self._protocol: _WriteProtocol | None = None

    async def open(self) -> None:
        if _is_stream(self.fd):
            loop = asyncio.get_running_loop()
            pipe = os.fdopen(self.fd, "wb", buffering=0, closefd=False)
            transport, protocol = await loop.connect_write_pipe(_WriteProtocol, pipe)
            self._transport, self._protocol = transport, protocol

    def write(self, data: bytes) -> None:
        if self._transport is not None:
            if not self._transport.is_closing():
                self._transport.write(data)
            return
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except (BrokenPipeError, OSError):
            logger.debug("stdout closed; dropping %d bytes", len(view))

    async def aclose(self, timeout: float = 5.0) -> None:
        if self._transport is not None and self._protocol is not None:
            self._transport.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._protocol.closed, timeout)


async def _open_input(
    fd: int, on_data: Callable[[bytes], None], on_eof: Callable[[], None]
) -> Callable[[], None]:
    """Start delivering stdin; returns a function that stops it."""
    loop = asyncio.get_running_loop()
    if _is_stream(fd):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        transport, _ = await loop.connect_read_pipe(lambda: _ReadProtocol(on_data, on_eof), pipe)
        return transport.close

    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            try:
                chunk = os.read(fd, _READ_SIZE)
            except OSError:
                chunk = b""
            if not chunk:
                loop.call_soon_threadsafe(on_eof)
                return
            loop.call_soon_threadsafe(on_data, chunk)

    threading.Thread(target=pump, name="mcpkit-stdin", daemon=True).start()
    return stop.set


async def serve_stdio(
    app: ServerApp,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    max_line: int = DEFAULT_MAX_LINE,
    max_depth: int = codec.DEFAULT_MAX_DEPTH,
    shutdown_grace: float = 5.0,
    protect_stdout: bool = True,
) -> None:
    """Serve ``app`` on stdin/stdout until stdin reaches end-of-file."""
    out_fd = stdout_fd
    saved_stdout = sys.stdout
    if protect_stdout and stdout_fd == 1:
        sys.stdout.flush()
        out_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    output = _Output(out_fd)
    eof = asyncio.Event()
    try:
        await output.open()
        connection = StreamServerConnection(
            app, output.write, max_line=max_line, max_depth=max_depth
        )

        def on_eof() -> None:
            if not eof.is_set():
                connection.feed_eof()
                eof.set()

        stop_input = await _open_input(stdin_fd, connection.feed, on_eof)
        try:
            await eof.wait()
            await connection.wait_idle(shutdown_grace)
        finally:
            stop_input()
            await connection.aclose()
            await output.aclose()
    finally:
        if out_fd != stdout_fd:
            os.dup2(out_fd, 1)
            os.close(out_fd)
            sys.stdout = saved_stdout


def run_stdio(app: ServerApp, **options: Any) -> None:
    """Blocking entry point: serve ``app`` over stdio in a fresh event loop."""
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(app, **options))


# -- client end -------------------------------------------------------------------------

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
