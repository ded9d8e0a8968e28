"""The stdio transport, server end (spec ``basic/transports/stdio.mdx``).

:func:`serve_stdio` reads requests from stdin and writes responses to
stdout. Before serving it moves the real stdout to a private descriptor and points file
descriptor 1 and ``sys.stdout`` at stderr, so a stray ``print()`` (or a C library writing
to fd 1) lands in the log instead of corrupting the wire. It returns promptly when stdin
reaches end-of-file, after letting running handlers finish for a short grace period.

:func:`run_stdio` owns its event loop, so it also owns the loop's default executor,
where sync tools run (``asyncio.to_thread``). The standard pool's threads are joined
when the loop and the interpreter shut down, so one sync tool stuck in ``time.sleep``
would keep the process alive long after stdin closed; :class:`WorkerPool` runs them on
daemon threads instead and never waits for a busy one, so the process exits once the
grace period is over whatever its handlers are doing.

The client end, which launches a server as a child process, is
:mod:`mcpkit.transports.stdio_client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar, cast

from mcpkit.protocol import codec
from mcpkit.protocol.framing import DEFAULT_MAX_LINE
from mcpkit.transports.base import ServerApp
from mcpkit.transports.stream import StreamServerConnection

logger = logging.getLogger("mcpkit.transport")

__all__ = ["WorkerPool", "protected_stdout", "run_stdio", "serve_stdio"]

# Below glibc's mmap threshold (128 KiB): a 256 KiB read buffer is mmap'd and unmapped
# on every read, which cost ~20 us per message (measured with make bench + strace).
_READ_SIZE = 64 * 1024

P = ParamSpec("P")
T = TypeVar("T")

_WorkItem = tuple[Future[Any], Callable[[], Any]]


class WorkerPool(ThreadPoolExecutor):
    """A thread pool whose workers are daemon threads and whose shutdown never blocks.

    It is a ``ThreadPoolExecutor`` only because asyncio accepts nothing else as a default
    executor; it overrides the public methods and starts none of the parent's threads
    (those are joined at interpreter exit). Idle workers are reused; a new one starts
    only when every worker is busy, up to ``max_workers``. ``shutdown`` tells idle
    workers to stop and returns at once: a worker still inside a handler is abandoned,
    and being a daemon thread it does not hold the interpreter at exit.
    """

    def __init__(self, max_workers: int | None = None) -> None:
        super().__init__(max_workers, thread_name_prefix="mcpkit-worker")
        self._jobs: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._idle_workers = threading.Semaphore(0)
        self._pool_lock = threading.Lock()
        self._workers: list[threading.Thread] = []
        self._closed = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._pool_lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._jobs.put((future, lambda: fn(*args, **kwargs)))
            if self._idle_workers.acquire(blocking=False):
                return future
            if len(self._workers) < self._max_workers:
                worker = threading.Thread(
                    target=self._work, name=f"mcpkit-worker-{len(self._workers)}", daemon=True
                )
                worker.start()
                self._workers.append(worker)
        return future

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            future, job = item
            del item
            if future.set_running_or_notify_cancel():
                try:
                    result = job()
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del future, job
            self._idle_workers.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop idle workers; never wait for a busy one (see the class docstring)."""
        with self._pool_lock:
            self._closed = True
            if cancel_futures:
                while True:
                    try:
                        item = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            for _ in self._workers:
                self._jobs.put(None)


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
    """Tells the input to stop reading while the client is not reading our output."""

    def __init__(self, flow: _Input) -> None:
        self.closed = asyncio.get_running_loop().create_future()
        self._flow = flow

    def pause_writing(self) -> None:
        self._flow.pause()

    def resume_writing(self) -> None:
        self._flow.resume()

    def connection_lost(self, exc: Exception | None) -> None:
        self._flow.resume()
        if not self.closed.done():
            self.closed.set_result(None)


