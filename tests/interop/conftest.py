"""Real peers nobody here wrote, installed from the registries on first use and cached
under the repository (both directories are git-ignored):

* ``.venv-interop/``: a virtual environment with the official Python SDK, ``mcp==2.3.0``
  (never installed into mcpkit's own ``.venv``);
* ``.cache/interop/``: an npm prefix with ``@modelcontextprotocol/server-everything``;
* ``.cache/interop-inspector/``: an npm prefix with the MCP Inspector
  (``@modelcontextprotocol/inspector``, whose ``--cli`` is a legacy client) and the
  Node.js 22 it needs (``node@22`` from npm: the machines may have an older one).

A marker file records what each was built from; a changed pin rebuilds it. HTTP servers
are started on a free 127.0.0.1 port and stopped (process group and all) after the test.
The Node server listens on every interface by default, so a preload pins it to 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDK_VENV = ROOT / ".venv-interop"
NODE_PREFIX = ROOT / ".cache" / "interop"
SDK_REQUIREMENT = "mcp==2.3.0"
EVERYTHING = "@modelcontextprotocol/server-everything"
EVERYTHING_VERSION = "2026.8.31"
SDK_SERVER = Path(__file__).with_name("servers") / "sdk_server.py"
INSPECTOR_PREFIX = ROOT / ".cache" / "interop-inspector"
INSPECTOR = "@modelcontextprotocol/inspector"
INSPECTOR_VERSION = "2.12.0"
INSPECTOR_NODE = "node@22"
BIND_LOCALHOST = """\
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if ((typeof first === "number" || /^\\d+$/.test(String(first))) &&
      (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
"""


def _run(command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """The interpreter of the environment holding the official Python SDK."""
    python = SDK_VENV / "bin" / "python"
    marker = SDK_VENV / ".interop-requirements"
    if not (python.exists() and marker.exists() and marker.read_text() == SDK_REQUIREMENT):
        base = getattr(sys, "_base_executable", sys.executable)
        _run([base, "-m", "venv", "--clear", str(SDK_VENV)])
        _run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                SDK_REQUIREMENT,
            ]
        )
        marker.write_text(SDK_REQUIREMENT)
    return python


@pytest.fixture(scope="session")
def everything_js() -> tuple[str, Path, Path]:
    """(node, the server's entry point, the localhost preload)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("Node.js and npm are needed for the interop tests")
    package = NODE_PREFIX / "node_modules" / EVERYTHING
    manifest = package / "package.json"
    if not manifest.exists() or f'"version": "{EVERYTHING_VERSION}"' not in manifest.read_text():
        NODE_PREFIX.mkdir(parents=True, exist_ok=True)
        _run(
            [
                npm,
                "install",
                "--prefix",
                str(NODE_PREFIX),
                "--no-audit",
                "--no-fund",
                "--silent",
                f"{EVERYTHING}@{EVERYTHING_VERSION}",
            ],
        )
    preload = NODE_PREFIX / "bind-localhost.cjs"
    if not preload.exists() or preload.read_text() != BIND_LOCALHOST:
        preload.write_text(BIND_LOCALHOST)
    return node, package / "dist" / "index.js", preload


@pytest.fixture(scope="session")
def inspector() -> tuple[Path, Path]:
    """(a Node.js >= 22, the Inspector's entry point), installed on first use."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is needed for the interop tests")
    package = INSPECTOR_PREFIX / "node_modules" / INSPECTOR
    manifest = package / "package.json"
    node = INSPECTOR_PREFIX / "node_modules" / ".bin" / "node"
    wanted = f'"version": "{INSPECTOR_VERSION}"'
    if not (manifest.exists() and wanted in manifest.read_text() and node.exists()):
        INSPECTOR_PREFIX.mkdir(parents=True, exist_ok=True)
        _run(
            [
                npm,
                "install",
                "--prefix",
                str(INSPECTOR_PREFIX),
                "--no-audit",
                "--no-fund",
                "--silent",
                f"{INSPECTOR}@{INSPECTOR_VERSION}",
                INSPECTOR_NODE,
            ]
        )
    return node, INSPECTOR_PREFIX / "node_modules" / ".bin" / "mcp-inspector"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.fail(f"nothing listened on port {port} within {seconds}s")


class HttpServer:
    """A server process on a free port, stopped with its whole process group."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        full_env = {**os.environ, **(env or {}), "PORT": str(self.port)}
        command = [part.replace("{port}", str(self.port)) for part in command]
        self.process = subprocess.Popen(
            command,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_listening(self.port, self.process)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture
def sdk_http(sdk_python: Path) -> Iterator[HttpServer]:
    server = HttpServer([str(sdk_python), str(SDK_SERVER), "http", "{port}"])
    yield server
    server.stop()


@pytest.fixture
def sdk_sse(sdk_python: Path) -> Iterator[HttpServer]:
    server = HttpServer([str(sdk_python), str(SDK_SERVER), "sse", "{port}"])
    yield server
    server.stop()


@pytest.fixture(params=["streamableHttp", "sse"])
def everything_http(
    request: pytest.FixtureRequest, everything_js: tuple[str, Path, Path]
) -> Iterator[tuple[HttpServer, str]]:
    node, entry, preload = everything_js
    kind: str = request.param
    server = HttpServer([node, "--require", str(preload), str(entry), kind])
    yield server, server.url("/mcp" if kind == "streamableHttp" else "/sse")
    server.stop()
