"""Raw-wire helpers for the server tests: requests as plain dicts, every reply checked.

Three ways to reach a server, none of them through mcpkit's client:

* :class:`Direct` calls ``server.handle_request`` with a recording channel;
* :class:`MemoryPeer` speaks through :class:`~mcpkit.transports.memory.MemoryClientTransport`
  (the real codec, framing and :class:`StreamServerConnection`, in process);
* :class:`StdioPeer` spawns ``examples/everything_server.py --stdio`` and speaks JSON lines.

Every message a server sends is validated against the 2026-07-28 JSON Schema
(``schema.json``, through a local registry: nothing is fetched) with the result type
picked from the request method, as the conformance harness does.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import functools
import importlib.util
import os
import sys
import types
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from mcpkit.protocol import codec
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
)
from mcpkit.transports.base import ServerApp
from mcpkit.transports.memory import MemoryClientTransport
from mcpkit.transports.session import Session

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA_PATH = ROOT.parent / "shared" / "spec" / "2026-07-28" / "schema" / "schema.json"
VERSION = "2026-07-28"
ALL_INPUTS: dict[str, Any] = {"sampling": {}, "elicitation": {}, "roots": {}}

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
MISSING_CAPABILITY = -32021

__all__ = [
    "ALL_INPUTS",
    "EXAMPLES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "MISSING_CAPABILITY",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "Direct",
    "MemoryPeer",
    "Reply",
    "SpecSchema",
    "StdioPeer",
    "load_example",
    "memory_peer",
    "meta",
    "spec_schema",
    "stdio_peer",
]

_RESPONSES = {
    "server/discover": "DiscoverResultResponse",
    "tools/list": "ListToolsResultResponse",
    "tools/call": "CallToolResultResponse",
    "resources/list": "ListResourcesResultResponse",
    "resources/templates/list": "ListResourceTemplatesResultResponse",
    "resources/read": "ReadResourceResultResponse",
    "prompts/list": "ListPromptsResultResponse",
    "prompts/get": "GetPromptResultResponse",
    "completion/complete": "CompleteResultResponse",
    "subscriptions/listen": "SubscriptionsListenResultResponse",
}
_NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
}
_ERRORS = {
    -32700: "ParseError",
    -32600: "InvalidRequestError",
    -32601: "MethodNotFoundError",
    -32602: "InvalidParamsError",
    -32603: "InternalError",
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}
_WHOLE_MESSAGE_ERRORS = frozenset(
    {
        "HeaderMismatchError",
        "MissingRequiredClientCapabilityError",
        "UnsupportedProtocolVersionError",
    }
)
_URI = "urn:mcp:schema:2026-07-28"


class SpecSchema:
    """The spec's JSON Schema, with one compiled validator per definition."""

    def __init__(self, path: Path = SCHEMA_PATH) -> None:
        contents = codec.loads(path.read_bytes(), max_depth=10_000)
        resource = Resource.from_contents(contents, default_specification=DRAFT202012)
        self._registry: Registry[Any] = Registry().with_resource(_URI, resource)
        self._validators: dict[str, Draft202012Validator] = {}

    def check(self, definition: str, instance: Any) -> None:
        validator = self._validators.get(definition)
        if validator is None:
            validator = Draft202012Validator(
                {"$ref": f"{_URI}#/$defs/{definition}"}, registry=self._registry
            )
            self._validators[definition] = validator
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
        if errors:
            lines = [f"{list(e.path)}: {e.message}" for e in errors[:5]]
            raise AssertionError(f"not a valid {definition}:\n" + "\n".join(lines))

    def check_response(self, method: str, message: dict[str, Any]) -> None:
        if "error" in message:
            self.check("JSONRPCErrorResponse", message)
            specific = _ERRORS.get(message["error"]["code"])
            if specific is not None:
                whole = specific in _WHOLE_MESSAGE_ERRORS
                self.check(specific, message if whole else message["error"])
            return
        self.check(_RESPONSES[method], message)

    def check_notification(self, message: dict[str, Any]) -> None:
        self.check("JSONRPCNotification", message)
        self.check(_NOTIFICATIONS[message["method"]], message)
        assert not str(message["method"]).startswith(("sampling/", "elicitation/", "roots/"))


def load_example(name: str) -> types.ModuleType:
    """Import ``examples/<name>.py`` as a module (the examples are not a package)."""
    loaded = sys.modules.get(f"examples_{name}")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def spec_schema() -> SpecSchema:
    """The 2026-07-28 schema, loaded once for the whole run."""
    return SpecSchema()


