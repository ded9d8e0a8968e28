"""Streamable HTTP server transport (spec ``basic/transports/streamable-http.mdx``).

A real uvicorn on 127.0.0.1 serves the ASGI app; every status and error-code rule is a
test of its own, and every error echoes the request id.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from conftest import RunningServer
from mcpkit import Context, Server
from mcpkit.transports.guard import guarded_protocol
from mcpkit.transports.http import HostPolicy, create_app

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
cancelled = threading.Event()
started = threading.Event()


def build_server() -> Server:
    server = Server("http-test", "1.0.0")

    @server.tool
    async def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.tool
    async def slow() -> str:
        """Sleep until cancelled."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "done"

    @server.tool
    async def progress(ctx: Context) -> str:
        """Report progress three times."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"step {step}")
        return "finished"

    @server.tool
    async def chatty(ctx: Context) -> str:
        """Log three messages."""
        for text in ("started", "working", "done"):
            await ctx.info(text)
        return "ok"

    @server.tool(requires={"sampling": {}})
    async def needs_sampling() -> str:
        """Needs the sampling capability."""
        return "never reached without sampling"

    return server


@pytest.fixture(scope="module")
def http() -> Iterator[RunningServer]:
    with RunningServer(create_app(build_server())) as running:
        yield running


def headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    result = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": method,
    }
    if name is not None:
        result["mcp-name"] = name
    result.update({k.replace("_", "-"): v for k, v in extra.items()})
    return result


def call(
    http: RunningServer,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    id: Any = 1,
    name: str | None = None,
    hdrs: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
) -> httpx.Response:
    body_params = dict(params or {})
    body_params["_meta"] = META if meta is None else meta
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": body_params}
    return httpx.post(
        f"{http.base}/mcp",
        content=json.dumps(body),
        headers=hdrs if hdrs is not None else headers(method, name),
        timeout=10,
    )


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert "result" not in body
    return body


def test_a_tool_call_is_answered_with_json() -> None:
    with RunningServer(create_app(build_server())) as running:
        response = call(
            running, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, name="add"
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result = response.json()["result"]
    assert result["content"] == [{"type": "text", "text": "5"}]
    assert result["resultType"] == "complete"


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
def test_only_post_is_allowed_on_the_endpoint(http: RunningServer, verb: str) -> None:
    response = httpx.request(verb, f"{http.base}/mcp")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def test_another_path_is_not_found(http: RunningServer) -> None:
    response = httpx.post(f"{http.base}/elsewhere", content=b"{}", headers=headers("tools/list"))
    assert response.status_code == 404


def test_a_body_that_is_not_json_content_is_415(http: RunningServer) -> None:
    hdrs = headers("tools/list")
    hdrs["content-type"] = "text/plain"
    assert call(http, "tools/list", hdrs=hdrs).status_code == 415


def test_accept_must_list_json_and_event_stream(http: RunningServer) -> None:
    hdrs = headers("tools/list")
    hdrs["accept"] = "application/json"
    assert call(http, "tools/list", hdrs=hdrs).status_code == 406


def test_a_declared_body_over_the_limit_is_413(http: RunningServer) -> None:
    body = b'{"x":"' + b"a" * (4 * 1024 * 1024) + b'"}'
    response = httpx.post(f"{http.base}/mcp", content=body, headers=headers("tools/list"))
    assert response.status_code == 413


def test_a_chunked_body_over_the_limit_is_413(http: RunningServer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(5):
            yield b"a" * (1024 * 1024)

    response = httpx.post(f"{http.base}/mcp", content=chunks(), headers=headers("tools/list"))
    assert response.status_code == 413


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}', -32600),
        (b'{"jsonrpc":"2.0","id":' + b"[" * 200 + b"]" * 200 + b',"method":"x"}', -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600),
    ],
    ids=[
        "invalid-json",
        "invalid-utf8",
        "batch",
        "duplicate-keys",
        "too-deep",
        "null-id",
        "fractional-id",
    ],
)
def test_malformed_envelopes_are_400_with_a_jsonrpc_error(
    http: RunningServer, body: bytes, code: int
) -> None:
    response = httpx.post(f"{http.base}/mcp", content=body, headers=headers("tools/list"))
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == code


def test_an_envelope_error_echoes_a_readable_id(http: RunningServer) -> None:
    body = b'{"jsonrpc":"1.0","id":"abc","method":"tools/list"}'
    response = httpx.post(f"{http.base}/mcp", content=body, headers=headers("tools/list"))
    assert response.status_code == 400
    assert error_of(response) == {
        "jsonrpc": "2.0",
        "id": "abc",
        "error": {"code": -32600, "message": 'The "jsonrpc" member must be exactly "2.0"'},
    }


@pytest.mark.parametrize(
    ("meta", "missing"),
    [
        ({}, "io.modelcontextprotocol/protocolVersion"),
        (
            {"io.modelcontextprotocol/clientCapabilities": {}},
            "io.modelcontextprotocol/protocolVersion",
        ),
        (
            {"io.modelcontextprotocol/protocolVersion": VERSION},
            "io.modelcontextprotocol/clientCapabilities",
        ),
    ],
    ids=["no-meta", "no-version", "no-capabilities"],
)
def test_missing_meta_fields_are_400_invalid_params(
    http: RunningServer, meta: dict[str, Any], missing: str
) -> None:
    response = call(http, "tools/list", id=7, meta=meta)
    assert response.status_code == 400
    body = error_of(response)
    assert body["id"] == 7
    assert body["error"]["code"] == -32602
    assert body["error"]["message"] == f"Missing required _meta field {missing}"


def test_client_info_is_optional(http: RunningServer) -> None:
    assert call(http, "tools/list").status_code == 200


def test_meta_is_checked_before_the_version_header(http: RunningServer) -> None:
    meta = {"io.modelcontextprotocol/clientCapabilities": {}}
    response = call(http, "tools/list", meta=meta)
    assert error_of(response)["error"]["code"] == -32602


def test_a_missing_version_header_is_a_header_mismatch(http: RunningServer) -> None:
    hdrs = headers("tools/list")
    del hdrs["mcp-protocol-version"]
    response = call(http, "tools/list", id=3, hdrs=hdrs)
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == -32020
    assert response.json()["id"] == 3


def test_a_version_header_that_disagrees_with_meta_is_a_header_mismatch(
    http: RunningServer,
) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    response = call(http, "tools/list", meta=meta)
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == -32020


def test_an_unsupported_version_is_400_with_the_supported_list(http: RunningServer) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    hdrs = headers("tools/list", mcp_protocol_version="v999.0.0")
    response = call(http, "tools/list", id="x", meta=meta, hdrs=hdrs)
    assert response.status_code == 400
    body = error_of(response)
    assert body["id"] == "x"
    assert body["error"]["code"] == -32022
    assert body["error"]["data"] == {"supported": [VERSION], "requested": "v999.0.0"}


def test_a_missing_method_header_is_a_header_mismatch(http: RunningServer) -> None:
    hdrs = headers("tools/list")
    del hdrs["mcp-method"]
    assert error_of(call(http, "tools/list", hdrs=hdrs))["error"]["code"] == -32020


def test_a_method_header_that_disagrees_with_the_body_is_a_header_mismatch(
    http: RunningServer,
) -> None:
    response = call(http, "tools/list", hdrs=headers("tools/call"))
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == -32020


def test_header_values_are_case_sensitive(http: RunningServer) -> None:
    response = call(http, "tools/list", hdrs=headers("Tools/List"))
    assert error_of(response)["error"]["code"] == -32020


def test_repeated_routing_headers_are_a_header_mismatch(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    raw = [(k, v) for k, v in headers("tools/list").items()] + [("mcp-method", "tools/list")]
    response = httpx.post(f"{http.base}/mcp", content=json.dumps(body), headers=raw)
    assert error_of(response)["error"]["code"] == -32020


@pytest.mark.parametrize("name", [None, "sub"], ids=["missing", "mismatched"])
def test_mcp_name_must_match_the_tool_name(http: RunningServer, name: str | None) -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    response = call(http, "tools/call", params, name=name)
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == -32020


def test_a_base64_encoded_mcp_name_is_decoded_before_comparing(http: RunningServer) -> None:
    encoded = "=?base64?" + base64.b64encode(b"add").decode() + "?="
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    response = call(http, "tools/call", params, name=encoded)
    assert response.status_code == 200


def test_an_invalid_base64_mcp_name_is_a_header_mismatch(http: RunningServer) -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    response = call(http, "tools/call", params, name="=?base64?!!!?=")
    assert error_of(response)["error"]["code"] == -32020


def test_an_unknown_method_is_404_method_not_found(http: RunningServer) -> None:
    response = call(http, "unknown/method", id=500)
    assert response.status_code == 404
    assert error_of(response) == {
        "jsonrpc": "2.0",
        "id": 500,
        "error": {"code": -32601, "message": "Method not found: unknown/method"},
    }


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"],
)
def test_legacy_methods_with_modern_meta_are_404(http: RunningServer, method: str) -> None:
    response = call(http, method, id=500)
    assert response.status_code == 404
    assert error_of(response)["error"]["code"] == -32601


def test_a_missing_client_capability_is_400_with_the_required_capabilities(
    http: RunningServer,
) -> None:
    response = call(http, "tools/call", {"name": "needs_sampling"}, id=9, name="needs_sampling")
    assert response.status_code == 400
    body = error_of(response)
    assert body["id"] == 9
    assert body["error"]["code"] == -32021
    assert body["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_an_unknown_tool_is_400_invalid_params(http: RunningServer) -> None:
    response = call(http, "tools/call", {"name": "nope"}, name="nope")
    assert response.status_code == 400
    assert error_of(response)["error"] == {"code": -32602, "message": "Unknown tool: nope"}


def test_a_notification_is_accepted_with_202_and_no_body(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = httpx.post(
        f"{http.base}/mcp", content=json.dumps(body), headers=headers("notifications/cancelled")
    )
    assert response.status_code == 202
    assert response.content == b""


def test_a_client_must_not_post_responses(http: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 4, "result": {}}
    response = httpx.post(f"{http.base}/mcp", content=json.dumps(body), headers=headers("x"))
    assert response.status_code == 400
    assert error_of(response)["error"]["code"] == -32600


def sse_messages(response: httpx.Response) -> list[dict[str, Any]]:
    messages = []
    for line in response.text.splitlines():
        if line.startswith("data: "):
            messages.append(json.loads(line[6:]))
    return messages


def test_progress_turns_the_response_into_an_event_stream_ending_with_the_result(
    http: RunningServer,
) -> None:
    meta = {**META, "progressToken": "p-1"}
    response = call(http, "tools/call", {"name": "progress"}, id=11, name="progress", meta=meta)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    messages = sse_messages(response)
    notes = [m for m in messages if m.get("method") == "notifications/progress"]
    assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
    assert {n["params"]["progressToken"] for n in notes} == {"p-1"}
    assert messages[-1]["id"] == 11
    assert messages[-1]["result"]["content"][0]["text"] == "finished"


def test_event_stream_data_lines_carry_single_line_json(http: RunningServer) -> None:
    meta = {**META, "progressToken": 5}
    response = call(http, "tools/call", {"name": "progress"}, name="progress", meta=meta)
    data_lines = [line for line in response.text.splitlines() if line.startswith("data:")]
    assert len(data_lines) == 4
    for line in data_lines:
        json.loads(line[len("data: ") :])


def test_no_progress_is_sent_without_a_progress_token(http: RunningServer) -> None:
    response = call(http, "tools/call", {"name": "progress"}, name="progress")
    assert response.headers["content-type"] == "application/json"


def test_log_messages_are_sent_only_when_the_request_sets_a_log_level(http: RunningServer) -> None:
    quiet = call(http, "tools/call", {"name": "chatty"}, name="chatty")
    assert quiet.headers["content-type"] == "application/json"
    meta = {**META, "io.modelcontextprotocol/logLevel": "info"}
    loud = call(http, "tools/call", {"name": "chatty"}, name="chatty", meta=meta)
    logs = [m for m in sse_messages(loud) if m.get("method") == "notifications/message"]
    assert [entry["params"]["data"] for entry in logs] == ["started", "working", "done"]
    meta_error = {**META, "io.modelcontextprotocol/logLevel": "error"}
    filtered = call(http, "tools/call", {"name": "chatty"}, name="chatty", meta=meta_error)
    assert filtered.headers["content-type"] == "application/json"


def test_a_foreign_host_is_refused(http: RunningServer) -> None:
    hdrs = headers("tools/list", host="evil.example.com", origin="http://evil.example.com")
    response = call(http, "tools/list", hdrs=hdrs)
    assert 400 <= response.status_code < 500


def test_a_foreign_origin_is_403(http: RunningServer) -> None:
    hdrs = headers("tools/list", origin="http://evil.example.com")
    assert call(http, "tools/list", hdrs=hdrs).status_code == 403


def test_the_servers_own_host_and_origin_are_accepted(http: RunningServer) -> None:
    authority = f"127.0.0.1:{http.port}"
    hdrs = headers("tools/list", host=authority, origin=f"http://{authority}")
    assert call(http, "tools/list", hdrs=hdrs).status_code == 200


def test_a_policy_for_a_bind_address_accepts_only_that_port() -> None:
    policy = HostPolicy.for_bind("127.0.0.1", 8123)
    assert policy.host_allowed("127.0.0.1:8123")
    assert policy.host_allowed("localhost:8123")
    assert not policy.host_allowed("127.0.0.1:9999")
    assert not policy.host_allowed("evil.example.com")
    assert policy.origin_allowed("http://localhost:8123", "localhost:8123")
    assert not policy.origin_allowed("null", "localhost:8123")


def test_configured_public_hosts_allow_proxied_deployments() -> None:
    policy = HostPolicy(["mcp.example.com", "*.internal.example"], ["https://app.example.com"])
    assert policy.host_allowed("mcp.example.com")
    assert policy.host_allowed("a.internal.example")
    assert not policy.host_allowed("example.com")
    assert policy.origin_allowed("https://app.example.com", "mcp.example.com")
    assert not policy.origin_allowed("https://evil.example.com", "mcp.example.com")


def test_a_client_disconnect_cancels_the_handler(http: RunningServer) -> None:
    started.clear()
    cancelled.clear()
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "slow", "_meta": META},
    }
    payload = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers("tools/call", "slow").items())
    request = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{http.port}\r\n{head}"
        f"content-length: {len(payload)}\r\n\r\n"
    ).encode() + payload
    with socket.create_connection(("127.0.0.1", http.port), timeout=5) as sock:
        sock.sendall(request)
        assert started.wait(5)
    assert cancelled.wait(5), "the handler was not cancelled after the client went away"


def test_a_body_that_does_not_arrive_in_time_is_408() -> None:
    app = create_app(build_server(), body_timeout=0.3)
    with (
        RunningServer(app) as running,
        socket.create_connection(("127.0.0.1", running.port), timeout=5) as sock,
    ):
        head = "".join(f"{k}: {v}\r\n" for k, v in headers("tools/list").items())
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{head}content-length: 100\r\n\r\n{{".encode()
        )
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 408")


def test_headers_that_do_not_arrive_in_time_close_the_connection() -> None:
    app = create_app(build_server())
    with (
        RunningServer(app, http=guarded_protocol(0.3)) as running,
        socket.create_connection(("127.0.0.1", running.port), timeout=5) as sock,
    ):
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        started_at = time.monotonic()
        reply = sock.recv(4096)
        elapsed = time.monotonic() - started_at
        assert reply.startswith(b"HTTP/1.1 408")
        assert sock.recv(4096) == b""
    assert elapsed < 3


def test_a_silent_connection_is_closed_by_the_header_deadline() -> None:
    with (
        RunningServer(create_app(build_server()), http=guarded_protocol(0.3)) as running,
        socket.create_connection(("127.0.0.1", running.port), timeout=5) as sock,
    ):
        assert sock.recv(4096).startswith(b"HTTP/1.1 408")


def test_a_modern_only_server_names_its_versions_to_a_legacy_initialize() -> None:
    modern_only = Server("modern-only", "1.0.0", supported_versions=[VERSION])
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"},
        },
    }
    hdrs = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with RunningServer(create_app(modern_only)) as running:
        response = httpx.post(f"{running.base}/mcp", content=json.dumps(body), headers=hdrs)
    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    error = error_of(response)["error"]
    assert error["code"] == -32022
    assert "2026-07-28" in error["message"]
    assert error["data"]["supported"] == [VERSION]


def test_whitespace_around_a_header_value_is_not_part_of_it(http: RunningServer) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META},
    }
    payload = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers("tools/call").items())
    request = (
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{http.port}\r\n{head}mcp-name: \t add  \r\n"
        f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n"
    ).encode() + payload
    with socket.create_connection(("127.0.0.1", http.port), timeout=5) as sock:
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


async def read_events(lines: AsyncIterator[str], count: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    async for line in lines:
        if line.startswith("data: "):
            found.append(json.loads(line[6:]))
            if len(found) == count:
                break
    return found


async def test_a_listen_stream_gets_its_ack_changes_and_a_graceful_end_on_shutdown() -> None:
    server = build_server()
    app = create_app(server, keepalive_interval=0.2)
    with RunningServer(app) as running:
        body = {
            "jsonrpc": "2.0",
            "id": 41,
            "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
        }
        async with (
            httpx.AsyncClient(timeout=10) as client,
            client.stream(
                "POST",
                f"{running.base}/mcp",
                content=json.dumps(body),
                headers=headers("subscriptions/listen"),
            ) as stream,
        ):
            assert stream.headers["content-type"] == "text/event-stream"
            assert stream.headers["x-accel-buffering"] == "no"
            lines = stream.aiter_lines()
            (ack,) = await read_events(lines, 1)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41
            assert ack["params"]["notifications"] == {"toolsListChanged": True}

            @server.tool
            async def late() -> str:
                """Added while a client listens."""
                return "late"

            (changed,) = await read_events(lines, 1)
            assert changed["method"] == "notifications/tools/list_changed"
            assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41
            running.server.should_exit = True
            (final,) = await read_events(lines, 1)
            assert final["id"] == 41
            assert final["result"]["resultType"] == "complete"
            assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41
