"""Drive a stdio server process with raw JSON lines, the way a strict client would see it.

Nothing here goes through mcpkit's client or codec: messages are written with the
standard library's ``json`` and every line the server writes to stdout must parse as
one strict JSON object (no NaN, no duplicate keys), so a stray byte on stdout fails the
test that caused it. Every wait is bounded; every process is killed on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
TOOL_SERVER = SERVERS / "tool_server.py"
EXAMPLES = ROOT / "examples"
MCPKIT = Path(sys.executable).with_name("mcpkit")

PROTOCOL_VERSION = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# The longest wait for anything that includes starting an interpreter. Waits that a rule
# bounds (the 1 s liveness probe, the 1 s exit on EOF) are measured separately.
STARTUP = 10.0


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A modern request: ``params`` plus the required ``_meta``."""
    body = dict(params or {})
    body["_meta"] = {**META, **body.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": body}


def call(id: Any, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``tools/call`` request."""
    params: dict[str, Any] = {"name": tool}
    if arguments is not None:
        params["arguments"] = arguments
    return request(id, "tools/call", params)


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        assert key not in result, f"duplicate key {key!r} on the wire"
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON, yet it was on the wire")


def decode_line(line: bytes) -> dict[str, Any]:
    """One stdout line as a JSON-RPC message; anything else fails the test."""
    assert line.endswith(b"\n"), f"stdout ended inside a line: {line[:200]!r}"
    assert line.count(b"\n") == 1
    try:
        message = json.loads(line, object_pairs_hook=_strict_object, parse_constant=_no_constant)
    except ValueError as exc:
        raise AssertionError(f"stdout carried a line that is not JSON: {line[:200]!r}") from exc
    assert isinstance(message, dict), f"stdout carried a non-object: {line[:200]!r}"
    assert message.get("jsonrpc") == "2.0", message
    return message


def text_of(response: dict[str, Any]) -> str:
    """The joined text blocks of a tools/call result."""
    result = response["result"]
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


class Wire:
    """A server process with its stdin, stdout and stderr in the test's hands."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._stderr = bytearray()
        self._stderr_grew = asyncio.Event()
        self._stderr_task = asyncio.get_running_loop().create_task(self._collect_stderr())
        self._probes = 0
        self._answered = False

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def _collect_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := await stream.read(65536):
            self._stderr += chunk
            self._stderr_grew.set()
        self._stderr_grew.set()

    # -- writing ----------------------------------------------------------------------

    async def send_raw(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        await stdin.drain()

    async def send(self, message: Any) -> None:
        await self.send_raw(encode(message))

    async def close_stdin(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await stdin.wait_closed()

    # -- reading ----------------------------------------------------------------------

    async def recv(self, timeout: float = STARTUP) -> dict[str, Any]:
        """The next message on stdout; fails on EOF, on a non-JSON line, on timeout."""
        stdout = self.process.stdout
        assert stdout is not None
        line = await asyncio.wait_for(stdout.readline(), timeout)
        assert line, f"stdout closed; stderr was:\n{self.stderr[-2000:]}"
        self._answered = True
        return decode_line(line)

    async def ask(self, message: dict[str, Any], timeout: float = STARTUP) -> dict[str, Any]:
        """Send one request and return the next message, which must be its response."""
        await self.send(message)
        reply = await self.recv(timeout)
        assert reply.get("id") == message["id"], reply
        return reply

    async def probe(self, timeout: float = 1.0) -> None:
        """The liveness probe: an ``echo`` call answered correctly within ``timeout``.

        Before the server has answered anything the wait also covers its start-up (an
        interpreter launch on a busy machine), so the first probe gets :data:`STARTUP`.
        """
        self._probes += 1
        tag = f"probe-{self._probes}"
        wait = timeout if self._answered else STARTUP
        reply = await self.ask(call(tag, "echo", {"text": tag}), wait)
        assert text_of(reply) == tag, reply

    async def read_to_eof(self, timeout: float = 3.0) -> list[dict[str, Any]]:
        """Every message left on stdout, up to its end (the server closed it)."""
        stdout = self.process.stdout
        assert stdout is not None
        messages: list[dict[str, Any]] = []
        async with asyncio.timeout(timeout):
            while line := await stdout.readline():
                messages.append(decode_line(line))
        return messages

    async def wait_stderr(self, text: str, timeout: float = STARTUP, count: int = 1) -> None:
        """Wait until ``text`` has appeared ``count`` times on the server's stderr."""
        async with asyncio.timeout(timeout):
            while self.stderr.count(text) < count:
                if self._stderr_task.done():
                    raise AssertionError(f"stderr closed without {text!r}:\n{self.stderr}")
                self._stderr_grew.clear()
                await self._stderr_grew.wait()

    async def wait_exit(self, timeout: float = 2.0) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)

    async def stop(self) -> None:
        """Kill the process if it still runs and collect everything it left."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        await asyncio.wait_for(self.process.wait(), 5)
        if self.process.stdin is not None:
            self.process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stderr_task, 5)
        if not self._stderr_task.done():
            self._stderr_task.cancel()


@contextlib.asynccontextmanager
async def spawn(
    *argv: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    python: bool = True,
    limit: int = 1 << 24,
) -> AsyncIterator[Wire]:
    """Start ``python argv...`` (or ``argv`` itself) with pipes; always kill it on exit.

    ``limit`` is the longest stdout line we accept; asyncio keeps reading stdout into
    our buffer until it holds twice that, whether or not the test reads it.
    """
    command = [sys.executable, *map(str, argv)] if python else [str(a) for a in argv]
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=None if env is None else dict(env),
        limit=limit,
    )
    wire = Wire(process)
    try:
        yield wire
    finally:
        await wire.stop()


@contextlib.asynccontextmanager
async def shared_tool_server(*, no_traceback: bool = True) -> AsyncIterator[Wire]:
    """The tool server a whole test module shares, answering before the first test. After
    the last one it must exit cleanly on EOF with nothing unread on stdout (and, with
    ``no_traceback``, no traceback on stderr)."""
    async with spawn(TOOL_SERVER) as wire:
        await wire.probe()
        yield wire
        await wire.close_stdin()
        assert await wire.read_to_eof() == []
        assert await wire.wait_exit() == 0
        if no_traceback:
            assert "Traceback" not in wire.stderr
