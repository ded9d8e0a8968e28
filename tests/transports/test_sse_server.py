"""The deprecated HTTP+SSE transport of 2024-11-05, server end (spec
``2024-11-05/basic/transports.mdx`` §HTTP with SSE), on its own and mounted beside the
Streamable HTTP endpoint (``2025-11-25/basic/transports.mdx`` §Backwards Compatibility).

A real uvicorn on 127.0.0.1; a client written against the spec opens the stream, reads
the ``endpoint`` event and POSTs its messages there; every message the server sends is
validated against the 2025-11-25 schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from conftest import RunningServer
from mcpkit import Context, Server
from mcpkit.transports.http import create_app
from mcpkit.transports.sse_server import SseServerApp, create_sse_app
from server.legacy_wire import CLIENT_INFO, legacy_schema

from .legacy_http import SseReader

JSON = {"content-type": "application/json"}


def build_server() -> Server:
    server = Server("sse-test", "1.0.0")

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool
    async def ask_name(ctx: Context) -> str:
        """Ask the user for their name."""
        answer = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool
    async def forever() -> str:
        """Never finishes on its own."""
        await asyncio.sleep(60)
        return "late"

    return server


@pytest.fixture(scope="module")
def sse_app() -> SseServerApp:
    return create_sse_app(build_server(), keepalive_interval=0.2)


@pytest.fixture(scope="module")
def http(sse_app: SseServerApp) -> Iterator[RunningServer]:
    with RunningServer(sse_app) as running:
        yield running


class SseClient:
    """One HTTP+SSE connection: the stream, the endpoint it announced, what it carried."""

    def __init__(self, client: httpx.AsyncClient, base: str, reader: SseReader) -> None:
        self.client = client
        self.base = base
        self.reader = reader
        self.endpoint = ""
        self.methods: dict[Any, str] = {}

    async def open(self) -> str:
        first = await asyncio.wait_for(self.reader.next_event(), 5)
        assert first is not None
        assert first["event"] == "endpoint"
        self.endpoint = urllib.parse.urljoin(self.base, first["data"])
        return str(first["data"])

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        if "id" in message and "method" in message:
            self.methods[message["id"]] = message["method"]
        return await self.client.post(self.endpoint, content=json.dumps(message), headers=JSON)

    async def message(self) -> dict[str, Any]:
        found = await asyncio.wait_for(self.reader.next_event(), 5)
        assert found is not None
        assert found["event"] == "message"
        message: dict[str, Any] = json.loads(found["data"])
        schema = legacy_schema()
        if "method" in message:
            schema.check_server_message(message)
        else:
            schema.check_result(self.methods[message["id"]], message)
        return message

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": "2024-11-05",
            "capabilities": capabilities or {},
            "clientInfo": CLIENT_INFO,
        }
        accepted = await self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        )
        assert accepted.status_code == 202
        reply = await self.message()
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = reply["result"]
        return result


@contextlib.asynccontextmanager
async def sse_peer(base: str) -> AsyncIterator[SseClient]:
    """A connection to the HTTP+SSE server at ``base``, read up to its endpoint event."""
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream("GET", f"{base}/sse") as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        peer = SseClient(client, base, SseReader(stream))
        await peer.open()
        yield peer


@pytest_asyncio.fixture
async def connected(http: RunningServer) -> AsyncIterator[SseClient]:
    async with sse_peer(http.base) as peer:
        yield peer


async def test_the_stream_opens_with_an_endpoint_event_naming_the_message_uri(
    http: RunningServer,
) -> None:
    async with (
        httpx.AsyncClient(timeout=10) as client,
        client.stream("GET", f"{http.base}/sse") as stream,
    ):
        peer = SseClient(client, http.base, SseReader(stream))
        endpoint = await peer.open()
    path, _, query = endpoint.partition("?")
    assert path == "/messages"
    session_ids = urllib.parse.parse_qs(query)["session_id"]
    assert len(session_ids[0]) >= 32


async def test_a_message_is_accepted_with_202_and_answered_on_the_stream(
    connected: SseClient,
) -> None:
    init = await connected.initialize()
    assert init["protocolVersion"] == "2024-11-05"
    accepted = await connected.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
    )
    assert accepted.status_code == 202
    assert accepted.content == b""
    reply = await connected.message()
    assert reply["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_the_servers_own_requests_go_on_the_stream_and_answers_are_posted(
    connected: SseClient,
) -> None:
    await connected.initialize({"elicitation": {}})
    await connected.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name"}}
    )
    request = await connected.message()
    assert request["method"] == "elicitation/create"
    answered = await connected.post(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
    )
    assert answered.status_code == 202
    reply = await connected.message()
    assert reply["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_an_idle_stream_gets_keepalive_comments(connected: SseClient) -> None:
    reading = asyncio.ensure_future(connected.reader.next_event())
    await asyncio.sleep(0.7)
    assert connected.reader.comments >= 2
    reading.cancel()


async def test_closing_the_stream_ends_the_connection_and_cancels_its_calls(
    http: RunningServer, sse_app: SseServerApp
) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        async with client.stream("GET", f"{http.base}/sse") as stream:
            peer = SseClient(client, http.base, SseReader(stream))
            await peer.open()
            await peer.initialize()
            await peer.post(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "forever"}}
            )
            assert sse_app.connection_count >= 1
        for _ in range(50):
            if sse_app.connection_count == 0:
                break
            await asyncio.sleep(0.05)
        assert sse_app.connection_count == 0
        gone = await client.post(peer.endpoint, content=b"{}", headers=JSON)
        assert gone.status_code == 404


def test_a_post_without_a_session_id_is_400(http: RunningServer) -> None:
    response = httpx.post(f"{http.base}/messages", content=b"{}", headers=JSON)
    assert response.status_code == 400


def test_a_post_for_an_unknown_session_is_404(http: RunningServer) -> None:
    response = httpx.post(f"{http.base}/messages?session_id=nope", content=b"{}", headers=JSON)
    assert response.status_code == 404


async def test_a_post_that_is_not_json_is_400(connected: SseClient) -> None:
    response = await connected.client.post(connected.endpoint, content=b"{nope", headers=JSON)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


async def test_a_post_of_another_content_type_is_415(connected: SseClient) -> None:
    response = await connected.client.post(
        connected.endpoint, content=b"{}", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 415


async def test_a_post_larger_than_the_limit_is_413() -> None:
    app = create_sse_app(build_server(), max_body=100)
    with RunningServer(app) as running:
        async with sse_peer(running.base) as peer:
            response = await peer.client.post(peer.endpoint, content=b" " * 200, headers=JSON)
    assert response.status_code == 413


@pytest.mark.parametrize(("verb", "path"), [("POST", "/sse"), ("GET", "/messages")])
def test_the_wrong_method_on_either_endpoint_is_405(
    http: RunningServer, verb: str, path: str
) -> None:
    assert httpx.request(verb, f"{http.base}{path}").status_code == 405


def test_a_foreign_host_is_refused(http: RunningServer) -> None:
    response = httpx.get(f"{http.base}/sse", headers={"host": "evil.example.com"})
    assert response.status_code == 421


def test_a_foreign_origin_is_refused(http: RunningServer) -> None:
    response = httpx.get(f"{http.base}/sse", headers={"origin": "http://evil.example.com"})
    assert response.status_code == 403


async def test_mounted_beside_the_streamable_endpoint_both_transports_answer() -> None:
    app = create_app(build_server(), legacy_sse=True)
    with RunningServer(app) as running:
        async with sse_peer(running.base) as peer:
            assert (await peer.initialize())["protocolVersion"] == "2024-11-05"
            modern = await peer.client.post(
                f"{running.base}/mcp",
                content=json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "server/discover",
                        "params": {
                            "_meta": {
                                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientCapabilities": {},
                            }
                        },
                    }
                ),
                headers={
                    **JSON,
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "server/discover",
                },
            )
    assert modern.status_code == 200
    assert modern.json()["result"]["resultType"] == "complete"


async def test_a_modern_only_server_names_its_versions_to_initialize_over_http_sse() -> None:
    app = create_sse_app(Server("modern-only", "1.0.0", supported_versions=["2026-07-28"]))
    with RunningServer(app) as running:
        async with sse_peer(running.base) as peer:
            params = {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            }
            await peer.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
            reply = await peer.message()
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"]["supported"] == ["2026-07-28"]
