"""The separate bench environment, ``.venv-bench``: the official SDK and the harness tools.

The official SDK (``mcp==2.3.0``) never enters mcpkit's own ``.venv``: it lives here,
with ``psutil`` (server CPU time) and ``orjson`` (the harness decodes answers quickly, so
the measuring side is not the bottleneck). A marker file records the requirement list
the environment was built from; when the list changes, the environment is rebuilt from
scratch so nothing stale survives. Extra tools (``py-spy`` for ``--profile``) are added
on demand without invalidating the marker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REQUIREMENTS: tuple[str, ...] = ("mcp==2.3.0", "psutil>=5.9", "orjson>=3.10")
PROFILER_REQUIREMENTS: tuple[str, ...] = ("py-spy>=0.4",)
MARKER_NAME = ".bench-requirements"

__all__ = ["REQUIREMENTS", "ensure_bench_env", "ensure_profiler", "python_of"]


def python_of(env_dir: Path) -> Path:
    """The interpreter inside a virtual environment (not resolved: that would leave it)."""
    return env_dir / "bin" / "python"


def _marker_text() -> str:
    return "\n".join(REQUIREMENTS) + "\n"


def is_current(env_dir: Path) -> bool:
    """True when ``env_dir`` exists, runs, and was built from today's requirement list."""
    marker = env_dir / MARKER_NAME
    if not python_of(env_dir).exists() or not marker.exists():
        return False
    return marker.read_text() == _marker_text()


def ensure_bench_env(env_dir: Path, *, log: bool = True) -> Path:
    """Create or rebuild ``env_dir`` when missing or outdated; return its interpreter."""
    python = python_of(env_dir)
    if is_current(env_dir):
        return python
    if log:
        print(f"bench: building {env_dir} with {', '.join(REQUIREMENTS)} ...", flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", "--clear", str(env_dir)])
    _pip(python, REQUIREMENTS)
    (env_dir / MARKER_NAME).write_text(_marker_text())
    return python


def ensure_profiler(env_dir: Path) -> Path:
    """Install py-spy into the bench environment if it is not there; return its path."""
    spy = env_dir / "bin" / "py-spy"
    if not spy.exists():
        print(f"bench: installing {', '.join(PROFILER_REQUIREMENTS)} ...", flush=True)
        _pip(python_of(env_dir), PROFILER_REQUIREMENTS)
    return spy


def _pip(python: Path, requirements: tuple[str, ...]) -> None:
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "-q",
            *requirements,
        ]
    )


def _run(command: list[str]) -> None:
    """Run a set-up command quietly; its output is shown only when it fails."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    completed = subprocess.run(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout.decode(errors="replace")[-4000:])
        raise SystemExit(f"bench: command failed ({completed.returncode}): {' '.join(command)}")
