"""The HTTP harness: start a server on a port, open a session by hand, load it with wrk.

One :class:`HttpServer` is one server process listening on ``127.0.0.1:<port>``. Before
any load, :func:`open_session` speaks to it with the standard library's ``http.client``
(no MCP library): on 2026-07-28 a ``server/discover`` (or a first ``tools/call`` for a
server without discover); on a legacy era an ``initialize``, whose ``Mcp-Session-Id`` is
kept, then ``notifications/initialized``; then one checked ``tools/call``. Answers may
come as ``application/json`` or as a ``text/event-stream`` whose event carries the
response. The time from spawn to that first checked answer is the server's readiness.

The load itself is wrk (``wrk.py``) POSTing the same ``tools/call add`` with the headers
the era requires (modern: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``; legacy:
``Mcp-Session-Id`` and ``MCP-Protocol-Version``). All connections of a legacy run share
the one session (a client may send concurrent requests in a session), so there every
request gets an id of its own (spec ``2025-11-25/basic/index.mdx``: an id is never reused
within a session); a 2026-07-28 request stands alone and always carries id 1.
"""

from __future__ import annotations

import http.client
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from process import BenchFailure, ServerProcess
from wire import LEGACY_VERSION, MODERN_VERSION, Dialect, WrongAnswer, decode
from wrk import WrkResult, run_wrk, script_arguments

PATH = "/mcp"
EXPECT = ('"text":"5"', '"text":"5.0"')
REFUSE = ('"isError":true', '"error":')
ID_SLOT = 424242424242

__all__ = ["HttpServer", "LoadPlan", "Session", "load", "open_session"]


