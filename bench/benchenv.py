"""The separate bench environment, ``.venv-bench``: the official SDK and the harness tools.

The official SDK (``mcp==2.3.0``) never enters mcpkit's own ``.venv``: it lives here,
with ``psutil`` (server CPU time), ``orjson`` (the harness decodes answers quickly, so
the measuring side is not the bottleneck) and ``httptools`` and ``uvloop``, which
uvicorn picks up on its own, so the SDK's HTTP server runs on the same stack as
mcpkit's (whose ``http`` extra is ``uvicorn[standard]``). A marker file records the
requirement list the environment was built from; when the list changes, the environment
is rebuilt from scratch so nothing stale survives. Extra tools (``py-spy`` for
``--profile``) are added on demand without invalidating the marker.

:func:`ensure_http_extra` gives mcpkit's own interpreter its ``http`` extra when it lacks
it: ``make bench`` installs only the core package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

REQUIREMENTS: tuple[str, ...] = (
    "mcp==2.3.0",
    "psutil>=5.9",
    "orjson>=3.10",
    "httptools>=0.6",
    "uvloop>=0.19",
)
PROFILER_REQUIREMENTS: tuple[str, ...] = ("py-spy>=0.4",)
MARKER_NAME = ".bench-requirements"

HTTP_MODULES = ("uvicorn", "httptools")

__all__ = [
    "REQUIREMENTS",
    "ensure_bench_env",
    "ensure_http_extra",
    "ensure_profiler",
    "python_of",
]


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


def ensure_http_extra(python: Path, pyproject: Path) -> None:
    """Install mcpkit's ``http`` extra (as ``pyproject`` lists it) into ``python`` if absent."""
    check = [str(python), "-c", "import " + ", ".join(HTTP_MODULES)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    if subprocess.run(check, env=env, capture_output=True, check=False).returncode == 0:
        return
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    requirements = tuple(extras["http"])
    print(
        f"bench: {python} lacks mcpkit's http extra (make bench installs only the core); "
        f"installing {', '.join(requirements)} ...",
        flush=True,
    )
    _pip(python, requirements)


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
