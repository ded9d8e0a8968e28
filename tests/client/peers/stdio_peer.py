"""A scripted MCP server over stdio, for client tests: a real child process whose behaviour
each test chooses on the command line, and which records every message it receives.

    python stdio_peer.py --era modern|legacy [--record FILE] [--versions V,V]
                         [--preinit error|silent|exit] [--crash-after N] [--spawn-child]

Modern: ``server/discover``, ``tools/list``, ``tools/call``, ``resources/read``,
``subscriptions/listen``; tools: ``echo``, ``ask`` (multi round-trip), ``multi`` (two rounds),
``endless`` (input_required forever), ``weird`` (unknown resultType), ``bare`` (no
resultType), ``slow`` (sleeps; reports cancellation on stderr), ``progress``, ``log``,
``change`` (announces a tool-list change to subscribers), ``crash`` (exits),
``structured`` (structured content, valid or not per its ``ok`` argument), ``pid``.
Legacy: ``initialize`` then ``tools/list``, ``tools/call`` (``ask`` sends a real
``elicitation/create`` request and waits for the answer; ``change`` sends
``notifications/tools/list_changed``), ``ping``, ``logging/setLevel``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from typing import Any

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOLS = [
    {"name": name, "description": f"The {name} tool.", "inputSchema": {"type": "object"}}
    for name in (
        "echo",
        "ask",
        "multi",
        "endless",
        "weird",
        "bare",
        "slow",
        "progress",
        "log",
        "change",
        "crash",
        "pid",
    )
] + [
    {
        "name": "structured",
        "description": "Structured output.",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    },
    {
        "name": "remote",
        "description": "Structured output whose schema points at the network.",
        "inputSchema": {"type": "object"},
        "outputSchema": {"$ref": "http://127.0.0.1:9/schema.json"},
    },
]


STUBBORN = "import signal,time;signal.signal(signal.SIGTERM,signal.SIG_IGN);time.sleep(600)"


def save(path: str, entry: dict[str, Any]) -> None:
    """Append one received message to the record file (a test reads it afterwards)."""
    with open(path, "a") as record:
        record.write(json.dumps(entry) + "\n")


def spawn_stubborn_child() -> subprocess.Popen[bytes]:
    """A grandchild that ignores SIGTERM and holds no pipe of ours: only a signal to the
    whole process group ends it."""
    return subprocess.Popen(
        [sys.executable, "-c", STUBBORN],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


class Peer:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.versions = options.versions.split(",")
        self.initialized = False
        self.record: str | None = options.record
        self.rejected_first = False
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.listeners: dict[Any, dict[str, Any]] = {}
        self.pending: dict[Any, asyncio.Future[Any]] = {}
        self.requests = 0
        self.child: subprocess.Popen[bytes] | None = None
        self.next_id = 0

    def write(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()

    def log(self, text: str) -> None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def result(self, request_id: Any, result: dict[str, Any]) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.write({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def handle(self, message: dict[str, Any]) -> None:
        if self.record is not None:
            save(self.record, {"pid": os.getpid(), "message": message})
        if "method" not in message:
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" not in message:
            self.notification(message)
            return
        self.requests += 1
        if self.options.crash_after and self.requests > self.options.crash_after:
            os._exit(3)
        request_id = message["id"]
        task = asyncio.ensure_future(self.request(message))
        self.tasks[request_id] = task
        task.add_done_callback(lambda _: self.tasks.pop(request_id, None))

    def notification(self, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        if message["method"] == "notifications/cancelled":
            request_id = params.get("requestId")
            self.log(f"cancelled {request_id}")
            task = self.tasks.pop(request_id, None)
            if task is not None:
                task.cancel()
            self.listeners.pop(request_id, None)
        elif message["method"] == "notifications/initialized":
            self.initialized = True

    async def request(self, message: dict[str, Any]) -> None:
        if self.options.era == "legacy":
            await self.legacy(message)
        else:
            await self.modern(message)

    # -- modern -----------------------------------------------------------------------

    async def modern(self, message: dict[str, Any]) -> None:
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        meta = params.get("_meta") or {}
        version = meta.get("io.modelcontextprotocol/protocolVersion")
        if version is None or "io.modelcontextprotocol/clientCapabilities" not in meta:
            self.error(request_id, -32602, "Missing required _meta field")
            return
        if self.options.reject_first and not self.rejected_first:
            self.rejected_first = True
            self.error(
                request_id,
                -32022,
                "Unsupported protocol version",
                {"supported": self.versions, "requested": version},
            )
            return
        if version not in self.versions:
            self.error(
                request_id,
                -32022,
                "Unsupported protocol version",
                {"supported": self.versions, "requested": version},
            )
            return
        stamp = {"resultType": "complete"}
        if method == "server/discover":
            self.result(
                request_id,
                {
                    **stamp,
                    "supportedVersions": self.versions,
                    "capabilities": {"tools": {"listChanged": True}, "resources": {}},
                    "ttlMs": 0,
                    "cacheScope": "public",
                    "_meta": {
                        "io.modelcontextprotocol/serverInfo": {"name": "peer", "version": "1"}
                    },
                },
            )
        elif method == "tools/list":
            ttl = int(os.environ.get("PEER_TTL_MS", "0"))
            self.result(request_id, {**stamp, "tools": TOOLS, "ttlMs": ttl, "cacheScope": "public"})
        elif method == "resources/read":
            ttl = int(os.environ.get("PEER_TTL_MS", "0"))
            uri = params.get("uri")
            text = f"{uri} read #{self.requests}"
            self.result(
                request_id,
                {
                    **stamp,
                    "contents": [{"uri": uri, "text": text}],
                    "ttlMs": ttl,
                    "cacheScope": "private",
                },
            )
        elif method == "subscriptions/listen":
            self.listeners[request_id] = params.get("notifications") or {}
            self.write(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {
                        "_meta": {"io.modelcontextprotocol/subscriptionId": request_id},
                        "notifications": {
                            k: v
                            for k, v in self.listeners[request_id].items()
                            if k == "toolsListChanged"
                        },
                    },
                }
            )
        elif method == "tools/call":
            await self.modern_tool(request_id, params, meta)
        else:
            self.error(request_id, -32601, f"Method not found: {method}")

    async def modern_tool(
        self, request_id: Any, params: dict[str, Any], meta: dict[str, Any]
    ) -> None:
        name = params.get("name")
        arguments = params.get("arguments") or {}
        responses = params.get("inputResponses")
        state = params.get("requestState")

        def text(value: str, **extra: Any) -> None:
            self.result(
                request_id,
                {"resultType": "complete", "content": [{"type": "text", "text": value}], **extra},
            )

        if name == "echo":
            text(json.dumps(arguments, sort_keys=True))
        elif name == "pid":
            text(str(os.getpid()))
        elif name == "ask":
            if responses is None:
                self.result(
                    request_id,
                    {
                        "resultType": "input_required",
                        "inputRequests": {
                            "who": {
                                "method": "elicitation/create",
                                "params": {
                                    "mode": "form",
                                    "message": "Who are you?",
                                    "requestedSchema": {
                                        "type": "object",
                                        "properties": {
                                            "name": {"type": "string"},
                                            "age": {"type": "integer", "default": 42},
                                        },
                                    },
                                },
                            },
                            "llm": {
                                "method": "sampling/createMessage",
                                "params": {
                                    "messages": [
                                        {"role": "user", "content": {"type": "text", "text": "Hi"}}
                                    ],
                                    "maxTokens": 10,
                                },
                            },
                            "where": {"method": "roots/list", "params": {}},
                        },
                        "requestState": arguments.get("state", 's\u00e9aled "state" 1'),
                    },
                )
                return
            text(json.dumps({"responses": responses, "state": state}, sort_keys=True))
        elif name == "multi":
            step = (responses or {}).keys()
            if "second" in step:
                text(f"done with state {state}")
            elif "first" in step:
                self.result(
                    request_id,
                    {
                        "resultType": "input_required",
                        "inputRequests": {"second": {"method": "roots/list", "params": {}}},
                        "requestState": "S2",
                    },
                )
            else:
                self.result(
                    request_id,
                    {
                        "resultType": "input_required",
                        "inputRequests": {"first": {"method": "roots/list", "params": {}}},
                    },
                )
        elif name == "endless":
            self.result(request_id, {"resultType": "input_required", "requestState": "again"})
        elif name == "weird":
            self.result(request_id, {"resultType": "maybe_later", "content": []})
        elif name == "bare":
            self.result(request_id, {"content": [{"type": "text", "text": "bare"}]})
        elif name == "slow":
            try:
                await asyncio.sleep(float(arguments.get("seconds", 30)))
            except asyncio.CancelledError:
                self.log(f"slow {request_id} stopped")
                raise
            text("slow done")
        elif name == "progress":
            token = meta.get("progressToken")
            for step in (1, 2, 3):
                self.write(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step, "total": 3},
                    }
                )
            text("progressed")
        elif name == "log":
            if "io.modelcontextprotocol/logLevel" in meta:
                self.write(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "hello from the tool"},
                    }
                )
            text("logged")
        elif name == "change":
            for listen_id, filter_ in list(self.listeners.items()):
                if filter_.get("toolsListChanged"):
                    self.write(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/tools/list_changed",
                            "params": {
                                "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}
                            },
                        }
                    )
            text("changed")
        elif name == "crash":
            os._exit(4)
        elif name == "remote":
            text("{}", structuredContent={})
        elif name == "structured":
            value = {"n": 1} if arguments.get("ok", True) else {"n": "one"}
            text(json.dumps(value), structuredContent=value)
        else:
            self.error(request_id, -32602, f"Unknown tool: {name}")

    # -- legacy -----------------------------------------------------------------------

    async def legacy(self, message: dict[str, Any]) -> None:
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            requested = params.get("protocolVersion")
            version = requested if requested in LEGACY else LEGACY[0]
            self.result(
                request_id,
                {
                    "protocolVersion": version,
                    "capabilities": {
                        "tools": {"listChanged": True},
                        "logging": {},
                        "resources": {"subscribe": True},
                    },
                    "serverInfo": {"name": "legacy-peer", "version": "1"},
                    "instructions": "old but gold",
                },
            )
            return
        if not self.initialized and method != "ping":
            mode = self.options.preinit
            if mode == "exit":
                os._exit(5)
            if mode == "silent":
                return
            if mode == "unsupported":
                self.error(
                    request_id,
                    -32022,
                    "Unsupported protocol version",
                    {"supported": list(LEGACY), "requested": "?"},
                )
                return
            self.error(request_id, -32600, "Server not initialized")
            return
        if method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
            self.result(request_id, {})
        elif method == "tools/list":
            self.result(request_id, {"tools": TOOLS})
        elif method == "tools/call":
            await self.legacy_tool(request_id, params)
        else:
            self.error(request_id, -32601, f"Method not found: {method}")

    async def legacy_tool(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        if name == "ask":
            self.next_id += 1
            ask_id = f"srv-{self.next_id}"
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.pending[ask_id] = future
            self.write(
                {
                    "jsonrpc": "2.0",
                    "id": ask_id,
                    "method": "elicitation/create",
                    "params": {
                        "message": "Name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "default": "Ada"},
                                "tz": {"type": "string"},
                            },
                        },
                    },
                }
            )
            answer = await future
            text = json.dumps(answer.get("result", answer.get("error")), sort_keys=True)
        elif name == "change":
            self.write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = "changed"
        elif name == "pid":
            text = str(os.getpid())
        elif name == "crash":
            os._exit(4)
        else:
            text = json.dumps(params.get("arguments") or {}, sort_keys=True)
        self.result(request_id, {"content": [{"type": "text", "text": text}]})


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--era", choices=("modern", "legacy"), default="modern")
    parser.add_argument("--record")
    parser.add_argument("--versions", default=MODERN)
    parser.add_argument(
        "--preinit", choices=("error", "silent", "exit", "unsupported"), default="error"
    )
    parser.add_argument("--crash-after", type=int, default=0)
    parser.add_argument("--spawn-child", action="store_true")
    parser.add_argument("--reject-first", action="store_true")
    options = parser.parse_args()
    peer = Peer(options)
    if options.spawn_child:
        peer.child = spawn_stubborn_child()
        peer.log(f"child {peer.child.pid}")
    peer.log(f"env {json.dumps(dict(os.environ), sort_keys=True)}")
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        if line.strip():
            await peer.handle(json.loads(line))
    if options.spawn_child:
        # Exit without waiting for (or killing) the grandchild: the client must.
        os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
