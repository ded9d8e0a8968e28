"""The servers under test: the same ``add`` tool three ways, over stdio and over HTTP.

* ``mcpkit``: ``examples/calculator_server.py`` in mcpkit's own interpreter; over HTTP
  the same file served by ``mcpkit run FILE --http`` (``mcpkit.transports.http.run_http``:
  uvicorn, one worker, httptools);
* ``official``: ``bench/servers/official_add.py``, the official SDK (``mcp==2.3.0``) in
  ``.venv-bench``; over HTTP its own Streamable HTTP server
  (``MCPServer.run("streamable-http")``, uvicorn, one worker);
* ``floor``: ``bench/servers/floor_add.py`` (stdio: a blocking loop with orjson) and
  ``bench/servers/floor_asgi.py`` (HTTP: a raw ASGI function on uvicorn with httptools),
  in mcpkit's interpreter: the upper bound a Python server can reach.

Which eras a server speaks is not declared here: the harness asks each server once
before the rounds and leaves out (with the reason) any that does not answer right. The
first server is the subject (mcpkit); ratios compare it with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PORT_FIELD = "{port}"

__all__ = ["PORT_FIELD", "ServerSpec", "servers"]


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server over stdio and over HTTP (``{port}`` in ``http``)."""

    name: str
    stdio: tuple[str, ...]
    http: tuple[str, ...]
    discover: bool = True
    description: str = ""
    env: tuple[tuple[str, str], ...] = ()

    def http_command(self, port: int) -> list[str]:
        """The HTTP command with the port filled in."""
        return [part.replace(PORT_FIELD, str(port)) for part in self.http]


def servers(
    repo: Path, mcpkit_python: Path, bench_python: Path, snapshot: Path | None = None
) -> list[ServerSpec]:
    """The servers, subject first, in the order rounds interleave them.

    With ``snapshot`` (a directory holding ``src/`` and ``examples/`` of one commit), the
    mcpkit server runs from there, its ``src`` first on ``PYTHONPATH``, so the subject
    cannot change while the rounds run.
    """
    bench = repo / "bench" / "servers"
    root = snapshot or repo
    env = (("PYTHONPATH", str(root / "src")),) if snapshot is not None else ()
    calculator = str(root / "examples" / "calculator_server.py")
    mcpkit, official = str(mcpkit_python), str(bench_python)
    return [
        ServerSpec(
            "mcpkit",
            (mcpkit, calculator),
            (mcpkit, "-m", "mcpkit.cli.main", "run", calculator, "--http", "--port", PORT_FIELD),
            description="examples/calculator_server.py (mcpkit; HTTP: mcpkit run --http)",
            env=env,
        ),
        ServerSpec(
            "official",
            (official, str(bench / "official_add.py")),
            (official, str(bench / "official_add.py"), "--http", "--port", PORT_FIELD),
            description="bench/servers/official_add.py (mcp 2.3.0 MCPServer)",
        ),
        ServerSpec(
            "floor",
            (mcpkit, str(bench / "floor_add.py")),
            (mcpkit, str(bench / "floor_asgi.py"), "--port", PORT_FIELD),
            description="bench/servers/floor_add.py (blocking loop + orjson); "
            "HTTP: bench/servers/floor_asgi.py (raw ASGI on uvicorn + httptools)",
        ),
    ]