def free_port() -> int:
    """A port nobody listens on now (the kernel's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class HttpServer(ServerProcess):
    """One HTTP server child process; stdout and stderr both go to ``stderr``."""

    def __init__(
        self,
        name: str,
        command_for_port: Callable[[int], list[str]],
        stderr: IO[bytes],
        *,
        timeout: float = 20.0,
        env: Sequence[tuple[str, str]] = (),
        cpu: int | None = None,
    ) -> None:
        super().__init__(name, stderr, env=env, cpu=cpu)
        self._command_for_port = command_for_port
        self.timeout = timeout
        self.port = 0
        self._connection: http.client.HTTPConnection | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PATH}"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        """Spawn on a free port and wait until it accepts connections."""
        self.port = free_port()
        self._spawn(
            self._command_for_port(self.port), stdin=subprocess.DEVNULL, stdout=self._stderr
        )
        deadline = time.perf_counter() + self.timeout
        while True:
            if self.process.poll() is not None:
                raise self.fail("exited before accepting connections")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.perf_counter() > deadline:
                    raise self.fail(f"not listening within {self.timeout:.0f} s") from None
                time.sleep(0.005)

    def post(
        self, body: bytes, headers: Sequence[tuple[str, str]]
    ) -> tuple[int, dict[str, str], bytes]:
        """One POST on a kept-alive connection: status, headers (lower-case), body."""
        if self._connection is None:
            self._connection = http.client.HTTPConnection("127.0.0.1", self.port, self.timeout)
        try:
            self._connection.request("POST", PATH, body, dict(headers))
            response = self._connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise self.fail(f"POST failed: {exc!r}") from None
        names = {name.lower(): value for name, value in response.getheaders()}
        return response.status, names, payload

    def close(self, grace: float = 5.0) -> int | None:
        """SIGTERM (uvicorn's graceful shutdown), then SIGKILL. Returns the exit code."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    def __enter__(self) -> HttpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _answer(status: int, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """The JSON-RPC response in a JSON or SSE answer (the SSE event that has an id)."""
    if status != 200:
        raise WrongAnswer(f"HTTP {status}: {body[:300]!r}")
    if headers.get("content-type", "").startswith("text/event-stream"):
        for line in body.splitlines():
            if line.startswith(b"data:"):
                message = decode(line[5:].strip())
                if "id" in message:
                    return message
        raise WrongAnswer(f"no response event in the stream: {body[:300]!r}")
    return decode(body)


@dataclass(frozen=True)
class Session:
    """What every request of the load carries, and how long the server took to be ready."""

    headers: tuple[tuple[str, str], ...]
    ready_seconds: float


def _headers(
    server: HttpServer, dialect: Dialect, method: str, name: str | None = None
) -> list[tuple[str, str]]:
    headers = [
        ("Host", server.host),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]
    if dialect.era == "modern":
        headers += [("MCP-Protocol-Version", MODERN_VERSION), ("Mcp-Method", method)]
        if name is not None:
            headers.append(("Mcp-Name", name))
    return headers


def _checked_post(
    server: HttpServer, body: bytes, headers: Sequence[tuple[str, str]], check: Any, rid: int
) -> dict[str, str]:
    status, answer_headers, payload = server.post(body, headers)
    try:
        check(_answer(status, answer_headers, payload), rid)
    except WrongAnswer as exc:
        raise server.fail(str(exc)) from None
    return answer_headers


def open_session(server: HttpServer, dialect: Dialect) -> Session:
    """Start the server, open the era's session and check one call (module docstring)."""
    server.start()
    call_headers = _headers(server, dialect, "tools/call", "add")
    if dialect.era == "legacy":
        opening = _headers(server, dialect, "initialize")
        answer = _checked_post(server, dialect.opening(0), opening, dialect.check_opening, 0)
        ready = time.perf_counter() - server.started_at
        session = [("MCP-Protocol-Version", LEGACY_VERSION)]
        if "mcp-session-id" in answer:
            session.append(("Mcp-Session-Id", answer["mcp-session-id"]))
        status, _, payload = server.post(dialect.after_opening(), [*opening, *session])
        if status not in (200, 202, 204):
            raise server.fail(f"notifications/initialized got HTTP {status}: {payload[:300]!r}")
        call_headers += session
    else:
        method = "server/discover" if dialect.discover else "tools/call"
        opening = _headers(server, dialect, method, None if dialect.discover else "add")
        _checked_post(server, dialect.opening(0), opening, dialect.check_opening, 0)
        ready = time.perf_counter() - server.started_at
    _checked_post(server, dialect.call(1), call_headers, dialect.check_call, 1)
    return Session(tuple(call_headers), ready)


@dataclass(frozen=True)
class LoadPlan:
    """How wrk loads a server: threads, seconds per phase, and CPU pinning."""

    wrk: str
    threads: int = 2
    seconds: int = 2
    client_cpu: int | None = None
    timeout: float = 10.0


@dataclass(frozen=True)
class LoadResult:
    """One wrk phase with the server's CPU time over it."""

    wrk: WrkResult
    server_cpu: float

    @property
    def server_cpu_per_request_us(self) -> float:
        return self.server_cpu / self.wrk.requests * 1e6


def load(
    server: HttpServer,
    dialect: Dialect,
    session: Session,
    plan: LoadPlan,
    connections: int,
    seconds: int | None = None,
) -> LoadResult:
    """``connections`` connections POSTing ``tools/call add`` for the plan's seconds."""
    arguments = script_arguments(
        dialect.call(ID_SLOT).rstrip(b"\n"),
        b"%d" % ID_SLOT,
        session.headers,
        EXPECT,
        REFUSE,
        unique_ids=dialect.era == "legacy",
    )
    cpu0 = server.cpu_seconds()
    try:
        result = run_wrk(
            plan.wrk,
            server.url,
            arguments,
            connections=connections,
            threads=1 if connections == 1 else plan.threads,
            seconds=seconds or plan.seconds,
            cpu=plan.client_cpu,
            timeout=plan.timeout,
        )
    except BenchFailure as failure:
        raise server.fail(str(failure)) from None
    if server.process.poll() is not None:
        raise server.fail("exited under load")
    return LoadResult(result, server.cpu_seconds() - cpu0)