def meta(
    capabilities: dict[str, Any] | None = None,
    *,
    log_level: str | None = None,
    progress: str | int | None = None,
    client_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A request ``_meta``: version and capabilities (all input kinds unless given)."""
    result: dict[str, Any] = {
        PROTOCOL_VERSION: VERSION,
        CLIENT_CAPABILITIES: ALL_INPUTS if capabilities is None else capabilities,
        CLIENT_INFO: client_info or {"name": "wire-tests", "version": "1.0.0"},
    }
    if log_level is not None:
        result[LOG_LEVEL] = log_level
    if progress is not None:
        result["progressToken"] = progress
    return result


@dataclass
class Reply:
    """A response and the notifications sent for its request."""

    message: dict[str, Any]
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.message, self.message
        result: dict[str, Any] = self.message["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.message, self.message
        error: dict[str, Any] = self.message["error"]
        return error

    @property
    def complete(self) -> dict[str, Any]:
        result = self.result
        assert result["resultType"] == "complete", result
        return result

    @property
    def text(self) -> str:
        return "\n".join(
            block["text"] for block in self.complete["content"] if block["type"] == "text"
        )


class RecordingChannel:
    """Records what a handler sends; holds the legacy session ``initialize`` opens."""

    def __init__(self, principal: Any = None, session: Session | None = None) -> None:
        self.principal = principal
        self.session = session
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def open_session(self, session: Session) -> None:
        assert self.session is None
        self.session = session


class Direct:
    """Calls ``server.handle_request`` directly; checks every message against the schema."""

    def __init__(self, server: ServerApp, principal: Any = None) -> None:
        self.server = server
        self.principal = principal
        self.spec = spec_schema()
        self._ids = 0

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        principal: Any = ...,
        raw_meta: dict[str, Any] | None = None,
        **meta_options: Any,
    ) -> Reply:
        self._ids += 1
        request_id = self._ids
        body = dict(params or {})
        body["_meta"] = raw_meta if raw_meta is not None else meta(capabilities, **meta_options)
        channel = RecordingChannel(self.principal if principal is ... else principal)
        message = await self.server.handle_request(Request(request_id, method, body), channel)
        assert message is not None
        self.spec.check_response(method, message)
        for notification in channel.sent:
            self.spec.check_notification(notification)
        assert message["id"] == request_id
        return Reply(message, channel.sent)

    async def tool(self, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Reply:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        params.update(kw.pop("extra", {}))
        return await self.call("tools/call", params, **kw)


class _Peer(abc.ABC):
    """Frames from a server over a byte stream, validated as they arrive.

    Every frame is kept in ``seen``; :meth:`next` hands out the first frame not handed
    out before that matches, so looking for one frame never loses another.
    """

    def __init__(self) -> None:
        self.spec = spec_schema()
        self.seen: list[dict[str, Any]] = []
        self._claimed: set[int] = set()
        self._arrived = asyncio.Event()
        self._methods: dict[Any, str] = {}

    def _receive(self, frame: Any) -> None:
        assert isinstance(frame, dict), frame
        if "method" in frame:
            self.spec.check_notification(frame)
        else:
            method = self._methods.get(frame.get("id"))
            assert method is not None, f"a response to nothing we sent: {frame}"
            self.spec.check_response(method, frame)
        self.seen.append(frame)
        self._arrived.set()

    async def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self._methods[message["id"]] = message["method"]
        await self._write(message)

    @abc.abstractmethod
    async def _write(self, message: dict[str, Any]) -> None:
        """Deliver one message to the server (each kind of peer has its own wire)."""

    async def request(
        self,
        request_id: int | str,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        **meta_options: Any,
    ) -> None:
        body = dict(params or {})
        body["_meta"] = meta(capabilities, **meta_options)
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": body})

    async def next(
        self, matches: Callable[[dict[str, Any]], bool] = lambda _: True, timeout: float = 5.0
    ) -> dict[str, Any]:
        """The first frame not handed out yet that ``matches``, waiting for it if needed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            self._arrived.clear()
            for index, frame in enumerate(self.seen):
                if index not in self._claimed and matches(frame):
                    self._claimed.add(index)
                    return frame
            remaining = deadline - loop.time()
            try:
                await asyncio.wait_for(self._arrived.wait(), max(remaining, 0))
            except TimeoutError:
                raise AssertionError(
                    f"no matching frame within {timeout}s; seen {self.seen}"
                ) from None

    async def response(self, request_id: int | str, timeout: float = 5.0) -> dict[str, Any]:
        return await self.next(
            lambda f: f.get("id") == request_id and "method" not in f, timeout=timeout
        )

    async def call(
        self, request_id: int | str, method: str, params: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        await self.request(request_id, method, params, **kw)
        return await self.response(request_id)

    async def quiet(self, seconds: float) -> list[dict[str, Any]]:
        """Every frame that arrives within the next ``seconds``."""
        start = len(self.seen)
        await asyncio.sleep(seconds)
        return self.seen[start:]


class MemoryPeer(_Peer):
    """An in-process peer over :class:`MemoryClientTransport`."""

    def __init__(self, server: ServerApp) -> None:
        super().__init__()
        self.transport = MemoryClientTransport(server)
        self.closed = False

    async def start(self) -> None:
        await self.transport.start(self._receive, self._closed)

    def _closed(self) -> None:
        self.closed = True

    async def _write(self, message: dict[str, Any]) -> None:
        await self.transport.send(message)

    async def close(self) -> None:
        await self.transport.close()


@contextlib.asynccontextmanager
async def memory_peer(
    server: ServerApp, peer_class: type[MemoryPeer] = MemoryPeer
) -> AsyncIterator[MemoryPeer]:
    peer = peer_class(server)
    await peer.start()
    try:
        yield peer
    finally:
        await peer.close()


class StdioPeer(_Peer):
    """A server process speaking newline-delimited JSON on its stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__()
        self.process = process
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.lines: list[bytes] = []

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while line := await stdout.readline():
            self.lines.append(line)
            assert line.endswith(b"\n")
            assert b"\n" not in line[:-1]
            self._receive(codec.loads(line))

    async def _write(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(codec.dumps(message) + b"\n")
        await stdin.drain()

    async def finish(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for a clean exit (the reader sees EOF)."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.close()
        code = await asyncio.wait_for(self.process.wait(), timeout)
        await asyncio.wait_for(self._reader, timeout)
        return code

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        self._reader.cancel()


@contextlib.asynccontextmanager
async def stdio_peer(
    script: Path, *args: str, peer_class: type[StdioPeer] = StdioPeer
) -> AsyncIterator[StdioPeer]:
    env = {**os.environ, "MCPKIT_STATE_KEY": "stdio-tests-" + "k" * 32}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    peer = peer_class(process)
    try:
        yield peer
    finally:
        peer.kill()
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(process.wait(), 5)
