"""The stdio harness: spawn a server, speak raw NDJSON to it, time and check every answer.

One :class:`StdioServer` is one child process. Its stdin and stdout are plain pipes used
with ``os.write``/``os.read`` (no buffering layer, no MCP library); stderr goes to a file
the caller owns, whose tail is shown when something fails. Every read waits at most
``timeout`` seconds, so a server that stops answering fails the run instead of hanging.

Measurements (see ``bench/README.md`` for what each number means):

* :func:`cold_start`: from just before ``Popen`` to the first successful answer;
* :func:`sequential`: one request at a time for ``seconds``; calls per second and the
  latency of every round trip;
* :func:`pipelined`: ``depth`` requests kept in flight for ``seconds``; answers may come
  in any order, each must match an outstanding id exactly once;
* server CPU time (user + system, all threads) per call from ``psutil``, and peak RSS
  from ``VmHWM`` in ``/proc/<pid>/status``.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from process import BenchFailure, ServerProcess
from wire import Dialect, WrongAnswer, decode

DEFAULT_TIMEOUT = 20.0
READ_SIZE = 1 << 16
WARMUP_CALLS = 300

__all__ = [
    "BenchFailure",
    "PhaseResult",
    "StdioServer",
    "cold_start",
    "pipelined",
    "sequential",
]


@dataclass
class PhaseResult:
    """What one timed phase measured."""

    calls: int
    seconds: float
    server_cpu: float
    client_cpu: float
    latencies_ns: list[int] = field(default_factory=list)

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds

    @property
    def server_cpu_per_call_us(self) -> float:
        return self.server_cpu / self.calls * 1e6

    @property
    def client_cpu_per_call_us(self) -> float:
        return self.client_cpu / self.calls * 1e6

    def latency_percentile_us(self, percentile: float) -> float:
        """Nearest-rank percentile of the round-trip latencies, in microseconds."""
        ordered = sorted(self.latencies_ns)
        rank = max(0, min(len(ordered) - 1, round(percentile / 100 * len(ordered)) - 1))
        return ordered[rank] / 1000


class StdioServer(ServerProcess):
    """One server child process driven over its stdin/stdout pipes."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        stderr: IO[bytes],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        env: Sequence[tuple[str, str]] = (),
        cpu: int | None = None,
    ) -> None:
        super().__init__(name, stderr, env=env, cpu=cpu)
        self.command = list(command)
        self.timeout = timeout
        self._buffer = b""
        self._poll = select.poll()

    # -- life cycle -------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the child; ``started_at`` is taken just before ``Popen``."""
        self._spawn(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        proc = self.process
        assert proc.stdout is not None
        self._out_fd = proc.stdout.fileno()
        assert proc.stdin is not None
        self._in_fd = proc.stdin.fileno()
        self._poll.register(self._out_fd, select.POLLIN)

    def close(self, grace: float = 5.0) -> int | None:
        """Close stdin and wait; then SIGTERM, then SIGKILL. Returns the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.terminate()
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- wire -------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._in_fd, view) :]
        except BrokenPipeError:
            raise self.fail("stdin closed while sending") from None

    def _fill(self) -> None:
        """Block (at most ``timeout``) until stdout has bytes; append them."""
        if not self._poll.poll(self.timeout * 1000):
            raise self.fail(f"no answer within {self.timeout:.0f} s")
        chunk = os.read(self._out_fd, READ_SIZE)
        if not chunk:
            raise self.fail("stdout closed before the answer")
        self._buffer += chunk

    def read_line(self) -> bytes:
        """The next complete line from stdout."""
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = self._buffer[:newline]
                self._buffer = self._buffer[newline + 1 :]
                return line
            self._fill()

    def read_lines(self) -> list[bytes]:
        """Every complete line available now, waiting for at least one."""
        while b"\n" not in self._buffer:
            self._fill()
        *lines, self._buffer = self._buffer.split(b"\n")
        return lines

    def read_answer(self) -> bytes:
        """The next line that is a response (server notifications are skipped)."""
        while True:
            line = self.read_line()
            if line.strip() and (b'"id"' in line or b'"method"' not in line):
                return line


# -- measurements ---------------------------------------------------------------------


def cold_start(server: StdioServer, dialect: Dialect, request_id: int = 0) -> float:
    """Spawn the server and send the opening request; seconds to its checked answer."""
    server.start()
    server.send(dialect.opening(request_id))
    line = server.read_answer()
    elapsed = time.perf_counter() - server.started_at
    _checked(server, dialect.check_opening, line, request_id)
    follow = dialect.after_opening()
    if follow:
        server.send(follow)
    return elapsed


def warm_up(server: StdioServer, dialect: Dialect, first_id: int, calls: int) -> int:
    """A few checked calls that are not timed; returns the next free id."""
    for request_id in range(first_id, first_id + calls):
        server.send(dialect.call(request_id))
        line = server.read_answer()
        _checked(server, dialect.check_call, line, request_id)
    return first_id + calls


def sequential(
    server: StdioServer, dialect: Dialect, seconds: float, first_id: int
) -> tuple[PhaseResult, int]:
    """One request at a time for ``seconds``; every answer checked. Returns the next id."""
    latencies: list[int] = []
    record = latencies.append
    call, send, read, check = dialect.call, server.send, server.read_answer, dialect.check_call
    clock = time.perf_counter_ns
    request_id = first_id
    cpu0, client0 = server.cpu_seconds(), time.process_time()
    start = sent = clock()
    deadline = start + int(seconds * 1e9)
    while sent < deadline:
        sent = clock()
        send(call(request_id))
        line = read()
        record(clock() - sent)
        try:
            check(decode(line), request_id)
        except WrongAnswer as exc:
            raise server.fail(str(exc)) from None
        request_id += 1
    elapsed = (clock() - start) / 1e9
    result = PhaseResult(
        calls=request_id - first_id,
        seconds=elapsed,
        server_cpu=server.cpu_seconds() - cpu0,
        client_cpu=time.process_time() - client0,
        latencies_ns=latencies,
    )
    return result, request_id


def pipelined(
    server: StdioServer, dialect: Dialect, seconds: float, first_id: int, depth: int = 64
) -> tuple[PhaseResult, int]:
    """Keep ``depth`` requests in flight for ``seconds``, then drain; every answer checked.

    Answers may arrive in any order; each must answer an outstanding id exactly once.
    Requests freed by one read are sent back in one write, as a busy client would.
    """
    call, send, check = dialect.call, server.send, dialect.check_call
    outstanding: set[int] = set()
    next_id = first_id
    completed = 0
    clock = time.perf_counter_ns
    cpu0, client0 = server.cpu_seconds(), time.process_time()
    start = clock()
    deadline = start + int(seconds * 1e9)
    refill = depth
    while True:
        if refill:
            batch = range(next_id, next_id + refill)
            send(b"".join(map(call, batch)))
            outstanding.update(batch)
            next_id += refill
        if not outstanding:
            break
        for line in server.read_lines():
            if not line.strip():
                continue
            message = decode(line)
            answer_id = message.get("id")
            if type(answer_id) is not int or answer_id not in outstanding:
                if "id" not in message and "method" in message:
                    continue
                raise server.fail(f"an answer to no outstanding request: {message}")
            outstanding.remove(answer_id)
            try:
                check(message, answer_id)
            except WrongAnswer as exc:
                raise server.fail(str(exc)) from None
            completed += 1
        refill = depth - len(outstanding) if clock() < deadline else 0
    elapsed = (clock() - start) / 1e9
    result = PhaseResult(
        calls=completed,
        seconds=elapsed,
        server_cpu=server.cpu_seconds() - cpu0,
        client_cpu=time.process_time() - client0,
    )
    return result, next_id


def _checked(
    server: StdioServer,
    check: Callable[[dict[str, Any], int], None],
    line: bytes,
    request_id: int,
) -> None:
    """Decode and check one answer; a wrong one becomes a failure naming the server."""
    try:
        check(decode(line), request_id)
    except WrongAnswer as exc:
        raise server.fail(str(exc)) from None