class _Output:
    """Writes lines to a descriptor: a non-blocking pipe transport, or plain writes.

    On a pipe, output that the client does not read piles up in the transport's buffer;
    past its high-water mark the transport pauses ``flow`` (stdin), so a client that
    keeps sending but stops reading stalls itself instead of growing our memory.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._transport: asyncio.WriteTransport | None = None
        self._protocol: _WriteProtocol | None = None

    async def open(self, flow: _Input) -> None:
        if _is_stream(self.fd):
            loop = asyncio.get_running_loop()
            # A private duplicate: event loops (uvloop among them) close the descriptor
            # of a pipe transport they close, and fd 1 / the wire fd must survive that.
            pipe = os.fdopen(os.dup(self.fd), "wb", buffering=0)
            transport, protocol = await loop.connect_write_pipe(lambda: _WriteProtocol(flow), pipe)
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


class _Input:
    """Delivers stdin: a pipe transport for pipes and sockets, a thread for anything else.

    It can be paused (while the client is not reading our output) and resumed.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._transport: asyncio.ReadTransport | None = None
        self._running = threading.Event()
        self._running.set()
        self._stopped = threading.Event()

    async def open(self, on_data: Callable[[bytes], None], on_eof: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        if _is_stream(self.fd):
            pipe = os.fdopen(os.dup(self.fd), "rb", buffering=0)
            transport, _ = await loop.connect_read_pipe(
                lambda: _ReadProtocol(on_data, on_eof), pipe
            )
            # asyncio's pipe transport reads max_size bytes at a time (an instance
            # attribute of _UnixReadPipeTransport; a class default of 256 KiB).
            if hasattr(transport, "max_size"):
                cast(Any, transport).max_size = _READ_SIZE
            self._transport = transport
            if not self._running.is_set():
                transport.pause_reading()
            return

        def pump() -> None:
            while self._running.wait() and not self._stopped.is_set():
                try:
                    chunk = os.read(self.fd, _READ_SIZE)
                except OSError:
                    chunk = b""
                if not chunk:
                    loop.call_soon_threadsafe(on_eof)
                    return
                loop.call_soon_threadsafe(on_data, chunk)

        threading.Thread(target=pump, name="mcpkit-stdin", daemon=True).start()

    def pause(self) -> None:
        if self._running.is_set():
            self._running.clear()
            if self._transport is not None and self._transport.is_reading():
                self._transport.pause_reading()

    def resume(self) -> None:
        if not self._running.is_set():
            self._running.set()
            if self._transport is not None and not self._transport.is_closing():
                self._transport.resume_reading()

    def close(self) -> None:
        self._stopped.set()
        self._running.set()
        if self._transport is not None:
            self._transport.close()


_wire_fd: int | None = None


@contextlib.contextmanager
def protected_stdout() -> Iterator[int]:
    """Reserve the real stdout for protocol messages; yield a descriptor that writes to it.

    File descriptor 1 and ``sys.stdout`` point at stderr until the block ends, so a stray
    ``print()`` (or a C library writing to fd 1) lands in the log. Nested use yields the
    same descriptor: ``mcpkit run`` protects stdout before it imports the server's module,
    and a module that serves while being imported must still write to the real stdout.
    """
    global _wire_fd
    if _wire_fd is not None:
        yield _wire_fd
        return
    sys.stdout.flush()
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    _wire_fd = wire_fd
    try:
        yield wire_fd
    finally:
        _wire_fd = None
        sys.stdout = saved_stdout
        os.dup2(wire_fd, 1)
        os.close(wire_fd)


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
    """Serve ``app`` on stdin/stdout until stdin reaches end-of-file.

    With ``protect_stdout`` (and the real stdout as ``stdout_fd``) nothing but protocol
    messages reaches stdout while serving: see :func:`protected_stdout`.
    """
    with contextlib.ExitStack() as stack:
        out_fd = stdout_fd
        if protect_stdout and stdout_fd == 1:
            out_fd = stack.enter_context(protected_stdout())
        await _serve(app, stdin_fd, out_fd, max_line, max_depth, shutdown_grace)


async def _serve(
    app: ServerApp,
    stdin_fd: int,
    out_fd: int,
    max_line: int,
    max_depth: int,
    shutdown_grace: float,
) -> None:
    output = _Output(out_fd)
    stdin = _Input(stdin_fd)
    eof = asyncio.Event()
    await output.open(stdin)
    connection = StreamServerConnection(app, output.write, max_line=max_line, max_depth=max_depth)

    def on_eof() -> None:
        if not eof.is_set():
            connection.feed_eof()
            eof.set()

    try:
        await stdin.open(connection.feed, on_eof)
        try:
            await eof.wait()
            # The client is gone: end listen streams gracefully rather than letting
            # them run out the grace period (one process serves one client).
            stop = getattr(app, "shutdown", None)
            if callable(stop):
                stop()
            await connection.wait_idle(shutdown_grace)
        finally:
            stdin.close()
    finally:
        await connection.aclose()
        await output.aclose()


def run_stdio(app: ServerApp, **options: Any) -> None:
    """Blocking entry point: serve ``app`` over stdio in a fresh event loop.

    Sync handlers run on a :class:`WorkerPool`, so the process exits promptly after
    end-of-file even when one of them never returns.
    """

    async def serve() -> None:
        asyncio.get_running_loop().set_default_executor(WorkerPool())
        await serve_stdio(app, **options)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
