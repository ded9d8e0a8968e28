"""The servers under test: the same ``add`` tool three ways.

* ``mcpkit``: ``examples/calculator_server.py`` in mcpkit's own ``.venv``;
* ``official``: ``bench/servers/official_add.py``, the official SDK (``mcp==2.3.0``) in
  ``.venv-bench``;
* ``floor``: ``bench/servers/floor_add.py``, a plain blocking loop with orjson in
  mcpkit's interpreter: the upper bound a Python stdio server can reach.

The first column of every report is the subject (mcpkit); ratios compare it with the
others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["ServerSpec", "stdio_servers"]


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server and what it speaks."""

    name: str
    command: tuple[str, ...]
    eras: frozenset[str]
    discover: bool = True
    description: str = ""
    env: tuple[tuple[str, str], ...] = ()

    def speaks(self, era: str) -> bool:
        return era in self.eras


def stdio_servers(
    repo: Path, mcpkit_python: Path, bench_python: Path, snapshot: Path | None = None
) -> list[ServerSpec]:
    """The stdio servers, subject first, in the order rounds interleave them.

    With ``snapshot`` (a directory holding ``src/`` and ``examples/`` of one commit), the
    mcpkit server runs from there, its ``src`` first on ``PYTHONPATH``, so the subject
    cannot change while the rounds run.
    """
    bench = repo / "bench" / "servers"
    root = snapshot or repo
    env = (("PYTHONPATH", str(root / "src")),) if snapshot is not None else ()
    return [
        ServerSpec(
            "mcpkit",
            (str(mcpkit_python), str(root / "examples" / "calculator_server.py")),
            frozenset({"modern"}),
            description="examples/calculator_server.py (mcpkit)",
            env=env,
        ),
        ServerSpec(
            "official",
            (str(bench_python), str(bench / "official_add.py")),
            frozenset({"modern", "legacy"}),
            description="bench/servers/official_add.py (mcp 2.3.0 MCPServer)",
        ),
        ServerSpec(
            "floor",
            (str(mcpkit_python), str(bench / "floor_add.py")),
            frozenset({"modern", "legacy"}),
            description="bench/servers/floor_add.py (blocking loop + orjson)",
        ),
    ]
