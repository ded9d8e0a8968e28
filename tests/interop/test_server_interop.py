"""``examples/everything_server.py`` against clients nobody here wrote: the official Python
SDK's client (``mcp==2.3.0``, in its ``legacy`` and ``auto`` modes) and the MCP Inspector's
CLI (``@modelcontextprotocol/inspector --cli``, a legacy client built on the TypeScript
SDK), over stdio, Streamable HTTP and the deprecated HTTP+SSE transport.

Each client lists the tools and calls one; the SDK client also answers the server's
sampling and elicitation requests (real server-to-client requests on a legacy session,
``input_required`` rounds on a modern one), so the same handler code is seen to work
in both eras. The peers are installed from PyPI and npm on first use (see conftest).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, HttpServer

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

EVERYTHING = ROOT / "examples" / "everything_server.py"
SDK_CLIENT = Path(__file__).with_name("clients") / "sdk_client.py"
STDIO = [sys.executable, str(EVERYTHING), "--stdio"]
SIMPLE_TEXT = "This is a simple text response for testing."


@pytest.fixture(scope="module")
def everything() -> Iterator[HttpServer]:
    """One everything server over HTTP (``/mcp`` and the HTTP+SSE ``/sse``) per module."""
    server = HttpServer(
        [sys.executable, str(EVERYTHING), "--port", "{port}"],
        env={"MCPKIT_STATE_KEY": "interop-tests-" + "k" * 32},
    )
    yield server
    server.stop()


def sdk(python: Path, mode: str, transport: str, *target: str) -> dict[str, Any]:
    """Run the SDK client driver and return its report."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(python), str(SDK_CLIENT), mode, transport, *target],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def check_sdk_report(report: dict[str, Any], version: str) -> None:
    assert report["protocol_version"] == version
    assert report["server"] == "mcpkit-everything"
    assert "test_simple_text" in report["tools"]
    assert report["simple"] == SIMPLE_TEXT
    assert report["sampling"] == "LLM response: echo of Capital of France?"
    assert report["elicitation"] == (
        "User response: action=accept, content={'response': 'from the SDK'}"
    )
    assert report["errors"] == [False, False, False]


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_official_sdk_client_over_stdio(sdk_python: Path, mode: str, version: str) -> None:
    check_sdk_report(sdk(sdk_python, mode, "stdio", *STDIO), version)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_official_sdk_client_over_streamable_http(
    sdk_python: Path, everything: HttpServer, mode: str, version: str
) -> None:
    check_sdk_report(sdk(sdk_python, mode, "http", everything.url("/mcp")), version)


def test_the_official_sdk_client_over_the_deprecated_http_sse_transport(
    sdk_python: Path, everything: HttpServer
) -> None:
    check_sdk_report(sdk(sdk_python, "legacy", "sse", everything.url("/sse")), "2025-11-25")


def run_inspector(inspector: tuple[Path, Path], home: Path, *arguments: str) -> Any:
    """Run ``mcp-inspector --cli ...`` and return the JSON it prints."""
    node, entry = inspector
    env = {
        **os.environ,
        "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
    }
    done = subprocess.run(
        [str(node), str(entry), "--cli", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=home,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return json.loads(done.stdout)


def inspector_targets(everything: HttpServer) -> dict[str, list[str]]:
    return {
        "stdio": STDIO,
        "http": [everything.url("/mcp"), "--transport", "http"],
        "sse": [everything.url("/sse"), "--transport", "sse"],
    }


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
def test_the_inspector_cli_lists_the_tools(
    inspector: tuple[Path, Path], everything: HttpServer, tmp_path: Path, transport: str
) -> None:
    target = inspector_targets(everything)[transport]
    listed = run_inspector(inspector, tmp_path, *target, "--method", "tools/list")
    names = [tool["name"] for tool in listed["tools"]]
    assert "test_simple_text" in names
    assert "test_sampling" in names


@pytest.mark.parametrize("transport", ["stdio", "http", "sse"])
def test_the_inspector_cli_calls_a_tool(
    inspector: tuple[Path, Path], everything: HttpServer, tmp_path: Path, transport: str
) -> None:
    target = inspector_targets(everything)[transport]
    called = run_inspector(
        inspector, tmp_path, *target, "--method", "tools/call", "--tool-name", "test_simple_text"
    )
    assert called["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    assert "resultType" not in called


def test_the_inspector_cli_passes_tool_arguments(
    inspector: tuple[Path, Path], everything: HttpServer, tmp_path: Path
) -> None:
    called = run_inspector(
        inspector,
        tmp_path,
        everything.url("/mcp"),
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "test_x_mcp_header",
        "--tool-arg",
        "region=eu-west",
    )
    assert called["content"] == [{"type": "text", "text": "region=eu-west"}]
