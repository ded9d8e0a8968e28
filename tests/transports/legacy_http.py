"""A legacy Streamable HTTP client for tests, written against the spec
(``2025-11-25/basic/transports.mdx`` §Streamable HTTP), not with mcpkit's client.

Every JSON-RPC message the server sends (JSON bodies and SSE ``data:`` lines) is
validated against the 2025-11-25 schema, results by the method of the request they
answer, as the conformance harness does.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from server.legacy_wire import CLIENT_INFO, LATEST_LEGACY, legacy_schema

ACCEPT = "application/json, text/event-stream"

__all__ = ["LegacyHttp", "SseReader", "initialize_body", "legacy_headers"]


def initialize_body(
    capabilities: dict[str, Any] | None = None, version: str = LATEST_LEGACY, id: Any = 0
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities if capabilities is not None else {},
            "clientInfo": CLIENT_INFO,
        },
    }


def legacy_headers(
    session_id: str | None = None, version: str | None = LATEST_LEGACY, **extra: str
) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": ACCEPT}
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    if version is not None:
        headers["mcp-protocol-version"] = version
    headers.update({k.replace("_", "-"): v for k, v in extra.items()})
    return headers


class SseReader:
    """Events from an SSE response, read incrementally; comments are counted."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.comments = 0
        self._lines = response.aiter_lines()

    async def next_event(self) -> dict[str, Any] | None:
        """The next event as ``{"event": name, "data": text}``, None at the end."""
        data: list[str] = []
        name = "message"
        async for line in self._lines:
            if line == "":
                if data:
                    return {"event": name, "data": "\n".join(data)}
                continue
            if line.startswith(":"):
                self.comments += 1
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                name = line[6:].strip()
        return None

    async def next_message(self) -> dict[str, Any] | None:
        found = await self.next_event()
        if found is None:
            return None
        message: dict[str, Any] = json.loads(found["data"])
        return message


@dataclass
class LegacyHttp:
    """One legacy session on an endpoint: its id, version and every message received."""

    client: httpx.AsyncClient
    url: str
    session_id: str | None = None
    version: str = LATEST_LEGACY
    methods: dict[Any, str] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)

    def check(self, message: dict[str, Any]) -> dict[str, Any]:
        schema = legacy_schema()
        if "method" in message:
            schema.check_server_message(message)
        else:
            schema.check_result(self.methods[message["id"]], message)
        self.received.append(message)
        return message

    def headers(self, **extra: str) -> dict[str, str]:
        return legacy_headers(self.session_id, self.version, **extra)

    async def initialize(
        self, capabilities: dict[str, Any] | None = None, *, initialized: bool = True
    ) -> dict[str, Any]:
        self.methods[0] = "initialize"
        response = await self.client.post(
            self.url,
            content=json.dumps(initialize_body(capabilities, self.version)),
            headers=legacy_headers(version=None),
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        result: dict[str, Any] = self.check(response.json())["result"]
        self.version = result["protocolVersion"]
        if initialized:
            done = await self.notify("notifications/initialized")
            assert done.status_code == 202
        return result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self.client.post(self.url, content=json.dumps(message), headers=self.headers())

    async def post(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None, **extra: str
    ) -> httpx.Response:
        """POST a request and read the whole answer (JSON, or SSE to its end)."""
        self.methods[request_id] = method
        return await self.client.post(
            self.url,
            content=json.dumps(_request(request_id, method, params)),
            headers=self.headers(**extra),
        )

    async def call(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The response to a request (the last message when the answer is a stream)."""
        response = await self.post(request_id, method, params)
        assert response.status_code == 200, response.text
        messages = self.messages_of(response)
        assert messages[-1].get("id") == request_id, messages
        return messages[-1]

    def messages_of(self, response: httpx.Response) -> list[dict[str, Any]]:
        if response.headers["content-type"].startswith("application/json"):
            return [self.check(response.json())]
        assert response.headers["content-type"].startswith("text/event-stream")
        return [
            self.check(json.loads(line[5:].strip()))
            for line in response.text.splitlines()
            if line.startswith("data:")
        ]

    @contextlib.asynccontextmanager
    async def stream(
        self, request_id: Any, method: str, params: dict[str, Any] | None = None
    ) -> AsyncIterator[httpx.Response]:
        """POST a request and hand back the open response, to read as it streams."""
        self.methods[request_id] = method
        async with self.client.stream(
            "POST",
            self.url,
            content=json.dumps(_request(request_id, method, params)),
            headers=self.headers(),
        ) as response:
            yield response

    async def answer(self, request: dict[str, Any], result: dict[str, Any]) -> httpx.Response:
        """POST the client's response to one of the server's requests."""
        body = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        return await self.client.post(self.url, content=json.dumps(body), headers=self.headers())


def _request(request_id: Any, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message
