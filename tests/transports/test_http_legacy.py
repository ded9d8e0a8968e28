"""Legacy sessions on the Streamable HTTP endpoint of a dual-era server (spec
``2025-11-25/basic/transports.mdx`` §Streamable HTTP, §Session Management, §Protocol
Version Header; the discrimination of ``conformance.md`` §6.1).

A real uvicorn on 127.0.0.1 serves the endpoint; every rule is a test of its own, and
every message the server sends is validated against the 2025-11-25 schema.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from auth.support import ISSUER, RESOURCE, Signer
from conftest import RunningServer
from mcpkit import Context, Server
from mcpkit.auth.resource import ProtectedResource
from mcpkit.auth.verifiers import JWTVerifier, StaticKeys
from mcpkit.server.bus import InMemoryBus
from mcpkit.transports.http import create_app
from mcpkit.transports.session import MemorySessionStore

from .legacy_http import LegacyHttp, SseReader, initialize_body, legacy_headers

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
VISIBLE_ASCII = re.compile(r"^[\x21-\x7e]+$")
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
SIGNER = Signer.rsa("key-1")


def build_server(**options: Any) -> Server:
    server = Server("legacy-http", "1.0.0", **options)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool
    async def ask_name(ctx: Context) -> str:
        """Ask the user for their name."""
        answer = await ctx.elicit("What is your name?", NAME_FORM)
        return f"Hello, {(answer.content or {}).get('name')}!"

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Log two lines."""
        await ctx.info("one")
        await ctx.info("two")
        return "chatted"

    @server.tool
    def add_tool() -> str:
        """Add a tool, so sessions hear tools/list_changed."""

        def extra() -> str:
            """Extra."""
            return "extra"

        server.add_tool(extra)
        server.remove_tool("extra")
        return "changed"

    @server.tool
    def touch(uri: str) -> str:
        """Announce new contents of a resource."""
        server.notify_resource_updated(uri)
        return "touched"

    @server.resource("file:///watched.txt", mime_type="text/plain")
    def watched() -> str:
        """A resource to subscribe to."""
        return "contents"

    return server


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with RunningServer(create_app(build_server(), keepalive_interval=0.2)) as running:
        yield running


@pytest_asyncio.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as async_client:
        yield async_client


@pytest_asyncio.fixture
async def session(http: RunningServer, client: httpx.AsyncClient) -> LegacyHttp:
    legacy = LegacyHttp(client, f"{http.base}/mcp")
    await legacy.initialize({"elicitation": {}})
    return legacy


