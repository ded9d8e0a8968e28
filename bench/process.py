"""What every server under test is, whatever its transport: a child process we watch.

:class:`ServerProcess` holds what the stdio and HTTP harnesses share: the environment a
child gets, optional pinning to one CPU, the child's CPU time (``psutil``, every thread)
and peak resident set (``VmHWM``), its stderr in a file the caller owns (whose tail is
shown when something fails), and :class:`BenchFailure`, the one way a run stops.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import IO

import psutil

__all__ = ["BenchFailure", "ServerProcess", "child_environment", "pinned_to"]


class BenchFailure(RuntimeError):
    """A server misbehaved (wrong answer, silence, early exit): the run must stop."""


def child_environment() -> dict[str, str]:
    """The parent's environment without ``PYTHON*`` variables.

    A host spawns servers with an ordinary environment; a developer shell's
    ``PYTHONDONTWRITEBYTECODE`` would make every cold start recompile the package from
    source, and ``PYTHONUNBUFFERED`` would change how a server's stdout behaves.
    """
    return {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}


def pinned_to(cpu: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that pins the child (and the threads it starts) to ``cpu``."""
    if cpu is None:
        return None

    def pin() -> None:
        os.sched_setaffinity(0, {cpu})

    return pin


class ServerProcess:
    """One server child process: start, facts about it, failure reports."""

    def __init__(
        self,
        name: str,
        stderr: IO[bytes],
        *,
        env: Sequence[tuple[str, str]] = (),
        cpu: int | None = None,
    ) -> None:
        self.name = name
        self.env = {**child_environment(), **dict(env)}
        self.cpu = cpu
        self._stderr = stderr
        self._proc: subprocess.Popen[bytes] | None = None
        self._ps: psutil.Process | None = None
        self.started_at = 0.0

    def _spawn(self, command: Sequence[str], *, stdin: int, stdout: int | IO[bytes]) -> None:
        """Start ``command``; ``started_at`` is taken just before ``Popen``."""
        self.started_at = time.perf_counter()
        proc = subprocess.Popen(
            list(command),
            stdin=stdin,
            stdout=stdout,
            stderr=self._stderr,
            bufsize=0,
            env=self.env,
            preexec_fn=pinned_to(self.cpu),
        )
        self._proc = proc
        self._ps = psutil.Process(proc.pid)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def process(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            raise RuntimeError("the server has not been started")
        return self._proc

    def cpu_seconds(self) -> float:
        """User + system CPU time of the child so far (every thread)."""
        assert self._ps is not None
        times = self._ps.cpu_times()
        return float(times.user + times.system)

    def peak_rss_bytes(self) -> int:
        """``VmHWM``: the resident set's high-water mark since the child started."""
        with open(f"/proc/{self.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        raise BenchFailure(f"{self.name}: no VmHWM in /proc/{self.pid}/status")

    def stderr_tail(self, limit: int = 2000) -> str:
        self._stderr.flush()
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - limit))
        return self._stderr.read().decode(errors="replace")

    def fail(self, problem: str) -> BenchFailure:
        """A failure carrying the server's exit state and the tail of its stderr."""
        code = self._proc.poll() if self._proc is not None else None
        state = "still running" if code is None else f"exited with {code}"
        tail = self.stderr_tail().strip() or "(empty)"
        return BenchFailure(f"{self.name}: {problem} (server {state}); stderr tail:\n{tail}")
