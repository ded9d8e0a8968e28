"""The stdio transport, server end (spec ``basic/transports/stdio.mdx``).

:func:`serve_stdio` reads requests from stdin and writes responses to
stdout. Before serving it moves the real stdout to a private descriptor and points file
descriptor 1 and ``sys.stdout`` at stderr, so a stray ``print()`` (or a C library writing
to fd 1) lands in the log instead of corrupting the wire. It returns promptly when stdin
reaches end-of-file, after letting running handlers finish for a short grace period.

The client end, which launches a server as a child process, is
:mod:`mcpkit.transports.stdio_client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.transports.base import ServerApp
from mcpkit.transports.stream import StreamServerConnection

logger = logging.getLogger("mcpkit.transport")

__all__ = ["run_stdio", "serve_stdio"]

_READ_SIZE = 256 * 1024


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