def raw_post(base: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{base}/mcp", content=json.dumps(body), headers=headers, timeout=10)


# -- the session id -----------------------------------------------------------------------


async def test_initialize_mints_an_unguessable_session_id_of_visible_ascii(
    session: LegacyHttp,
) -> None:
    assert session.session_id is not None
    assert VISIBLE_ASCII.match(session.session_id)
    assert len(session.session_id) >= 32


async def test_every_initialize_gets_its_own_session_id(
    http: RunningServer, client: httpx.AsyncClient
) -> None:
    first = LegacyHttp(client, f"{http.base}/mcp")
    second = LegacyHttp(client, f"{http.base}/mcp")
    await first.initialize()
    await second.initialize()
    assert first.session_id != second.session_id


async def test_initialize_with_the_conformance_probe_header_opens_a_session(
    http: RunningServer,
) -> None:
    response = raw_post(http.base, initialize_body(), legacy_headers())
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
    assert "mcp-session-id" in response.headers


async def test_the_initialized_notification_is_accepted_with_202(
    http: RunningServer, client: httpx.AsyncClient
) -> None:
    legacy = LegacyHttp(client, f"{http.base}/mcp")
    await legacy.initialize(initialized=False)
    response = await legacy.notify("notifications/initialized")
    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("version", [None, "2025-11-25", "2024-11-05"])
def test_a_legacy_request_without_a_session_id_is_400(
    http: RunningServer, version: str | None
) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
    response = raw_post(http.base, body, legacy_headers(version=version))
    assert response.status_code == 400
    assert response.json()["id"] == 7
    assert "Mcp-Session-Id" in response.json()["error"]["message"]


def test_a_modern_body_with_a_legacy_protocol_header_is_a_header_mismatch(
    http: RunningServer,
) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": MODERN_META}}
    headers = legacy_headers(version="2025-11-25", mcp_method="tools/list")
    response = raw_post(http.base, body, headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
    assert response.json()["id"] == 3


def test_an_unknown_session_id_is_404(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = raw_post(http.base, body, legacy_headers("no-such-session"))
    assert response.status_code == 404


async def test_an_expired_session_is_404(client: httpx.AsyncClient) -> None:
    store = MemorySessionStore(idle_timeout=0.3)
    with RunningServer(create_app(build_server(), sessions=store)) as running:
        legacy = LegacyHttp(client, f"{running.base}/mcp")
        await legacy.initialize()
        assert (await legacy.post(1, "ping")).status_code == 200
        await asyncio.sleep(0.5)
        assert (await legacy.post(2, "ping")).status_code == 404
        assert len(store) == 0


async def test_the_session_table_is_bounded_and_evicts_the_longest_idle(
    client: httpx.AsyncClient,
) -> None:
    store = MemorySessionStore(max_sessions=2)
    with RunningServer(create_app(build_server(), sessions=store)) as running:
        url = f"{running.base}/mcp"
        oldest, middle, newest = (LegacyHttp(client, url) for _ in range(3))
        await oldest.initialize()
        await middle.initialize()
        await newest.initialize()
        assert len(store) == 2
        assert (await oldest.post(1, "ping")).status_code == 404
        assert (await middle.post(1, "ping")).status_code == 200
        assert (await newest.post(1, "ping")).status_code == 200


# -- DELETE and GET -----------------------------------------------------------------------


async def test_delete_ends_the_session_and_later_requests_get_404(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    ended = await client.delete(session.url, headers=session.headers())
    assert ended.status_code == 200
    assert (await session.post(1, "ping")).status_code == 404


async def test_an_ended_session_stops_hearing_about_changes(client: httpx.AsyncClient) -> None:
    bus = InMemoryBus()
    with RunningServer(create_app(build_server(bus=bus))) as running:
        legacy = LegacyHttp(client, f"{running.base}/mcp")
        await legacy.initialize()
        assert bus.subscriber_count == 1
        await client.delete(legacy.url, headers=legacy.headers())
        for _ in range(50):
            if bus.subscriber_count == 0:
                break
            await asyncio.sleep(0.02)
        assert bus.subscriber_count == 0


def test_delete_of_an_unknown_session_is_404(http: RunningServer) -> None:
    response = httpx.delete(f"{http.base}/mcp", headers={"mcp-session-id": "gone"})
    assert response.status_code == 404


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_without_a_session_id_stay_405(http: RunningServer, verb: str) -> None:
    response = httpx.request(verb, f"{http.base}/mcp")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


async def test_the_get_stream_carries_list_changes(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    async with client.stream("GET", session.url, headers=session.headers()) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        reader = SseReader(stream)
        await session.call(1, "tools/call", {"name": "add_tool"})
        changed = await asyncio.wait_for(reader.next_message(), 5)
    assert changed is not None
    assert session.check(changed)["method"] == "notifications/tools/list_changed"


async def test_the_get_stream_sends_keepalive_comments_while_idle(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    async with client.stream("GET", session.url, headers=session.headers()) as stream:
        reader = SseReader(stream)
        reading = asyncio.ensure_future(reader.next_event())
        await asyncio.sleep(0.7)
        assert reader.comments >= 2
        reading.cancel()


async def test_a_second_get_stream_for_one_session_is_409(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    async with client.stream("GET", session.url, headers=session.headers()) as first:
        assert first.status_code == 200
        second = await client.get(session.url, headers=session.headers())
        assert second.status_code == 409


async def test_get_without_accepting_an_event_stream_is_406(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    response = await client.get(session.url, headers=session.headers(accept="application/json"))
    assert response.status_code == 406


async def test_delete_ends_an_open_get_stream(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    async with client.stream("GET", session.url, headers=session.headers()) as stream:
        reader = SseReader(stream)
        await client.delete(session.url, headers=session.headers())
        assert await asyncio.wait_for(reader.next_event(), 5) is None


async def test_resource_updates_of_subscribed_uris_arrive_on_the_get_stream(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    subscribed = await session.call(1, "resources/subscribe", {"uri": "file:///watched.txt"})
    assert subscribed["result"] == {}
    async with client.stream("GET", session.url, headers=session.headers()) as stream:
        reader = SseReader(stream)
        await session.call(2, "tools/call", {"name": "touch", "arguments": {"uri": "file:///x"}})
        await session.call(
            3, "tools/call", {"name": "touch", "arguments": {"uri": "file:///watched.txt"}}
        )
        update = await asyncio.wait_for(reader.next_message(), 5)
    assert update is not None
    assert session.check(update)["params"] == {"uri": "file:///watched.txt"}


# -- the protocol version header ----------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28", "garbage"])
async def test_a_protocol_version_header_other_than_the_negotiated_one_is_400(
    session: LegacyHttp, version: str
) -> None:
    response = await session.post(1, "ping", mcp_protocol_version=version)
    assert response.status_code == 400
    assert response.json()["id"] == 1


async def test_without_the_protocol_version_header_the_negotiated_version_applies(
    session: LegacyHttp, client: httpx.AsyncClient
) -> None:
    headers = {k: v for k, v in session.headers().items() if k != "mcp-protocol-version"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = await client.post(session.url, content=json.dumps(body), headers=headers)
    assert response.status_code == 200
    assert response.json()["result"] == {}


# -- requests in a session ----------------------------------------------------------------


async def test_ping_and_set_level_return_exactly_an_empty_result(session: LegacyHttp) -> None:
    assert (await session.call(1, "ping"))["result"] == {}
    assert (await session.call(2, "logging/setLevel", {"level": "info"}))["result"] == {}


async def test_json_rpc_errors_in_a_session_travel_with_status_200(session: LegacyHttp) -> None:
    response = await session.post(1, "no/such/method")
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32601


async def test_initialize_inside_a_live_session_is_refused(session: LegacyHttp) -> None:
    reply = await session.call(1, "initialize", initialize_body()["params"])
    assert reply["error"]["code"] == -32600


async def test_concurrent_posts_in_one_session_are_all_answered(session: LegacyHttp) -> None:
    replies = await asyncio.gather(
        *(
            session.call(i, "tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
            for i in range(8)
        )
    )
    assert [r["result"]["content"][0]["text"] for r in replies] == ["slept 0.2"] * 8


async def test_a_request_id_already_in_flight_in_the_session_is_refused(
    session: LegacyHttp,
) -> None:
    first = asyncio.ensure_future(
        session.call(5, "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}})
    )
    await asyncio.sleep(0.2)
    duplicate = await session.post(5, "ping")
    assert duplicate.json()["error"]["code"] == -32600
    assert (await first)["result"]["content"][0]["text"] == "slept 0.5"


async def test_log_messages_of_a_call_go_on_its_post_stream(session: LegacyHttp) -> None:
    response = await session.post(1, "tools/call", {"name": "chatty"})
    assert response.headers["content-type"].startswith("text/event-stream")
    messages = session.messages_of(response)
    assert [m["params"]["data"] for m in messages[:-1]] == ["one", "two"]
    assert messages[-1]["result"]["content"][0]["text"] == "chatted"


async def test_elicitation_goes_out_on_the_calls_stream_and_a_posted_answer_completes_it(
    session: LegacyHttp,
) -> None:
    async with session.stream(1, "tools/call", {"name": "ask_name"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        reader = SseReader(response)
        request = await asyncio.wait_for(reader.next_message(), 5)
        assert request is not None
        assert session.check(request)["method"] == "elicitation/create"
        accepted = await session.answer(request, {"action": "accept", "content": {"name": "Ada"}})
        assert accepted.status_code == 202
        reply = await asyncio.wait_for(reader.next_message(), 5)
    assert reply is not None
    assert session.check(reply)["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_a_posted_response_outside_a_session_is_400(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": "s-1", "result": {}}
    response = raw_post(http.base, body, legacy_headers())
    assert response.status_code == 400


async def test_notifications_cancelled_ends_the_call_without_a_response(
    session: LegacyHttp,
) -> None:
    async with session.stream(1, "tools/call", {"name": "ask_name"}) as response:
        reader = SseReader(response)
        request = await asyncio.wait_for(reader.next_message(), 5)
        assert request is not None
        cancel = await session.notify("notifications/cancelled", {"requestId": 1})
        assert cancel.status_code == 202
        assert await asyncio.wait_for(reader.next_message(), 5) is None


async def test_modern_requests_are_served_beside_legacy_sessions(
    session: LegacyHttp, http: RunningServer
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "modern"}, "_meta": MODERN_META},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    response = raw_post(http.base, body, headers)
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "complete"
    legacy = await session.call(2, "tools/call", {"name": "echo", "arguments": {"text": "old"}})
    assert "resultType" not in legacy["result"]


async def test_a_request_with_modern_meta_inside_a_session_is_served_modern(
    session: LegacyHttp,
) -> None:
    assert session.session_id is not None
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "modern"}, "_meta": MODERN_META},
    }
    headers = session.headers(
        mcp_protocol_version="2026-07-28", mcp_method="tools/call", mcp_name="echo"
    )
    response = await session.client.post(session.url, content=json.dumps(body), headers=headers)
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "complete"


def test_a_modern_request_ignores_a_session_id_it_carries(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
    headers = legacy_headers(
        "not-a-session", version="2026-07-28", mcp_method="tools/list", last_event_id="4"
    )
    response = raw_post(http.base, body, headers)
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "complete"
    assert "mcp-session-id" not in response.headers


async def test_stopping_the_server_ends_the_get_streams(client: httpx.AsyncClient) -> None:
    running = RunningServer(create_app(build_server()))
    with running:
        legacy = LegacyHttp(client, f"{running.base}/mcp")
        await legacy.initialize()
        async with client.stream("GET", legacy.url, headers=legacy.headers()) as stream:
            reader = SseReader(stream)
            reading = asyncio.ensure_future(reader.next_event())
            running.server.should_exit = True
            assert await asyncio.wait_for(reading, 5) is None


# -- sessions and authentication ----------------------------------------------------------


@pytest.fixture(scope="module")
def protected() -> Iterator[RunningServer]:
    verifier = JWTVerifier(
        issuer=ISSUER, audience=RESOURCE, keys=StaticKeys({"keys": [SIGNER.jwk]})
    )
    guard = ProtectedResource(RESOURCE, [ISSUER], verifier)
    with RunningServer(create_app(build_server(), auth=guard)) as running:
        yield running


def bearer(subject: str) -> dict[str, str]:
    return {"authorization": f"Bearer {SIGNER.mint(sub=subject)}"}


def test_a_session_serves_the_caller_who_created_it(protected: RunningServer) -> None:
    opened = raw_post(protected.base, initialize_body(), legacy_headers() | bearer("alice"))
    assert opened.status_code == 200
    session_id = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = raw_post(protected.base, ping, legacy_headers(session_id) | bearer("alice"))
    assert response.status_code == 200
    assert response.json()["result"] == {}


def test_a_session_is_refused_to_another_caller(protected: RunningServer) -> None:
    opened = raw_post(protected.base, initialize_body(), legacy_headers() | bearer("alice"))
    session_id = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    response = raw_post(protected.base, ping, legacy_headers(session_id) | bearer("mallory"))
    assert response.status_code == 404
    stream = httpx.get(
        f"{protected.base}/mcp", headers=legacy_headers(session_id) | bearer("mallory")
    )
    assert stream.status_code == 404
    ended = httpx.delete(
        f"{protected.base}/mcp", headers=legacy_headers(session_id) | bearer("mallory")
    )
    assert ended.status_code == 404


def test_a_session_request_without_a_token_is_401(protected: RunningServer) -> None:
    opened = raw_post(protected.base, initialize_body(), legacy_headers() | bearer("alice"))
    session_id = opened.headers["mcp-session-id"]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert raw_post(protected.base, ping, legacy_headers(session_id)).status_code == 401
