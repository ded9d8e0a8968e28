"""``mcpkit run FILE --http``: a file's Server served over Streamable HTTP by uvicorn."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
MCPKIT = Path(sys.executable).with_name("mcpkit")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"server exited: {process.stderr.read() if process.stderr else ''!r}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the HTTP server did not start")


def test_run_http_serves_the_file_at_the_mcp_path() -> None:
    port = free_port()
    notes = str(ROOT / "examples" / "notes_server.py")
    command = [str(MCPKIT), "run", notes, "--http", "--port", str(port)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        serve_and_check(process, port)


def serve_and_check(process: subprocess.Popen[bytes], port: int) -> None:
    try:
        wait_for_port(port, process)
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "read_note",
                "arguments": {"title": "standup"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        response = httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            content=json.dumps(body),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": "read_note",
            },
            timeout=10,
        )
        assert response.status_code == 200
        assert response.json()["result"]["content"] == [
            {"type": "text", "text": "Demo the MCP server at 10:00."}
        ]
        foreign = httpx.post(
            f"http://127.0.0.1:{port}/mcp", content=b"{}", headers={"host": "evil.example.com"}
        )
        assert foreign.status_code == 421
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.stdout is not None
    assert process.stdout.read() == b""


def test_run_http_refuses_a_missing_file() -> None:
    result = subprocess.run(
        [str(MCPKIT), "run", "no-such-file.py", "--http"], capture_output=True, timeout=30
    )
    assert result.returncode == 2
    assert b"no such file" in result.stderr


def test_call_reaches_a_streamable_http_server_with_url() -> None:
    from conftest import RunningServer
    from mcpkit.transports.http import create_app

    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from calculator_server import server
    finally:
        sys.path.pop(0)
    with RunningServer(create_app(server)) as running:
        result = subprocess.run(
            [str(MCPKIT), "call", "add", "a=2", "b=3", "--url", f"{running.base}/mcp"],
            capture_output=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().strip() == "5"


def test_call_needs_exactly_one_way_to_reach_the_server() -> None:
    both = subprocess.run(
        [str(MCPKIT), "call", "add", "--url", "http://127.0.0.1:9/mcp", "--", "x"],
        capture_output=True,
        timeout=30,
    )
    assert both.returncode == 2
    assert b"(one of the two)" in both.stderr
    oauth_alone = subprocess.run(
        [str(MCPKIT), "call", "add", "--oauth", "--", sys.executable, "-c", "pass"],
        capture_output=True,
        timeout=30,
    )
    assert oauth_alone.returncode == 2
    assert b"--oauth and --token-file go with --url" in oauth_alone.stderr
