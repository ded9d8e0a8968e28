"""Shared fixtures: paths to the examples, the interpreter, and free ports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


class RunningServer:
    """An ASGI app served by a real uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any, **config: Any) -> None:
        import threading

        import uvicorn

        settings: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": 0,
            "log_level": "warning",
            "lifespan": "on",
        }
        settings.update(config)
        self.config = uvicorn.Config(app, **settings)
        from mcpkit.transports.http import StreamableHTTPApp, uvicorn_server

        endpoints = [app] if isinstance(app, StreamableHTTPApp) else []
        self.server = uvicorn_server(self.config, *endpoints)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> RunningServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    @property
    def port(self) -> int:
        sockets = self.server.servers[0].sockets
        return int(sockets[0].getsockname()[1])

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
