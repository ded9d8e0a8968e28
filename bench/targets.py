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

    def speaks(self, era: str) -> bool:
        return era in self.eras


def stdio_servers(repo: Path, mcpkit_python: Path, bench_python: Path) -> list[ServerSpec]:
    """The stdio servers, subject first, in the order rounds interleave them."""
    bench = repo / "bench" / "servers"
    return [
        ServerSpec(
            "mcpkit",
            (str(mcpkit_python), str(repo / "examples" / "calculator_server.py")),
            frozenset({"modern"}),
            description="examples/calculator_server.py (mcpkit)",
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
